"""Structured logs: ``JsonFormatter`` writes one JSON object per line (time, level, logger,
message, and the chat id and user of the turn or connection that logged, where known), and
``log_context`` is how the pipelines say which chat and user that is.

The context is a ``ContextVar`` holding a small mutable record: tasks a turn or connection
starts inherit it, and a live connection fills the chat id in once its first message names
the chat.
"""

from __future__ import annotations

import contextvars
import json
import logging
import logging.config
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

from opentelemetry import trace

__all__ = (
    "TEXT_FORMAT",
    "JsonFormatter",
    "LogContext",
    "current_log_context",
    "json_log_config",
    "log_context",
    "setup_logging",
)


class LogContext:
    """Who a log line is about."""

    __slots__ = ("chat_id", "user_id")

    def __init__(self, chat_id: str | None, user_id: str | None) -> None:
        self.chat_id = chat_id
        self.user_id = user_id


_CONTEXT: Final[contextvars.ContextVar[LogContext | None]] = contextvars.ContextVar(
    "adk_asgi_log_context", default=None
)


@contextmanager
def log_context(chat_id: str | None, user_id: str | None) -> Iterator[LogContext]:
    """Log lines written inside (and in tasks started inside) carry this chat and user."""
    context = LogContext(chat_id, user_id)
    token = _CONTEXT.set(context)
    try:
        yield context
    finally:
        _CONTEXT.reset(token)


def current_log_context() -> LogContext | None:
    return _CONTEXT.get()


# The attributes every LogRecord has: anything else was passed in ``extra=`` and is kept.
_STANDARD: Final = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
}  # uvicorn's ANSI copy of the message


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``time`` (UTC, ISO 8601), ``level``, ``logger``,
    ``message``; ``chat_id`` and ``user_id`` where known; ``trace_id`` and ``span_id``
    inside a recorded span; ``exception`` with the traceback; fields given in
    ``extra=``."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": _iso(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        context = _CONTEXT.get()
        if context is not None:
            if context.chat_id is not None:
                entry["chat_id"] = context.chat_id
            if context.user_id is not None:
                entry["user_id"] = context.user_id
        span = trace.get_current_span().get_span_context()
        if span.is_valid:
            entry["trace_id"] = format(span.trace_id, "032x")
            entry["span_id"] = format(span.span_id, "016x")
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


def _iso(created: float) -> str:
    seconds = int(created)
    millis = int((created - seconds) * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


TEXT_FORMAT: Final = "%(levelname)s %(name)s: %(message)s"


def json_log_config(level: str) -> dict[str, Any]:
    """A ``logging.config.dictConfig`` (and uvicorn ``log_config``) writing JSON lines to
    stderr, uvicorn's own lines (start-up, errors, access) included."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": f"{__name__}.JsonFormatter"}},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "stream": "ext://sys.stderr",
            }
        },
        "root": {"handlers": ["stderr"], "level": level.upper()},
        # uvicorn's loggers write through the root's handler.
        "loggers": {
            name: {"handlers": [], "propagate": True}
            for name in ("uvicorn", "uvicorn.error", "uvicorn.access")
        },
    }


def setup_logging(level: str, log_format: str) -> None:
    """Configure the root logger: ``text`` lines or ``json`` objects, one a line."""
    if log_format == "json":
        logging.config.dictConfig(json_log_config(level))
    else:
        logging.basicConfig(level=level.upper(), format=TEXT_FORMAT)
