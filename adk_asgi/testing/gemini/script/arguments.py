"""Arguments for a declared function, generated from its schema (the default script's
calls of your own tools).

The rule, applied to each parameter of the declaration (``parameters`` as a Gemini
``Schema``, or ``parametersJsonSchema`` as JSON Schema, which ADK sends):

1. a value the user's message gives as ``name=value`` (``symbol=GOOG``,
   ``note="two words"``), converted to the parameter's type;
2. else the schema's ``default``, the first of its ``enum``, or its ``example`` (the first
   of ``examples``);
3. else a value of its type: a string is the parameter's name (``"symbol"``; for the
   formats ``date``, ``date-time``, ``time``, ``email``, ``uri`` and ``uuid`` a fixed
   value of that format; padded or cut to ``minLength``/``maxLength``); an integer is
   ``minimum`` (``exclusiveMinimum`` + 1), else 1, capped at ``maximum``; a number
   likewise (1.0); a boolean is ``true``; an array holds ``minItems`` items (at least one)
   of its ``items``; an object holds its properties by this rule; ``anyOf``/``oneOf``
   take their first alternative that is not ``null``; ``$ref`` follows ``$defs``.

Optional parameters (not in ``required``) are left out unless the message gives them;
a schema without a ``required`` list has all its properties generated. The result
depends on nothing but the declaration and the message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from google.genai import types

__all__ = ("arguments_for",)

_MAX_DEPTH = 8
_ALTERNATIVES = ("anyOf", "any_of", "oneOf", "one_of", "allOf", "all_of")
_FORMATS: dict[str, str] = {
    "date": "2025-01-01",
    "date-time": "2025-01-01T00:00:00Z",
    "time": "00:00:00",
    "email": "user@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
}
# name=value: a quoted string or a run up to whitespace, a comma or the end.
_ASSIGNMENT = r"""(?<![\w.-]){name}\s*=\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[^\s,;]+))"""


def arguments_for(declaration: types.FunctionDeclaration, message: str = "") -> dict[str, Any]:
    """The arguments the default script calls ``declaration`` with (the rule above).

    >>> from google.genai import types
    >>> quote = types.FunctionDeclaration(name="get_stock_price", parameters_json_schema={
    ...     "type": "object", "required": ["symbol"],
    ...     "properties": {"symbol": {"type": "string"},
    ...                    "exchange": {"type": "string", "default": "NASDAQ"}}})
    >>> arguments_for(quote)
    {'symbol': 'symbol'}
    >>> arguments_for(quote, "use get_stock_price with symbol=GOOG exchange=NYSE")
    {'symbol': 'GOOG', 'exchange': 'NYSE'}
    """
    schema = parameters_schema(declaration)
    if schema is None:
        return {}
    value = _Generator(schema, message).object(schema, depth=0, top=True)
    return value if isinstance(value, dict) else {}


def parameters_schema(declaration: types.FunctionDeclaration) -> dict[str, Any] | None:
    """The declaration's parameters as a plain schema dict (JSON Schema or Gemini's)."""
    if isinstance(declaration.parameters_json_schema, Mapping):
        return dict(declaration.parameters_json_schema)
    if declaration.parameters is not None:
        dumped: dict[str, Any] = declaration.parameters.model_dump(mode="json", exclude_none=True)
        return dumped
    return None


def parameter_names(declaration: types.FunctionDeclaration) -> frozenset[str]:
    """The names of the declaration's top-level parameters."""
    schema = parameters_schema(declaration) or {}
    properties = _field(schema, "properties")
    return frozenset(properties) if isinstance(properties, Mapping) else frozenset()


def _field(schema: Mapping[str, Any], snake: str) -> Any:
    """A schema keyword in either spelling (Gemini's ``min_items`` or JSON Schema's
    ``minItems``)."""
    if snake in schema:
        return schema[snake]
    head, *rest = snake.split("_")
    return schema.get(head + "".join(word.title() for word in rest))


def _type(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):  # JSON Schema: ["string", "null"]
        kind = next((k for k in kind if str(k).lower() != "null"), "null")
    if kind and str(kind).upper() != "TYPE_UNSPECIFIED":
        return str(kind).lower()
    if _field(schema, "properties") is not None:
        return "object"
    if schema.get("items") is not None:
        return "array"
    return "string"


class _Generator:
    def __init__(self, root: Mapping[str, Any], message: str) -> None:
        self._root = root
        self._message = message

    def value(self, schema: Any, name: str, depth: int) -> Any:
        if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
            return None
        schema = self.effective(schema)
        if "default" in schema:
            return schema["default"]
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            return enum[0]
        if "example" in schema:
            return schema["example"]
        examples = schema.get("examples")
        if isinstance(examples, list) and examples:
            return examples[0]
        kind = _type(schema)
        if kind == "object":
            return self.object(schema, depth)
        if kind == "array":
            count = max(1, int(_field(schema, "min_items") or 1))
            return [self.value(schema.get("items") or {}, name, depth + 1) for _ in range(count)]
        if kind == "integer":
            return int(self._number(schema, integer=True))
        if kind == "number":
            return float(self._number(schema, integer=False))
        if kind == "boolean":
            return True
        if kind == "null":
            return None
        return self._string(schema, name)

    def object(self, schema: Mapping[str, Any], depth: int, *, top: bool = False) -> Any:
        properties = _field(schema, "properties")
        if not isinstance(properties, Mapping):
            return {}
        required = schema.get("required")
        names = list(properties)
        ordering = _field(schema, "property_ordering")
        if isinstance(ordering, list):
            names = [n for n in ordering if n in properties] + [
                n for n in names if n not in ordering
            ]
        result: dict[str, Any] = {}
        for name in names:
            given = self._given(name, properties[name]) if top else _MISSING
            if given is not _MISSING:
                result[name] = given
            elif not isinstance(required, list) or name in required:
                result[name] = self.value(properties[name], name, depth + 1)
        return result

    def _given(self, name: str, schema: Any) -> Any:
        match = re.search(_ASSIGNMENT.format(name=re.escape(name)), self._message)
        if match is None:
            return _MISSING
        raw = next(g for g in (match["dq"], match["sq"], match["bare"]) if g is not None)
        if match["bare"] is not None:
            raw = raw.rstrip(".!?")
        return _convert(raw, self.effective(schema) if isinstance(schema, Mapping) else {})

    def effective(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        """``schema`` with ``$ref`` followed and ``anyOf``/``oneOf``/``allOf`` reduced to
        their first alternative that is not ``null``."""
        for _ in range(_MAX_DEPTH):
            schema = self._resolve(schema)
            keyword = next((k for k in _ALTERNATIVES if isinstance(schema.get(k), list)), None)
            if keyword is None or not schema[keyword]:
                return schema
            alternatives = schema[keyword]
            chosen = next(
                (
                    a
                    for a in alternatives
                    if isinstance(a, Mapping) and _type(self._resolve(a)) != "null"
                ),
                alternatives[0],
            )
            rest = {k: v for k, v in schema.items() if k not in _ALTERNATIVES}
            schema = {**rest, **(chosen if isinstance(chosen, Mapping) else {})}
        return schema

    def _resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        for _ in range(_MAX_DEPTH):
            ref = schema.get("$ref")
            if not isinstance(ref, str) or not ref.startswith("#/"):
                return schema
            target: Any = self._root
            for piece in ref[2:].split("/"):
                target = target.get(piece) if isinstance(target, Mapping) else None
            if not isinstance(target, Mapping):
                return {}
            schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return schema

    @staticmethod
    def _number(schema: Mapping[str, Any], *, integer: bool) -> float:
        minimum = schema.get("minimum")
        exclusive = _field(schema, "exclusive_minimum")
        if isinstance(exclusive, (int, float)) and not isinstance(exclusive, bool):
            value = float(exclusive) + 1
        elif isinstance(minimum, (int, float)) and not isinstance(minimum, bool):
            value = float(minimum)
        else:
            value = 1.0
        maximum = schema.get("maximum")
        if isinstance(maximum, (int, float)) and not isinstance(maximum, bool):
            value = min(value, float(maximum))
        return float(int(value)) if integer else value

    @staticmethod
    def _string(schema: Mapping[str, Any], name: str) -> str:
        text = _FORMATS.get(str(schema.get("format") or "").lower(), name or "value")
        shortest = int(_field(schema, "min_length") or 0)
        longest = _field(schema, "max_length")
        text = text.ljust(shortest, "x")
        if longest is not None:
            text = text[: int(longest)]
        return text


_MISSING = object()


def _convert(raw: str, schema: Mapping[str, Any]) -> Any:
    kind = _type(schema)
    try:
        if kind == "integer":
            return int(raw)
        if kind == "number":
            return float(raw)
        if kind == "boolean":
            return raw.lower() in ("true", "yes", "1", "on")
        if kind in ("array", "object"):
            return json.loads(raw)
    except ValueError:
        pass
    return raw
