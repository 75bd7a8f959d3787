"""What a user may answer to a request for input: the request's JSON Schema, checked with
``jsonschema`` (the schema's own draft, the latest when it names none).

A mismatch is ``422 invalid_input`` naming the first failing place as a JSON path
(``$.amount``) and what it must be. The message is built from the schema, never from the
value: an answer can hold what the user typed into a password field.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import Any, Final, cast

import msgspec
from jsonschema import exceptions, validators
from jsonschema.protocols import Validator

from ..wire.errors import RequestError

__all__ = ("MAX_INPUT_BYTES", "check_input")

logger = logging.getLogger("adk_asgi")

MAX_INPUT_BYTES: Final = 256 * 1024
"""The largest answer to a request for input (its JSON)."""
_SHOWN: Final = 120  # characters of a schema value quoted in an error message


def check_input(call_id: str, schema: dict[str, Any] | None, value: Any) -> None:
    """Raise ``RequestError`` (413 ``input_too_large``, 422 ``invalid_input``) unless
    ``value`` is a valid answer. No schema: any JSON value. A schema that is itself
    invalid (the agent's bug) is logged and not applied, so the chat is not stuck."""
    if len(msgspec.json.encode(value)) > MAX_INPUT_BYTES:
        raise RequestError(413, "input_too_large", f"An answer exceeds {MAX_INPUT_BYTES} bytes.")
    if schema is None:
        return
    validator = _validator(msgspec.json.encode(schema))
    if validator is None:
        return
    error = exceptions.best_match(validator.iter_errors(value))
    if error is not None:
        raise RequestError(
            422,
            "invalid_input",
            f"Invalid answer for call {call_id!r} at {error.json_path}: {_expected(error)}.",
        )


@lru_cache(maxsize=256)
def _validator(schema_json: bytes) -> Validator | None:
    schema = msgspec.json.decode(schema_json)
    if not isinstance(schema, dict):
        logger.warning(
            "A request for input has a response schema that is not a JSON Schema; "
            "answers are not checked"
        )
        return None
    cls = validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as error:
        logger.warning(
            "A request for input has an invalid response schema (%s); answers are not checked",
            error.message[:200],
        )
        return None
    validator: Validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    return validator


def _expected(error: exceptions.ValidationError) -> str:
    """What the failing place must be, from the schema keyword that failed."""
    keyword, expected = str(error.validator), cast(Any, error.validator_value)
    shown = _show(expected)
    match keyword:
        case "type":
            kinds = expected if isinstance(expected, list) else [expected]
            return "must be " + " or ".join(str(k) for k in kinds)
        case "required":
            missing = [
                name
                for name in expected
                if isinstance(error.instance, dict) and name not in error.instance
            ]
            return "is missing " + ", ".join(repr(name) for name in missing[:5])
        case "enum":
            return f"must be one of {shown}"
        case "const":
            return f"must be {shown}"
        case "minimum" | "exclusiveMinimum":
            return f"must be {'>=' if keyword == 'minimum' else '>'} {shown}"
        case "maximum" | "exclusiveMaximum":
            return f"must be {'<=' if keyword == 'maximum' else '<'} {shown}"
        case "minLength" | "maxLength":
            return (
                f"must have {'at least' if keyword == 'minLength' else 'at most'} "
                f"{shown} characters"
            )
        case "minItems" | "maxItems":
            return f"must have {'at least' if keyword == 'minItems' else 'at most'} {shown} items"
        case "pattern":
            return f"must match {shown}"
        case "format":
            return f"must be a valid {shown}"
        case "additionalProperties" | "unevaluatedProperties":
            return "has properties the schema does not allow"
        case _:
            return f"fails the schema's {keyword!r} rule"


def _show(value: Any) -> str:
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"
