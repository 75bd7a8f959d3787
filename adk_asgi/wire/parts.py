"""EventParts: the data parts and metadata an application adds to a message, for one ADK
event (``SurfaceOptions.on_event``).

A part's name is checked here, against the names the bridge's own data parts use
(``data-agent``, ``data-state``, ``data-node``, ``data-pcm``, ``data-transcription``);
its value is converted to JSON as tool results are (``jsonable.py``).
"""

from __future__ import annotations

import re
from typing import Any, Final

from .chunks import DataChunk, MessageMetadata, UIChunk
from .jsonable import json_value

__all__ = ("EventParts",)

_DATA_NAME: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_RESERVED: Final = frozenset({"agent", "state", "node", "pcm", "transcription"})


class EventParts:
    """What ``on_event`` may add to the message for one ADK event."""

    __slots__ = ("_out",)

    def __init__(self, out: list[UIChunk]) -> None:
        self._out = out

    def data(
        self, name: str, value: Any, *, id: str | None = None, transient: bool = False
    ) -> None:
        """A ``data-{name}`` part (``transient``: delivered to ``onData`` only, not kept in
        the message). Parts with the same ``id`` replace each other in the message."""
        if not _DATA_NAME.fullmatch(name) or name in _RESERVED:
            raise ValueError(
                f"data part name {name!r}: lower-case letters, digits, '-' and "
                f"'_', not one of {sorted(_RESERVED)}"
            )
        value = json_value(value)  # NotJson (a ValueError) when it has no JSON form
        self._out.append(
            DataChunk(type=f"data-{name}", data=value, id=id, transient=True if transient else None)
        )

    def metadata(self, value: dict[str, Any]) -> None:
        """Merged into the message's ``metadata`` (key ``adk`` is the bridge's)."""
        if not isinstance(value, dict) or "adk" in value:
            raise ValueError("metadata is a dict without the key 'adk'")
        self._out.append(MessageMetadata(message_metadata=json_value(value)))
