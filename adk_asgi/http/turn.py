"""TurnPlan: from a chat request and the server-side session to the one ADK input of a turn.

The ADK session is the source of truth. The client's history is read for two things only:
the new user message (the last one), and, when the assistant message is being continued,
the client's answers to the calls that the *session* says are waiting for the client
(approvals, browser tools and long-running tools: ``pending.py``; the rules are in
``core/approvals.py``). Everything else the client sends about the past (tool inputs,
outputs, text) is ignored, so an edited history changes nothing.

``plan_completion`` plans the turn of a long-running call completed by the server
(``AdkApp.complete_tool_call`` and its HTTP endpoint).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from google.adk.sessions import Session
from google.genai import types
from msgspec import UNSET

from ..core.approvals import CONFIRMATION_TOOL, answers_in, decide
from ..core.errors import RequestError
from ..core.request import ChatRequest, UIMessage, user_content
from ..core.sessions import event_meta
from ..core.tools import ToolKinds
from ..observability.metrics import METRICS
from .pending import SessionPendingCalls

__all__ = ("TurnPlan", "new_message_id", "plan_completion", "plan_turn")


def new_message_id() -> str:
    return f"msg-{uuid.uuid4().hex[:20]}"


@dataclass(slots=True)
class TurnPlan:
    """What one request asks of ADK."""

    message_id: str
    new_message: types.Content | None  # None: nothing for ADK this time
    user_message_id: str | None = None
    denied_call_ids: frozenset[str] = frozenset()
    denial_reasons: dict[str, str] = field(default_factory=dict)
    rewind_before: str | None = None  # invocation to rewind before (regenerate / edit)
    seed: list[UIMessage] = field(default_factory=list)
    # Calls that still wait for the client after this turn's answers.
    still_pending: frozenset[str] = frozenset()
    # Browser-tool calls the user denied: ADK does not echo the answer we send for them,
    # so the stream reports the denial itself.
    denied_client_calls: tuple[str, ...] = ()
    # Server calls the user approved: they run in this turn.
    resumed_calls: frozenset[str] = frozenset()
    # Long-running calls completed in this turn, and their final results: ADK does not echo
    # them, so the stream sends them itself.
    completed: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Calls to state again before their results (made in an earlier message).
    restated: tuple[tuple[str, str, dict[str, Any]], ...] = ()
    # Steps the continued message already has (the index of this turn's first step).
    steps_before: int = 0
    # Request body fields for the session state (``AdkApp(body_fields=...)``).
    state_delta: dict[str, Any] = field(default_factory=dict)
    # The new user message's own metadata (the page's), kept for its history.
    user_metadata: Any = None

    def run_metadata(self) -> dict[str, Any]:
        """The turn's tags in the session (``custom_metadata.adk_asgi``)."""
        metadata: dict[str, Any] = {"messageId": self.message_id}
        if self.user_message_id:
            metadata["userMessageId"] = self.user_message_id
        if self.user_metadata is not None:
            metadata["userMetadata"] = self.user_metadata
        if self.denial_reasons:
            metadata["denialReasons"] = self.denial_reasons
        return metadata


def plan_turn(request: ChatRequest, session: Session | None, tools: ToolKinds | None = None,
              max_file_bytes: int | None = None) -> TurnPlan:
    """``tools``: the agent's browser, approval and long-running tools."""
    tools = tools or ToolKinds()
    last = request.history[-1]
    if last.role == "user":
        return _new_user_turn(request, last, session, max_file_bytes)
    if last.role == "assistant":
        return _continuation(request, last, session, tools)
    raise RequestError(422, "invalid_last_message",
                       "The last message must be a user message or the assistant message "
                       "being continued.")


def _new_user_turn(request: ChatRequest, last: UIMessage, session: Session | None,
                   max_file_bytes: int | None) -> TurnPlan:
    plan = TurnPlan(message_id=new_message_id(), new_message=user_content(last, max_file_bytes),
                    user_message_id=last.id or None,
                    user_metadata=last.metadata if last.metadata is not UNSET else None)
    if session is None:
        plan.seed = [m for m in request.history[:-1] if m.role in ("user", "assistant")]
        return plan
    # Regenerate, or an edited user message: the message was already answered in this
    # session. Rewind to before that turn and answer it again.
    if last.id:
        for event in session.events:
            if event.author == "user" and event_meta(event).get("userMessageId") == last.id:
                plan.rewind_before = event.invocation_id
                break
    if plan.rewind_before is None and request.trigger == "regenerate-message":
        for event in reversed(session.events):
            if event.author == "user" and event.content is not None and event_meta(event):
                plan.rewind_before = event.invocation_id
                break
    return plan


def _continuation(request: ChatRequest, last: UIMessage, session: Session | None,
                  tools: ToolKinds) -> TurnPlan:
    pending = SessionPendingCalls(session, tools)
    decisions = decide([a for part in last.parts for a in answers_in(part)], pending)
    responses: dict[str, types.Part] = {}
    invocations: set[str] = set()
    denied: set[str] = set()
    resumed: set[str] = set()
    reasons: dict[str, str] = {}
    denied_client: list[str] = []
    answered: set[str] = set()
    completed: dict[str, dict[str, Any]] = {}
    for decision in decisions:
        call = decision.call
        if call.browser and decision.confirmed:
            # Approved, not run yet: the page runs the tool and sends its result in this
            # request (a result decision follows) or a later one.
            continue
        if call.invocation_id is not None:
            invocations.add(call.invocation_id)
        if call.browser:
            target, name = call.call_id, call.name
            denied_client.append(call.call_id)
        elif call.kind == "approval":
            target, name = call.answer_id, CONFIRMATION_TOOL
        else:
            target, name = call.call_id, call.name
        if not decision.confirmed:
            denied.add(call.call_id)
            if decision.reason:
                reasons[call.call_id] = decision.reason
        elif call.kind == "approval" and not call.browser:
            resumed.add(call.call_id)
        elif call.kind == "long-running":
            completed[call.call_id] = decision.response
        answered.add(target)
        responses[target] = types.Part(function_response=types.FunctionResponse(
            id=target, name=name, response=decision.response))
    if len(invocations) > 1:
        raise RequestError(422, "mixed_invocations",
                           "Answers belong to different turns; answer one turn at a time.")
    now = time.time()
    for decision in decisions:
        if decision.call.kind == "approval":
            since = decision.call.since
            METRICS.approval_answered("sse", "approved" if decision.confirmed else "denied",
                                      None if since is None else now - since)
    message_id = last.id or (request.message_id if isinstance(request.message_id, str)
                             else new_message_id())
    return TurnPlan(message_id=message_id,
                    new_message=types.Content(role="user", parts=list(responses.values()))
                    if responses else None,
                    denied_call_ids=frozenset(denied), denial_reasons=reasons,
                    still_pending=frozenset(pending.answer_ids - answered),
                    denied_client_calls=tuple(denied_client),
                    resumed_calls=frozenset(resumed), completed=completed,
                    steps_before=sum(1 for part in last.parts if part.type == "step-start"))


def plan_completion(session: Session | None, tools: ToolKinds, call_id: str,
                    result: dict[str, Any]) -> TurnPlan:
    """The turn of a long-running call the server completes: ADK gets the final result as
    the call's function response and resumes the call's invocation. Nobody reads the turn
    as it runs: a page picks it up with ``resumeStream``, which replays a stream from its
    start into a fresh message, so the turn is a new assistant message that states the call
    again before its result."""
    pending = SessionPendingCalls(session, tools)
    call = pending.waiting(call_id)
    if call is None:
        known = pending.is_known(call_id)
        raise RequestError(409, "unknown_tool_call",
                           f"Call {call_id!r} was already answered." if known
                           else f"No call {call_id!r} is waiting for an answer.")
    if call.kind != "long-running":
        raise RequestError(422, "wrong_answer_kind",
                           f"Call {call_id!r} is not a long-running server tool call.")
    response = types.FunctionResponse(id=call_id, name=call.name, response=result)
    return TurnPlan(message_id=new_message_id(),
                    new_message=types.Content(role="user",
                                              parts=[types.Part(function_response=response)]),
                    still_pending=frozenset(pending.answer_ids), completed={call_id: result},
                    restated=((call_id, call.name, pending.args(call_id)),))
