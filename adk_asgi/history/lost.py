"""Turns lost to a crash: a session whose last HTTP turn never ended, while no stream of the
chat runs (a worker killed mid-answer, ``kill -9``, a power cut).

ADK stores an answer's events as they complete (never its streamed tokens), and a run that
ends at all ends with a final event: the answer, an error (stored by ADK), a pause for the
page (a long-running call) or the seal of an aborted run. A session whose last event is none
of these — the user's message, a tool's call or result, the page's answers — while nothing
streams the chat lost its turn (an earlier turn that never ended is lost whatever streams
now). Its history shows that turn's assistant message (a new one after the user's message
when nothing of it was stored) ending with one ``data-interrupted`` part, so a reload
shows the turn as interrupted, with the text a follower of a lost stream gets
(``INTERRUPTED_ERROR``), instead of a question nobody answered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from google.adk.events import Event

from ..adk.sessions import event_meta
from ..wire.errors import INTERRUPTED_ERROR

__all__ = ("INTERRUPTED_PART", "lost_turns", "mark_lost")

INTERRUPTED_PART: Final = {
    "type": "data-interrupted",
    "data": {"errorText": INTERRUPTED_ERROR},
}
"""What a reload shows at the end of a turn lost to a crash."""


def lost_turns(events: Sequence[Event], *, idle: bool) -> list[tuple[str, str | None]]:
    """(assistant message id, user message id) of every HTTP turn whose run never ended, in
    order; the last one only when ``idle`` (nothing streams the chat: else it may run)."""
    last_of: dict[str, Event] = {}
    for event in events:
        last_of.pop(event.invocation_id, None)  # keep the order of their last events
        last_of[event.invocation_id] = event
    ends = list(last_of.values())
    lost: list[tuple[str, str | None]] = []
    for index, last in enumerate(ends):
        if index == len(ends) - 1 and not idle:
            break
        meta = event_meta(last)
        if meta.get("live") or meta.get("liveError") or meta.get("seeded"):
            continue
        # The user's message is a "final response" to ADK; nothing answered it.
        if last.author != "user" and last.is_final_response():
            continue
        message_id, user_id = meta.get("messageId"), meta.get("userMessageId")
        if isinstance(message_id, str) and message_id:
            lost.append((message_id, user_id if isinstance(user_id, str) else None))
    return lost


def mark_lost(messages: list[dict[str, Any]], lost: list[tuple[str, str | None]]) -> None:
    """Mark each lost turn's message interrupted (added after its user message when the
    session kept nothing of it)."""
    for message_id, user_id in lost:
        found = next((m for m in messages if m["id"] == message_id), None)
        if found is None or found["role"] != "assistant":
            found = {"id": message_id, "role": "assistant", "parts": []}
            after = next(
                (i + 1 for i, m in enumerate(messages) if user_id and m["id"] == user_id),
                len(messages),
            )
            messages.insert(after, found)
        found["parts"].append(dict(INTERRUPTED_PART))
