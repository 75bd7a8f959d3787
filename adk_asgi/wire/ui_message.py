"""UIMessageState: UI message stream chunks folded into the ``UIMessage`` a client holds
once the stream ended — the AI SDK's ``processUIMessageStream`` (ai 5/6/7, ``ui/
process-ui-message-stream.ts``), and the two changes a page makes itself
(``addToolApprovalResponse``, ``addToolOutput``: ``ui_tool_parts.py``), ported rule for
rule.

The history (``history/messages.py``) runs a chat's session events through the translator
the stream uses and folds its chunks here, so a reloaded page shows the parts, states and
metadata the streaming page ended with. Chunks are the wire dicts (camelCase); keys the
client would leave ``undefined`` are left out, as ``JSON.stringify`` leaves them out. A
chunk the client would refuse (about a call it does not have, a delta without its start)
is skipped: reading a history never fails on one.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .chunks import UIChunk
from .ui_tool_parts import Part, UIToolParts, set_key

__all__ = ("UIMessageState", "merge_objects")


def merge_objects(base: Any, overrides: Any) -> Any:
    """The AI SDK's ``mergeObjects``: a deep merge of plain objects (arrays and other
    values are replaced); how message metadata from several chunks adds up."""
    if base is None:
        return overrides
    if overrides is None:
        return base
    result = dict(base)
    for key, value in overrides.items():
        if key in ("__proto__", "constructor", "prototype"):
            continue
        current = result.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            result[key] = merge_objects(current, value)
        else:
            result[key] = value
    return result


class UIMessageState:
    """One assistant message being built from chunks, as the client builds it."""

    __slots__ = ("_reasoning", "_texts", "message", "tools")

    def __init__(self, message_id: str) -> None:
        self.message: dict[str, Any] = {"id": message_id, "role": "assistant", "parts": []}
        self._texts: dict[str, Part] = {}
        self._reasoning: dict[str, Part] = {}
        self.tools = UIToolParts(self.message["parts"])
        """The message's tool parts (the stream's tool chunks and the page's answers)."""

    @property
    def parts(self) -> list[Part]:
        parts: list[Part] = self.message["parts"]
        return parts

    @property
    def steps(self) -> int:
        """The message's ``step-start`` parts so far."""
        return sum(1 for part in self.parts if part["type"] == "step-start")

    def apply_all(self, chunks: list[UIChunk]) -> None:
        for chunk in chunks:
            self.apply(msgspec.to_builtins(chunk))

    # -- chunks ------------------------------------------------------------------------

    def apply(self, chunk: dict[str, Any]) -> None:
        kind = chunk["type"]
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, chunk)
        elif kind.startswith("data-"):
            self._data(chunk)
        # error, abort, finish-step: nothing in the message

    def _metadata(self, metadata: Any) -> None:
        if metadata is not None:
            current = self.message.get("metadata")
            self.message["metadata"] = (
                merge_objects(current, metadata)
                if isinstance(current, dict) and isinstance(metadata, dict)
                else metadata
            )

    def _start(self, chunk: dict[str, Any]) -> None:
        if chunk.get("messageId") is not None:
            self.message["id"] = chunk["messageId"]
        self._metadata(chunk.get("messageMetadata"))

    def _finish(self, chunk: dict[str, Any]) -> None:
        self._metadata(chunk.get("messageMetadata"))

    def _step(self, chunk: dict[str, Any]) -> None:
        self.parts.append({"type": "step-start"})

    def _block_start(self, chunk: dict[str, Any]) -> None:
        reasoning = chunk["type"] == "reasoning-start"
        part: Part = {"type": "reasoning", "id": chunk["id"]} if reasoning else {"type": "text"}
        part["text"] = ""
        set_key(part, "providerMetadata", chunk.get("providerMetadata"))
        part["state"] = "streaming"
        (self._reasoning if reasoning else self._texts)[chunk["id"]] = part
        self.parts.append(part)

    def _block_delta(self, chunk: dict[str, Any]) -> None:
        active = self._reasoning if chunk["type"] == "reasoning-delta" else self._texts
        part = active.get(chunk["id"])
        if part is None:
            return
        part["text"] += chunk["delta"]
        if chunk.get("providerMetadata") is not None:
            part["providerMetadata"] = chunk["providerMetadata"]

    def _block_end(self, chunk: dict[str, Any]) -> None:
        active = self._reasoning if chunk["type"] == "reasoning-end" else self._texts
        part = active.pop(chunk["id"], None)
        if part is None:
            return
        if chunk.get("providerMetadata") is not None:
            part["providerMetadata"] = chunk["providerMetadata"]
        part["state"] = "done"

    def _file(self, chunk: dict[str, Any]) -> None:
        part: Part = {"type": chunk["type"], "mediaType": chunk["mediaType"], "url": chunk["url"]}
        set_key(part, "providerMetadata", chunk.get("providerMetadata"))
        self.parts.append(part)

    def _source(self, chunk: dict[str, Any]) -> None:
        keys = (
            ("sourceId", "url", "title")
            if chunk["type"] == "source-url"
            else ("sourceId", "mediaType", "title", "filename")
        )
        part: Part = {"type": chunk["type"]}
        for key in (*keys, "providerMetadata"):
            set_key(part, key, chunk.get(key))
        self.parts.append(part)

    def _data(self, chunk: dict[str, Any]) -> None:
        if chunk.get("transient"):
            return
        if chunk.get("id") is not None:
            for part in self.parts:
                if part["type"] == chunk["type"] and part.get("id") == chunk["id"]:
                    part["data"] = chunk["data"]
                    return
        self.parts.append(dict(chunk))


_HANDLERS: dict[str, Any] = {
    "start": UIMessageState._start,
    "finish": UIMessageState._finish,
    "message-metadata": UIMessageState._finish,
    "start-step": UIMessageState._step,
    "text-start": UIMessageState._block_start,
    "reasoning-start": UIMessageState._block_start,
    "text-delta": UIMessageState._block_delta,
    "reasoning-delta": UIMessageState._block_delta,
    "text-end": UIMessageState._block_end,
    "reasoning-end": UIMessageState._block_end,
    "file": UIMessageState._file,
    "source-url": UIMessageState._source,
    "source-document": UIMessageState._source,
    "tool-input-start": lambda state, chunk: state.tools.input(chunk),
    "tool-input-available": lambda state, chunk: state.tools.input(chunk),
    "tool-input-error": lambda state, chunk: state.tools.input_error(chunk),
    "tool-approval-request": lambda state, chunk: state.tools.approval_request(chunk),
    "tool-output-denied": lambda state, chunk: state.tools.denied(chunk),
    "tool-output-available": lambda state, chunk: state.tools.output(chunk),
    "tool-output-error": lambda state, chunk: state.tools.output(chunk),
}
