"""The bridge's OpenTelemetry spans: one per HTTP turn, one per live connection and one per
live turn, with the chat id, the user, the transport and the outcome.

ADK creates its own spans (the invocation, the agent, each model call and tool) under
whatever span is current when it starts: the HTTP turn's span is current while
``Runner.run_async`` runs, and the live connection's span while ``Runner.run_live`` runs,
so ADK's spans become their children. Only ``opentelemetry-api`` is needed: without a
configured ``TracerProvider`` every span is a shared no-op (about a microsecond a turn).
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Final

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

from .metrics import Outcome, Transport

__all__ = (
    "CHAT_ID",
    "LIVE_CONNECTION",
    "LIVE_TURN",
    "OUTCOME",
    "TRANSPORT",
    "TURN",
    "USER_ID",
    "current",
    "end_span",
    "start_span",
)

TURN: Final = "adk_asgi.turn"
LIVE_CONNECTION: Final = "adk_asgi.live.connection"
LIVE_TURN: Final = "adk_asgi.live.turn"

CHAT_ID: Final = "adk_asgi.chat.id"
USER_ID: Final = "adk_asgi.user.id"
TRANSPORT: Final = "adk_asgi.transport"
OUTCOME: Final = "adk_asgi.outcome"

_tracer = trace.get_tracer("adk_asgi")


def start_span(name: str, transport: Transport, chat_id: str | None, user_id: str) -> Span:
    """A span under the current one (not made current: ``trace.use_span`` does that)."""
    span = _tracer.start_span(name)
    if span.is_recording():
        span.set_attribute(TRANSPORT, transport)
        span.set_attribute(USER_ID, user_id)
        if chat_id is not None:
            span.set_attribute(CHAT_ID, chat_id)
    return span


def current(span: Span) -> AbstractContextManager[object]:
    """Make ``span`` the current span inside the block (ADK's spans then start under it).
    A span of no trace (no SDK configured) has nothing to pass on: skipped, which halves
    the no-op cost."""
    if span.get_span_context().is_valid:
        return trace.use_span(span)
    return nullcontext()


def end_span(span: Span, outcome: Outcome | str, chat_id: str | None = None) -> None:
    """End ``span`` with its outcome (``error`` marks it failed); ``chat_id`` when it was
    learnt after the start (a live connection's first message)."""
    if span.is_recording():
        span.set_attribute(OUTCOME, outcome)
        if chat_id is not None:
            span.set_attribute(CHAT_ID, chat_id)
        if outcome == "error":
            span.set_status(Status(StatusCode.ERROR))
    span.end()
