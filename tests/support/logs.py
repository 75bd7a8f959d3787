"""The package's log records, kept for a test to read (module-scoped fixtures share one
server, so pytest's function-scoped ``caplog`` cannot see what its turns logged)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def kept_records(level: int = logging.WARNING) -> Iterator[list[logging.LogRecord]]:
    """Every record of ``level`` or above the ``adk_asgi`` loggers emit inside the block."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(level)
    logger = logging.getLogger("adk_asgi")
    logger.addHandler(handler)
    try:
        yield records
    finally:
        logger.removeHandler(handler)
