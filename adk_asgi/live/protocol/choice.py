"""ProtocolChoice: the protocol one live connection speaks, and its only owner.

A connection speaks protocol A until its first frame that parses says B (``commands.detect``;
a first binary frame is A's audio). The connection holds the choice; the upstream reports
the frames it parses (``pick``: only the first one counts) and everyone else reads
``codec``: the upstream to decode frames and answer refused ones, the turn output
(``turns/output.py``) to write a turn's frames.
"""

from __future__ import annotations

from typing import Any

from .commands import Codec, detect
from .protocol_a import ProtocolA
from .protocol_b import ProtocolB

__all__ = ("ProtocolChoice",)


class ProtocolChoice:
    __slots__ = ("_chosen", "_codec")

    def __init__(self, codec: Codec | None = None) -> None:
        """``codec``: the protocol, fixed from the start (a test's); else A until the
        first frame says otherwise."""
        self._codec: Codec = ProtocolA() if codec is None else codec
        self._chosen = codec is not None

    @property
    def codec(self) -> Codec:
        """The connection's protocol."""
        return self._codec

    def pick(self, frame: dict[str, Any] | None) -> None:
        """A frame parsed (``None``: a binary one): the first one picks the protocol, later
        ones change nothing."""
        if self._chosen:
            return
        self._chosen = True
        if detect(frame) == "B":
            self._codec = ProtocolB()
