"""TurnOutput: where a live turn's chunks go — encoded once, recorded as SSE (for
``GET {api}/{chatId}/stream`` and protocol B's ``resume``) and sent as the connection's
protocol frames (``codec``) to the turn's listeners.

It also says what each protocol does when a turn can go no further without the client:
protocol B ends the request's stream (``finish`` + ``end``; the client's next ``send``
continues the message), protocol A keeps the turn open and says so once per set of calls
with a transient ``data-awaiting-client`` chunk (so a client need not guess from silence).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final

from ...wire.chunks import DONE_FRAME, DataChunk, UIChunk, encode_chunk, sse_event
from ..protocol.commands import Codec, Listener
from .turn import LiveTurn

__all__ = ("AWAITING_CLIENT_CHUNK_TYPE", "SendFrames", "TurnOutput")

AWAITING_CLIENT_CHUNK_TYPE: Final = "data-awaiting-client"
"""Protocol A: a transient chunk saying the turn now waits for the page (``data.ids``: the
approval or call ids it waits for); the turn goes on once they are answered."""

SendFrames = Callable[[list[str]], Awaitable[None]]


class TurnOutput:
    __slots__ = ("_send", "codec")

    def __init__(self, codec: Codec, send: SendFrames) -> None:
        self.codec = codec  # the connection's protocol: its first frame may change it
        self._send = send

    async def emit(self, turn: LiveTurn, chunks: list[UIChunk]) -> None:
        if not chunks:
            return
        encoded = [encode_chunk(chunk) for chunk in chunks]
        turn.recorder.append(b"".join([sse_event(data) for data in encoded]))
        await self._send(self.codec.chunks(encoded, turn.listeners))

    async def waiting(self, turn: LiveTurn) -> None:
        """``turn`` waits for the client (``LiveTurn.waits_for_client``)."""
        if not self.codec.suspends:
            ids = turn.unannounced()
            if ids is not None:
                await self.emit(
                    turn,
                    [DataChunk(type=AWAITING_CLIENT_CHUNK_TYPE, transient=True, data={"ids": ids})],
                )
            return
        await self.emit(turn, turn.translator.suspend(turn.waiting))
        turn.recorder.append(DONE_FRAME)
        await turn.recorder.end(resumable=False)
        await self._send(self.codec.suspended(turn.suspend()))

    async def turn_end(self, listeners: list[Listener]) -> None:
        await self._send(self.codec.turn_end(listeners))

    async def error(self, text: str, request_id: str | None) -> None:
        """An error frame outside the turn flow (a refused frame or request)."""
        await self._send([self.codec.error(text, request_id)])
