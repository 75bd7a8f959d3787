"""The JSON Schemas of a module's types as one document (``Document``), for the compiler.

Every schema the module types (a tool's input, its output, an answer, ...) is one entry,
named; the ``$defs`` of all of them are gathered into the document's own, each under one
name (the same model in two tools is one type; two models of the same name are told apart
with a number) and every ``$ref`` points there. Titles below an entry are dropped: pydantic
titles every field ("City"), which would make a type of each.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

__all__ = ("Document", "type_name")

_LOCAL_REF: Final = re.compile(r"^#/(?:\$defs|definitions)/(.+)$")


def type_name(*words: str) -> str:
    """``type_name("get_weather", "input")`` is ``GetWeatherInput``."""
    pieces = [p for w in words for p in re.split(r"[^0-9A-Za-z]+|(?<=[a-z0-9])(?=[A-Z])", w) if p]
    name = "".join(p[:1].upper() + p[1:] for p in pieces) or "Value"
    return name if not name[0].isdigit() else "T" + name


class Document:
    """Entries by name, and the definitions they share."""

    def __init__(self, title: str) -> None:
        self.title = title
        self._entries: dict[str, dict[str, Any]] = {}
        self._defs: dict[str, dict[str, Any]] = {}
        self._known: dict[str, str] = {}  # a definition's JSON text -> its name here

    def add(self, name: str, schema: dict[str, Any], description: str | None = None) -> str:
        """An entry named ``name`` (made unique); the name it got."""
        name = self._free(name)
        renames: dict[str, str] = {}
        fresh: list[tuple[str, dict[str, Any]]] = []
        local = {**schema.get("definitions", {}), **schema.get("$defs", {})}
        for key, definition in local.items():  # names first: definitions refer to each other
            text = json.dumps([key, definition], sort_keys=True)
            if text in self._known:
                renames[key] = self._known[text]
                continue
            renames[key] = self._known[text] = defined = self._free(
                type_name(str(definition.get("title") or key))
            )
            self._defs[defined] = {}
            fresh.append((defined, definition))
        for defined, definition in fresh:
            body = _rewrite({k: v for k, v in definition.items() if k != "title"}, renames)
            self._defs[defined] = {**body, "title": defined}
        body = _rewrite(
            {k: v for k, v in schema.items() if k not in ("$defs", "definitions", "title")},
            renames,
        )
        body["title"] = name
        if description and "description" not in body:
            body["description"] = description
        self._entries[name] = body
        return name

    def schema(self) -> dict[str, Any]:
        """The document: an object whose properties are the entries."""
        return {
            "title": self.title,
            "type": "object",
            "properties": {name: entry for name, entry in self._entries.items()},
            "required": list(self._entries),
            "additionalProperties": False,
            "$defs": self._defs,
        }

    def _free(self, name: str) -> str:
        taken = set(self._entries) | set(self._defs) | {self.title}
        if name not in taken:
            return name
        number = 2
        while f"{name}{number}" in taken:
            number += 1
        return f"{name}{number}"


def _rewrite(value: Any, renames: dict[str, str]) -> Any:
    """``value`` with local references renamed and the titles below it dropped."""
    if isinstance(value, list):
        return [_rewrite(v, renames) for v in value]
    if not isinstance(value, dict):
        return value
    if isinstance(value.get("$ref"), str):
        # A reference with siblings ("default", say) is dereferenced into a copy, which the
        # compiler names anew (Unit1, Unit2, ...): the reference alone keeps one type. A
        # default changes no type, and a description stays on the definition.
        value = {"$ref": value["$ref"]}
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == "$ref" and isinstance(item, str) and (match := _LOCAL_REF.match(item)):
            out[key] = f"#/$defs/{renames.get(match.group(1), match.group(1))}"
        elif key in ("properties", "patternProperties", "$defs", "definitions") and isinstance(
            item, dict
        ):
            # Their keys are names, not keywords: a property may be called "title".
            out[key] = {name: _rewrite(sub, renames) for name, sub in item.items()}
        elif key == "title" and isinstance(item, str):
            continue
        else:
            out[key] = _rewrite(item, renames)
    return out
