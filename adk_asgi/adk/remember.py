"""SessionMemory: a chat's session added to ADK's memory service when one of its turns ends
(``StorageOptions(remember_sessions=True)``), so ``load_memory`` and ``preload_memory`` find
it in the user's next chats.

Off the turn's path: the turn's stream has ended when the session is read again and handed
to ``add_session_to_memory`` (ADK: "a session may be added multiple times during its
lifetime"), in a task of its own; turns that end while a chat's session is being added
coalesce into one more add. A failing memory service is logged once (one line, until it
works again), never fails a turn, and the next turn tries again.

What is remembered is the conversation: the user's and the agents' words (text parts, no
thoughts). Tool calls, their results, files and the bridge's tags are left out, so nothing
a tool or the user handed over as data (an approval, a credential, a browser tool's
result) resurfaces through a later ``load_memory`` result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from google.adk.events import Event
from google.adk.memory import BaseMemoryService
from google.adk.sessions import BaseSessionService, Session
from google.genai import types

from .sessions import failure

__all__ = ("SessionMemory", "conversation")

logger = logging.getLogger("adk_asgi")

_Key = tuple[str, str]


def conversation(session: Session) -> Session:
    """A copy of ``session`` whose events hold only what was said (text, no thoughts)."""
    events: list[Event] = []
    for event in session.events:
        content = event.content
        if content is None or not content.parts:
            continue
        said = [
            types.Part(text=p.text)
            for p in content.parts
            if p.text and not p.thought and p.function_call is None and p.function_response is None
        ]
        if said:
            events.append(
                event.model_copy(
                    update={
                        "content": types.Content(role=content.role, parts=said),
                        "custom_metadata": None,
                    }
                )
            )
    return session.model_copy(update={"events": events})


class SessionMemory:
    """Adds chats' sessions to the memory service in the background (one per app)."""

    __slots__ = ("_again", "_app_name", "_failing", "_memory", "_sessions", "_tasks")

    def __init__(
        self, sessions: BaseSessionService, memory: BaseMemoryService, app_name: str
    ) -> None:
        self._sessions = sessions
        self._memory = memory
        self._app_name = app_name
        self._tasks: dict[_Key, asyncio.Task[None]] = {}
        self._again: set[_Key] = set()
        self._failing = False

    def turn_ended(self, user_id: str, chat_id: str) -> None:
        """A turn of the chat ended: add its session to memory (soon, not now)."""
        key = (user_id, chat_id)
        if key in self._tasks:
            self._again.add(key)  # the running add may have read the session too early
            return
        self._tasks[key] = asyncio.create_task(self._run(key), name="adk-asgi-remember")

    @property
    def pending(self) -> int:
        """Chats whose session is being added."""
        return len(self._tasks)

    async def idle(self) -> None:
        """Wait until every pending add has finished (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    async def close(self, grace: float = 5.0) -> None:
        """Shutdown: give pending adds ``grace`` seconds, then cancel them."""
        if not self._tasks:
            return
        try:
            await asyncio.wait_for(self.idle(), grace)
        except TimeoutError:
            logger.warning("%d session(s) not added to memory at shutdown", len(self._tasks))
            tasks = list(self._tasks.values())
            for task in tasks:
                task.cancel()
            with contextlib.suppress(Exception):
                await asyncio.gather(*tasks, return_exceptions=True)

    async def _run(self, key: _Key) -> None:
        try:
            while True:
                self._again.discard(key)
                await self._add(*key)
                if key not in self._again:
                    return
        finally:
            self._tasks.pop(key, None)
            self._again.discard(key)

    async def _add(self, user_id: str, chat_id: str) -> None:
        try:
            session = await self._sessions.get_session(
                app_name=self._app_name, user_id=user_id, session_id=chat_id
            )
            if session is None:
                return  # deleted meanwhile
            await self._memory.add_session_to_memory(conversation(session))
        except Exception as exc:
            if self._failing:
                logger.debug("Memory service still failing (chat %r): %s", chat_id, failure(exc))
            else:
                self._failing = True
                logger.warning(
                    "Memory service failed to add chat %r: %s (logged once until it works again)",
                    chat_id,
                    failure(exc),
                )
            return
        if self._failing:
            self._failing = False
            logger.info("Memory service works again")
