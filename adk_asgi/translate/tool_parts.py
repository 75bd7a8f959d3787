"""ToolParts: the tool parts of one assistant message — calls, approval requests and
outcomes, and which calls still wait for the client.

Server tools are "provider executed" for the AI SDK: the client neither runs them (no
``onToolCall``) nor waits for them (the ``sendAutomaticallyWhen`` helpers). Every server
call gets an outcome, even when the run fails (``fail_open``). A call the user denied shows
as ``tool-output-denied`` (native style); the ADK-tool style shows ADK's error.

A tool's result is converted to JSON the way ADK converts it for the model
(``jsonable.py``); one that has none ends its call as ``tool-output-error`` with the generic
text (and one log line), the answer goes on. Code the model runs (Gemini's code execution,
or an agent's code executor) is a provider-executed ``code_execution`` call: its input is
the language and the code, its output the outcome and what the code printed; a failed run
is ``tool-output-error``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, Final

from ..pauses.approvals import CONFIRMATION_TOOL, frontend_approval_id
from ..wire.chunks import (
    ToolApprovalRequest,
    ToolInputAvailable,
    ToolInputStart,
    ToolOutputAvailable,
    ToolOutputDenied,
    ToolOutputError,
    UIChunk,
)
from ..wire.jsonable import NotJson, json_value

__all__ = ("CODE_TOOL", "TOOL_FAILED", "ToolParts")

TOOL_FAILED: Final = "The tool failed."
CODE_TOOL: Final = "code_execution"
"""The tool name of code the model runs (Gemini's name for its code execution tool)."""

logger = logging.getLogger("adk_asgi")


class ToolParts:
    __slots__ = (
        "_answered",
        "_approval_tools",
        "_denied",
        "_long_running",
        "_native",
        "_open",
        "approvals_requested",
        "awaiting",
    )

    def __init__(
        self,
        *,
        native: bool,
        denied: Iterable[str] = (),
        approval_tools: frozenset[str] = frozenset(),
        awaiting: Iterable[str] = (),
        resumed: Iterable[str] = (),
    ) -> None:
        self._native = native
        self._denied: set[str] = set(denied) if native else set()
        # Approved or denied in the request this message continues with (either style).
        self._answered = set(denied) | set(resumed)
        # Browser tools the user approves before the page runs them.
        self._approval_tools = approval_tools
        # Server tool calls sent without an outcome yet (with those of an earlier request
        # that run in this one: approved calls).
        self._open: dict[str, None] = dict.fromkeys(resumed)
        # Long-running server calls: the tool's own result is an interim one.
        self._long_running: set[str] = set()
        self.awaiting: set[str] = set(awaiting)
        """Call ids (or approval ids) the client has to answer before the run goes on."""
        self.approvals_requested = 0

    def call(
        self, call_id: str, name: str, args: dict[str, Any], client_side: bool, out: list[UIChunk]
    ) -> None:
        executed = None if client_side else True
        out.append(ToolInputStart(tool_call_id=call_id, tool_name=name, provider_executed=executed))
        out.append(
            ToolInputAvailable(
                tool_call_id=call_id, tool_name=name, input=args, provider_executed=executed
            )
        )
        if not client_side:
            self._open[call_id] = None
            return
        self.awaiting.add(call_id)
        if name == CONFIRMATION_TOOL:  # "adk-tool" style: the approval is this call
            self.approvals_requested += 1
        elif name in self._approval_tools:
            self.approvals_requested += 1
            out.append(
                ToolApprovalRequest(approval_id=frontend_approval_id(call_id), tool_call_id=call_id)
            )

    def approval_request(
        self,
        approval_id: str,
        call_id: str,
        name: str,
        args: dict[str, Any],
        hint: str | None,
        payload: Any,
        out: list[UIChunk],
    ) -> None:
        adk: dict[str, Any] = {"approvalId": approval_id}
        if hint:
            adk["hint"] = hint
        if payload is not None:
            try:
                adk["payload"] = json_value(payload)
            except NotJson as exc:
                logger.error(
                    "The confirmation payload of tool call %s cannot be sent: %s", call_id, exc
                )
        # Re-stating the call carries the hint and payload to the client, where they land
        # on the tool part as `callProviderMetadata.adk`.
        out.append(
            ToolInputAvailable(
                tool_call_id=call_id, tool_name=name, input=args, provider_metadata={"adk": adk}
            )
        )
        out.append(ToolApprovalRequest(approval_id=approval_id, tool_call_id=call_id))
        self.approvals_requested += 1
        self.awaiting.add(approval_id)
        self._open.pop(call_id, None)  # its outcome comes with the answer

    def long_running(self, call_id: str) -> None:
        """A long-running server call: the tool's result is interim (``preliminary``), the
        final one comes when the call is completed."""
        self._long_running.add(call_id)

    def outcome(
        self, call_id: str, result: Any, out: list[UIChunk], *, agent: bool = False
    ) -> None:
        """``agent``: the result is the agent's (a tool's), not an answer the client or
        the server sent in."""
        try:
            result = json_value(result)
        except NotJson as exc:
            logger.error("The result of tool call %s cannot be sent: %s", call_id, exc)
            out.append(ToolOutputError(tool_call_id=call_id, error_text=TOOL_FAILED))
            self._long_running.discard(call_id)
            self.awaiting.discard(call_id)
            self._open.pop(call_id, None)
            return
        if agent and call_id in self._long_running:
            out.append(ToolOutputAvailable(tool_call_id=call_id, output=result, preliminary=True))
            self._open.pop(call_id, None)
            return
        if call_id in self._denied and _is_error(result):
            out.append(ToolOutputDenied(tool_call_id=call_id))
        elif _is_error(result):
            assert result is not None
            out.append(ToolOutputError(tool_call_id=call_id, error_text=str(result["error"])))
        else:
            out.append(ToolOutputAvailable(tool_call_id=call_id, output=result))
        self.awaiting.discard(call_id)
        self._open.pop(call_id, None)
        self._answered.discard(call_id)

    def expects(self, call_id: str) -> bool:
        """``call_id`` was stated (or approved, or denied) and has no outcome yet."""
        return call_id in self._open or call_id in self._answered

    def code(self, call_id: str, language: str, code: str, out: list[UIChunk]) -> None:
        """Code the model runs: a provider-executed ``code_execution`` call."""
        args = {"language": language, "code": code}
        out.append(
            ToolInputStart(tool_call_id=call_id, tool_name=CODE_TOOL, provider_executed=True)
        )
        out.append(
            ToolInputAvailable(
                tool_call_id=call_id, tool_name=CODE_TOOL, input=args, provider_executed=True
            )
        )
        self._open[call_id] = None

    def code_result(self, call_id: str, outcome: str, output: str, out: list[UIChunk]) -> None:
        """What the code printed; a run that failed (or ran out of time) is an error."""
        if outcome == "OUTCOME_OK":
            out.append(
                ToolOutputAvailable(
                    tool_call_id=call_id, output={"outcome": outcome, "output": output}
                )
            )
        else:
            out.append(ToolOutputError(tool_call_id=call_id, error_text=output or outcome))
        self._open.pop(call_id, None)

    def expect_outcome(self, call_id: str) -> None:
        """An approved call runs now: it gets an outcome (an error if the run fails)."""
        self._open[call_id] = None

    def fail_open(self, out: list[UIChunk]) -> None:
        """The run failed: the server calls without an outcome end as errors."""
        for call_id in self._open:
            out.append(ToolOutputError(tool_call_id=call_id, error_text=TOOL_FAILED))
        self._open.clear()

    def deny(self, call_id: str) -> None:
        if self._native:
            self._denied.add(call_id)


def _is_error(result: Any) -> bool:
    """ADK reports tool failures (and rejections) as ``{"error": "..."}``."""
    return (
        isinstance(result, dict)
        and "error" in result
        and "result" not in result
        and (len(result) == 1 or result.get("status") in ("error", None))
    )
