"""TurnOutput: where a live turn's chunks go — encoded once, recorded by the turn as SSE
(``LiveTurn.record``, for ``GET {api}/{chatId}/stream`` and protocol B's ``resume``) and
sent as the frames of the connection's protocol (``protocol/choice.py``: the connection
holds it, its first frame picks it) to the turn's listeners.

It also says what each protocol does when a turn can go no further without the client:
protocol B ends the request's stream (``finish`` + ``end``; the client's next ``send``
continues the message), protocol A keeps the turn open and says so once per set of calls
with a transient ``data-awaiting-client`` chunk (so a client need not guess from silence).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final

from ...wire.chunks import DataChunk, UIChunk, encode_chunk
from ..protocol.choice import ProtocolChoice
from ..protocol.commands import Listener
from .turn import LiveTurn

__all__ = ("AWAITING_CLIENT_CHUNK_TYPE", "SendFrames", "TurnOutput")

AWAITING_CLIENT_CHUNK_TYPE: Final = "data-awaiting-client"
"""Protocol A: a transient chunk saying the turn now waits for the page (``data.ids``: the
approval or call ids it waits for); the turn goes on once they are answered."""

SendFrames = Callable[[list[str]], Awaitable[None]]


class TurnOutput:
    __slots__ = ("_protocol", "_send")

    def __init__(self, protocol: ProtocolChoice, send: SendFrames) -> None:
        self._protocol = protocol  # read here, picked by the upstream
        self._send = send

    async def emit(self, turn: LiveTurn, chunks: list[UIChunk]) -> None:
        if not chunks:
            return
        encoded = [encode_chunk(chunk) for chunk in chunks]
        turn.record(encoded)
        await self._send(self._protocol.codec.chunks(encoded, turn.listeners))

    async def waiting(self, turn: LiveTurn) -> None:
        """``turn`` waits for the client (``LiveTurn.waits_for_client``)."""
        if not self._protocol.codec.suspends:
            ids = turn.unannounced()
            if ids is not None:
                await self.emit(
                    turn,
                    [DataChunk(type=AWAITING_CLIENT_CHUNK_TYPE, transient=True, data={"ids": ids})],
                )
            return
        await self.emit(turn, turn.translator.suspend(turn.waiting))
        told = await turn.suspend()  # its recording ends with the request's stream
        await self._send(self._protocol.codec.suspended(told))

    async def turn_end(self, listeners: list[Listener]) -> None:
        await self._send(self._protocol.codec.turn_end(listeners))

    async def error(self, text: str, request_id: str | None) -> None:
        """An error frame outside the turn flow (a refused frame or request)."""
        await self._send([self._protocol.codec.error(text, request_id)])
