"""BoundedMemorySessions: ADK's in-memory session service with a bound (what ``memory://``
and the default get).

ADK's ``InMemorySessionService`` never forgets a session, so a server on the default store
grew with every chat it ever saw. Here a session is dropped when it has not been used
(read, created or appended to) for ``idle_ttl`` seconds, and the least recently used ones
go first when there are more than ``max_sessions``. A chat whose session was dropped comes
back through history restore (its text; ``http/turn/seed.py``), like after a restart.

A running turn uses its session at every event, so it is the most recently used: it is
dropped only if ``max_sessions`` newer chats arrive while it runs.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

from google.adk.events import Event
from google.adk.sessions import InMemorySessionService, Session
from typing_extensions import override

__all__ = ("DEFAULT_IDLE_TTL", "DEFAULT_MAX_SESSIONS", "BoundedMemorySessions")

DEFAULT_MAX_SESSIONS = 10_000
DEFAULT_IDLE_TTL = 6 * 3600.0

_Key = tuple[str, str, str]


class BoundedMemorySessions(InMemorySessionService):
    """In-memory sessions: at most ``max_sessions``, each kept ``idle_ttl`` seconds after
    its last use."""

    def __init__(
        self, *, max_sessions: int = DEFAULT_MAX_SESSIONS, idle_ttl: float = DEFAULT_IDLE_TTL
    ) -> None:
        if max_sessions < 1 or idle_ttl <= 0:
            raise ValueError("max_sessions must be >= 1 and idle_ttl > 0")
        super().__init__()
        self.max_sessions = max_sessions
        self.idle_ttl = idle_ttl
        self._used: OrderedDict[_Key, float] = OrderedDict()

    def __len__(self) -> int:
        return len(self._used)

    @override
    async def create_session(self, **kwargs: Any) -> Session:
        session = await super().create_session(**kwargs)
        self._touch(session)
        return session

    @override
    async def get_session(self, **kwargs: Any) -> Session | None:
        session = await super().get_session(**kwargs)
        if session is not None:
            self._touch(session)
        return session

    @override
    async def append_event(self, session: Session, event: Event) -> Event:
        event = await super().append_event(session, event)
        if not event.partial:
            self._touch(session)
        return event

    @override
    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        await super().delete_session(app_name=app_name, user_id=user_id, session_id=session_id)
        self._used.pop((app_name, user_id, session_id.strip()), None)

    def _touch(self, session: Session) -> None:
        key = (session.app_name, session.user_id, session.id)
        now = time.monotonic()
        self._used[key] = now
        self._used.move_to_end(key)
        used = self._used
        while used:
            oldest, last = next(iter(used.items()))
            if len(used) <= self.max_sessions and now - last <= self.idle_ttl:
                break
            del used[oldest]
            self._drop(*oldest)

    def _drop(self, app_name: str, user_id: str, session_id: str) -> None:
        users = self.sessions.get(app_name, {})
        sessions = users.get(user_id, {})
        sessions.pop(session_id, None)
        if not sessions:
            # The user's last session: nothing of theirs is kept (their user state too).
            users.pop(user_id, None)
            self.user_state.get(app_name, {}).pop(user_id, None)
        if not users:
            self.sessions.pop(app_name, None)
