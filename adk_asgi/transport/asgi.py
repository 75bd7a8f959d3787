"""Plain-ASGI plumbing shared by both pipelines: types, the mount-relative path, bounded
body reading and JSON error responses."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from ..wire.errors import RequestError, error_body
from .params import whole_number

__all__ = (
    "ASGIApp",
    "ClientGone",
    "Message",
    "Receive",
    "Scope",
    "Send",
    "read_body",
    "route_path",
    "send_error",
    "send_json",
    "send_json_error",
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class ClientGone(Exception):
    """The client went away (HTTP disconnect or a closed WebSocket)."""


def route_path(scope: Scope) -> str:
    """The request path relative to the mount point (``root_path``), as Starlette's
    ``Mount`` and ``AdkMiddleware`` leave it: ``path`` stays full, the prefix is in
    ``root_path``."""
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    return path


async def read_body(scope: Scope, receive: Receive, limit: int) -> bytes:
    """The whole request body, refusing (413) past ``limit`` bytes without buffering them."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            declared = whole_number(value)
            if declared is None:
                raise RequestError(400, "invalid_content_length", "Content-Length is not a number.")
            if declared > limit:
                raise RequestError(
                    413, "body_too_large", f"Request body exceeds the limit of {limit} bytes."
                )
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > limit:
                raise RequestError(
                    413, "body_too_large", f"Request body exceeds the limit of {limit} bytes."
                )
            chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def send_json(
    send: Send, status: int, body: bytes, headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def send_json_error(
    send: Send, status: int, code: str, message: str, headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    await send_json(send, status, error_body(code, message), headers)


async def send_error(send: Send, error: RequestError) -> None:
    headers = (
        [(b"retry-after", str(error.retry_after).encode())] if error.retry_after is not None else []
    )
    await send_json_error(send, error.status, error.code, error.message, headers)
