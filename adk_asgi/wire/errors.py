"""What clients are told when something goes wrong: ``RequestError`` and the texts.

A request the server refuses before a stream starts is a ``RequestError`` (HTTP 4xx/503
with ``{"error": {"code", "message"}}``, a stable ``code``). Once a stream runs, failures
end it with one ``error`` chunk carrying one of the texts below: never an exception's
message or a trace (those go to the server log).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import msgspec

__all__ = (
    "CHAT_NOT_FOUND",
    "GENERIC_ERROR",
    "INTERRUPTED_ERROR",
    "NOT_SAVED_ERROR",
    "RECORDING_CUT_ERROR",
    "SHUTDOWN_ERROR",
    "STREAM_LOST_ERROR",
    "TURN_TOO_LARGE_ERROR",
    "TURN_TOO_LONG_ERROR",
    "UNAVAILABLE_RETRY_AFTER",
    "DescribeError",
    "ErrorInfo",
    "RequestError",
    "artifact_unavailable",
    "at_capacity",
    "chat_not_found",
    "describe",
    "describe_error_generic",
    "error_body",
    "session_unavailable",
    "shutting_down",
    "store_unavailable",
)

GENERIC_ERROR: Final = "The agent failed to answer. Please try again."
SHUTDOWN_ERROR: Final = "The server is restarting. Please send your message again."
INTERRUPTED_ERROR: Final = "The server stopped while answering. Please send your message again."
NOT_SAVED_ERROR: Final = (
    "The answer could not be saved: the chat's storage is unavailable. "
    "Please send your message again in a moment."
)
STREAM_LOST_ERROR: Final = (
    "Lost this answer's stream: the chat service is temporarily "
    "unavailable. Reload the chat in a moment to see the answer."
)
RECORDING_CUT_ERROR: Final = (
    "This answer is larger than the server keeps for a replay. "
    "Reload the chat to see it whole. (recording_cut)"
)
TURN_TOO_LONG_ERROR: Final = "The answer took longer than the server allows and was stopped."
TURN_TOO_LARGE_ERROR: Final = "The answer grew larger than the server allows and was stopped."
CHAT_NOT_FOUND: Final = "No such chat."
UNAVAILABLE_RETRY_AFTER: Final = 2
"""Seconds a client is told to wait (``Retry-After``) when a store is down or the server
restarts."""

_encoder = msgspec.json.Encoder()
logger = logging.getLogger("adk_asgi")


class RequestError(Exception):
    """A request the server refuses: ``status`` is the HTTP status, ``code`` a stable slug.
    ``retry_after`` (seconds) is sent as ``Retry-After`` (503s)."""

    def __init__(
        self, status: int, code: str, message: str, *, retry_after: int | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after


def chat_not_found() -> RequestError:
    # The same answer whether the chat exists for someone else or not at all.
    return RequestError(404, "chat_not_found", CHAT_NOT_FOUND)


def error_body(code: str, message: str) -> bytes:
    return _encoder.encode({"error": {"code": code, "message": message}})


def session_unavailable() -> RequestError:
    """The ADK session service failed (its database is down, locked or read-only)."""
    return RequestError(
        503,
        "session_unavailable",
        "The chat session could not be loaded.",
        retry_after=UNAVAILABLE_RETRY_AFTER,
    )


def artifact_unavailable() -> RequestError:
    """The artifact service failed."""
    return RequestError(
        503,
        "artifact_unavailable",
        "The chat's files are temporarily unavailable. Please try again.",
        retry_after=UNAVAILABLE_RETRY_AFTER,
    )


def at_capacity() -> RequestError:
    """Every connection the worker may open to its stream store stayed busy for the
    bounded wait (the store itself is healthy): try again in a moment."""
    return RequestError(
        503,
        "at_capacity",
        "The server is at capacity. Please try again in a moment.",
        retry_after=UNAVAILABLE_RETRY_AFTER,
    )


def shutting_down() -> RequestError:
    """The server drains: no new turn starts."""
    return RequestError(
        503,
        "shutting_down",
        "The server is restarting. Please try again in a moment.",
        retry_after=UNAVAILABLE_RETRY_AFTER,
    )


def store_unavailable() -> RequestError:
    """The stream store failed (e.g. Redis is down)."""
    return RequestError(
        503,
        "store_unavailable",
        "The chat service is temporarily unavailable. Please try again.",
        retry_after=UNAVAILABLE_RETRY_AFTER,
    )


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """A failure, as ``describe_error`` sees it: ``code`` is ADK's error code, the
    exception's class name or a tool failure's code (``translate/tool_errors.py``);
    ``message`` and ``exception`` are for logs and mapping, never sent as they are."""

    code: str
    message: str | None = None
    exception: BaseException | None = None
    tool: str | None = None
    """The tool whose result reported the failure (its call fails, the answer goes on);
    None: the turn failed."""


def describe_error_generic(error: ErrorInfo) -> str:
    """The default text a user reads for a failure: generic, with the error's code."""
    return f"{GENERIC_ERROR} ({error.code})"


DescribeError = Callable[[ErrorInfo], str]


def describe(error: ErrorInfo, describe_error: DescribeError) -> str:
    """What the user reads: the application's ``describe_error``, or the generic text when
    it fails or returns no text (it must never break the stream's last chunk)."""
    try:
        text = describe_error(error)
    except Exception:
        logger.exception("describe_error raised for %s", error.code)
        return describe_error_generic(error)
    return text if isinstance(text, str) and text else describe_error_generic(error)
