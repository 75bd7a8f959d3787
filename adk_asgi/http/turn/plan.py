"""TurnPlan: from a chat request and the server-side session to the one ADK input of a turn.

The ADK session is the source of truth. The client's history is read for two things only:
the new user message (the last one), and, when the assistant message is being continued,
the client's answers to the calls that the *session* says are waiting for the client
(approvals, browser tools and long-running tools: ``pending.py``; the rules are in
``pauses/approvals.py``). Everything else the client sends about the past (tool inputs,
outputs, text) is ignored, so an edited history changes nothing.

``plan_completion`` plans the turn of a long-running call completed by the server
(``AdkApp.complete_tool_call`` and its HTTP endpoint); ``plan_sign_in`` the turn an OAuth2
sign-in's callback continues (``http/oauth.py``).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from google.adk.sessions import Session
from google.genai import types
from msgspec import UNSET

from ...adk.sessions import event_meta
from ...observability.metrics import METRICS
from ...pauses.approvals import CONFIRMATION_TOOL, Decision, answers_in, decide
from ...pauses.credentials import CREDENTIAL_ANSWER, CredentialRequest, Secret
from ...pauses.kinds import adk_response, client_output, secret_of
from ...pauses.tools import ToolKinds
from ...translate.message import AssistantMessage, MessageContext
from ...translate.translator import node_outputs
from ...wire.chunks import ToolOutputAvailable, ToolOutputDenied, UIChunk
from ...wire.errors import RequestError
from ...wire.request import ChatRequest, UIMessage, user_content
from .pending import SessionPendingCalls

__all__ = (
    "HandedCredential",
    "TurnPlan",
    "new_message_id",
    "plan_completion",
    "plan_sign_in",
    "plan_turn",
)


def new_message_id() -> str:
    return f"msg-{uuid.uuid4().hex[:20]}"


@dataclass(frozen=True, slots=True)
class HandedCredential:
    """A credential the turn hands to ADK when its run starts (``pauses/credentials.py``)."""

    call_id: str
    args: dict[str, Any]
    secret: Secret
    redirect_uri: str | None = None


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
    # The node outputs the continued message showed (a resumed workflow yields them again).
    outputs_before: frozenset[tuple[str, str]] = frozenset()
    # Request body fields for the session state (``AdkApp(body_fields=...)``).
    state_delta: dict[str, Any] = field(default_factory=dict)
    # The new user message's own metadata (the page's), kept for its history.
    user_metadata: Any = None
    # Credentials answered in this turn: handed to ADK apart, never in new_message.
    credentials: tuple[HandedCredential, ...] = ()
    # What the page answered for its calls (browser results, inputs; credentials only as
    # given): a recording of the turn states them, so that its replay shows them answered.
    # Credentials are stated to the client too (its copy of the secret is replaced).
    answered_outputs: dict[str, Any] = field(default_factory=dict)
    # The session's function calls (id -> name, args): a recording states a call before
    # its outcome when its earlier chunks are not at hand (``http/turn/continuity.py``).
    calls: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    # Where an OAuth2 sign-in returns (adk-asgi's callback), set by the endpoint.
    oauth_redirect: str | None = None
    # The turn continues an assistant message (answers, a sign-in).
    continues: bool = False
    # The recording of the message's earlier request, when the store still holds it
    # (read by the endpoint before this turn's recording replaces it).
    previous: bytes | None = None

    def message_context(self) -> MessageContext:
        """What the turn's part of its message starts from (its translator's context)."""
        return MessageContext(
            denied=self.denied_call_ids,
            resumed=self.resumed_calls,
            awaiting=self.still_pending,
            steps_before=self.steps_before,
            oauth_redirect=self.oauth_redirect,
            outputs_before=self.outputs_before,
        )

    def stated(self, message: AssistantMessage) -> list[UIChunk]:
        """What the turn's stream states before ADK runs: the page's answers as the stream
        shows them (denied browser calls, the credentials given, without their secret) and
        the server's (calls stated again with their completed results)."""
        out: list[UIChunk] = [
            ToolOutputDenied(tool_call_id=call_id) for call_id in self.denied_client_calls
        ]
        # A credential the page gave: its copy of the secret is replaced by this output.
        out.extend(
            ToolOutputAvailable(tool_call_id=c.call_id, output=self.answered_outputs.get(c.call_id))
            for c in self.credentials
        )
        for call_id, name, args in self.restated:
            out.extend(message.tools.restate(call_id, name, args))
        for call_id, output in self.completed.items():
            out.extend(message.tools.outcome(call_id, output))
        return out

    def run_metadata(self) -> dict[str, Any]:
        """The turn's tags in the session (``custom_metadata.adk_asgi``)."""
        metadata: dict[str, Any] = {"messageId": self.message_id}
        if self.user_message_id:
            metadata["userMessageId"] = self.user_message_id
        if self.user_metadata is not None:
            metadata["userMetadata"] = self.user_metadata
        if self.denial_reasons:
            metadata["denialReasons"] = self.denial_reasons
        if self.credentials:
            # The user event of this turn answers credential requests: bookkeeping that a
            # history hides (its responses are CREDENTIAL_ANSWER, the secret is not there).
            metadata["credentialAnswers"] = [c.call_id for c in self.credentials]
        return metadata


def plan_turn(
    request: ChatRequest,
    session: Session | None,
    tools: ToolKinds | None = None,
    max_file_bytes: int | None = None,
) -> TurnPlan:
    """``tools``: the agent's browser, approval and long-running tools."""
    tools = tools or ToolKinds()
    last = request.history[-1]
    if last.role == "user":
        return _new_user_turn(request, last, session, max_file_bytes)
    if last.role == "assistant":
        return _continuation(request, last, session, tools)
    raise RequestError(
        422,
        "invalid_last_message",
        "The last message must be a user message or the assistant message being continued.",
    )


def _new_user_turn(
    request: ChatRequest, last: UIMessage, session: Session | None, max_file_bytes: int | None
) -> TurnPlan:
    plan = TurnPlan(
        message_id=new_message_id(),
        new_message=user_content(last, max_file_bytes),
        user_message_id=last.id or None,
        user_metadata=last.metadata if last.metadata is not UNSET else None,
    )
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


def _continuation(
    request: ChatRequest, last: UIMessage, session: Session | None, tools: ToolKinds
) -> TurnPlan:
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
    credentials: list[HandedCredential] = []
    outputs: dict[str, Any] = {}
    for decision in decisions:
        call = decision.call
        if call.browser and decision.confirmed:
            # Approved, not run yet: the page runs the tool and sends its result in this
            # request (a result decision follows) or a later one.
            continue
        if call.invocation_id is not None:
            invocations.add(call.invocation_id)
        response = decision.response
        if call.browser:
            target, name = call.call_id, call.name
            denied_client.append(call.call_id)
        elif call.kind == "approval":
            target, name = call.answer_id, call.response_name or CONFIRMATION_TOOL
        else:
            target, name = call.call_id, call.name
            response = _client_answer(decision, pending, credentials, outputs)
        if not decision.confirmed:
            denied.add(call.call_id)
            if decision.reason:
                reasons[call.call_id] = decision.reason
        elif call.kind == "approval" and not call.browser:
            resumed.add(call.call_id)
        elif call.kind == "long-running":
            completed[call.call_id] = decision.response
        answered.add(target)
        responses[target] = types.Part(
            function_response=types.FunctionResponse(id=target, name=name, response=response)
        )
    if len(invocations) > 1:
        raise RequestError(
            422,
            "mixed_invocations",
            "Answers belong to different turns; answer one turn at a time.",
        )
    now = time.time()
    for decision in decisions:
        if decision.call.kind == "approval":
            since = decision.call.since
            METRICS.approval_answered(
                "sse",
                "approved" if decision.confirmed else "denied",
                None if since is None else now - since,
            )
    paused = _paused_message_id(session, {d.call.invocation_id for d in decisions})
    if paused is not None and last.id and last.id != paused:
        # Continued under another id, the reply would be a second assistant message and
        # the paused one would show its calls unanswered for good.
        raise RequestError(
            409,
            "wrong_message_id",
            f"These answers continue the assistant message {paused!r}; send them in "
            f"that message (its id), not in {last.id!r}.",
        )
    message_id = (
        last.id
        or paused
        or (request.message_id if isinstance(request.message_id, str) else new_message_id())
    )
    return TurnPlan(
        message_id=message_id,
        new_message=types.Content(role="user", parts=list(responses.values()))
        if responses
        else None,
        denied_call_ids=frozenset(denied),
        denial_reasons=reasons,
        still_pending=frozenset(pending.answer_ids - answered),
        denied_client_calls=tuple(denied_client),
        resumed_calls=frozenset(resumed),
        completed=completed,
        steps_before=sum(1 for part in last.parts if part.type == "step-start"),
        outputs_before=node_outputs(session.events if session else (), invocations),
        credentials=tuple(credentials),
        answered_outputs=outputs,
        calls=pending.calls,
        continues=True,
    )


def _paused_message_id(session: Session | None, invocations: set[str | None]) -> str | None:
    """The id of the assistant message whose turn paused on the answered calls (the
    newest tagged event of their invocation)."""
    if session is None:
        return None
    for event in reversed(session.events):
        if event.invocation_id in invocations:
            found = event_meta(event).get("messageId")
            if isinstance(found, str) and found:
                return found
    return None


def _client_answer(
    decision: Decision,
    pending: SessionPendingCalls,
    credentials: list[HandedCredential],
    outputs: dict[str, Any],
) -> dict[str, Any]:
    """ADK's function response for a result the page gave (a browser tool's, an input, a
    credential), noting what the turn states about it and hands over."""
    call = decision.call
    if call.kind == "credential":
        credentials.append(
            HandedCredential(call.call_id, pending.args(call.call_id), secret_of(decision.response))
        )
    if call.kind in ("credential", "input"):
        outputs[call.call_id] = client_output(call, decision.response)
        return adk_response(call, decision.response)
    if call.kind == "client-tool":
        outputs[call.call_id] = decision.response
    return decision.response


def plan_completion(
    session: Session | None, tools: ToolKinds, call_id: str, result: dict[str, Any]
) -> TurnPlan:
    """The turn of a long-running call the server completes: ADK gets the final result as
    the call's function response and resumes the call's invocation. Nobody reads the turn
    as it runs: a page picks it up with ``resumeStream``, which replays a stream from its
    start into a fresh message, so the turn is a new assistant message that states the call
    again before its result."""
    pending = SessionPendingCalls(session, tools)
    call = pending.waiting(call_id)
    if call is None:
        known = pending.is_known(call_id)
        raise RequestError(
            409,
            "unknown_tool_call",
            f"Call {call_id!r} was already answered."
            if known
            else f"No call {call_id!r} is waiting for an answer.",
        )
    if call.kind != "long-running":
        raise RequestError(
            422, "wrong_answer_kind", f"Call {call_id!r} is not a long-running server tool call."
        )
    response = types.FunctionResponse(id=call_id, name=call.name, response=result)
    return TurnPlan(
        message_id=new_message_id(),
        calls=pending.calls,
        new_message=types.Content(role="user", parts=[types.Part(function_response=response)]),
        still_pending=frozenset(pending.answer_ids),
        completed={call_id: result},
        restated=((call_id, call.name, pending.args(call_id)),),
        outputs_before=_outputs_before(session, call.invocation_id),
    )


def plan_sign_in(
    session: Session | None,
    tools: ToolKinds,
    call_id: str,
    message_id: str,
    response_uri: str,
    redirect_uri: str,
) -> TurnPlan:
    """The turn an OAuth2 sign-in's callback continues: ADK gets the authorization response
    (``response_uri``, the callback's URL) for ``call_id`` and exchanges its code itself;
    the turn continues the assistant message that asked (``message_id``)."""
    pending = SessionPendingCalls(session, tools)
    call = pending.waiting(call_id)
    if call is None:
        raise RequestError(
            409,
            "unknown_tool_call",
            f"Call {call_id!r} was already answered."
            if pending.is_known(call_id)
            else f"No call {call_id!r} is waiting for an answer.",
        )
    pause = call.pause
    if (
        call.kind != "credential"
        or not isinstance(pause, CredentialRequest)
        or pause.scheme != "oauth2"
    ):
        raise RequestError(
            422, "wrong_answer_kind", f"Call {call_id!r} is not waiting for a sign-in."
        )
    handed = HandedCredential(
        call_id, pending.args(call_id), Secret("authResponse", response_uri), redirect_uri
    )
    response = types.FunctionResponse(id=call_id, name=call.name, response=dict(CREDENTIAL_ANSWER))
    return TurnPlan(
        message_id=message_id,
        new_message=types.Content(role="user", parts=[types.Part(function_response=response)]),
        still_pending=frozenset(pending.answer_ids - {call_id}),
        credentials=(handed,),
        answered_outputs={call_id: {"status": "connected"}},
        calls=pending.calls,
        continues=True,
        oauth_redirect=redirect_uri,
        outputs_before=_outputs_before(session, call.invocation_id),
    )


def _outputs_before(
    session: Session | None, invocation_id: str | None
) -> frozenset[tuple[str, str]]:
    """The node outputs the paused invocation showed (its resume yields them again)."""
    if session is None or invocation_id is None:
        return frozenset()
    return node_outputs(session.events, (invocation_id,))
