"""The approval rules: what a client's answer to a waiting tool call means, and when it is
refused. Both transports use this module; security review reads this file.

A call *waits for the client* when the server says so, never because the client says so:
over HTTP the ADK session's paused calls (``http/turn/plan.py``), in live mode the connection's
gate (``live/gate/gate.py``). Each source implements ``PendingCalls``. The client's answers come
from the parts of the assistant message being continued (``answers_in``) or, in live
protocol A, from ``tool_result`` frames (``ClientAnswer.from_tool_result``). ``decide``
checks every answer against the source and returns the decisions, all or nothing:

1. An answer must name a call that waits for the client in this chat (HTTP) or on this
   connection (live). Anything else is refused: ``409 unknown_tool_call``; nothing runs.
2. The client re-sends its whole message: an answer that is not *fresh* (a tool output it
   already sent, an approval it already gave) for a call that was answered before, or that
   ran on the server, is an *echo* and skipped. A fresh decision (``approval-responded``)
   for a call that no longer waits is a replay and refused (rule 1) — unless it repeats the
   decision already applied and the client has not been sent that call's outcome yet (live
   mode sends the results of parallel calls together).
3. An approval answers an approval; a result answers a browser tool
   (``422 wrong_answer_kind``).
4. A browser tool that needs the user's approval (``frontend_tool(require_approval=True)``)
   takes its result only together with, or after, its approval
   (``409 approval_required``). Approved without a result: the page runs the tool now, and
   its result comes later. Denied: the model is told ``DENIED_TEXT``.
5. A confirmation is normalised to ADK's ``ToolConfirmation``: ``{"confirmed": bool,
   "payload"?}``. The payload is the one the tool asked with, or the client's edited copy
   (``callProviderMetadata.adk.payload`` on the tool part, or ``payload`` in a
   ``tool_result``), which must keep the original's shape (``422 invalid_payload``); when
   the tool asked without a payload, the client's is passed on as untrusted input, like a
   browser tool's result. A denial's ``reason`` travels with the decision, to the model:
   next to ``DENIED_TEXT`` for a browser tool, added to the tool's own result (ADK's
   "rejected" error, or what the tool returns when it reads its denied confirmation) by
   ``with_reason`` otherwise.
6. One answer per call: a second answer for the same call in one message is ignored.
7. An assistant message without any new answer is refused: ``409 unknown_tool_call`` when
   it re-sends answers to calls already answered (a replay), else ``422
   nothing_to_continue``.
8. A long-running server call (``LongRunningFunctionTool``) is completed by the server;
   the client may complete it (``addToolOutput``) only for the tools the app lets it
   (``client_completes``), else ``409 server_tool_call``. The client re-sends the tool's
   own interim result with every message: that is an echo, not an answer.
9. A request for input or for a credential (``kinds.py``) takes a result
   (``addToolOutput``), checked before anything runs: an input against its JSON Schema
   (``422 invalid_input`` naming the path), a credential for its shape (``422
   invalid_credential``; an OAuth2 sign-in is answered by its callback only). A workflow
   tool node's confirmation is an approval like any other (rules 2, 3, 5, 6).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

import msgspec
from msgspec import UNSET

from ..wire.errors import RequestError
from ..wire.request import UIPart

__all__ = (
    "CONFIRMATION_TOOL",
    "DENIED_TEXT",
    "CallKind",
    "ClientAnswer",
    "Decision",
    "PendingCall",
    "PendingCalls",
    "answers_in",
    "decide",
    "frontend_approval_id",
    "with_reason",
)

CONFIRMATION_TOOL: Final = "adk_request_confirmation"
"""ADK's synthetic function call that asks for a tool confirmation."""
DENIED_TEXT: Final = "The user denied this tool call."
"""What the model is told when the user denies a browser tool."""
MAX_PAYLOAD_BYTES: Final = 64 * 1024

CallKind = Literal["approval", "client-tool", "long-running", "input", "credential"]


def frontend_approval_id(call_id: str) -> str:
    """The approval id of a browser tool that needs approval (HTTP): derived from the
    server-assigned, unguessable call id, so it needs no state of its own."""
    return f"approval-{call_id}"


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A call that waits for the client.

    ``answer_id`` is the id the client answers with: the approval id for approvals, the
    call id for browser tools. ``call_id`` is the tool call the answer is about (the gated
    call for an approval). ``browser`` marks the bridge's own approval of a browser tool.
    ``needs_approval``: a result is accepted only with this call's approval (rule 4).
    ``interim``: a long-running call's own (pending) result; ``client_completes``: the
    client may complete it (rule 8).
    ``since``: when it started waiting (``time.time()``), if known.
    ``response_name``: the function ADK's answer is for, when not the approval's
    ``adk_request_confirmation`` or the call's own name (a workflow confirmation).
    ``answer``: how a result for an input or credential request is checked (it raises
    ``RequestError``) and normalised (rule 9); ``pause``: the request (``kinds.py``).
    """

    kind: CallKind
    answer_id: str
    call_id: str
    name: str
    browser: bool = False
    needs_approval: bool = False
    payload: Any = None
    invocation_id: str | None = None
    interim: Any = None
    client_completes: bool = False
    since: float | None = None
    response_name: str | None = None
    answer: Callable[[Any], dict[str, Any]] | None = None
    pause: Any = None


class PendingCalls(Protocol):
    """Where a transport's waiting calls live (the session, or the connection's gate)."""

    def waiting(self, answer_id: str) -> PendingCall | None:
        """The call waiting for an answer under ``answer_id``, if any."""

    def is_known(self, answer_id: str) -> bool:
        """``answer_id`` names a call that was answered before or ran on the server."""

    def repeated(self, answer_id: str, confirmed: bool) -> bool:
        """The client repeats a decision already applied to ``answer_id`` whose outcome it
        has not been sent yet (live: parallel calls' results travel together)."""


@dataclass(frozen=True, slots=True)
class ClientAnswer:
    """One answer read from the client. ``kind`` None: whatever the call waits for
    (protocol A ``tool_result``)."""

    answer_id: str
    kind: Literal["approval", "result"] | None
    fresh: bool
    confirmed: bool = False
    reason: str | None = None
    payload: Any = UNSET
    result: Any = None

    @classmethod
    def from_tool_result(cls, answer_id: str, result: Any) -> ClientAnswer:
        """Protocol A ``tool_result {toolCallId, result}``: a fresh answer of either kind."""
        payload = result.get("payload", UNSET) if isinstance(result, dict) else UNSET
        reason = result.get("reason") if isinstance(result, dict) else None
        confirmed = isinstance(result, dict) and result.get("confirmed") is True
        return cls(
            answer_id,
            None,
            fresh=True,
            confirmed=confirmed,
            payload=payload,
            reason=reason if isinstance(reason, str) else None,
            result=result,
        )


@dataclass(frozen=True, slots=True)
class Decision:
    """A validated answer: ``call`` is the waiting call it settles."""

    call: PendingCall
    confirmed: bool
    """Approvals: the user's decision. Results: always True."""
    response: dict[str, Any]
    """What ADK gets: a ``ToolConfirmation`` dict for approvals, the tool's output for
    results, ``{"error": DENIED_TEXT}`` for a denied browser tool."""
    reason: str | None = None


def answers_in(part: UIPart) -> list[ClientAnswer]:
    """The answers a tool part of the continued assistant message carries."""
    tool = part.tool
    if tool is None:
        return []
    approval = part.approval
    if part.state == "approval-responded":
        if approval is UNSET or not isinstance(approval.approved, bool):
            return []
        reason = approval.reason if isinstance(approval.reason, str) else None
        return [
            ClientAnswer(
                approval.id,
                "approval",
                fresh=True,
                confirmed=approval.approved,
                reason=reason,
                payload=_edited_payload(part),
            )
        ]
    call_id = part.tool_call_id if isinstance(part.tool_call_id, str) else None
    if call_id is None:
        return []
    answers: list[ClientAnswer] = []
    if approval is not UNSET and approval.approved is True:
        # Approved earlier (an echo) or approved and run on the page in one go: the
        # approval comes first, so rule 4 sees it.
        answers.append(
            ClientAnswer(
                approval.id, "approval", fresh=False, confirmed=True, payload=_edited_payload(part)
            )
        )
    if part.state == "output-available":
        output = part.output if part.output is not UNSET else None
        if tool == CONFIRMATION_TOOL:
            # The ADK-tool style: addToolOutput({tool: "adk_request_confirmation", output}).
            fields = output if isinstance(output, dict) else {}
            reason = fields.get("reason")
            answers.append(
                ClientAnswer(
                    call_id,
                    "approval",
                    fresh=False,
                    confirmed=fields.get("confirmed") is True,
                    reason=reason if isinstance(reason, str) else None,
                    payload=fields.get("payload", UNSET),
                )
            )
        else:
            answers.append(ClientAnswer(call_id, "result", fresh=False, result=output))
    elif part.state == "output-error":
        text = part.error_text if isinstance(part.error_text, str) else "The tool failed."
        if tool == CONFIRMATION_TOOL:
            answers.append(ClientAnswer(call_id, "approval", fresh=False, confirmed=False))
        else:
            answers.append(ClientAnswer(call_id, "result", fresh=False, result={"error": text}))
    return answers


def decide(answers: Iterable[ClientAnswer], pending: PendingCalls) -> list[Decision]:
    """Check every answer against the waiting calls (rules 1-7); all or nothing."""
    decisions: list[Decision] = []
    decided: set[str] = set()
    approved_now: set[str] = set()
    echoed: list[str] = []
    for answer in answers:
        if answer.answer_id in decided:
            continue  # rule 6
        call = pending.waiting(answer.answer_id)
        if call is None:
            if pending.is_known(answer.answer_id):
                if not answer.fresh or pending.repeated(answer.answer_id, answer.confirmed):
                    echoed.append(answer.answer_id)
                    continue  # rule 2: an echo
                raise RequestError(
                    409, "unknown_tool_call", f"Call {answer.answer_id!r} was already answered."
                )
            raise RequestError(
                409, "unknown_tool_call", f"No call {answer.answer_id!r} is waiting for an answer."
            )
        kind = answer.kind or ("approval" if call.kind == "approval" else "result")
        if call.kind == "long-running" and kind == "result":
            if answer.result == call.interim:
                continue  # rule 8: the tool's own interim result, echoed
            if not call.client_completes:
                raise RequestError(
                    409,
                    "server_tool_call",
                    f"Call {answer.answer_id!r} is completed by the server.",
                )
        if (kind == "approval") != (call.kind == "approval"):
            raise RequestError(
                422,
                "wrong_answer_kind",
                f"Call {answer.answer_id!r} expects "
                f"{'an approval' if call.kind == 'approval' else 'a tool result'}.",
            )
        if kind == "result" and call.needs_approval and call.call_id not in approved_now:
            raise RequestError(
                409, "approval_required", f"Call {call.call_id!r} needs the user's approval first."
            )
        decided.add(answer.answer_id)
        if kind == "approval":
            if answer.confirmed:
                approved_now.add(call.call_id)
            decisions.append(_approval(call, answer))
        elif call.answer is not None:
            decisions.append(Decision(call, True, call.answer(answer.result)))  # rule 9
        else:
            result = answer.result
            decisions.append(
                Decision(call, True, result if isinstance(result, dict) else {"result": result})
            )
    if not decisions and echoed:  # rule 7: a replay
        raise RequestError(409, "unknown_tool_call", f"Call {echoed[0]!r} was already answered.")
    if not decisions:
        raise RequestError(
            422,
            "nothing_to_continue",
            "The assistant message carries no new answer to a pending tool call.",
        )
    return decisions


def with_reason(result: Any, reason: str) -> Any:
    """A denied call's result, with the user's reason for the model (rule 5). A dict is
    amended in place (so the agent's own after-tool callbacks still see it) and None is
    returned; anything else comes back wrapped in a new dict."""
    if isinstance(result, dict):
        result["reason" if "reason" not in result else "user_reason"] = reason
        return None
    return {"result": result, "reason": reason}


def _approval(call: PendingCall, answer: ClientAnswer) -> Decision:
    if call.browser:
        response: dict[str, Any] = {} if answer.confirmed else {"error": DENIED_TEXT}
        if not answer.confirmed and answer.reason:
            with_reason(response, answer.reason)
        return Decision(call, answer.confirmed, response, answer.reason)
    # ADK's ToolConfirmation takes exactly these keys (extra keys are an error there).
    response = {"confirmed": answer.confirmed}
    payload = call.payload
    if answer.confirmed and answer.payload is not UNSET and answer.payload != payload:
        payload = _checked_payload(call, answer.payload)
    if payload is not None:
        response["payload"] = payload
    return Decision(call, answer.confirmed, response, answer.reason)


def _edited_payload(part: UIPart) -> Any:
    metadata = part.call_provider_metadata
    if not isinstance(metadata, dict):
        return UNSET
    adk = metadata.get("adk")
    return adk.get("payload", UNSET) if isinstance(adk, dict) else UNSET


def _checked_payload(call: PendingCall, edited: Any) -> Any:
    """An edited payload keeps the shape of the one the tool asked with, if it asked with
    one: the same JSON types and, for objects, the same keys, all the way down (rule 5)."""
    if len(msgspec.json.encode(edited)) > MAX_PAYLOAD_BYTES:
        raise RequestError(
            413, "payload_too_large", f"An approval payload exceeds {MAX_PAYLOAD_BYTES} bytes."
        )
    if call.payload is not None and not _same_shape(call.payload, edited):
        raise RequestError(
            422,
            "invalid_payload",
            f"The payload for call {call.call_id!r} must keep the shape of the "
            "one the tool asked with.",
        )
    return edited


def _same_shape(original: Any, edited: Any) -> bool:
    if isinstance(original, dict):
        return (
            isinstance(edited, dict)
            and original.keys() == edited.keys()
            and all(_same_shape(original[k], edited[k]) for k in original)
        )
    if isinstance(original, list):
        return isinstance(edited, list) and (
            not original or all(_same_shape(original[0], item) for item in edited)
        )
    if isinstance(original, bool) or isinstance(edited, bool):
        return type(original) is type(edited)
    if isinstance(original, int | float):
        return isinstance(edited, int | float)
    if original is None:
        return edited is None
    return type(original) is type(edited)
