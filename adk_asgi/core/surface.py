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
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from google.adk.events import Event

from ..chunks import DataChunk, MessageMetadata, UIChunk
from .jsonable import NotJson, json_value

__all__ = ("EventParts", "OnEvent", "Surface", "SurfaceOptions", "state_filter")

logger = logging.getLogger("adk_asgi")

_DATA_NAME: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_RESERVED: Final = frozenset({"agent", "state", "node", "pcm", "transcription"})
_TEMP: Final = "temp:"


class EventParts:
    """What ``on_event`` may add to the message for one ADK event."""

    __slots__ = ("_out",)

    def __init__(self, out: list[UIChunk]) -> None:
        self._out = out

    def data(self, name: str, value: Any, *, id: str | None = None,
             transient: bool = False) -> None:
        """A ``data-{name}`` part (``transient``: delivered to ``onData`` only, not kept in
        the message). Parts with the same ``id`` replace each other in the message."""
        if not _DATA_NAME.fullmatch(name) or name in _RESERVED:
            raise ValueError(f"data part name {name!r}: lower-case letters, digits, '-' and "
                             f"'_', not one of {sorted(_RESERVED)}")
        value = json_value(value)  # NotJson (a ValueError) when it has no JSON form
        self._out.append(DataChunk(type=f"data-{name}", data=value, id=id,
                                   transient=True if transient else None))

    def metadata(self, value: dict[str, Any]) -> None:
        """Merged into the message's ``metadata`` (key ``adk`` is the bridge's)."""
        if not isinstance(value, dict) or "adk" in value:
            raise ValueError("metadata is a dict without the key 'adk'")
        self._out.append(MessageMetadata(message_metadata=json_value(value)))


OnEvent = Callable[[Event, EventParts], None]


def state_filter(keys: Iterable[str] | Callable[[str], bool] | None
                 ) -> Callable[[str], bool] | None:
    """``state_keys`` as a predicate: an iterable names the keys the client may see."""
    if keys is None or callable(keys):
        return keys
    allowed = frozenset(keys)
    return allowed.__contains__


@dataclass(frozen=True, slots=True)
class SurfaceOptions:
    """What a message carries besides ADK's content (``AdkApp(surface=...)``)."""

    step_authors: bool = True
    """``messageMetadata.adk``: the agent that wrote each step."""
    agent_names: bool = False
    """A ``data-agent`` part (``{"name": ...}``) wherever the writing agent changes."""
    state_keys: Iterable[str] | Callable[[str], bool] | None = None
    """Which session state keys reach the client as ``data-state``: the keys, or a
    ``(key) -> bool``; None: none (state may hold what users must not see)."""
    on_event: OnEvent | None = None
    """The application's hook: extra ``data-*`` parts and metadata for an event."""
    node_outputs: bool = True
    """Workflow nodes' outputs: a string as text, anything else as a ``data-node`` part
    (``{node, path, output}``)."""
    shows_state: Callable[[str], bool] | None = field(init=False, repr=False, compare=False)
    """``state_keys`` as a predicate (None: no state is shown)."""

    def __post_init__(self) -> None:
        if isinstance(self.state_keys, str):
            raise TypeError("state_keys is a collection of keys (or a predicate), not a string")
        object.__setattr__(self, "shows_state", state_filter(self.state_keys))

    @property
    def active(self) -> bool:
        return (self.step_authors or self.agent_names or self.shows_state is not None
                or self.on_event is not None or not self.node_outputs)


class Surface:
    """The surfaced extras of one assistant message (one per translator)."""

    __slots__ = ("_agent", "_authors", "_base", "_message_id", "_options", "_state",
                 "_written")

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
            out.append(DataChunk(type="data-agent", id=f"{self._message_id}-agent{index}",
                                 data={"name": author}))
        if number == max(self._written):
            self._agent = author

    def metadata(self) -> dict[str, Any] | None:
        """The ``finish`` chunk's ``messageMetadata.adk``."""
        if not self._authors:
            return None
        return {"author": self._authors[max(self._authors, key=int)],
                "authors": dict(self._authors)}

    def event(self, event: Event, out: list[UIChunk]) -> None:
        """State changes and the application's hook, for one event."""
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
                out.append(DataChunk(type="data-state", id=f"{self._message_id}-state",
                                     data=dict(self._state)))
        hook = self._options.on_event
        if hook is not None:
            added: list[UIChunk] = []
            try:
                hook(event, EventParts(added))
            except Exception:
                logger.exception("on_event raised for an event of %r; its parts were skipped",
                                 event.author)
                return
            out.extend(added)
