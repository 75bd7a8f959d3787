"""Errors raised to the client before a stream starts.

    RequestError            -> HTTP 4xx with a JSON body {"error": {"code", "message"}}
"""

from __future__ import annotations

import msgspec

__all__ = ("RequestError", "error_body")

_encoder = msgspec.json.Encoder()


class RequestError(Exception):
    """A request the server refuses: ``status`` is the HTTP status, ``code`` a stable slug."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def error_body(code: str, message: str) -> bytes:
    return _encoder.encode({"error": {"code": code, "message": message}})
