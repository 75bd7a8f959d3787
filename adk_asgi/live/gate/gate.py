"""The live gate: tool confirmations and browser-executed tools inside ``run_live``.

ADK 2.13 enforces ``require_confirmation`` in live mode but never asks anyone: the call is
answered with an error and no ``adk_request_confirmation`` is emitted. A long-running tool
that returns ``None`` gets no function response at all, so the model waits forever.
``LiveGatePlugin`` closes both gaps with ADK's own tool callbacks, which run in live mode
as in ``run_async``:

- ``before_tool_callback`` (it runs before ADK's confirmation gate): if the tool needs a
  confirmation, announce it to the connection and wait on a future the client's answer
  resolves; then set ``tool_context.tool_confirmation`` so ADK's own gate lets an approved
  call run (and answers a denied one with its standard "rejected" error, which the model
  is told about).
- ``after_tool_callback``: a long-running tool that returned ``None`` is run by the
  browser (or, ``request_input``, answered by the user: the answer is checked against its
  schema); wait for its result and return it, so ADK builds the function response and
  sends it back to the model itself. A tool that asked for a credential
  (``tool_context.request_credential``; ADK's live flow never asks anyone) gets the same
  ``adk_request_credential`` client call as over SSE (``pauses/kinds.py``); the answer — or
  the OAuth2 sign-in's callback, in this process (``pauses/signin.py``) — goes into ADK's
  credential flow in the run's session state, and the tool runs again with it.

The plugin is ``plugin.py``; what the gate tells its connection, ``pauses/notices.py``.

Which answers are accepted is decided by ``pauses/approvals.py``; the gate is its
``PendingCalls`` source for one connection: ids are bound to the connection, so nothing
else can answer them. The plugin is registered once per runner and does nothing unless
the invocation is a live run whose ``LiveRequestQueue`` belongs to a connection.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

from google.genai import types

from ...observability.metrics import METRICS
from ...pauses.approvals import CallKind, Decision, PendingCall
from ...pauses.credentials import CREDENTIAL_TOOL, CredentialRequest, Secret
from ...pauses.kinds import INPUT_TOOL, client_output, pending_call, secret_of
from ...pauses.notices import (
    ANSWER_TIMEOUT,
    APPROVAL_TIMEOUT,
    REFUSED,
    RESULT_TIMEOUT,
    ApprovalNotice,
    AskNotice,
    Notify,
    ResolvedNotice,
    SettledNotice,
    WaitNotice,
)

__all__ = ("CONFIRMATION_HINT", "LiveGate")

CONFIRMATION_HINT: Final = (
    "Please approve or reject the tool call {name}() by responding with "
    "a FunctionResponse with an expected ToolConfirmation payload."
)
"""ADK's own hint for a confirmation, when the tool gives none."""

# Early browser results kept per connection; more is a misbehaving client.
_MAX_EARLY: Final = 64
_REFUSED: Final = REFUSED
_APPROVAL_TIMEOUT: Final = APPROVAL_TIMEOUT
_RESULT_TIMEOUT: Final = RESULT_TIMEOUT
_ANSWER_TIMEOUT: Final = ANSWER_TIMEOUT
Kind = CallKind


@dataclass(slots=True)
class _Waiter:
    call: PendingCall
    future: asyncio.Future[Decision] = field(repr=False)


SignIn = Callable[[CredentialRequest], Awaitable["asyncio.Future[str] | None"]]
"""Starts waiting for an OAuth2 sign-in's callback (the connection's); None: it cannot."""


class LiveGate:
    """The waits of one connection (the ``PendingCalls`` of ``pauses/approvals``)."""

    def __init__(
        self,
        notify: Notify,
        *,
        timeout: float | None,
        max_waiting: int = 32,
        approval_tools: frozenset[str] = frozenset(),
        sign_in: SignIn | None = None,
        redirect_uri: str | None = None,
    ) -> None:
        self._notify = notify
        self._sign_in = sign_in
        self.redirect_uri = redirect_uri
        """Where an OAuth2 sign-in asked on this connection returns (adk-asgi's callback)."""
        self._timeout = timeout
        self._max_waiting = max_waiting
        self._approval_tools = approval_tools
        self._waiting: dict[str, _Waiter] = {}
        self._answered: set[str] = set()
        self._known_calls: set[str] = set()
        # Browser calls the model made whose result may come before the tool waits.
        self._expected: dict[str, str] = {}  # call id -> tool name
        self._approved: set[str] = set()
        self._early: dict[str, Decision] = {}
        # Approvals applied whose call's outcome the client has not been sent yet:
        # answer id -> (call id, confirmed).
        self._unshown: dict[str, tuple[str, bool]] = {}
        self._closed = False

    # -- the model's side ---------------------------------------------------------

    def know_calls(self, calls: dict[str, str], long_running: set[str]) -> None:
        """Function calls the model made on this connection (``id -> name``); those in
        ``long_running`` are browser tools, whose result may come early."""
        self._known_calls.update(calls)
        for call_id, name in calls.items():
            if call_id in long_running and name != INPUT_TOOL:  # an answer is checked: not early
                self._expected[call_id] = name

    @property
    def busy(self) -> bool:
        """Something waits for the client."""
        return bool(self._waiting)

    # -- PendingCalls (pauses/approvals) -------------------------------------------------

    def waiting(self, answer_id: str) -> PendingCall | None:
        waiter = self._waiting.get(answer_id)
        if waiter is not None:
            return waiter.call
        name = self._expected.get(answer_id)
        if name is not None and answer_id not in self._answered and len(self._early) < _MAX_EARLY:
            # A browser result that beat the wait (the tool has not run yet).
            return PendingCall(
                "client-tool",
                answer_id,
                answer_id,
                name,
                needs_approval=name in self._approval_tools and answer_id not in self._approved,
            )
        return None

    def is_known(self, answer_id: str) -> bool:
        return answer_id in self._answered or answer_id in self._known_calls

    def repeated(self, answer_id: str, confirmed: bool) -> bool:
        return self._unshown.get(answer_id, ("", not confirmed))[1] == confirmed

    def shown(self, call_ids: set[str]) -> None:
        """The outcomes of these calls were sent to the client."""
        if self._unshown and call_ids:
            self._unshown = {k: v for k, v in self._unshown.items() if v[0] not in call_ids}

    def apply(self, decision: Decision) -> ResolvedNotice:
        """Resolve the wait a decision settles (``approvals.decide`` checked it)."""
        call = decision.call
        self._answered.add(call.answer_id)
        self._expected.pop(call.answer_id, None)
        if call.kind == "approval":
            self._unshown[call.answer_id] = (call.call_id, decision.confirmed)
            if decision.confirmed:
                self._approved.add(call.call_id)
        waiter = self._waiting.pop(call.answer_id, None)
        if waiter is None:
            self._early[call.answer_id] = decision
        elif not waiter.future.done():
            waiter.future.set_result(decision)
        output = (
            client_output(call, decision.response) if call.kind in ("input", "credential") else None
        )
        return ResolvedNotice(
            call.answer_id,
            call.call_id,
            call.kind,
            call.kind != "approval" or decision.confirmed,
            output=output,
        )

    # -- the tool callbacks' side --------------------------------------------------

    async def approve(
        self,
        call_id: str,
        name: str,
        args: dict[str, Any],
        *,
        browser: bool,
        hint: str | None = None,
        payload: Any = None,
    ) -> Decision | str:
        """Announce an approval request and wait for the user's decision; a ``str`` is the
        error the model gets instead (too many calls wait, or no answer in time)."""
        if len(self._waiting) >= self._max_waiting:
            return _REFUSED
        key = f"adk-{uuid.uuid4()}"
        hint = hint or CONFIRMATION_HINT.format(name=name)
        waiter = self._register(
            PendingCall("approval", key, call_id, name, browser=browser, payload=payload)
        )
        METRICS.approval_waiting(key)
        decided = "cancelled"
        try:
            await self._notify(ApprovalNotice(key, call_id, name, args, hint, payload))
            decision = await self._wait(waiter, _APPROVAL_TIMEOUT)
            decided = (
                "timed_out"
                if isinstance(decision, str)
                else ("approved" if decision.confirmed else "denied")
            )
            return decision
        finally:
            METRICS.approval_done(key, decided)

    async def client_result(self, call_id: str, name: str) -> Decision | str:
        """Wait for the browser's result of ``call_id`` (it may already be here)."""
        self._known_calls.add(call_id)
        self._expected.pop(call_id, None)
        early = self._early.pop(call_id, None)
        if early is not None:
            await self._notify(ResolvedNotice(call_id, call_id, "client-tool", True))
            return early
        if len(self._waiting) >= self._max_waiting:
            return _REFUSED
        waiter = self._register(PendingCall("client-tool", call_id, call_id, name))
        await self._notify(WaitNotice(call_id))
        return await self._wait(waiter, _RESULT_TIMEOUT)

    async def answer(self, call: PendingCall) -> Decision | str:
        """Wait for the user's answer to a request for input (stated on the page by the
        translator, as the model's call)."""
        self._known_calls.add(call.answer_id)
        if len(self._waiting) >= self._max_waiting:
            return _REFUSED
        waiter = self._register(call)
        await self._notify(WaitNotice(call.call_id))
        return await self._wait(waiter, _ANSWER_TIMEOUT)

    async def credential(self, call_id: str, args: dict[str, Any]) -> Secret | str | None:
        """Ask the user for the credential the tool call ``call_id`` requested (``args``:
        ADK's ``adk_request_credential`` arguments); the secret, the error the model gets
        instead, or None when the page cannot answer this kind."""
        key = f"adk-{uuid.uuid4()}"
        call = pending_call(types.FunctionCall(id=key, name=CREDENTIAL_TOOL, args=args), None, None)
        request = call.pause if call is not None else None
        if call is None or not isinstance(request, CredentialRequest):
            return None
        if len(self._waiting) >= self._max_waiting:
            return _REFUSED
        signed_in = None
        if request.scheme == "oauth2":
            if self._sign_in is None or self.redirect_uri is None:
                return None
            signed_in = await self._sign_in(request)
            if signed_in is None:
                return None
        waiter = self._register(call)
        self._known_calls.add(key)
        try:
            await self._notify(
                AskNotice(key, call_id, CREDENTIAL_TOOL, request.presented(self.redirect_uri))
            )
            if signed_in is not None:
                return await self._signed_in(waiter, signed_in)
            decision = await self._wait(waiter, _ANSWER_TIMEOUT)
        finally:
            if signed_in is not None:
                signed_in.cancel()
        return decision if isinstance(decision, str) else secret_of(decision.response)

    async def _signed_in(self, waiter: _Waiter, signed_in: asyncio.Future[str]) -> Secret | str:
        """The callback's authorization response (the page cannot answer a sign-in)."""
        call = waiter.call
        try:
            uri = await asyncio.wait_for(asyncio.shield(signed_in), self._timeout)
        except TimeoutError:
            self._answered.add(call.answer_id)
            await self._notify(
                ResolvedNotice(call.answer_id, call.call_id, call.kind, False, timed_out=True)
            )
            return _ANSWER_TIMEOUT
        finally:
            self._waiting.pop(call.answer_id, None)
            if not waiter.future.done():
                waiter.future.cancel()
        self._answered.add(call.answer_id)
        await self._notify(
            ResolvedNotice(
                call.answer_id, call.call_id, call.kind, True, output={"status": "connected"}
            )
        )
        return Secret("authResponse", uri)

    async def settled(self, call_id: str, running: asyncio.Future[Any] | None = None) -> None:
        """The call ran on the server (``running``: a streaming tool's task, yielding)."""
        self._expected.pop(call_id, None)
        await self._notify(SettledNotice(call_id, running))

    def _register(self, call: PendingCall) -> _Waiter:
        if self._closed:
            raise asyncio.CancelledError  # the connection is gone: run nothing
        waiter = _Waiter(call, asyncio.get_running_loop().create_future())
        self._waiting[call.answer_id] = waiter
        return waiter

    async def _wait(self, waiter: _Waiter, timed_out: str) -> Decision | str:
        call = waiter.call
        try:
            # shield: a timeout must not cancel the future the client resolves.
            return await asyncio.wait_for(asyncio.shield(waiter.future), self._timeout)
        except TimeoutError:
            if waiter.future.done() and not waiter.future.cancelled():
                return waiter.future.result()  # answered at the very last moment
            waiter.future.cancel()
            self._answered.add(call.answer_id)
            await self._notify(
                ResolvedNotice(call.answer_id, call.call_id, call.kind, False, timed_out=True)
            )
            return timed_out
        finally:
            self._waiting.pop(call.answer_id, None)

    def close(self) -> None:
        """The connection is gone: every wait is cancelled, so no gated call runs."""
        self._closed = True
        for waiter in self._waiting.values():
            waiter.future.cancel()
        self._waiting.clear()
