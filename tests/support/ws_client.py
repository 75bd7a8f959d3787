"""A small protocol-A live client (the seeds' envelope) on the `websockets` package."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import msgspec
from websockets.asyncio.client import ClientConnection, connect

from adk_asgi.wire import chunks as _chunks

DONE = "[DONE]"


def _known_keys() -> dict[str, set[str]]:
    keys: dict[str, set[str]] = {}
    for cls in vars(_chunks).values():
        if isinstance(cls, type) and issubclass(cls, _chunks._Chunk) and cls is not _chunks._Chunk:
            tag = cls.__struct_config__.tag
            assert isinstance(tag, str)
            keys[tag] = {"type"} | {f.encode_name for f in msgspec.structs.fields(cls)}
    return keys


_KEYS = _known_keys()


def ws_url(http_url: str, query: str = "") -> str:
    return http_url.replace("http://", "ws://", 1) + "/" + (f"?{query}" if query else "")


def check_chunk(text: str) -> None:
    """The wire rules of SSE hold on the socket too: the chunk decodes into our own
    strict structs (no unknown keys) and carries no null optional field."""
    value = json.loads(text)
    kind = value["type"]
    known = {"type", "data", "id", "transient"} if kind.startswith("data-") else _KEYS[kind]
    assert set(value) <= known, f"unknown keys {set(value) - known} in {text}"
    for key, item in value.items():
        if item is None and key not in ("input", "output", "data", "messageMetadata"):
            raise AssertionError(f"null {key!r} in {text}")


class LiveClient:
    """``markers``: also return the transient ``data-awaiting-client`` chunks (by default
    they are kept aside in ``self.markers``, so turn sequences read as before)."""

    def __init__(self, ws: ClientConnection, markers: bool = False) -> None:
        self.ws = ws
        self.other: list[Any] = []  # non-chunk frames (pong, ...)
        self.markers: list[Any] = []
        self._show_markers = markers

    @classmethod
    async def open(cls, url: str, *, markers: bool = False, **kwargs: Any) -> LiveClient:
        return cls(await connect(url, max_size=None, **kwargs), markers)

    async def close(self) -> None:
        await self.ws.close()

    async def send(self, kind: str, *, nested: bool = True, **fields: Any) -> None:
        frame: dict[str, Any] = {"type": kind, "version": "1.0"}
        if nested:
            frame["data"] = fields
        else:
            frame.update(fields)
        await self.ws.send(json.dumps(frame))

    async def say(self, text: str, chat_id: str | None = None, **kw: Any) -> None:
        data: dict[str, Any] = {
            "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}]
        }
        if chat_id:
            data["id"] = chat_id
        await self.send("message", **data, **kw)

    async def audio(self, pcm: bytes, *, binary: bool = False) -> None:
        if binary:
            await self.ws.send(pcm)
        else:
            await self.send("audio_chunk", chunk=base64.b64encode(pcm).decode())

    async def next(self, wait: float = 10.0) -> Any:
        """The next UI chunk (dict), or DONE; other JSON frames go to ``self.other``."""
        while True:
            raw = await asyncio.wait_for(self.ws.recv(), wait)
            assert isinstance(raw, str), "server frames are text"
            if raw.startswith("data: "):
                assert raw.endswith("\n\n") and raw.count("\n") == 2, repr(raw)
                payload = raw[6:-2]
                if payload == DONE:
                    return DONE
                check_chunk(payload)
                chunk = json.loads(payload)
                if chunk["type"] == "data-awaiting-client" and not self._show_markers:
                    self.markers.append(chunk)
                    continue
                return chunk
            self.other.append(json.loads(raw))

    async def until(self, kind: str, wait: float = 10.0) -> list[Any]:
        """Chunks up to and including the first of type ``kind`` (or DONE)."""
        out: list[Any] = []
        while True:
            chunk = await self.next(wait)
            out.append(chunk)
            if chunk == kind or (isinstance(chunk, dict) and chunk["type"] == kind):
                return out

    async def turn(self, wait: float = 10.0) -> list[Any]:
        """One turn's chunks up to and including DONE."""
        return await self.until(DONE, wait)


def dicts(chunks: list[Any]) -> list[dict[str, Any]]:
    return [c for c in chunks if isinstance(c, dict)]


def kinds(chunks: list[Any]) -> list[str]:
    return [c if isinstance(c, str) else c["type"] for c in chunks]


def text(chunks: list[Any]) -> str:
    return "".join(c["delta"] for c in chunks if isinstance(c, dict) and c["type"] == "text-delta")


def assemble(chunks: list[Any]) -> dict[str, Any]:
    """A turn's chunks as the AI SDK builds the message (parts by id, data parts replaced
    by id, tool parts updated by call id, metadata merged)."""
    parts: list[dict[str, Any]] = []
    blocks: dict[str, dict[str, Any]] = {}
    tools: dict[str, dict[str, Any]] = {}
    metadata: dict[str, Any] = {}
    for chunk in chunks:
        if chunk == DONE:
            break
        kind = chunk["type"]
        if kind == "start-step":
            parts.append({"type": "step-start"})
        elif kind in ("text-start", "reasoning-start"):
            part = blocks[chunk["id"]] = {"type": kind.split("-")[0], "text": ""}
            if "providerMetadata" in chunk:
                part["providerMetadata"] = chunk["providerMetadata"]
            parts.append(part)
        elif kind in ("text-delta", "reasoning-delta"):
            blocks[chunk["id"]]["text"] += chunk["delta"]
        elif kind.startswith("data-"):
            same = [
                p
                for p in parts
                if p["type"] == kind and "id" in chunk and p.get("id") == chunk["id"]
            ]
            if same:
                same[0]["data"] = chunk["data"]
            else:
                parts.append({"type": kind, "data": chunk["data"], "id": chunk.get("id")})
        elif kind == "tool-input-start":
            tools[chunk["toolCallId"]] = {
                "type": f"tool-{chunk['toolName']}",
                "providerExecuted": chunk.get("providerExecuted"),
            }
            parts.append(tools[chunk["toolCallId"]])
        elif kind == "tool-input-available":
            tools[chunk["toolCallId"]].update(state="input-available", input=chunk["input"])
        elif kind == "tool-output-available":
            tools[chunk["toolCallId"]].update(state="output-available", output=chunk["output"])
        elif kind == "tool-output-error":
            tools[chunk["toolCallId"]].update(state="output-error", errorText=chunk["errorText"])
        elif kind in ("finish", "message-metadata"):
            metadata.update(chunk.get("messageMetadata") or {})
    return {"role": "assistant", "parts": parts, "metadata": metadata or None}
