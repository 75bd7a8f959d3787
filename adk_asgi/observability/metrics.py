"""The bridge's metrics: OpenTelemetry instruments named ``adk_asgi.*`` (a Prometheus reader
exports them as ``adk_asgi_*``), recorded per turn, connection, approval or error — never
per chunk.

Only ``opentelemetry-api`` is needed here: until a ``MeterProvider`` is configured
(``adk-asgi serve --metrics-port``, or your own set-up: docs/serving/operations.md) every
instrument is a no-op proxy, and each call costs a few hundred nanoseconds.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Final, Literal

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Meter, Observation

__all__ = ("METRICS", "Metrics", "Outcome", "Transport")

Transport = Literal["sse", "websocket"]
Outcome = Literal[
    "completed",
    "awaiting",
    "error",
    "stopped",
    "interrupted",
    "client_gone",
    "stuck_client",
    "shutdown",
    "limit",
]
"""How a turn ended: ``awaiting`` = it waits for approvals or browser tools; ``limit`` = it
reached ``Limits.max_turn_seconds`` or ``max_turn_bytes``."""

# Seconds: from a fast first token to a long turn with tools (the default buckets are ms).
_BUCKETS: Final = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
_AGE_BUCKETS: Final = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 900.0, 3600.0, 86400.0)
_BY_TRANSPORT: Final = {"sse": {"transport": "sse"}, "websocket": {"transport": "websocket"}}


class Metrics:
    """The instruments, and one method per thing that happens."""

    def __init__(self, meter: Meter) -> None:
        self.active_streams = meter.create_up_down_counter(
            "adk_asgi.active_streams",
            unit="{stream}",
            description="Turns streaming right now (HTTP turns and live turns)",
        )
        self.active_connections = meter.create_up_down_counter(
            "adk_asgi.active_connections",
            unit="{connection}",
            description="Open live WebSocket connections",
        )
        self.time_to_first_token = meter.create_histogram(
            "adk_asgi.time_to_first_token",
            unit="s",
            description="From the user's message to the first chunk of the model's answer",
            explicit_bucket_boundaries_advisory=_BUCKETS,
        )
        self.tokens_streamed = meter.create_counter(
            "adk_asgi.tokens_streamed",
            unit="{token}",
            description="Output tokens of the streamed answers, as the model reports them",
        )
        self.turns = meter.create_counter(
            "adk_asgi.turns", unit="{turn}", description="Turns ended, by outcome"
        )
        self.turn_duration = meter.create_histogram(
            "adk_asgi.turn_duration",
            unit="s",
            description="How long turns took, by outcome",
            explicit_bucket_boundaries_advisory=_BUCKETS,
        )
        self.approvals_requested = meter.create_counter(
            "adk_asgi.approvals_requested",
            unit="{approval}",
            description="Approval requests sent to users",
        )
        self.approval_age = meter.create_histogram(
            "adk_asgi.approval_age",
            unit="s",
            description="How long approvals waited for the user's decision",
            explicit_bucket_boundaries_advisory=_AGE_BUCKETS,
        )
        self.store_errors = meter.create_counter(
            "adk_asgi.store_errors",
            unit="{error}",
            description="Failed session-service and stream-store operations",
        )
        self.at_capacity_refusals = meter.create_counter(
            "adk_asgi.at_capacity",
            unit="{request}",
            description="Requests and connections refused at capacity (503 at_capacity), by "
            "the resource that was exhausted",
        )
        self.resumes = meter.create_counter(
            "adk_asgi.resumes",
            unit="{resume}",
            description="Stream resumes asked for (result: replayed or none)",
        )
        # Approvals waiting on live connections of this process: key -> since (monotonic).
        self._waiting: dict[str, float] = {}
        meter.create_observable_gauge(
            "adk_asgi.approvals_pending",
            [self._observe_pending],
            unit="{approval}",
            description="Approvals waiting for the user on live connections of this process",
        )
        meter.create_observable_gauge(
            "adk_asgi.approval_oldest_pending_age",
            [self._observe_oldest],
            unit="s",
            description="How long the oldest approval waiting on a live connection has waited",
        )

    # -- turns ------------------------------------------------------------------------

    def turn_started(self, transport: Transport) -> None:
        self.active_streams.add(1, _BY_TRANSPORT[transport])

    def first_token(self, transport: Transport, seconds: float) -> None:
        self.time_to_first_token.record(seconds, _BY_TRANSPORT[transport])

    def turn_ended(
        self,
        transport: Transport,
        outcome: Outcome,
        seconds: float,
        *,
        tokens: int = 0,
        approvals: int = 0,
    ) -> None:
        by_transport = _BY_TRANSPORT[transport]
        self.active_streams.add(-1, by_transport)
        attributes = {"transport": transport, "outcome": outcome}
        self.turns.add(1, attributes)
        self.turn_duration.record(seconds, attributes)
        if tokens:
            self.tokens_streamed.add(tokens, by_transport)
        if approvals:
            self.approvals_requested.add(approvals, by_transport)

    # -- connections, resumes, stores ----------------------------------------------

    def connection_opened(self) -> None:
        self.active_connections.add(1)

    def connection_closed(self) -> None:
        self.active_connections.add(-1)

    def resumed(self, transport: Transport, replayed: bool) -> None:
        self.resumes.add(1, {"transport": transport, "result": "replayed" if replayed else "none"})

    def store_error(self, store: Literal["sessions", "streams"], operation: str) -> None:
        self.store_errors.add(1, {"store": store, "operation": operation})

    def at_capacity(self, resource: str) -> None:
        self.at_capacity_refusals.add(1, {"resource": resource})

    # -- approvals --------------------------------------------------------------------

    def approval_answered(self, transport: Transport, decision: str, seconds: float | None) -> None:
        """An approval was decided (``approved``, ``denied``, ``timed_out``) after
        ``seconds`` (None: unknown)."""
        if seconds is not None:
            self.approval_age.record(
                max(seconds, 0.0), {"transport": transport, "decision": decision}
            )

    def approval_waiting(self, key: str) -> None:
        """A live connection waits for the user's decision on ``key``."""
        self._waiting[key] = time.monotonic()

    def approval_done(self, key: str, decision: str) -> None:
        """The live wait for ``key`` ended (``cancelled``: the connection closed)."""
        since = self._waiting.pop(key, None)
        if since is not None:
            self.approval_answered("websocket", decision, time.monotonic() - since)

    def _observe_pending(self, _options: CallbackOptions) -> Iterable[Observation]:
        return [Observation(len(self._waiting), _BY_TRANSPORT["websocket"])]

    def _observe_oldest(self, _options: CallbackOptions) -> Iterable[Observation]:
        oldest = min(self._waiting.values(), default=None)
        age = 0.0 if oldest is None else time.monotonic() - oldest
        return [Observation(age, _BY_TRANSPORT["websocket"])]


METRICS: Final = Metrics(metrics.get_meter("adk_asgi"))
"""The process's instruments (on the global ``MeterProvider``, whenever it is set)."""
