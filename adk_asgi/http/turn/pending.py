"""SessionPendingCalls: the calls an ADK session says are waiting for an answer — approvals,
browser tools, requests for input or credentials (``pauses/kinds.py``) and long-running
server tools — read from the session's events alone.

A long-running call waits until a function response *from the user's side* answers it
(the client's, or the server's completion): the response a ``LongRunningFunctionTool``
returns itself is its interim result. Every other call waits until any response. Events
are read in order, so an interrupt id a workflow asks again (a loop) waits again.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from google.adk.sessions import Session
from google.genai import types

from ...pauses.approvals import CONFIRMATION_TOOL, PendingCall, frontend_approval_id
from ...pauses.kinds import pending_call
from ...pauses.tools import ToolKinds

__all__ = ("SessionPendingCalls",)


class SessionPendingCalls:
    """The calls a session says are waiting (``PendingCalls`` of ``pauses/approvals``)."""

    def __init__(self, session: Session | None, tools: ToolKinds) -> None:
        self._calls: dict[str, PendingCall] = {}
        self._known: set[str] = set()
        self._made: dict[str, tuple[str, dict[str, Any]]] = {}
        if session is not None:
            self._read(session, tools)

    def _read(self, session: Session, tools: ToolKinds) -> None:
        for event in session.events:
            content = event.content
            if content is None or not content.parts:
                continue
            long_running = event.long_running_tool_ids or set()
            for part in content.parts:
                response = part.function_response
                if response is not None and response.id:
                    self._known.add(response.id)
                    waiting = self._calls.get(response.id)
                    if (
                        waiting is not None
                        and waiting.kind == "long-running"
                        and event.author != "user"
                    ):
                        self._calls[response.id] = replace(waiting, interim=response.response)
                    else:
                        self._calls.pop(response.id, None)
                        self._calls.pop(frontend_approval_id(response.id), None)
                call = part.function_call
                if call is None or not call.id:
                    continue
                self._known.add(call.id)
                self._made[call.id] = (call.name or "", dict(call.args or {}))
                if call.id in long_running:
                    self._add_waiting(call, event.invocation_id, event.timestamp, tools)

    def _add_waiting(
        self, call: types.FunctionCall, invocation_id: str, since: float, tools: ToolKinds
    ) -> None:
        assert call.id is not None
        name = call.name or ""
        pause = pending_call(call, invocation_id, since)
        if pause is not None:
            self._calls[call.id] = pause
            return
        if name == CONFIRMATION_TOOL:
            args = call.args or {}
            original = args.get("originalFunctionCall") or {}
            confirmation = args.get("toolConfirmation") or {}
            self._calls[call.id] = PendingCall(
                "approval",
                call.id,
                str(original.get("id", "")),
                str(original.get("name", "")),
                payload=confirmation.get("payload"),
                invocation_id=invocation_id,
                since=since,
            )
            return
        if name not in tools.browser:
            self._calls[call.id] = PendingCall(
                "long-running",
                call.id,
                call.id,
                name,
                invocation_id=invocation_id,
                client_completes=name in tools.client_completes,
            )
            return
        gated = name in tools.approval
        self._calls[call.id] = PendingCall(
            "client-tool", call.id, call.id, name, needs_approval=gated, invocation_id=invocation_id
        )
        if gated:
            # The bridge's own approval of a browser tool, under a derived id.
            approval = frontend_approval_id(call.id)
            self._calls[approval] = PendingCall(
                "approval",
                approval,
                call.id,
                name,
                browser=True,
                invocation_id=invocation_id,
                since=since,
            )

    def waiting(self, answer_id: str) -> PendingCall | None:
        return self._calls.get(answer_id)

    def is_known(self, answer_id: str) -> bool:
        return answer_id in self._known

    def repeated(self, answer_id: str, confirmed: bool) -> bool:
        return False  # every continuation streams the outcomes of what it answered

    @property
    def answer_ids(self) -> set[str]:
        """What the client has to answer before the run goes on (browser approvals are
        under their call; long-running calls do not hold the client up)."""
        return {
            c.answer_id for c in self._calls.values() if not c.browser and c.kind != "long-running"
        }

    def args(self, call_id: str) -> dict[str, Any]:
        """A call's arguments."""
        made = self._made.get(call_id)
        return made[1] if made is not None else {}

    @property
    def calls(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """Every function call of the session: id -> (name, arguments)."""
        return self._made
