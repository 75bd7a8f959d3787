"""LiveGatePlugin: the ADK plugin that routes the confirmations, browser tools, questions
and credential requests of live runs to their connection's gate (``gate.py`` says why ADK's
live flow needs it). Registered once per runner; it does nothing unless the invocation is a
live run whose ``LiveRequestQueue`` belongs to a connection.
"""

from __future__ import annotations

import asyncio
import inspect
import weakref
from typing import Any, Final, cast

from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.live_request_queue import LiveRequestQueue
from google.adk.events import Event
from google.adk.plugins import BasePlugin
from google.adk.tools import BaseTool, ToolContext
from google.adk.tools.tool_confirmation import ToolConfirmation

from ...adk.sessions import LIVE_MESSAGE_KEY, META_KEY
from ...pauses.approvals import Decision, with_reason
from ...pauses.kinds import INPUT_TOOL
from ...pauses.tools import FrontendTool
from .asks import ask_credential, ask_input, replaced
from .gate import CONFIRMATION_HINT, LiveGate

__all__ = ("PLUGIN_NAME", "LiveGatePlugin")

PLUGIN_NAME: Final = "adk_asgi_live_gate"


class LiveGatePlugin(BasePlugin):
    """ADK plugin that routes confirmations and browser tools of live runs to their gate."""

    def __init__(self) -> None:
        super().__init__(name=PLUGIN_NAME)
        # Keyed by the LiveRequestQueue object: it is what the tool context carries that
        # identifies the connection.
        self._gates: dict[int, tuple[LiveRequestQueue, LiveGate]] = {}
        # Denied calls' reasons, from the approval to the call's result.
        self._reasons: weakref.WeakKeyDictionary[ToolContext, str] = weakref.WeakKeyDictionary()
        # The message id of each connection's current turn, by its gate.
        self._turns: weakref.WeakKeyDictionary[LiveGate, str] = weakref.WeakKeyDictionary()

    def attach(self, queue: LiveRequestQueue, gate: LiveGate) -> None:
        self._gates[id(queue)] = (queue, gate)

    def detach(self, queue: LiveRequestQueue) -> None:
        self._gates.pop(id(queue), None)

    def name_turn(self, gate: LiveGate, message_id: str) -> None:
        """The page's id of the connection's turn from now on: its events carry it."""
        self._turns[gate] = message_id

    def turn_of(self, gate: LiveGate) -> str | None:
        return self._turns.get(gate)

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        if event.partial:
            return None  # never stored (the history reads the tag), and a copy per token
        queue = invocation_context.live_request_queue
        entry = self._gates.get(id(queue)) if queue is not None else None
        if entry is None or entry[0] is not queue or event.author == "user":
            return None
        message_id = self._turns.get(entry[1])
        custom = event.custom_metadata or {}
        ours = custom.get(META_KEY)
        if message_id is None or not isinstance(ours, dict) or LIVE_MESSAGE_KEY in ours:
            return None
        # A copy: ADK shares the run's metadata dict among the events it tags.
        tagged = {**custom, META_KEY: {**ours, LIVE_MESSAGE_KEY: message_id}}
        return event.model_copy(update={"custom_metadata": tagged})

    def _gate(self, tool_context: ToolContext) -> LiveGate | None:
        queue = tool_context._invocation_context.live_request_queue
        if queue is None:
            return None
        entry = self._gates.get(id(queue))
        return entry[1] if entry is not None and entry[0] is queue else None

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        gate = self._gate(tool_context)
        if gate is None or tool_context.tool_confirmation is not None:
            return None
        call_id = tool_context.function_call_id or ""
        browser = isinstance(tool, FrontendTool) and tool.require_approval
        if not browser and (
            await tool.check_require_confirmation(tool_args, tool_context) is not True
        ):
            return None
        decision = await gate.approve(call_id, tool.name, dict(tool_args), browser=browser)
        if isinstance(decision, str):
            return {"error": decision}
        if browser:
            # The bridge's own approval of a browser tool (``frontend_tool(...,
            # require_approval=True)``): ADK's gate knows nothing of it.
            return None if decision.confirmed else decision.response
        # ADK's own gate (next in the pipeline) now runs an approved call and answers a
        # denied one with "This tool call is rejected." (the reason is added after).
        self._confirm(tool_context, decision, CONFIRMATION_HINT.format(name=tool.name))
        return None

    def _confirm(self, tool_context: ToolContext, decision: Decision, hint: str) -> None:
        tool_context.tool_confirmation = ToolConfirmation(
            hint=hint, confirmed=decision.confirmed, payload=decision.response.get("payload")
        )
        if not decision.confirmed and decision.reason:
            self._reasons[tool_context] = decision.reason

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        gate = self._gate(tool_context)
        if gate is None:
            return None
        call_id = tool_context.function_call_id or ""
        if call_id in tool_context.actions.requested_auth_configs:
            return await ask_credential(gate, tool, tool_args, tool_context, result)
        if result is None and tool.name == INPUT_TOOL:
            return await ask_input(gate, call_id, tool_args)
        final: Any = result
        asked = tool_context.actions.requested_tool_confirmations.pop(call_id, None)
        if asked is not None and tool_context.tool_confirmation is None:
            # The tool asked itself (``tool_context.request_confirmation``): ask the user
            # as for ``require_confirmation``, then run it again with the answer, as ADK
            # resumes a paused call.
            decision = await gate.approve(
                call_id,
                tool.name,
                dict(tool_args),
                browser=False,
                hint=asked.hint or None,
                payload=asked.payload,
            )
            if isinstance(decision, str):
                final = replaced(final, {"error": decision})
            else:
                self._confirm(tool_context, decision, asked.hint)
                final = replaced(
                    final, await tool.run_async(args=tool_args, tool_context=tool_context)
                )
        reason = self._reasons.pop(tool_context, None)
        if reason is not None:
            final = with_reason(final, reason) or final
        if asked is not None or reason is not None:
            # None: changed in place, the agent's own callbacks run on it.
            return None if final is result else cast(dict[str, Any], final)
        if result is None and isinstance(tool, FrontendTool):
            # The browser runs it: its result becomes the function response.
            decision = await gate.client_result(call_id, tool.name)
            return {"error": decision} if isinstance(decision, str) else decision.response
        await gate.settled(call_id, _streaming_task(tool, tool_context))
        return None


def _streaming_task(tool: BaseTool, tool_context: ToolContext) -> asyncio.Future[Any] | None:
    """The task of a streaming tool's call (an async generator): ADK answered the call with
    a "pending" response and runs the generator in the background, sending each value it
    yields to the model (never as an event); the page shows them (``LiveInput``)."""
    if not inspect.isasyncgenfunction(getattr(tool, "func", None)):
        return None
    # ADK keeps no public handle on the call's task (``active_streaming_tools`` is
    # deprecated and keyed by tool name): its registry, by call id.
    running = tool_context._invocation_context._active_background_tools or {}
    entry = running.get(tool_context.function_call_id or "")
    return entry.task if entry is not None else None
