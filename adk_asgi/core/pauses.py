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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

from google.adk.events import Event
from google.genai import types

from ..chunks import UIChunk
from .approvals import CONFIRMATION_TOOL, PendingCall
from .credentials import (
    CREDENTIAL_ANSWER,
    CREDENTIAL_TOOL,
    CredentialRequest,
    Secret,
    accept_credential,
    credential_request,
)
from .inputs import check_input
from .lanes import Lane

__all__ = (
    "CREDENTIAL_TOOL",
    "INPUT_TOOL",
    "InputRequest",
    "Pause",
    "PauseParts",
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
        return {"message": self.message, "payload": self.payload,
                "responseSchema": self.schema}


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
        return self.interrupt_id[len(_WF_CONFIRMATION):]

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
        return WorkflowConfirmation(call_id, str(payload.get("tool_name") or ""),
                                    dict(tool_args) if isinstance(tool_args, dict) else {},
                                    message, payload.get("confirmation_payload"))
    schema = args.get("response_schema", args.get("responseSchema"))
    return InputRequest(call_id, message, payload,
                        schema if isinstance(schema, dict) else None,
                        workflow="interruptId" in args or "interrupt_id" in args)


# -- on the page ---------------------------------------------------------------------------


class _Writer(Protocol):
    """What ``PauseParts`` writes through (``AssistantMessage``)."""

    def _tool_call(self, call_id: str, name: str, args: dict[str, Any], client_side: bool,
                   out: list[UIChunk], lane: Lane | None = None) -> None: ...

    def _approval_request(self, approval_id: str, call_id: str, name: str,
                          args: dict[str, Any], hint: str | None, payload: Any,
                          out: list[UIChunk]) -> None: ...

    def _close_blocks(self, out: list[UIChunk], lane: Lane | None = None) -> None: ...


Style = Literal["native", "adk-tool"]


class PauseParts:
    """The pauses of one assistant message: how each is stated, which OAuth2 sign-ins it
    asked for (the stream registers their ``state``), and the outcomes of workflow
    confirmations (their tool node's output)."""

    __slots__ = ("_stated", "_style", "live", "oauth", "redirect_uri")

    def __init__(self, *, style: Style, redirect_uri: str | None) -> None:
        self._style = style
        self.live = False
        """A live run: a workflow's own pause cannot be answered there (ADK's ``run_live``
        ends the workflow at its interrupt and cannot resume it)."""
        self.redirect_uri = redirect_uri
        """Where an OAuth2 sign-in returns (adk-asgi's callback), or None: as ADK built it."""
        self.oauth: list[CredentialRequest] = []
        """OAuth2 sign-ins this message asked for and the stream has not registered yet."""
        self._stated: dict[str, str] = {}  # workflow node path -> stated call id

    def state(self, pause: Pause, writer: _Writer, out: list[UIChunk],
              lane: Lane | None = None) -> bool:
        """State the pause's call(s) on the page; False: it cannot be answered here."""
        if self.live and (isinstance(pause, WorkflowConfirmation)
                          or (isinstance(pause, InputRequest) and pause.workflow)):
            return False
        if isinstance(pause, InputRequest):
            writer._tool_call(pause.call_id, INPUT_TOOL, pause.presented(), True, out, lane)
        elif isinstance(pause, CredentialRequest):
            writer._tool_call(pause.call_id, CREDENTIAL_TOOL,
                              pause.presented(self.redirect_uri), True, out, lane)
            if pause.state is not None:
                self.oauth.append(pause)
        else:
            call_id = pause.call_id
            self._stated[pause.path] = call_id
            writer._tool_call(call_id, pause.tool_name, pause.args, False, out, lane)
            if self._style == "native":
                writer._approval_request(pause.interrupt_id, call_id, pause.tool_name,
                                         pause.args, pause.hint, pause.payload, out)
            else:
                confirmation: dict[str, Any] = {"hint": pause.hint or "", "confirmed": False}
                if pause.payload is not None:
                    confirmation["payload"] = pause.payload
                writer._tool_call(pause.interrupt_id, CONFIRMATION_TOOL, {
                    "originalFunctionCall": {"id": call_id, "name": pause.tool_name,
                                             "args": pause.args},
                    "toolConfirmation": confirmation}, True, out, lane)
        return True

    @staticmethod
    def interim(response: types.FunctionResponse, event: Event) -> bool:
        """The tool's result while it waits for a credential (ADK's placeholder): an
        interim result, the real one follows the answer."""
        requested = event.actions.requested_auth_configs if event.actions else None
        return requested is not None and (response.id or "") in requested

    def settled_call(self, event: Event, expected: Callable[[str], bool]) -> str | None:
        """The stated call a workflow node's output settles: the node waited for a
        confirmation answered in this or an earlier request of the message."""
        path = event.node_info.path if event.node_info is not None else None
        if not path:
            return None
        call_id = self._stated.get(path) or workflow_call_id(path)
        return call_id if expected(call_id) else None


def node_result(output: Any) -> dict[str, Any]:
    """A node's output as a tool result."""
    if isinstance(output, dict):
        return output
    return {_RESULT: output}


# -- answers -------------------------------------------------------------------------------


def pending_call(call: types.FunctionCall, invocation_id: str | None, since: float | None
                 ) -> PendingCall | None:
    """The waiting call a session's pause is (``http/pending.py``), or None."""
    pause = pause_of(call)
    if isinstance(pause, WorkflowConfirmation):
        return PendingCall("approval", pause.interrupt_id, pause.call_id, pause.tool_name,
                           payload=pause.payload, invocation_id=invocation_id, since=since,
                           response_name=INPUT_TOOL)
    if isinstance(pause, InputRequest):
        return PendingCall("input", pause.call_id, pause.call_id, INPUT_TOOL,
                           invocation_id=invocation_id, since=since,
                           answer=_InputAnswer(pause), pause=pause)
    if isinstance(pause, CredentialRequest):
        return PendingCall("credential", pause.call_id, pause.call_id, CREDENTIAL_TOOL,
                           invocation_id=invocation_id, since=since,
                           answer=_CredentialAnswer(pause), pause=pause)
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
