"""What one client may send, checked against the app's ``Limits`` (``options.py``): the
messages of a chat request, over HTTP and WebSocket alike. Every limit answers with a clear
4xx or error frame naming it; none is silent truncation. (Bodies: ``asgi.read_body``;
frames and queues: ``outbox.py`` and the live socket.)"""

from __future__ import annotations

from ..options import Limits
from ..wire.errors import RequestError
from ..wire.request import UIMessage

__all__ = ("check_limits",)


def check_limits(history: list[UIMessage], limits: Limits) -> None:
    """Message count, parts per message and file size (413 naming the limit)."""
    if len(history) > limits.max_messages:
        raise RequestError(
            413, "too_many_messages", f"At most {limits.max_messages} messages per request."
        )
    # A data: URL's payload is base64 (4 characters per 3 bytes) or percent-encoded
    # (at least 1 character per byte): this bound never rejects a file under the limit.
    max_url = limits.max_file_bytes * 4 // 3 + 4 + 1024
    for message in history:
        if len(message.parts) > limits.max_parts_per_message:
            raise RequestError(
                413, "too_many_parts", f"At most {limits.max_parts_per_message} parts per message."
            )
        for part in message.parts:
            if part.type == "file" and isinstance(part.url, str) and len(part.url) > max_url:
                raise RequestError(
                    413, "file_too_large", f"A file part exceeds {limits.max_file_bytes} bytes."
                )
