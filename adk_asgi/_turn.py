"""From a chat request and the server-side session to the one ADK input of this turn.

The ADK session is the source of truth. The client's history is read for two
things only: the new user message (the last one), and, when the assistant
message is being continued, the client's answers to the calls that the
*session* says are waiting for the client (approvals and browser tools).
Everything else the client sends about the past (tool inputs, outputs, text)
is ignored, so an edited history changes nothing.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

from google.adk.events import Event
from google.adk.sessions import Session
from google.genai import types
from msgspec import UNSET

from ._errors import RequestError
from ._request import ChatRequest, UIMessage, UIPart, user_content
from ._translator import CONFIRMATION_TOOL, frontend_approval_id

__all__ = (
    "PendingCall",
    "Turn",
    "new_message_id",
    "pending_calls",
    "plan_turn",
)

META_KEY = "adk_asgi"


def new_message_id() -> str:
    return f"msg-{uuid.uuid4().hex[:20]}"





@dataclass(frozen=True, slots=True)
class PendingCall:
    """A call in the session that waits for the client.

    ``kind`` is ``"approval"`` for ADK's ``adk_request_confirmation`` (``call_id`` is
    the confirmation id, ``original_id`` the gated call) and ``"client-tool"`` for a
    long-running tool the browser executes."""

    kind: Literal["approval", "client-tool"]
    call_id: str
    name: str
    original_id: str
    invocation_id: str


@dataclass(slots=True)
class Turn:
    message_id: str
    new_message: types.Content | None  # None: nothing for ADK this time
    user_message_id: str | None = None
    continuation: bool = False
    denied_call_ids: frozenset[str] = frozenset()
    rewind_before: str | None = None  # invocation to rewind before (regenerate / edit)
    seed: list[UIMessage] = field(default_factory=list)
    # Calls that still wait for the client after this turn's answers.
    still_pending: frozenset[str] = frozenset()
    # Browser-tool calls the user denied: ADK does not echo the answer we send for
    # them, so the stream reports the denial itself.
    denied_client_calls: tuple[str, ...] = ()


def pending_calls(session: Session) -> dict[str, PendingCall]:
    """Calls in the session still waiting for the client, keyed by the id the client answers."""
    answered: set[str] = set()
    calls: dict[str, PendingCall] = {}
    for event in session.events:
        content = event.content
        if content is None or not content.parts:
            continue
        for part in content.parts:
            if part.function_response is not None and part.function_response.id:
                answered.add(part.function_response.id)
        long_running = event.long_running_tool_ids or set()
        for part in content.parts:
            call = part.function_call
            if call is None or not call.id or call.id not in long_running:
                continue
            if call.name == CONFIRMATION_TOOL:
                original = (call.args or {}).get("originalFunctionCall") or {}
                calls[call.id] = PendingCall("approval", call.id, str(original.get("name", "")),
                                             str(original.get("id", "")), event.invocation_id)
            else:
                calls[call.id] = PendingCall("client-tool", call.id, call.name or "", call.id,
                                             event.invocation_id)
    for call_id in answered:
        calls.pop(call_id, None)
    return calls


def plan_turn(request: ChatRequest, session: Session | None,
              approval_tools: frozenset[str] = frozenset(),
              max_file_bytes: int | None = None) -> Turn:
    """``approval_tools``: browser-executed tools whose calls the user approves first."""
    history = request.history
    last = history[-1]
    if last.role == "user":
        return _new_user_turn(request, last, session, max_file_bytes)
    if last.role == "assistant":
        return _continuation(request, last, session, approval_tools)
    raise RequestError(422, "invalid_last_message",
                       "The last message must be a user message or the assistant message "
                       "being continued.")


def _new_user_turn(request: ChatRequest, last: UIMessage, session: Session | None,
                   max_file_bytes: int | None) -> Turn:
    turn = Turn(message_id=new_message_id(), new_message=user_content(last, max_file_bytes),
                user_message_id=last.id or None)
    if session is None:
        turn.seed = [m for m in request.history[:-1] if m.role in ("user", "assistant")]
        return turn
    # Regenerate, or an edited user message: the message was already answered
    # in this session. Rewind to before that turn and answer it again.
    if last.id:
        for event in session.events:
            if event.author == "user" and _meta(event).get("userMessageId") == last.id:
                turn.rewind_before = event.invocation_id
                break
    if turn.rewind_before is None and request.trigger == "regenerate-message":
        for event in reversed(session.events):
            if event.author == "user" and event.content is not None and _meta(event):
                turn.rewind_before = event.invocation_id
                break
    return turn


def _continuation(request: ChatRequest, last: UIMessage, session: Session | None,
                  approval_tools: frozenset[str]) -> Turn:
    pending = pending_calls(session) if session is not None else {}
    # Browser tools that need approval are answered under a derived approval id.
    by_approval = {frontend_approval_id(c.call_id): c for c in pending.values()
                   if c.kind == "client-tool" and c.name in approval_tools}
    responses: list[types.Part] = []
    denied: set[str] = set()
    invocations: set[str] = set()
    approved_only = False
    denied_client: list[str] = []
    for part in last.parts:
        answer = _client_answer(part)
        if answer is None:
            continue
        call = pending.get(answer.call_id)
        if call is None and answer.is_approval and answer.call_id in by_approval:
            call = by_approval[answer.call_id]
            if call.call_id not in pending:
                call = None
            elif answer.response["confirmed"]:
                # Approved, not executed yet: the page runs the tool and sends its
                # result in a later request (the call stays pending in the session).
                approved_only = True
                continue
            else:
                denied.add(call.call_id)
                denied_client.append(call.call_id)
                answer = _Answer(call.call_id, {"error": "The user denied this tool call."},
                                 is_approval=False, fresh=True)
        if call is None:
            # The client re-sends the whole message: results the session already
            # holds are echoes and are skipped. A fresh approval decision, or a
            # result for a call this chat never made, is refused.
            if not answer.fresh and session is not None and _known_call(session, answer.call_id):
                continue
            raise RequestError(409, "unknown_tool_call",
                               f"No call {answer.call_id!r} is waiting for an answer in this chat.")
        if (call.kind == "approval") != answer.is_approval:
            raise RequestError(422, "wrong_answer_kind",
                               f"Call {answer.call_id!r} expects "
                               f"{'an approval' if call.kind == 'approval' else 'a tool result'}.")
        if (call.kind == "client-tool" and call.name in approval_tools
                and call.call_id not in denied and not _approved(part, call.call_id)):
            raise RequestError(409, "approval_required",
                               f"Call {call.call_id!r} needs the user's approval first.")
        response = answer.response
        if call.kind == "approval":
            # ADK's ToolConfirmation takes exactly these keys.
            response = {"confirmed": response.get("confirmed") is True}
            if "payload" in answer.response:
                response["payload"] = answer.response["payload"]
            if not response["confirmed"]:
                denied.add(call.original_id)
        name = CONFIRMATION_TOOL if call.kind == "approval" else call.name
        responses.append(types.Part(function_response=types.FunctionResponse(
            id=call.call_id, name=name, response=response)))
        invocations.add(call.invocation_id)
        del pending[call.call_id]  # one answer per call, even if sent twice
    if not responses and not approved_only:
        raise RequestError(422, "nothing_to_continue",
                           "The assistant message carries no new answer to a pending tool call.")
    if len(invocations) > 1:
        raise RequestError(422, "mixed_invocations",
                           "Answers belong to different turns; answer one turn at a time.")
    message_id = last.id or (request.message_id if isinstance(request.message_id, str)
                             else new_message_id())
    return Turn(message_id=message_id,
                new_message=types.Content(role="user", parts=responses) if responses else None,
                continuation=True, denied_call_ids=frozenset(denied),
                still_pending=frozenset(pending), denied_client_calls=tuple(denied_client))


def _approved(part: UIPart, call_id: str) -> bool:
    approval = part.approval
    return (approval is not UNSET and approval.approved is True
            and approval.id == frontend_approval_id(call_id))


@dataclass(frozen=True, slots=True)
class _Answer:
    call_id: str
    response: dict[str, Any]
    is_approval: bool
    fresh: bool  # a decision made since the last response (never an echo)


def _client_answer(part: UIPart) -> _Answer | None:
    """The client's answer carried by a tool part, if it has one."""
    tool = part.tool
    if tool is None:
        return None
    if part.state == "approval-responded" and part.approval is not UNSET:
        approval = part.approval
        if not isinstance(approval.approved, bool):
            return None
        response: dict[str, Any] = {"confirmed": approval.approved}
        if isinstance(approval.reason, str):
            response["reason"] = approval.reason
        return _Answer(approval.id, response, is_approval=True, fresh=True)
    call_id = part.tool_call_id if isinstance(part.tool_call_id, str) else None
    if call_id is None:
        return None
    if part.state == "output-available":
        output = part.output if part.output is not UNSET else None
        if tool == CONFIRMATION_TOOL:
            # Seed style: addToolOutput({tool: "adk_request_confirmation", output}).
            result = dict(output) if isinstance(output, dict) else {"confirmed": False}
            result["confirmed"] = result.get("confirmed") is True
            return _Answer(call_id, result, is_approval=True, fresh=False)
        result = output if isinstance(output, dict) else {"result": output}
        return _Answer(call_id, result, is_approval=False, fresh=False)
    if part.state == "output-error":
        text = part.error_text if isinstance(part.error_text, str) else "The tool failed."
        return _Answer(call_id, {"error": text}, is_approval=tool == CONFIRMATION_TOOL,
                       fresh=False)
    return None


def _known_call(session: Session, call_id: str) -> bool:
    for event in session.events:
        if event.content is None or not event.content.parts:
            continue
        for part in event.content.parts:
            if part.function_call is not None and part.function_call.id == call_id:
                return True
            if part.function_response is not None and part.function_response.id == call_id:
                return True
    return False


def _meta(event: Event) -> dict[str, Any]:
    meta = (event.custom_metadata or {}).get(META_KEY)
    return meta if isinstance(meta, dict) else {}
