"""UIToolParts: the tool parts of a ``UIMessage`` as the AI SDK client changes them — from
the stream's tool chunks (``updateToolPart``, ``updateDynamicToolPart`` of ai 5/6/7's
``process-ui-message-stream.ts``) and from the page itself (``addToolApprovalResponse``,
``addToolOutput``), ported rule for rule. A part goes ``input-streaming`` →
``input-available`` → (``approval-requested`` → ``approval-responded``) →
``output-available`` / ``output-error`` / ``output-denied``. A chunk about a call the
message does not have is skipped, as the client would refuse it.
"""

from __future__ import annotations

from typing import Any

__all__ = ("Part", "UIToolParts", "is_tool", "set_key")

Part = dict[str, Any]


def is_tool(part: Part) -> bool:
    kind = str(part.get("type", ""))
    return kind.startswith("tool-") or kind == "dynamic-tool"


def set_key(part: Part, key: str, value: Any) -> None:
    """``part[key] = value`` where ``undefined`` (None here) removes the key."""
    if value is None:
        part.pop(key, None)
    else:
        part[key] = value


class UIToolParts:
    """The tool parts among a message's ``parts`` (the list is the message's own)."""

    __slots__ = ("parts",)

    def __init__(self, parts: list[Part]) -> None:
        self.parts = parts

    def has_call(self, call_id: str) -> bool:
        """The message has a tool part for ``call_id``."""
        return any(is_tool(p) and p.get("toolCallId") == call_id for p in self.parts)

    # -- the page's own changes --------------------------------------------------------

    def respond_approval(self, approval_id: str, approved: bool, reason: str | None) -> None:
        """``addToolApprovalResponse({id, approved, reason})``."""
        for part in self.parts:
            approval = part.get("approval")
            if (
                is_tool(part)
                and part.get("state") == "approval-requested"
                and isinstance(approval, dict)
                and approval.get("id") == approval_id
            ):
                part["state"] = "approval-responded"
                part["approval"] = {**approval, "id": approval_id, "approved": approved}
                set_key(part["approval"], "reason", reason)

    def add_tool_output(
        self, call_id: str, output: Any = None, error_text: str | None = None
    ) -> None:
        """``addToolOutput({toolCallId, output})`` (or ``state: 'output-error'``)."""
        for part in self.parts:
            if is_tool(part) and part.get("toolCallId") == call_id:
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
            if is_tool(part) and part.get("toolCallId") == call_id:
                metadata = dict(part.get("callProviderMetadata") or {})
                metadata["adk"] = {**(metadata.get("adk") or {}), "payload": payload}
                part["callProviderMetadata"] = metadata

    # -- the stream's tool chunks -------------------------------------------------------

    def _current_step(self) -> list[Part]:
        parts = self.parts
        for index in range(len(parts) - 1, -1, -1):
            if parts[index]["type"] == "step-start":
                return parts[index + 1 :]
        return parts

    def _invocation(self, call_id: str) -> Part | None:
        """The call's part (None: a chunk the client would refuse; skipped here)."""
        for part in self._current_step():
            if is_tool(part) and part.get("toolCallId") == call_id:
                return part
        for part in reversed(self.parts):
            if is_tool(part) and part.get("toolCallId") == call_id:
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
                    if is_tool(p)
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
                set_key(part, key, values.get(key))
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
            set_key(new, key, values.get(key))
        set_key(new, "providerExecuted", chunk.get("providerExecuted"))
        set_key(new, "preliminary", values.get("preliminary"))
        if metadata is not None:
            new["resultProviderMetadata" if result else "callProviderMetadata"] = metadata
        self.parts.append(new)

    def input(self, chunk: dict[str, Any]) -> None:
        state = "input-streaming" if chunk["type"] == "tool-input-start" else "input-available"
        self._update_tool(
            chunk,
            state,
            None,
            name=chunk["toolName"],
            dynamic=bool(chunk.get("dynamic")),
            input=chunk.get("input"),
        )

    def input_error(self, chunk: dict[str, Any]) -> None:
        self._update_tool(
            chunk,
            "output-error",
            None,
            name=chunk["toolName"],
            dynamic=bool(chunk.get("dynamic")),
            input=chunk.get("input"),
            errorText=chunk["errorText"],
        )

    def approval_request(self, chunk: dict[str, Any]) -> None:
        part = self._invocation(chunk["toolCallId"])
        if part is None:
            return
        part["state"] = "approval-requested"
        part["approval"] = {"id": chunk["approvalId"]}

    def denied(self, chunk: dict[str, Any]) -> None:
        part = self._invocation(chunk["toolCallId"])
        if part is not None:
            part["state"] = "output-denied"

    def output(self, chunk: dict[str, Any]) -> None:
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
