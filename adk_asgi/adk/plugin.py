"""BridgePlugin: adk-asgi's ADK plugin on the runner it serves, for what ADK's own flow must
learn from a client's answers:

- the reason a user gave when they denied a call reaches the model with the call's result
  (``approvals.with_reason``). The reasons travel in the continuation's run config
  (``custom_metadata.adk_asgi.denialReasons``, set by ``http/turn/plan.py``), so this works on
  any worker; a workflow tool node's denial is found by its node path. Live runs answer
  through their gate (``live/gate/gate.py``) instead;
- a credential the user gave goes into ADK's credential flow when the run that answers it
  starts (``before_run_callback``): from the runtime's ``CredentialHandoff``, in this
  process, never through the session (``pauses/credentials.py``);
- branches that run side by side (a ``ParallelAgent``'s, a workflow's parallel nodes) are
  shown in the order they began to write (``translate/lanes.py``), which the session cannot tell
  (it keeps final events only): each branch's final events are tagged with that order
  (``custom_metadata.adk_asgi.laneOrder``) before ADK stores them, so a chat's history
  (``history/messages.py``) lays them out as the stream did.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Final

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from google.adk.plugins import BasePlugin
from google.adk.runners import Runner
from google.adk.tools import BaseTool, ToolContext

from ..pauses.approvals import with_reason
from ..pauses.credentials import CredentialHandoff
from ..pauses.kinds import workflow_call_id
from .sessions import META_KEY

__all__ = ("BRIDGE_PLUGIN", "LANE_ORDER", "BridgePlugin", "register")

BRIDGE_PLUGIN: Final = "adk_asgi_bridge"
LANE_ORDER: Final = "laneOrder"
# Runs whose branches' order is kept at once (an aborted run may skip after_run_callback).
_MAX_RUNS: Final = 1024


class BridgePlugin(BasePlugin):
    def __init__(self, credentials: CredentialHandoff | None = None) -> None:
        super().__init__(name=BRIDGE_PLUGIN)
        self.credentials = credentials or CredentialHandoff()
        # Per run (invocation id): each side-by-side branch's place, in the order they
        # began to write.
        self._lanes: OrderedDict[str, dict[str, int]] = OrderedDict()

    async def before_run_callback(self, *, invocation_context: InvocationContext) -> None:
        session = invocation_context.session
        await self.credentials.apply(invocation_context.user_id, session.id, session.state)

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        self._lanes.pop(invocation_context.invocation_id, None)

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        # Every event passes here, each streamed token too: all but a side-by-side
        # branch's leave at the first test (ADK gives only those a branch).
        lane = event.branch
        if not lane or event.author == "user":
            return None
        content = event.content
        if (
            content is None
            or content.role != "model"
            or not content.parts
            or not any(part.text for part in content.parts)
        ):
            return None
        run = invocation_context.invocation_id
        lanes = self._lanes.get(run)
        if lanes is None:
            lanes = self._lanes[run] = {}
            if len(self._lanes) > _MAX_RUNS:
                self._lanes.popitem(last=False)
        order = lanes.setdefault(lane, len(lanes))
        if not event.partial:  # what the session keeps
            meta = dict((event.custom_metadata or {}).get(META_KEY) or {})
            meta[LANE_ORDER] = order
            event.custom_metadata = {**(event.custom_metadata or {}), META_KEY: meta}
        return None

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        confirmation = tool_context.tool_confirmation
        if confirmation is None or confirmation.confirmed:
            return None
        config = tool_context._invocation_context.run_config
        meta = ((config.custom_metadata if config is not None else None) or {}).get(META_KEY)
        reasons = meta.get("denialReasons") if isinstance(meta, dict) else None
        reason = None
        if isinstance(reasons, dict):
            reason = reasons.get(tool_context.function_call_id)
            node_path = getattr(tool_context, "node_path", None)
            if reason is None and node_path:  # a workflow tool node's confirmation
                reason = reasons.get(workflow_call_id(node_path))
        if not isinstance(reason, str):
            return None
        amended: dict[str, Any] | None = with_reason(result, reason)
        return amended


def register(runner: Runner, credentials: CredentialHandoff) -> None:
    """Register the plugin once (also on a runner the application built)."""
    manager = runner.plugin_manager
    if manager.get_plugin(BRIDGE_PLUGIN) is None:
        manager.register_plugin(BridgePlugin(credentials))
