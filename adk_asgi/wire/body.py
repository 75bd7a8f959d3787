"""BodyFields: extra request fields the application lets into the run, as session state —
the AI SDK's ``body`` option (``sendMessage(msg, {body: {locale: "ja"}})``, or the
transport's ``body``), validated by type.

Only the fields the application names are read; each must have the declared type
(``422 invalid_body_field`` otherwise); absent fields change nothing. They reach the run
as a ``state_delta`` of the turn's user event, so instructions (``{locale}``), callbacks and
tools (``tool_context.state["locale"]``) read them. They come from the client: name only
fields a user may set, never state the server relies on (a plan, a role).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec
from msgspec import UNSET, UnsetType

from .depth import check_depth
from .errors import RequestError

__all__ = ("BodyFields",)

# The chat request's own fields (DefaultChatTransport, protocol B's `send`).
_RESERVED: Final = frozenset(
    {
        "id",
        "messages",
        "message",
        "trigger",
        "messageId",
        "body",
        "headers",
        "metadata",
        "requestId",
        "requestMetadata",
        "type",
    }
)


class BodyFields:
    """``{name: type}`` of the body fields to read (types as msgspec knows them: ``str``,
    ``int``, ``Literal[...]``, ``list[str]``, a ``msgspec.Struct``...)."""

    __slots__ = ("_names", "_type")

    def __init__(self, fields: Mapping[str, Any]) -> None:
        reserved = _RESERVED & set(fields)
        if reserved:
            raise ValueError(
                f"body_fields cannot read the request's own fields: {', '.join(sorted(reserved))}"
            )
        invalid = [name for name in fields if not name.isidentifier()]
        if invalid:
            raise ValueError(
                f"body_fields names {invalid!r}: plain identifiers only (no "
                "app:/user:/temp: prefixes: app and user state is shared beyond "
                "this chat)"
            )
        self._names = tuple(fields)
        try:
            self._type = msgspec.defstruct(
                "Body", [(name, typ | UnsetType, UNSET) for name, typ in fields.items()]
            )
        except TypeError as exc:
            raise ValueError(f"body_fields: {exc}") from None

    def __bool__(self) -> bool:
        return bool(self._names)

    def read(self, body: bytes) -> dict[str, Any]:
        """The named fields of a JSON request body (already decoded once as a request)."""
        try:
            value = msgspec.json.decode(body, type=self._type)
        except msgspec.ValidationError as exc:
            raise RequestError(422, "invalid_body_field", f"Invalid body field: {exc}") from None
        present = self._present(value)
        check_depth(*present.values(), where="A body field")
        return present

    def check(self, body: Any) -> dict[str, Any]:
        """The named fields of an already parsed object (protocol B's ``body``)."""
        if body is None:
            return {}
        try:
            value = msgspec.convert(body, type=self._type)
        except msgspec.ValidationError as exc:
            raise RequestError(422, "invalid_body_field", f"Invalid body field: {exc}") from None
        present = self._present(value)
        check_depth(*present.values(), where="A body field")
        return present

    def _present(self, value: Any) -> dict[str, Any]:
        fields = {name: getattr(value, name) for name in self._names}
        return {
            name: msgspec.to_builtins(item) for name, item in fields.items() if item is not UNSET
        }
