"""ToolParts: the tool parts of one assistant message — calls, approval requests and
outcomes, and which calls still wait for the client. Each writing method returns the
chunks it wrote: a call first ends the writing lane's open text (or every open block) and
joins a step, as the AI SDK client needs every tool part inside a step.

Server tools are "provider executed" for the AI SDK: the client neither runs them (no
``onToolCall``) nor waits for them (the ``sendAutomaticallyWhen`` helpers). Every server
call gets an outcome, even when the run fails (``fail_open``). A call the user denied shows
as ``tool-output-denied`` (native style); the ADK-tool style shows ADK's error.

A tool's result is converted to JSON the way ADK converts it for the model
(``jsonable.py``); one that has none ends its call as ``tool-output-error`` with the generic
text (and one log line), the answer goes on. A result that reports a failure (ADK's
``{"error": ...}``, an MCP ``isError``, the retry plugin's) is a ``tool-output-error`` too,
never the text meant for the model (``tool_errors.py``). Code the model runs (Gemini's
code execution, or an agent's code executor) is a provider-executed ``code_execution``
call: its input is the language and the code, its output the outcome and what the code
printed; a failed run is ``tool-output-error``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, Final

from google.genai import types

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
from .blocks import MessageBlocks
from .lanes import Lane
from .tool_errors import TOOL_FAILED, ToolFailures, is_error

__all__ = ("CODE_TOOL", "TOOL_FAILED", "ToolParts")

CODE_TOOL: Final = "code_execution"
"""The tool name of code the model runs (Gemini's name for its code execution tool)."""

logger = logging.getLogger("adk_asgi")


class ToolParts:
    """The tool parts of one message (``AssistantMessage.tools``)."""

    __slots__ = (
        "_answered",
        "_approval_tools",
        "_blocks",
        "_code_calls",
        "_denied",
        "_failures",
        "_long_running",
        "_native",
        "_open",
        "approvals_requested",
        "awaiting",
    )

    def __init__(
        self,
        blocks: MessageBlocks,
        *,
        native: bool,
        denied: Iterable[str] = (),
        approval_tools: frozenset[str] = frozenset(),
        awaiting: Iterable[str] = (),
        resumed: Iterable[str] = (),
        failures: ToolFailures | None = None,
    ) -> None:
        self._blocks = blocks
        self._code_calls = 0
        self._native = native
        self._denied: set[str] = set(denied)
        self._failures = failures or ToolFailures()
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
        """Approval requests this message sent to the client."""

    def _before_call(self, lane: Lane | None) -> list[UIChunk]:
        out: list[UIChunk] = []
        blocks = self._blocks
        if lane is not None:
            blocks.close(lane, out)
        else:
            blocks.close_all(out)
        blocks.ensure_step(out, lane)
        return out

    def call(
        self,
        call_id: str,
        name: str,
        args: dict[str, Any],
        *,
        client_side: bool,
        lane: Lane | None = None,
    ) -> list[UIChunk]:
        """A tool call (``tool-input-*``): answered by the page (``client_side``), or
        provider-executed (its outcome follows from the server). A browser tool that needs
        the user's approval is asked for it at once."""
        out = self._before_call(lane)
        executed = None if client_side else True
        out.append(ToolInputStart(tool_call_id=call_id, tool_name=name, provider_executed=executed))
        out.append(
            ToolInputAvailable(
                tool_call_id=call_id, tool_name=name, input=args, provider_executed=executed
            )
        )
        if not client_side:
            self._open[call_id] = None
            return out
        self.awaiting.add(call_id)
        if name == CONFIRMATION_TOOL:  # "adk-tool" style: the approval is this call
            self.approvals_requested += 1
        elif name in self._approval_tools:
            self.approvals_requested += 1
            out.append(
                ToolApprovalRequest(approval_id=frontend_approval_id(call_id), tool_call_id=call_id)
            )
        return out

    def restate(self, call_id: str, name: str, args: dict[str, Any]) -> list[UIChunk]:
        """A server call of an earlier message, stated again (its result follows here)."""
        return self.call(call_id, name, args, client_side=False)

    def approval_request(
        self,
        approval_id: str,
        call_id: str,
        name: str,
        args: dict[str, Any],
        hint: str | None = None,
        payload: Any = None,
    ) -> list[UIChunk]:
        """The user is asked to approve the stated call ``call_id``; ADK's ``hint`` and
        ``payload`` go with the call (its ``callProviderMetadata.adk`` on the page)."""
        out: list[UIChunk] = []
        self._blocks.close_all(out)
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
        # Re-stating the call carries the hint and payload to the client.
        out.append(
            ToolInputAvailable(
                tool_call_id=call_id, tool_name=name, input=args, provider_metadata={"adk": adk}
            )
        )
        out.append(ToolApprovalRequest(approval_id=approval_id, tool_call_id=call_id))
        self.approvals_requested += 1
        self.awaiting.add(approval_id)
        self._open.pop(call_id, None)  # its outcome comes with the answer
        return out

    def outcome(
        self,
        call_id: str,
        result: Any,
        *,
        lane: Lane | None = None,
        agent: bool = False,
        name: str = "",
    ) -> list[UIChunk]:
        """A call's result: ``tool-output-available``, ``-error`` or ``-denied``, after
        ``lane``'s open block ends. ``agent``: the tool's own result (not an answer sent
        in), interim for a long-running call; a failure it reports is an error with the
        generic text (``tool_errors.py``), an answer sent in keeps its ``error`` text."""
        out: list[UIChunk] = []
        if lane is not None:
            self._blocks.close(lane, out)
        try:
            result = json_value(result)
        except NotJson as exc:
            logger.error("The result of tool call %s cannot be sent: %s", call_id, exc)
            self._long_running.discard(call_id)  # it ends here, as a failure
            result, agent = {"error": TOOL_FAILED}, False
        if agent and call_id in self._long_running:
            out.append(ToolOutputAvailable(tool_call_id=call_id, output=result, preliminary=True))
            self._open.pop(call_id, None)
            return out
        denied = call_id in self._denied and is_error(result)
        failure = self._failures.of(name, result) if agent and not denied else None
        if denied and self._native:
            out.append(ToolOutputDenied(tool_call_id=call_id))
        elif failure is not None:
            text = self._failures.text(call_id, failure)
            out.append(ToolOutputError(tool_call_id=call_id, error_text=text))
        elif is_error(result):  # an answer sent in, or ADK's rejection (the user's reason)
            out.append(ToolOutputError(tool_call_id=call_id, error_text=str(result["error"])))
        else:
            out.append(ToolOutputAvailable(tool_call_id=call_id, output=result))
        self.awaiting.discard(call_id)
        self._open.pop(call_id, None)
        self._answered.discard(call_id)
        return out

    def code(self, call_id: str, language: str, code: str, lane: Lane) -> list[UIChunk]:
        """Code the model runs: a provider-executed ``code_execution`` call."""
        out = self._before_call(lane)
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
        return out

    def code_result(self, call_id: str, outcome: str, output: str) -> list[UIChunk]:
        """What the code printed; a run that failed (or ran out of time) is an error."""
        self._open.pop(call_id, None)
        if outcome == "OUTCOME_OK":
            return [
                ToolOutputAvailable(
                    tool_call_id=call_id, output={"outcome": outcome, "output": output}
                )
            ]
        return [ToolOutputError(tool_call_id=call_id, error_text=output or outcome)]

    def executable_code(self, code: types.ExecutableCode, lane: Lane) -> list[UIChunk]:
        """ADK's ``executable_code`` part: its ``code_execution`` call (the lane remembers
        it for the result that follows)."""
        call_id = code.id or self._code_call_id()
        lane.code_call = call_id
        language = code.language.value if code.language is not None else "LANGUAGE_UNSPECIFIED"
        return self.code(call_id, str(language), code.code or "", lane)

    def code_execution_result(self, result: types.CodeExecutionResult, lane: Lane) -> list[UIChunk]:
        """ADK's ``code_execution_result`` part: the outcome of the lane's code call (a
        result without its code states an empty call first)."""
        call_id = result.id or lane.code_call
        out: list[UIChunk] = []
        self._blocks.close(lane, out)
        if call_id is None:
            call_id = self._code_call_id()
            out.extend(self.code(call_id, "LANGUAGE_UNSPECIFIED", "", lane))
        lane.code_call = None
        outcome = result.outcome.value if result.outcome is not None else "OUTCOME_UNSPECIFIED"
        out.extend(self.code_result(call_id, str(outcome), result.output or ""))
        return out

    def _code_call_id(self) -> str:
        self._code_calls += 1
        return f"{self._blocks.message_id}-code{self._code_calls}"

    # -- what the calls wait for ------------------------------------------------------------

    def long_running(self, call_id: str) -> None:
        """A long-running server call: the tool's result is interim (``preliminary``), the
        final one comes when the call is completed."""
        self._long_running.add(call_id)

    def expects(self, call_id: str) -> bool:
        """``call_id`` was stated (or approved, or denied) and has no outcome yet."""
        return call_id in self._open or call_id in self._answered

    def expect_outcome(self, call_id: str) -> None:
        """An approved call runs now: it gets an outcome (an error if the run fails)."""
        self._open[call_id] = None

    def deny(self, call_id: str) -> None:
        """The user denied the call: ADK's rejection is no failure (shown as denied in the
        native style, with its text in the ADK-tool style)."""
        self._denied.add(call_id)

    def fail_open(self) -> list[UIChunk]:
        """The run failed: the server calls without an outcome end as errors."""
        out: list[UIChunk] = [
            ToolOutputError(tool_call_id=call_id, error_text=TOOL_FAILED) for call_id in self._open
        ]
        self._open.clear()
        return out
