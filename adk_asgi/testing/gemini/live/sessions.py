"""Live API sessions: the conversation a connection holds, and resumption handles.

"The lifetime of a connection is limited as well, to around 10 minutes ... you can
configure a single session to stay active over multiple connections using session
resumption", and a handle "is valid for 2 hours after the last session termination"
(https://ai.google.dev/gemini-api/docs/live-api/session-management). A handle names the
session's state when it was issued; resuming with it restores that state.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import deque
from dataclasses import dataclass, field

from google.genai import types

__all__ = ("Entry", "LiveSession", "SessionStore")


@dataclass(frozen=True, slots=True)
class Entry:
    """One content of the conversation and the tokens it takes in the context window."""

    content: types.Content
    tokens: int


@dataclass(eq=False)
class LiveSession:
    """The state a Live API session keeps on the server."""

    id: str = field(default_factory=lambda: secrets.token_hex(8))
    entries: list[Entry] = field(default_factory=list)
    pending_calls: dict[str, types.FunctionCall] = field(default_factory=dict)
    """Function calls sent to the client and not answered yet, by id."""
    cancelled_calls: set[str] = field(default_factory=set)
    continuing_calls: dict[str, types.FunctionCall] = field(default_factory=dict)
    """NON_BLOCKING calls answered with ``willContinue``: more responses will come."""
    finished_calls: set[str] = field(default_factory=set)
    """NON_BLOCKING calls whose last response came: later responses are not considered."""
    holder: object | None = None
    """The connection that holds the session (None once it ended)."""
    ended_at: float | None = None
    released: asyncio.Event = field(default_factory=asyncio.Event)
    terminated: bool = False
    """The session ended for good (its context overflowed): no resumption."""

    @property
    def tokens(self) -> int:
        return sum(entry.tokens for entry in self.entries)

    def contents(self) -> tuple[types.Content, ...]:
        return tuple(entry.content for entry in self.entries)

    def hold(self, connection: object) -> None:
        self.holder = connection
        self.ended_at = None
        self.released.clear()

    def release(self, connection: object) -> None:
        if self.holder is connection:
            self.holder = None
            self.ended_at = time.monotonic()
            self.released.set()


@dataclass(frozen=True, slots=True)
class _Handle:
    session: LiveSession
    entries: tuple[Entry, ...]


# Handles kept per session: each holds a snapshot of the conversation, so a long
# session would otherwise keep every state it ever had.
MAX_HANDLES_PER_SESSION = 16


class SessionStore:
    """Sessions by resumption handle (the newest ``MAX_HANDLES_PER_SESSION`` of each)."""

    def __init__(self, handle_ttl: float) -> None:
        self._ttl = handle_ttl
        self._handles: dict[str, _Handle] = {}
        self._issued: dict[LiveSession, deque[str]] = {}

    def issue(self, session: LiveSession) -> str:
        """A new handle for the session's current state."""
        self._purge()
        handle = secrets.token_urlsafe(24)
        self._handles[handle] = _Handle(session, tuple(session.entries))
        issued = self._issued.setdefault(session, deque())
        issued.append(handle)
        while len(issued) > MAX_HANDLES_PER_SESSION:
            self._handles.pop(issued.popleft(), None)
        return handle

    def _purge(self) -> None:
        now = time.monotonic()
        for session in [
            s for s in self._issued if s.ended_at is not None and now - s.ended_at > self._ttl
        ]:
            self._forget(session)

    def find(self, handle: str) -> LiveSession | None:
        """The session a still-valid handle names, restored to the handle's state when
        resumed (see `restore`); None when unknown or expired."""
        found = self._handles.get(handle)
        if found is None or found.session.terminated:
            return None
        session = found.session
        if session.ended_at is not None and time.monotonic() - session.ended_at > self._ttl:
            self._forget(session)
            return None
        return session

    def restore(self, handle: str) -> None:
        """Put the session back in the state the handle names."""
        found = self._handles[handle]
        found.session.entries = list(found.entries)
        found.session.pending_calls.clear()
        found.session.cancelled_calls.clear()
        found.session.continuing_calls.clear()

    def terminate(self, session: LiveSession) -> None:
        session.terminated = True
        self._forget(session)

    def _forget(self, session: LiveSession) -> None:
        for handle in self._issued.pop(session, ()):
            self._handles.pop(handle, None)
