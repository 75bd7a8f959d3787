"""Followers: protocol B's ``resume`` on a live connection — the chat's active stream
(recorded in the stream store, so it may run on this connection, another one or an HTTP
request on any worker) replayed from its start, then followed to its end
(``resumeStreamIsReplay``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from ..observability.metrics import METRICS
from ..stores import StreamStore, split_frames
from ..transport.asgi import ClientGone
from ..wire.request import valid_chat_id
from .protocol.commands import Listener
from .protocol.protocol_b import ProtocolB
from .protocol.socket import LiveSocket

__all__ = ("Followers",)


class Followers:
    def __init__(self, socket: LiveSocket, store: StreamStore, user_id: str) -> None:
        self._socket = socket
        self._store = store
        self._user_id = user_id
        self.tasks: set[asyncio.Task[None]] = set()

    async def resume(self, request_id: str, chat_id: str) -> None:
        owner = await self._store.owner(chat_id) if valid_chat_id(chat_id) else None
        follow = await self._store.follow(chat_id) if owner == self._user_id else None
        METRICS.resumed("websocket", follow is not None)
        if follow is None:
            await self._socket.send([ProtocolB.no_active(request_id)])
            return
        await self._socket.send([ProtocolB.start(request_id)])
        task = asyncio.create_task(self._follow(request_id, follow), name="adk-asgi-live-resume")
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _follow(self, request_id: str, follow: AsyncGenerator[bytes, None]) -> None:
        listener = [Listener(request_id)]
        try:
            async for blob in follow:
                await self._socket.send(ProtocolB.chunks(split_frames(blob), listener))
            await self._socket.send(ProtocolB.turn_end(listener))
        except ClientGone:
            pass
        finally:
            await follow.aclose()
