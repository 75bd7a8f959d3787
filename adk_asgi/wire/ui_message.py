"""UIMessageState: UI message stream chunks folded into the ``UIMessage`` a client holds
once the stream ended — the AI SDK's ``processUIMessageStream`` (ai 5/6/7, ``ui/
process-ui-message-stream.ts``), and the two changes a page makes itself
(``addToolApprovalResponse``, ``addToolOutput``), ported rule for rule.

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

__all__ = ("UIMessageState", "merge_objects")

Part = dict[str, Any]


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


def _is_tool(part: Part) -> bool:
    kind = str(part.get("type", ""))
    return kind.startswith("tool-") or kind == "dynamic-tool"


def _set(part: Part, key: str, value: Any) -> None:
    """``part[key] = value`` where ``undefined`` (None here) removes the key."""
    if value is None:
        part.pop(key, None)
    else:
        part[key] = value


class UIMessageState:
    """One assistant message being built from chunks, as the client builds it."""

    __slots__ = ("_reasoning", "_texts", "message")

    def __init__(self, message_id: str) -> None:
        self.message: dict[str, Any] = {"id": message_id, "role": "assistant", "parts": []}
        self._texts: dict[str, Part] = {}
        self._reasoning: dict[str, Part] = {}

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

    def has_call(self, call_id: str) -> bool:
        """The message has a tool part for ``call_id``."""
        return any(_is_tool(p) and p.get("toolCallId") == call_id for p in self.parts)

    # -- the page's own changes ----------------------------------------------------

    def respond_approval(self, approval_id: str, approved: bool, reason: str | None) -> None:
        """``addToolApprovalResponse({id, approved, reason})``."""
        for part in self.parts:
            approval = part.get("approval")
            if (
                _is_tool(part)
                and part.get("state") == "approval-requested"
                and isinstance(approval, dict)
                and approval.get("id") == approval_id
            ):
                part["state"] = "approval-responded"
                part["approval"] = {**approval, "id": approval_id, "approved": approved}
                _set(part["approval"], "reason", reason)

    def add_tool_output(
        self, call_id: str, output: Any = None, error_text: str | None = None
    ) -> None:
        """``addToolOutput({toolCallId, output})`` (or ``state: 'output-error'``)."""
        for part in self.parts:
            if _is_tool(part) and part.get("toolCallId") == call_id:
                approval = part.get("approval")
                if isinstance(approval, dict) and approval.get("approved") is not True:
                    del part["approval"]  # outputs keep only a granted approval
                if error_text is not None:
                    part.update(state="output-error", errorText=error_text)
                    part.pop("output", None)
                else:
                    part.update(state="output-available", output=output)
                    part.pop("errorText", None)

    def edit_payload(self, call_id: str, payload: Any) -> None:
        """The page's edit of what the user approves (``callProviderMetadata.adk.payload``)."""
        for part in self.parts:
            if _is_tool(part) and part.get("toolCallId") == call_id:
                metadata = dict(part.get("callProviderMetadata") or {})
                metadata["adk"] = {**(metadata.get("adk") or {}), "payload": payload}
                part["callProviderMetadata"] = metadata

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
        _set(part, "providerMetadata", chunk.get("providerMetadata"))
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
        _set(part, "providerMetadata", chunk.get("providerMetadata"))
        self.parts.append(part)

    def _source(self, chunk: dict[str, Any]) -> None:
        keys = (
            ("sourceId", "url", "title")
            if chunk["type"] == "source-url"
            else ("sourceId", "mediaType", "title", "filename")
        )
        part: Part = {"type": chunk["type"]}
        for key in (*keys, "providerMetadata"):
            _set(part, key, chunk.get(key))
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

    # -- tool parts ------------------------------------------------------------------

    def _current_step(self) -> list[Part]:
        parts = self.parts
        for index in range(len(parts) - 1, -1, -1):
            if parts[index]["type"] == "step-start":
                return parts[index + 1 :]
        return parts

    def _invocation(self, call_id: str) -> Part | None:
        """The call's part (None: a chunk the client would refuse; skipped here)."""
        for part in self._current_step():
            if _is_tool(part) and part.get("toolCallId") == call_id:
                return part
        for part in reversed(self.parts):
            if _is_tool(part) and part.get("toolCallId") == call_id:
                return part
        return None

    def _update_tool(
        self, chunk: dict[str, Any], state: str, existing: Part | None, **values: Any
    ) -> None:
        """``updateToolPart`` / ``updateDynamicToolPart``."""
        call_id = chunk["toolCallId"]
        name = values.pop("name")
        dynamic = values.pop("dynamic", False)
        part = existing
        if part is None:
            part = next(
                (
                    p
                    for p in self._current_step()
                    if _is_tool(p)
                    and p.get("toolCallId") == call_id
                    and (p["type"] == "dynamic-tool") == dynamic
                ),
                None,
            )
        metadata = chunk.get("providerMetadata")
        result = state in ("output-available", "output-error")
        if part is not None:
            part["state"] = state
            if part["type"] == "dynamic-tool":
                part["toolName"] = name
            else:
                part["type"] = f"tool-{name}"
            for key in ("input", "output", "errorText", "rawInput", "preliminary"):
                _set(part, key, values.get(key))
            executed = chunk.get("providerExecuted")
            if executed is not None:
                part["providerExecuted"] = executed
            if metadata is not None:
                part["resultProviderMetadata" if result else "callProviderMetadata"] = metadata
            return
        new: Part = (
            {"type": "dynamic-tool", "toolName": name, "toolCallId": call_id}
            if dynamic
            else {"type": f"tool-{name}", "toolCallId": call_id}
        )
        new["state"] = state
        for key in ("input", "output", "rawInput", "errorText"):
            _set(new, key, values.get(key))
        _set(new, "providerExecuted", chunk.get("providerExecuted"))
        _set(new, "preliminary", values.get("preliminary"))
        if metadata is not None:
            new["resultProviderMetadata" if result else "callProviderMetadata"] = metadata
        self.parts.append(new)

    def _tool_input(self, chunk: dict[str, Any]) -> None:
        state = "input-streaming" if chunk["type"] == "tool-input-start" else "input-available"
        self._update_tool(
            chunk,
            state,
            None,
            name=chunk["toolName"],
            dynamic=bool(chunk.get("dynamic")),
            input=chunk.get("input"),
        )

    def _tool_input_error(self, chunk: dict[str, Any]) -> None:
        self._update_tool(
            chunk,
            "output-error",
            None,
            name=chunk["toolName"],
            dynamic=bool(chunk.get("dynamic")),
            input=chunk.get("input"),
            errorText=chunk["errorText"],
        )

    def _approval_request(self, chunk: dict[str, Any]) -> None:
        part = self._invocation(chunk["toolCallId"])
        if part is None:
            return
        part["state"] = "approval-requested"
        part["approval"] = {"id": chunk["approvalId"]}

    def _denied(self, chunk: dict[str, Any]) -> None:
        part = self._invocation(chunk["toolCallId"])
        if part is not None:
            part["state"] = "output-denied"

    def _tool_output(self, chunk: dict[str, Any]) -> None:
        part = self._invocation(chunk["toolCallId"])
        if part is None:
            return
        name = part["toolName"] if part["type"] == "dynamic-tool" else part["type"][5:]
        if chunk["type"] == "tool-output-available":
            self._update_tool(
                chunk,
                "output-available",
                part,
                name=name,
                input=part.get("input"),
                output=chunk.get("output"),
                preliminary=chunk.get("preliminary"),
            )
        else:
            self._update_tool(
                chunk,
                "output-error",
                part,
                name=name,
                input=part.get("input"),
                rawInput=part.get("rawInput"),
                errorText=chunk["errorText"],
            )


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
    "tool-input-start": UIMessageState._tool_input,
    "tool-input-available": UIMessageState._tool_input,
    "tool-input-error": UIMessageState._tool_input_error,
    "tool-approval-request": UIMessageState._approval_request,
    "tool-output-denied": UIMessageState._denied,
    "tool-output-available": UIMessageState._tool_output,
    "tool-output-error": UIMessageState._tool_output,
}
