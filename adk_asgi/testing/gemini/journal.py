"""What the emulator received and how it ended connections, for tests to inspect."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ("Journal", "Record")


@dataclass(frozen=True, slots=True)
class Record:
    """One thing the emulator saw.

    ``transport`` is ``"http"`` or ``"live"``; ``kind`` is the HTTP method name
    (``generateContent``, ``streamGenerateContent``), a Live client message's field
    (``setup``, ``clientContent``, ``realtimeInput``, ``toolResponse``,
    ``contextUpdate``), ``"close"`` for a connection the emulator closed (``data`` holds
    ``code``, ``reason`` and ``detail``) or ``"disconnect"`` for one the client closed
    (``data`` holds ``code``).
    """

    transport: Literal["http", "live"]
    kind: str
    data: dict[str, Any] = field(default_factory=dict)
    connection: int | None = None
    """Live API connection number (1, 2, ...), None for HTTP."""


class Journal:
    """A thread-safe, append-only list of `Record`s."""

    def __init__(self) -> None:
        self._records: list[Record] = []
        self._lock = threading.Lock()

    def add(self, record: Record) -> None:
        with self._lock:
            self._records.append(record)

    def records(self, kind: str | None = None) -> list[Record]:
        """A copy of the records, optionally only those of one ``kind``."""
        with self._lock:
            return [r for r in self._records if kind is None or r.kind == kind]

    def clear(self) -> None:
        with self._lock:
            self._records.clear()

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records())

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)
