"""The live-mode gate: tool confirmations and browser-executed tools inside ``run_live``.

ADK 2.13 enforces ``require_confirmation`` in live mode but never asks anyone:
the call is answered with an error and no ``adk_request_confirmation`` is
emitted. A long-running tool that returns ``None`` gets no function response
at all, so the model waits forever. ``LiveGatePlugin`` closes both gaps with
ADK's own tool callbacks, which run in live mode as in ``run_async``:

- ``before_tool_callback`` (it runs before ADK's confirmation gate): if the
  tool needs a confirmation, announce it to the connection and wait on a future
  the client's answer resolves; then set ``tool_context.tool_confirmation`` so
  ADK's own gate lets an approved call run (and answers a denied one with its
  standard "rejected" error, which the model is told about).
- ``after_tool_callback``: a long-running tool that returned ``None`` is run by
  the browser; wait for its result and return it, so ADK builds the function
  response and sends it back to the model itself.

The plugin is registered once per runner and does nothing unless the invocation
is a live run whose ``LiveRequestQueue`` belongs to a connection (SSE turns and
other live callers are untouched).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from google.adk.agents.live_request_queue import LiveRequestQueue
from google.adk.plugins import BasePlugin
from google.adk.tools import BaseTool, ToolContext
from google.adk.tools.tool_confirmation import ToolConfirmation

__all__ = (
    "PLUGIN_NAME",
    "ApprovalNotice",
    "GateNotice",
    "LiveGate",
    "LiveGatePlugin",
    "ResolvedNotice",
    "SettledNotice",
    "WaitNotice",
)

PLUGIN_NAME: Final = "adk_asgi_live_gate"
# Early browser results kept per connection; more is a misbehaving client.
_MAX_EARLY: Final = 64
_REFUSED: Final = ("Too many tool calls are already waiting for the user on this "
                   "connection; this call was not run.")
_HINT: Final = ("Please approve or reject the tool call {name}() by responding with a "
                "FunctionResponse with an expected ToolConfirmation payload.")


@dataclass(frozen=True, slots=True)
class ApprovalNotice:
    """A call waits for the user's approval (``key`` is the id the client answers)."""

    key: str
    call_id: str
    name: str
    args: dict[str, Any]
    hint: str


@dataclass(frozen=True, slots=True)
class WaitNotice:
    """A browser-executed call waits for its result."""

    call_id: str


@dataclass(frozen=True, slots=True)
class SettledNotice:
    """A call finished on the server without waiting for the client."""

    call_id: str


@dataclass(frozen=True, slots=True)
class ResolvedNotice:
    """A wait ended: answered, denied or timed out."""

    key: str
    call_id: str
    kind: Literal["approval", "client-tool"]
    confirmed: bool
    timed_out: bool = False


GateNotice = ApprovalNotice | WaitNotice | SettledNotice | ResolvedNotice
Notify = Callable[[GateNotice], Awaitable[None]]


@dataclass(slots=True)
class _Waiter:
    kind: Literal["approval", "client-tool"]
    key: str
    call_id: str
    future: asyncio.Future[dict[str, Any]] = field(repr=False)


class GateError(Exception):
    """A client answer the gate refuses (unknown, replayed or of the wrong kind)."""


class LiveGate:
    """The waits of one connection. Ids are bound to it: nothing else can answer them."""

    def __init__(self, notify: Notify, *, timeout: float | None, max_waiting: int = 32) -> None:
        self._notify = notify
        self._timeout = timeout
        self._max_waiting = max_waiting
        self._waiting: dict[str, _Waiter] = {}
        self._answered: set[str] = set()
        self._known_calls: set[str] = set()
        self._early: dict[str, dict[str, Any]] = {}
        self._closed = False

    # -- the server side (called from ADK's tool callbacks) -------------------

    def know_call(self, call_id: str) -> None:
        """A function call the model made on this connection (its result may come early)."""
        self._known_calls.add(call_id)

    @property
    def waiting_calls(self) -> frozenset[str]:
        return frozenset(w.call_id for w in self._waiting.values())

    async def approve(self, call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Announce an approval request and wait for the answer (``{"confirmed": bool, ...}``).

        Times out with ``{"confirmed": False, "timedOut": True}``; refused at once with
        ``{"confirmed": False, "refused": True}`` when too many calls already wait."""
        if len(self._waiting) >= self._max_waiting:
            return {"confirmed": False, "refused": True}
        key = f"adk-{uuid.uuid4()}"
        waiter = self._register("approval", key, call_id)
        await self._notify(ApprovalNotice(key, call_id, name, args, _HINT.format(name=name)))
        return await self._wait(waiter)

    async def client_result(self, call_id: str) -> dict[str, Any]:
        """Wait for the browser's result of ``call_id`` (it may already be here)."""
        self._known_calls.add(call_id)
        early = self._early.pop(call_id, None)
        if early is not None:
            self._answered.add(call_id)
            await self._notify(ResolvedNotice(call_id, call_id, "client-tool", True))
            return early
        if len(self._waiting) >= self._max_waiting:
            return {"refused": True}
        waiter = self._register("client-tool", call_id, call_id)
        await self._notify(WaitNotice(call_id))
        return await self._wait(waiter)

    async def settled(self, call_id: str) -> None:
        await self._notify(SettledNotice(call_id))

    def _register(self, kind: Literal["approval", "client-tool"], key: str,
                  call_id: str) -> _Waiter:
        if self._closed:
            raise asyncio.CancelledError  # the connection is gone: run nothing
        waiter = _Waiter(kind, key, call_id, asyncio.get_running_loop().create_future())
        self._waiting[key] = waiter
        return waiter

    async def _wait(self, waiter: _Waiter) -> dict[str, Any]:
        try:
            # shield: a timeout must not cancel the future the client resolves.
            return await asyncio.wait_for(asyncio.shield(waiter.future), self._timeout)
        except TimeoutError:
            if waiter.future.done() and not waiter.future.cancelled():
                return waiter.future.result()  # answered at the very last moment
            waiter.future.cancel()
            self._answered.add(waiter.key)
            await self._notify(ResolvedNotice(waiter.key, waiter.call_id, waiter.kind,
                                              False, timed_out=True))
            return {"confirmed": False, "timedOut": True}
        finally:
            self._waiting.pop(waiter.key, None)

    # -- the client side (called from the upstream task) ----------------------

    @property
    def waiting_keys(self) -> frozenset[str]:
        return frozenset(self._waiting)

    def check(self, key: str, approval: bool | None = None) -> None:
        """Raise GateError if ``answer(key, ...)`` would be refused (no side effect)."""
        waiter = self._waiting.get(key)
        if waiter is None:
            if key in self._answered:
                raise GateError(f"Call {key!r} was already answered.")
            if approval is not True and key in self._known_calls and len(self._early) < _MAX_EARLY:
                return  # a browser result that beat the wait (the tool has not run yet)
            raise GateError(f"No call {key!r} is waiting for an answer on this connection.")
        if approval is not None and (waiter.kind == "approval") != approval:
            raise GateError(f"Call {key!r} expects "
                            f"{'an approval' if waiter.kind == 'approval' else 'a tool result'}.")

    def answer(self, key: str, result: Any, *, approval: bool | None = None) -> ResolvedNotice:
        """Resolve the wait ``key`` with the client's ``result``.

        ``approval`` says what the client meant (None: whatever is waiting).
        Raises GateError for unknown, replayed or mismatched ids; nothing runs then."""
        self.check(key, approval)
        waiter = self._waiting.get(key)
        if waiter is None:
            self._early[key] = _as_result(result)
            self._answered.add(key)
            return ResolvedNotice(key, key, "client-tool", True)
        if waiter.kind == "approval":
            value = dict(result) if isinstance(result, dict) else {}
            value["confirmed"] = value.get("confirmed") is True
        else:
            value = _as_result(result)
        del self._waiting[key]
        self._answered.add(key)
        waiter.future.set_result(value)
        return ResolvedNotice(key, waiter.call_id, waiter.kind,
                              waiter.kind == "client-tool" or value["confirmed"])

    def is_known(self, key: str) -> bool:
        """An id this connection has seen (waiting, answered, or a model call)."""
        return key in self._waiting or key in self._answered or key in self._known_calls

    def close(self) -> None:
        """The connection is gone: every wait is cancelled, so no gated call runs."""
        self._closed = True
        for waiter in self._waiting.values():
            waiter.future.cancel()
        self._waiting.clear()


def _as_result(result: Any) -> dict[str, Any]:
    return result if isinstance(result, dict) else {"result": result}


class LiveGatePlugin(BasePlugin):
    """ADK plugin that routes confirmations and browser tools of live runs to their gate."""

    def __init__(self) -> None:
        super().__init__(name=PLUGIN_NAME)
        # Keyed by the LiveRequestQueue object: it is what the tool context
        # carries that identifies the connection.
        self._gates: dict[int, tuple[LiveRequestQueue, LiveGate]] = {}

    def attach(self, queue: LiveRequestQueue, gate: LiveGate) -> None:
        self._gates[id(queue)] = (queue, gate)

    def detach(self, queue: LiveRequestQueue) -> None:
        self._gates.pop(id(queue), None)

    def _gate(self, tool_context: ToolContext) -> LiveGate | None:
        queue = tool_context._invocation_context.live_request_queue
        if queue is None:
            return None
        entry = self._gates.get(id(queue))
        return entry[1] if entry is not None and entry[0] is queue else None

    async def before_tool_callback(self, *, tool: BaseTool, tool_args: dict[str, Any],
                                   tool_context: ToolContext) -> dict[str, Any] | None:
        gate = self._gate(tool_context)
        if gate is None or tool_context.tool_confirmation is not None:
            return None
        call_id = tool_context.function_call_id or ""
        gate.know_call(call_id)
        browser_approval = tool.is_long_running and getattr(tool, "require_approval", False) is True
        if not browser_approval and (
                await tool.check_require_confirmation(tool_args, tool_context) is not True):
            return None
        answer = await gate.approve(call_id, tool.name, dict(tool_args))
        if answer.get("refused"):
            return {"error": _REFUSED}
        if answer.get("timedOut"):
            return {"error": "The user did not answer the confirmation request in time; "
                             "the tool call was not run."}
        if browser_approval:
            # The bridge's own approval of a browser tool (``frontend_tool(...,
            # require_approval=True)``): ADK's gate knows nothing of it.
            return None if answer["confirmed"] else {"error": "The user denied this tool call."}
        # ADK's own gate (next in the pipeline) now runs an approved call and
        # answers a denied one with "This tool call is rejected."
        tool_context.tool_confirmation = ToolConfirmation(
            hint=_HINT.format(name=tool.name), confirmed=answer["confirmed"],
            payload=answer.get("payload"))
        return None

    async def after_tool_callback(self, *, tool: BaseTool, tool_args: dict[str, Any],
                                  tool_context: ToolContext,
                                  result: dict[str, Any]) -> dict[str, Any] | None:
        gate = self._gate(tool_context)
        if gate is None:
            return None
        call_id = tool_context.function_call_id or ""
        if result is None and tool.is_long_running:
            # The browser runs it: its result becomes the function response.
            answer = await gate.client_result(call_id)
            if answer.get("refused"):
                return {"error": _REFUSED}
            if answer.get("timedOut"):
                return {"error": "The browser did not return a result in time."}
            return answer
        await gate.settled(call_id)
        return None
