"""How deep the JSON a client sends may nest. msgspec refuses about 1,000 levels, but what
passes it can still break what stores it later (a session service's serializer, ADK's
copies): a chat's values never nest deeper than ``MAX_JSON_DEPTH``, checked at the door
(``422 json_too_deep``), so the stores behind only ever see what they can hold.
"""

from __future__ import annotations

from typing import Any, Final

from .errors import RequestError

__all__ = ("MAX_JSON_DEPTH", "check_depth", "too_deep")

MAX_JSON_DEPTH: Final = 64
"""Levels of arrays and objects one JSON value may nest (a tool's input or output, an
answer, a part's data)."""


def too_deep(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``value`` (decoded JSON) nests more than ``limit`` arrays and objects."""
    if not isinstance(value, dict | list):
        return False
    level: list[Any] = [value]
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        nested: list[Any] = []
        for item in level:
            children = item.values() if isinstance(item, dict) else item
            nested.extend(c for c in children if isinstance(c, dict | list))
        level = nested
    return False


def check_depth(*values: Any, where: str = "A value") -> None:
    """Refuse (``422 json_too_deep``) when any of ``values`` nests too deeply."""
    if any(too_deep(v) for v in values):
        raise RequestError(
            422, "json_too_deep", f"{where} nests deeper than {MAX_JSON_DEPTH} levels."
        )
