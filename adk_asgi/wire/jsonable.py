"""JSON values for the wire: what tools return, what the session state holds, what workflow
nodes output and what ``on_event`` adds can be any Python value; chunks carry JSON.

They are converted the way ADK converts a function response for the model and the session
(pydantic's JSON mode, ``FunctionResponse.model_dump(mode="json", exclude_none=True)``):
pydantic models by their ``model_dump(mode="json", exclude_none=True)`` (google-genai's in
the Gemini API's camelCase), dataclasses as objects, datetimes, dates, times and
durations in ISO 8601, enums by value, bytes in base64, sets and tuples as arrays, UUIDs and
decimals as strings, non-finite floats as ``null``. A value that is already plain JSON
(the usual small dict of strings and numbers) is sent as it is, unconverted.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic_core import PydanticSerializationError, to_jsonable_python

__all__ = ("NotJson", "json_value")

# Containers checked item by item before converting: beyond these, pydantic's converter
# (native code) is the cheaper way to find out.
_CHECKED_ITEMS: Final = 64
_CHECKED_DEPTH: Final = 3


class NotJson(ValueError):
    """The value has no JSON form (an object pydantic cannot serialise, a cycle)."""


def json_value(value: Any) -> Any:
    """``value`` as plain JSON (dicts with string keys, lists, strings, numbers, booleans,
    None); raises ``NotJson``."""
    if _plain(value, 0):
        return value
    try:
        return to_jsonable_python(
            value, bytes_mode="base64", inf_nan_mode="null", exclude_none=True
        )
    except (PydanticSerializationError, ValueError, TypeError, RecursionError) as exc:
        raise NotJson(f"a {type(value).__name__} has no JSON form") from exc


def _plain(value: Any, depth: int) -> bool:
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return True
    if depth >= _CHECKED_DEPTH:
        return False
    if kind is dict:
        return len(value) <= _CHECKED_ITEMS and all(
            type(k) is str and _plain(v, depth + 1) for k, v in value.items()
        )
    if kind is list:
        return len(value) <= _CHECKED_ITEMS and all(_plain(v, depth + 1) for v in value)
    return False
