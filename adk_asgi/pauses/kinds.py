"""Pauses: the calls an ADK run stops on until the user answers, beyond tool confirmations
(``approvals.py``) and browser tools (``tools.py``) — which calls they are, how the page
sees them and what ADK gets back.

Every ADK 2.13 pause has one wire shape, a function call whose id is in the event's
``long_running_tool_ids`` (``google/adk/events/_interrupts.py``). Those this module knows:

=========================================  ==============================  =====================
ADK's call                                  on the page                     the page answers
=========================================  ==============================  =====================
``adk_request_input``: a workflow node's     client tool call                ``addToolOutput``
``RequestInput``, or the ``request_input``   ``adk_request_input`` with      (a value valid for
tool of an agent                             ``{message, payload,            ``responseSchema``)
                                             responseSchema}``
``adk_request_input`` with an interrupt id   ``tool-approval-request`` for   ``addToolApproval
``wf_tool_confirmation:<node path>``: a      a tool call stated for the      Response`` (or, in
workflow tool node's confirmation            node (id ``wf_tool:<path>``)    the ``adk-tool``
                                                                             style, the
                                                                             ``adk_request_
                                                                             confirmation`` call)
``adk_request_credential`` (API key, HTTP    client tool call                ``addToolOutput``
bearer, OAuth2 / OpenID Connect code flow)   ``adk_request_credential``      / the sign-in
                                             (``credentials.py``)            callback
=========================================  ==============================  =====================

A workflow confirmation's answer is an approval under ``approvals.py``'s rules; the tool
node's output (``event.output`` at its path) is the stated call's outcome. An input answer
is checked against its schema (``inputs.py``); a credential answer is handed to ADK apart
(``credentials.py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from google.genai import types

from .approvals import PendingCall
from .credentials import (
    CREDENTIAL_ANSWER,
    CREDENTIAL_TOOL,
    CredentialRequest,
    Secret,
    accept_credential,
    credential_request,
)
from .inputs import check_input

__all__ = (
    "CREDENTIAL_TOOL",
    "INPUT_TOOL",
    "InputRequest",
    "Pause",
    "WorkflowConfirmation",
    "adk_response",
    "pause_of",
    "pending_call",
    "workflow_call_id",
)

INPUT_TOOL: Final = "adk_request_input"
LIVE_WORKFLOW_PAUSE: Final = "workflow_pause_in_live_mode"
"""The error code of a live turn whose workflow asked the user (``PauseParts.live``)."""
_WF_CONFIRMATION: Final = "wf_tool_confirmation:"
_WF_CALL: Final = "wf_tool:"
_RESULT: Final = "result"


def workflow_call_id(node_path: str) -> str:
    """The id of the tool call stated for a workflow tool node awaiting confirmation."""
    return f"{_WF_CALL}{node_path}"


@dataclass(frozen=True, slots=True)
class InputRequest:
    """``adk_request_input``: the user types an answer valid for ``schema``."""

    call_id: str
    message: str | None
    payload: Any
    schema: dict[str, Any] | None
    workflow: bool
    """A workflow's ``RequestInput`` (else the ``request_input`` tool of an agent)."""

    def presented(self) -> dict[str, Any]:
        return {"message": self.message, "payload": self.payload, "responseSchema": self.schema}


@dataclass(frozen=True, slots=True)
class WorkflowConfirmation:
    """A workflow tool node waits for the user's approval of its call."""

    interrupt_id: str
    tool_name: str
    args: dict[str, Any]
    hint: str | None
    payload: Any
    """The tool's own confirmation payload (``request_confirmation(payload=...)``)."""

    @property
    def path(self) -> str:
        return self.interrupt_id[len(_WF_CONFIRMATION) :]

    @property
    def call_id(self) -> str:
        return workflow_call_id(self.path)


Pause = InputRequest | WorkflowConfirmation | CredentialRequest


def pause_of(call: types.FunctionCall) -> Pause | None:
    """The pause a long-running call is, or None (a browser, long-running or confirmation
    call, handled elsewhere)."""
    call_id, name = call.id or "", call.name or ""
    args: dict[str, Any] = dict(call.args or {})
    if name == CREDENTIAL_TOOL:
        return credential_request(call_id, args)
    if name != INPUT_TOOL:
        return None
    payload = args.get("payload")
    message = args.get("message") if isinstance(args.get("message"), str) else None
    if call_id.startswith(_WF_CONFIRMATION) and isinstance(payload, dict):
        tool_args = payload.get("args")
        return WorkflowConfirmation(
            call_id,
            str(payload.get("tool_name") or ""),
            dict(tool_args) if isinstance(tool_args, dict) else {},
            message,
            payload.get("confirmation_payload"),
        )
    schema = args.get("response_schema", args.get("responseSchema"))
    return InputRequest(
        call_id,
        message,
        payload,
        schema if isinstance(schema, dict) else None,
        workflow="interruptId" in args or "interrupt_id" in args,
    )


def node_result(output: Any) -> dict[str, Any]:
    """A node's output as a tool result."""
    if isinstance(output, dict):
        return output
    return {_RESULT: output}


# -- answers -------------------------------------------------------------------------------


def pending_call(
    call: types.FunctionCall, invocation_id: str | None, since: float | None
) -> PendingCall | None:
    """The waiting call a session's pause is (``http/turn/pending.py``), or None."""
    pause = pause_of(call)
    if isinstance(pause, WorkflowConfirmation):
        return PendingCall(
            "approval",
            pause.interrupt_id,
            pause.call_id,
            pause.tool_name,
            payload=pause.payload,
            invocation_id=invocation_id,
            since=since,
            response_name=INPUT_TOOL,
        )
    if isinstance(pause, InputRequest):
        return PendingCall(
            "input",
            pause.call_id,
            pause.call_id,
            INPUT_TOOL,
            invocation_id=invocation_id,
            since=since,
            answer=_InputAnswer(pause),
            pause=pause,
        )
    if isinstance(pause, CredentialRequest):
        return PendingCall(
            "credential",
            pause.call_id,
            pause.call_id,
            CREDENTIAL_TOOL,
            invocation_id=invocation_id,
            since=since,
            answer=_CredentialAnswer(pause),
            pause=pause,
        )
    return None


class _InputAnswer:
    __slots__ = ("_pause",)

    def __init__(self, pause: InputRequest) -> None:
        self._pause = pause

    def __call__(self, value: Any) -> dict[str, Any]:
        check_input(self._pause.call_id, self._pause.schema, value)
        return {"value": value}


class _CredentialAnswer:
    __slots__ = ("_pause",)

    def __init__(self, pause: CredentialRequest) -> None:
        self._pause = pause

    def __call__(self, value: Any) -> dict[str, Any]:
        return {"secret": accept_credential(self._pause, value)}


def adk_response(call: PendingCall, checked: dict[str, Any]) -> dict[str, Any]:
    """What ADK's function response carries for a checked input or credential answer."""
    if call.kind == "credential":
        return dict(CREDENTIAL_ANSWER)
    value = checked["value"]
    workflow = isinstance(call.pause, InputRequest) and call.pause.workflow
    if isinstance(value, dict) and not (len(value) == 1 and _RESULT in value):
        return value
    if workflow and isinstance(value, str | dict):
        # ADK unwraps {"result": x} and parses a string x as JSON: a text stays text.
        return {_RESULT: json.dumps(value)}
    return {_RESULT: value}


def secret_of(checked: dict[str, Any]) -> Secret:
    secret = checked["secret"]
    assert isinstance(secret, Secret)
    return secret


def client_output(call: PendingCall, checked: dict[str, Any]) -> Any:
    """The answered call's output as the page is shown it again (a stream's replay): the
    value, or for a credential only that it was given."""
    if call.kind == "credential":
        return {"status": "provided"}
    return checked["value"]
