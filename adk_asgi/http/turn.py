"""TurnPlan: from a chat request and the server-side session to the one ADK input of a turn.

The ADK session is the source of truth. The client's history is read for two things only:
the new user message (the last one), and, when the assistant message is being continued,
the client's answers to the calls that the *session* says are waiting for the client
(approvals and browser tools; the rules are in ``core/approvals.py``). Everything else the
client sends about the past (tool inputs, outputs, text) is ignored, so an edited history
changes nothing.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from google.adk.sessions import Session
from google.genai import types

from ..core.approvals import (
    CONFIRMATION_TOOL,
    PendingCall,
    answers_in,
    decide,
    frontend_approval_id,
)
from ..core.errors import RequestError
from ..core.request import ChatRequest, UIMessage, user_content
from ..core.sessions import event_meta
from ..observability.metrics import METRICS

__all__ = ("SessionPendingCalls", "TurnPlan", "new_message_id", "plan_turn")


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

    def run_metadata(self) -> dict[str, Any]:
        """The turn's tags in the session (``custom_metadata.adk_asgi``)."""
        metadata: dict[str, Any] = {"messageId": self.message_id}
        if self.user_message_id:
            metadata["userMessageId"] = self.user_message_id
        if self.denial_reasons:
            metadata["denialReasons"] = self.denial_reasons
        return metadata


class SessionPendingCalls:
    """The calls an ADK session says are waiting for the client (``PendingCalls``)."""

    def __init__(self, session: Session | None, approval_tools: frozenset[str]) -> None:
        self._calls: dict[str, PendingCall] = {}
        self._known: set[str] = set()
        if session is not None:
            self._read(session, approval_tools)

    def _read(self, session: Session, approval_tools: frozenset[str]) -> None:
        answered: set[str] = set()
        for event in session.events:
            content = event.content
            if content is None or not content.parts:
                continue
            long_running = event.long_running_tool_ids or set()
            for part in content.parts:
                response = part.function_response
                if response is not None and response.id:
                    answered.add(response.id)
                    self._known.add(response.id)
                call = part.function_call
                if call is None or not call.id:
                    continue
                self._known.add(call.id)
                if call.id in long_running:
                    self._add_waiting(call, event.invocation_id, event.timestamp,
                                      approval_tools)
        for call_id in answered:
            self._calls.pop(call_id, None)
            self._calls.pop(frontend_approval_id(call_id), None)

    def _add_waiting(self, call: types.FunctionCall, invocation_id: str, since: float,
                     approval_tools: frozenset[str]) -> None:
        assert call.id is not None
        name = call.name or ""
        if name == CONFIRMATION_TOOL:
            args = call.args or {}
            original = args.get("originalFunctionCall") or {}
            confirmation = args.get("toolConfirmation") or {}
            self._calls[call.id] = PendingCall(
                "approval", call.id, str(original.get("id", "")), str(original.get("name", "")),
                payload=confirmation.get("payload"), invocation_id=invocation_id, since=since)
            return
        gated = name in approval_tools
        self._calls[call.id] = PendingCall("client-tool", call.id, call.id, name,
                                           needs_approval=gated, invocation_id=invocation_id)
        if gated:
            # The bridge's own approval of a browser tool, under a derived id.
            approval = frontend_approval_id(call.id)
            self._calls[approval] = PendingCall("approval", approval, call.id, name,
                                                browser=True, invocation_id=invocation_id,
                                                since=since)

    def waiting(self, answer_id: str) -> PendingCall | None:
        return self._calls.get(answer_id)

    def is_known(self, answer_id: str) -> bool:
        return answer_id in self._known

    def repeated(self, answer_id: str, confirmed: bool) -> bool:
        return False  # every continuation streams the outcomes of what it answered

    @property
    def answer_ids(self) -> set[str]:
        """What the client may still answer (browser approvals are under their call)."""
        return {c.answer_id for c in self._calls.values() if not c.browser}


def plan_turn(request: ChatRequest, session: Session | None,
              approval_tools: frozenset[str] = frozenset(),
              max_file_bytes: int | None = None) -> TurnPlan:
    """``approval_tools``: browser-executed tools whose calls the user approves first."""
    last = request.history[-1]
    if last.role == "user":
        return _new_user_turn(request, last, session, max_file_bytes)
    if last.role == "assistant":
        return _continuation(request, last, session, approval_tools)
    raise RequestError(422, "invalid_last_message",
                       "The last message must be a user message or the assistant message "
                       "being continued.")


def _new_user_turn(request: ChatRequest, last: UIMessage, session: Session | None,
                   max_file_bytes: int | None) -> TurnPlan:
    plan = TurnPlan(message_id=new_message_id(), new_message=user_content(last, max_file_bytes),
                    user_message_id=last.id or None)
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
                  approval_tools: frozenset[str]) -> TurnPlan:
    pending = SessionPendingCalls(session, approval_tools)
    decisions = decide([a for part in last.parts for a in answers_in(part)], pending)
    responses: dict[str, types.Part] = {}
    invocations: set[str] = set()
    denied: set[str] = set()
    resumed: set[str] = set()
    reasons: dict[str, str] = {}
    denied_client: list[str] = []
    answered: set[str] = set()
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
                    resumed_calls=frozenset(resumed))

