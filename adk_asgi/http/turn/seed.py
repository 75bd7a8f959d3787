"""History restore: the ADK session of a chat the server does not know, created and filled
with the text of the client's earlier messages — all or nothing.

A new session gets the earlier turns the client sent (e.g. after a restart of an in-memory
store); their *text* becomes the session's history, so the model keeps the context. Tool
calls and files of those turns are not replayed. Only the most recent
``SEED_MAX_MESSAGES`` messages and ``SEED_MAX_CHARS`` characters are kept: appending
costs grow with the session in ADK's stores, and a client must not be able to make one
request seed a huge history.

All or nothing: ADK's session services append one event at a time, so

- a service with a ``transaction()`` (``SqliteSessions``) creates and seeds the session in
  one database transaction;
- otherwise a failed seeding deletes the session again, and the last seeded event carries
  ``seedEnd``: a session that holds seeded events but not that mark (the delete failed
  too: the database went away) is an incomplete restore, deleted and seeded again by the
  next request (``incomplete_seed``).

Callers hold the chat's turn lock, so no other turn sees a half-seeded session.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Final

from google.adk.events import Event
from google.adk.sessions import BaseSessionService, Session
from google.genai import types

from ...adk.sessions import META_KEY, event_meta
from ...wire.request import UIMessage, message_text

__all__ = ("SEED_MAX_CHARS", "SEED_MAX_MESSAGES", "create_seeded", "incomplete_seed", "seed_events")

logger = logging.getLogger("adk_asgi")

SEED_MAX_MESSAGES: Final = 200
SEED_MAX_CHARS: Final = 200_000
SEED_INVOCATION: Final = "adk-asgi-seed"


def seed_events(history: list[UIMessage], agent_name: str) -> list[Event]:
    """The session events that restore ``history`` (the most recent part that fits)."""
    kept: list[tuple[UIMessage, str]] = []
    budget = SEED_MAX_CHARS
    for message in reversed(history):
        text = message_text(message)
        if not text:
            continue
        if len(kept) == SEED_MAX_MESSAGES or len(text) > budget:
            break
        budget -= len(text)
        kept.append((message, text))
    events: list[Event] = []
    for i, (message, text) in enumerate(reversed(kept)):
        user = message.role == "user"
        meta = {"seeded": True, "messageId": message.id}
        if i == len(kept) - 1:
            meta["seedEnd"] = True  # the restore is complete once this one is stored
        events.append(
            Event(
                invocation_id=SEED_INVOCATION,
                author="user" if user else agent_name,
                content=types.Content(
                    role="user" if user else "model", parts=[types.Part(text=text)]
                ),
                custom_metadata={META_KEY: meta},
            )
        )
    return events


def incomplete_seed(session: Session) -> bool:
    """The session holds only part of a history restore (see the module docstring)."""
    events = session.events
    if not events:
        return False
    metas = [event_meta(event) for event in events]
    return all(meta.get("seeded") for meta in metas) and not metas[-1].get("seedEnd")


async def create_seeded(
    service: BaseSessionService,
    *,
    app_name: str,
    user_id: str,
    session_id: str,
    events: list[Event],
    session: Session | None = None,
) -> Session:
    """Create the session (unless ``session`` is an empty one to fill) and append
    ``events``: all of them, or none and no session."""
    async with _transaction(service):
        try:
            if session is None:
                session = await service.create_session(
                    app_name=app_name, user_id=user_id, session_id=session_id
                )
            for event in events:
                await service.append_event(session, event)
        except BaseException:
            if events and not hasattr(service, "transaction"):
                with contextlib.suppress(Exception):  # else the next request finds it
                    await service.delete_session(
                        app_name=app_name, user_id=user_id, session_id=session_id
                    )
            raise
    return session


def _transaction(service: BaseSessionService) -> AbstractAsyncContextManager[None]:
    transaction = getattr(service, "transaction", None)
    return transaction() if callable(transaction) else _nothing()


@asynccontextmanager
async def _nothing() -> AsyncIterator[None]:
    yield
