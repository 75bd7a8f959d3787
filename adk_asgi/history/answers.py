"""The page's answers of a continuation, read back from the session for a chat's history
(``history.py``): approvals (native and ADK-tool style, edited payloads, denial reasons),
browser tools' results, long-running calls the page completed, answers to requests for input
and credentials (shown as given, never what was given).
"""

from __future__ import annotations

import json
from typing import Any

from google.genai import types

from ..pauses.approvals import CONFIRMATION_TOOL, DENIED_TEXT, frontend_approval_id
from ..pauses.credentials import CredentialRequest
from ..pauses.kinds import InputRequest, WorkflowConfirmation, pause_of
from ..pauses.tools import ToolKinds
from ..wire.ui_message import UIMessageState

__all__ = ("PageAnswers", "page_output")


def _is_error(result: Any) -> bool:
    return isinstance(result, dict) and set(result) == {"error"}


def _input_value(pause: InputRequest, result: dict[str, Any]) -> Any:
    """What the page answered a request for input, from what ADK was given
    (``pauses.adk_response`` the other way round)."""
    if set(result) != {"result"}:
        return result
    value = result["result"]
    if pause.workflow and isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def page_output(message: UIMessageState, call_id: str, result: Any) -> None:
    """``addToolOutput`` as the page made it: an ``{"error"}`` result was its error text."""
    if _is_error(result):
        message.tools.add_tool_output(call_id, error_text=str(result["error"]))
    else:
        message.tools.add_tool_output(call_id, output=result)


class PageAnswers:
    """The page's answers of one continuation, read back from the session's function
    responses: applied to the message as the page applied them, and what the request's
    translator was built with (``http/turn/plan.py``'s plan)."""

    def __init__(self, message: UIMessageState, tools: ToolKinds, reasons: dict[str, str]) -> None:
        self.message = message
        self.tools = tools
        self.reasons = reasons
        self.denied: set[str] = set()
        self.resumed: set[str] = set()
        self.denied_browser: list[str] = []
        self.completed: dict[str, Any] = {}

    def read(
        self,
        response: types.FunctionResponse,
        calls: dict[str, tuple[str, dict[str, Any]]],
        approvals: dict[str, tuple[str, Any]],
    ) -> None:
        answer_id = response.id or ""
        result = response.response or {}
        if response.name == CONFIRMATION_TOOL:
            self._confirmation(answer_id, result, *approvals.get(answer_id, ("", None)))
            return
        name, args = calls.get(answer_id, (response.name or "", {}))
        pause = pause_of(types.FunctionCall(id=answer_id, name=name, args=args))
        if isinstance(pause, WorkflowConfirmation):
            self._confirmation(answer_id, result, pause.call_id, pause.payload)
            return
        if isinstance(pause, InputRequest):
            self.message.tools.add_tool_output(answer_id, output=_input_value(pause, result))
            return
        if isinstance(pause, CredentialRequest):  # shown given, never what was given
            self.message.tools.add_tool_output(answer_id, output={"status": "provided"})
            return
        tools, message = self.tools, self.message
        if name in tools.browser:
            gated = name in tools.approval
            if gated and result.get("error") == DENIED_TEXT:
                message.tools.respond_approval(
                    frontend_approval_id(answer_id), False, self.reasons.get(answer_id)
                )
                self.denied_browser.append(answer_id)
                return
            if gated:
                message.tools.respond_approval(frontend_approval_id(answer_id), True, None)
            page_output(message, answer_id, result)
        elif name in tools.long_running:  # a long-running server call the page completed
            page_output(message, answer_id, result)
            self.completed[answer_id] = result
        # anything else is not an answer a page shows (a credential, say)

    def _confirmation(
        self, answer_id: str, result: dict[str, Any], call_id: str, asked: Any
    ) -> None:
        message = self.message
        confirmed = result.get("confirmed") is True
        payload = result.get("payload")
        reason = self.reasons.get(call_id)
        if message.tools.has_call(answer_id):  # the ADK-tool style: the page's tool output
            message.tools.add_tool_output(
                answer_id, output={**result, "reason": reason} if reason else result
            )
        else:
            if confirmed and payload is not None and payload != asked:
                message.tools.edit_payload(call_id, payload)
            message.tools.respond_approval(answer_id, confirmed, reason)
        (self.resumed if confirmed else self.denied).add(call_id)
