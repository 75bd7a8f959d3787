"""Failures in the server log: one line per failed turn, with one traceback when there is
an exception; what the client reads is decided elsewhere (``describe_error``).

ADK logs an exception that escapes a run itself, with its traceback, once per layer it
passes (the node, the root node, the live flow) before re-raising it to adk-asgi. For the
runs adk-asgi drives (``serving``), those reports are demoted to DEBUG without their
traceback: adk-asgi logs the failure once, naming the chat. ADK's other records, and runs
the application drives itself, are left alone.

uvicorn's report of a WebSocket text frame that is not UTF-8 (its sans-I/O implementation,
``adk-asgi serve``'s default) is an ERROR with a traceback *per frame*: a cheap way for any
client to flood the log. The connection is closed with 1007 all the same, so that record
is dropped (kept, without its traceback, at DEBUG).
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

__all__ = ("install_adk_log_filter", "log_error_event", "log_exception", "original", "serving")

logger = logging.getLogger("adk_asgi")

_SERVING: Final = contextvars.ContextVar("adk_asgi_serving", default=False)
# A tool that adk-asgi's live gate runs again (after the user confirmed) raises through
# ADK's plugin manager, which wraps the exception in a RuntimeError naming the plugin.
_OUR_PLUGIN: Final = "Error in plugin 'adk_asgi_"
# ADK's reports of an exception it re-raises: (logger, message format or prefix).
_REPORTS: Final = (
    ("google_adk.google.adk.workflow._node_runner", "Node execution failed with exception"),
    ("google_adk.google.adk.runners", "Root node %s failed."),
    ("google_adk.google.adk.live._live_llm_flow", "An unexpected error occurred in live flow: %s"),
    ("google_adk.google.adk.plugins.plugin_manager", _OUR_PLUGIN),
    # A credential's function response is the bridge's marker (the secret is handed over
    # apart, pauses/credentials.py): ADK's request processor ignores it, as it should.
    ("google_adk.google.adk.auth._auth_resume", "Ignoring malformed auth response"),
)


class _Demote(logging.Filter):
    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message

    def filter(self, record: logging.LogRecord) -> bool:
        if _SERVING.get() and isinstance(record.msg, str) and record.msg.startswith(self.message):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            record.exc_info = record.exc_text = None
        return True


def original(error: BaseException) -> BaseException:
    """The exception a failed run is about: the tool's own, not ADK's wrapper of an
    exception raised inside adk-asgi's plugin."""
    cause = error.__cause__
    if isinstance(error, RuntimeError) and cause is not None and str(error).startswith(_OUR_PLUGIN):
        return cause
    return error


class _PerFrame(logging.Filter):
    """Drop a per-frame report (DEBUG keeps it, one line without the traceback)."""

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg != self.message:
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        record.exc_info = record.exc_text = None
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


_PER_FRAME: Final = ("uvicorn.error", "Invalid UTF-8 sequence received from client.")


def install_adk_log_filter() -> None:
    """Demote ADK's re-raise reports inside ``serving``, and drop uvicorn's per-frame
    report of invalid UTF-8 (idempotent)."""
    for name, message in _REPORTS:
        target = logging.getLogger(name)
        if not any(isinstance(f, _Demote) for f in target.filters):
            target.addFilter(_Demote(message))
    name, message = _PER_FRAME
    target = logging.getLogger(name)
    if not any(isinstance(f, _PerFrame) for f in target.filters):
        target.addFilter(_PerFrame(message))


@contextmanager
def serving() -> Iterator[None]:
    """Mark the ADK run driven inside this block (and its tasks) as adk-asgi's."""
    token = _SERVING.set(True)
    try:
        yield
    finally:
        _SERVING.reset(token)


def log_exception(what: str, chat_id: str | None, error: BaseException) -> None:
    """One record, one traceback: ADK re-raises a failed node's exception from inside its
    own wrapper, whose traceback is noise next to the original's."""
    context = error.__context__
    if context is not None and getattr(context, "error", None) is error:
        error.__suppress_context__ = True
    logger.error("%s in chat %r: %s", what, chat_id, type(error).__name__, exc_info=error)


def log_error_event(what: str, chat_id: str | None, code: str, message: str | None) -> None:
    """An error ADK reported as an event (a model's error response): no traceback exists."""
    logger.error("%s in chat %r: %s: %s", what, chat_id, code, message or "(no message)")
