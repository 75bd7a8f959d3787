"""Small plain-ASGI helpers: bounded body reading and JSON error responses."""

from __future__ import annotations

from collections.abc import Iterable

from ._errors import RequestError, error_body
from ._types import Receive, Scope, Send

__all__ = ("read_body", "send_error", "send_json_error")


class ClientGone(Exception):
    """The client disconnected while we were reading its request."""


async def read_body(scope: Scope, receive: Receive, limit: int) -> bytes:
    """The whole request body, refusing (413) past ``limit`` bytes without buffering them."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                declared = int(value)
            except ValueError:
                raise RequestError(400, "invalid_content_length",
                                   "Content-Length is not a number.") from None
            if declared > limit:
                raise RequestError(413, "body_too_large",
                                   f"Request body exceeds the limit of {limit} bytes.")
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
                raise RequestError(413, "body_too_large",
                                   f"Request body exceeds the limit of {limit} bytes.")
            chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def send_json_error(send: Send, status: int, code: str, message: str,
                          headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    body = error_body(code, message)
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *headers,
        ],
    })
    await send({"type": "http.response.body", "body": body})


async def send_error(send: Send, error: RequestError) -> None:
    await send_json_error(send, error.status, error.code, error.message)
