"""Surface: what a message carries besides ADK's content — which agent wrote each step
(message metadata, and ``data-agent`` parts on request), the session state an event
changed (``data-state``, opt-in, by key) and the application's own parts and metadata
(``on_event``).

Message metadata (``messageMetadata.adk``, on the ``finish`` chunk, next to ``usage``)::

    {"author": "billing", "authors": {"0": "concierge", "1": "billing"}}

``authors`` maps the index of each step of the message (its ``step-start`` parts, from 0)
to the agent that wrote it; it is an object, not a list, because the AI SDK merges
metadata objects key by key: a continuation (the answers to an approval) adds its steps to
the same message. ``data-agent`` parts (``agent_names``) name the agent in the stream
itself, right after the ``start-step`` of each step whose agent changed.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from google.adk.events import Event

from ..options import SurfaceOptions
from ..wire.chunks import DataChunk, UIChunk
from ..wire.jsonable import NotJson, json_value
from ..wire.parts import EventParts

__all__ = ("Surface",)

logger = logging.getLogger("adk_asgi")

_TEMP: Final = "temp:"


class Surface:
    """The surfaced extras of one assistant message (one per translator)."""

    __slots__ = ("_agent", "_authors", "_base", "_message_id", "_options", "_state", "_written")

    def __init__(self, message_id: str, options: SurfaceOptions, *, steps: int = 0) -> None:
        self._message_id = message_id
        self._options = options
        self._base = steps  # steps the message had before this request
        self._agent: str | None = None
        self._authors: dict[str, str] = {}
        self._written: dict[int, str] = {}
        self._state: dict[str, Any] = {}

    def step_author(self, step: int, author: str, out: list[UIChunk]) -> None:
        """Step ``step`` of this request (from 1) is written by ``author``: a new step
        (called right after its ``start-step``), or one that another branch joined."""
        number = self._base + step - 1
        before = self._written.get(number)
        if before == author:
            return
        self._written[number] = author
        index = str(number)
        if self._options.step_authors:
            self._authors[index] = author
        if self._options.agent_names and (before is not None or author != self._agent):
            # The same id: a later author of the step replaces the part in the message.
            out.append(
                DataChunk(
                    type="data-agent", id=f"{self._message_id}-agent{index}", data={"name": author}
                )
            )
        if number == max(self._written):
            self._agent = author

    def metadata(self) -> dict[str, Any] | None:
        """The ``finish`` chunk's ``messageMetadata.adk``."""
        if not self._authors:
            return None
        return {
            "author": self._authors[max(self._authors, key=int)],
            "authors": dict(self._authors),
        }

    def event(self, event: Event) -> list[UIChunk]:
        """State changes and the application's hook, for one event: their parts."""
        out: list[UIChunk] = []
        keys = self._options.shows_state
        delta = event.actions.state_delta if event.actions is not None else None
        if keys is not None and delta:
            shown = {k: v for k, v in delta.items() if not k.startswith(_TEMP) and keys(k)}
            for key, value in shown.items():
                try:
                    self._state[key] = json_value(value)
                except NotJson as exc:
                    logger.error("State key %r is not sent: %s", key, exc)
            if shown:
                out.append(
                    DataChunk(
                        type="data-state", id=f"{self._message_id}-state", data=dict(self._state)
                    )
                )
        hook = self._options.on_event
        if hook is not None:
            added: list[UIChunk] = []
            try:
                hook(event, EventParts(added))
            except Exception:
                logger.exception(
                    "on_event raised for an event of %r; its parts were skipped", event.author
                )
                return out
            out.extend(added)
        return out
