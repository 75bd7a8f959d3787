"""What a request carries besides its body: its query string and headers, read one way by
every route.

A number there is a whole number in ASCII digits and no longer than ``max_digits``:
``str.isdigit`` also passes ``²`` and ``١`` (which ``int`` then refuses) and ``int`` takes
``+1``, `` 1``, ``1_000`` and, past 4,300 digits, raises; none of those is a number here.
A route that gets anything else answers its own 4xx, before any store is asked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import parse_qs

__all__ = ("MAX_DIGITS", "MAX_QUERY_BYTES", "header", "query", "whole_number")

MAX_DIGITS: Final = 18
"""The most digits a number in a query or header may have (below 2**63)."""
MAX_QUERY_BYTES: Final = 8192
"""A longer query string is read as far as this (no route takes more)."""


def whole_number(text: str | bytes | None, max_digits: int = MAX_DIGITS) -> int | None:
    """``text`` as a whole number: 1 to ``max_digits`` ASCII digits, nothing else; None for
    anything else (empty, a sign, spaces, non-ASCII digits, too many digits)."""
    if text is None:
        return None
    raw = text.encode("latin-1", "replace") if isinstance(text, str) else text
    if not 0 < len(raw) <= max_digits or not raw.isdigit():  # bytes.isdigit: ASCII only
        return None
    return int(raw)


def query(scope: Mapping[str, Any]) -> dict[str, list[str]]:
    """The request's query parameters (percent-decoded as UTF-8, blank values kept)."""
    raw = bytes(scope.get("query_string") or b"")[:MAX_QUERY_BYTES]
    return parse_qs(raw.decode("latin-1"), keep_blank_values=True, errors="replace")


def header(scope: Mapping[str, Any], name: bytes) -> str | None:
    """The first value of header ``name`` (lower case), as latin-1 text."""
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None
