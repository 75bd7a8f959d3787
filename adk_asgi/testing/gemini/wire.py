"""JSON on the wire: google-genai types out, proto-JSON objects in.

Server messages are google-genai's own types (``GenerateContentResponse``,
``LiveServerMessage``) dumped by alias, so clients parse exactly what they parse from
Google. Bytes go out in standard base64 with padding, as proto3 JSON prints them
(https://protobuf.dev/programming-guides/json/); pydantic's own JSON mode would print the
URL-safe alphabet, which browsers' ``atob`` cannot read.

Client messages are proto JSON, whose parsers accept both the lowerCamelCase JSON names
and the original snake_case field names (google-genai itself sends a mix, e.g.
``{"realtime_input": ...}`` and ``"automatic_activity_detection"``), so every lookup here
takes either spelling.
"""

from __future__ import annotations

import base64
import binascii
import enum
import json
from collections.abc import Mapping
from typing import Any, TypeVar

import pydantic
from google.genai import types

__all__ = (
    "WireError",
    "bytes_field",
    "content_list",
    "dump",
    "encode",
    "get",
    "parse_model",
    "snake",
)

M = TypeVar("M", bound=pydantic.BaseModel)


class WireError(ValueError):
    """A client message that does not parse (answered with INVALID_ARGUMENT)."""


def _default(value: Any) -> Any:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, enum.Enum):
        return value.value
    raise TypeError(f"cannot encode {type(value).__name__}")


def dump(message: pydantic.BaseModel) -> dict[str, Any]:
    """``message`` as a JSON-ready dict by alias, without unset fields."""
    data: dict[str, Any] = json.loads(encode(message))
    return data


def encode(message: pydantic.BaseModel) -> str:
    """``message`` as JSON text by alias, without unset fields."""
    data = message.model_dump(mode="python", by_alias=True, exclude_none=True)
    for candidate in data.get("candidates") or ():
        # The Gemini API names a citation list "citationSources"; google-genai reads it
        # into ``CitationMetadata.citations``.
        cited = candidate.get("citationMetadata")
        if isinstance(cited, dict) and "citations" in cited:
            cited["citationSources"] = cited.pop("citations")
    return json.dumps(data, default=_default, ensure_ascii=False, separators=(",", ":"))


def snake(name: str) -> str:
    """``camelCase`` -> ``camel_case`` (proto field name of a JSON name)."""
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def get(obj: Any, name: str, default: Any = None) -> Any:
    """Field ``name`` (snake_case) of a proto-JSON object, in either spelling (``default``
    when ``obj`` is not an object)."""
    if not isinstance(obj, Mapping) or not obj:
        return default
    if name in obj:
        return obj[name]
    return obj.get(_camel(name), default)


def parse_model(model: type[M], value: Any, where: str) -> M:
    """Parse a proto-JSON value into a google-genai type (bytes from base64).

    Unknown fields are refused, as the API's JSON parser refuses them.
    """
    try:
        return model.model_validate_json(json.dumps(value))
    except pydantic.ValidationError as exc:
        raise WireError(f"Invalid value at '{where}': {_first_error(exc)}") from None


def bytes_field(value: Any, where: str) -> bytes:
    """Decode a base64 bytes field (standard or URL-safe alphabet, as proto JSON allows)."""
    if not isinstance(value, str):
        raise WireError(f"Invalid value at '{where}' (TYPE_BYTES): expected a base64 string")
    try:
        text = value.replace("-", "+").replace("_", "/")
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise WireError(
            f"Invalid value at '{where}' (TYPE_BYTES), Base64 decoding failed"
        ) from None


def _first_error(exc: pydantic.ValidationError) -> str:
    error = exc.errors()[0]
    location = ".".join(str(part) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        return f'Unknown name "{location}": Cannot find field.'
    return f"{location}: {error['msg']}"


def content_list(value: Any, where: str) -> list[types.Content]:
    """A repeated ``Content`` field."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise WireError(f"Invalid value at '{where}': expected a list of Content")
    return [parse_model(types.Content, item, f"{where}[{i}]") for i, item in enumerate(value)]
