"""Tools the model calls but the browser executes, and which tools of an agent tree are
what (``ToolKinds``).

A ``FrontendTool`` is an ADK long-running tool: the server never runs it, the
invocation pauses after the call, the page executes it (``onToolCall`` /
``addToolOutput``) and the next request carries the result, which resumes the
same ADK invocation. Everything in between lives in the ADK session.

``require_approval`` is the bridge's, not ADK's confirmation gate: ADK would
re-run the confirmed call on the server, where a browser tool has nothing to run
(it then answers the model with its placeholder error). The bridge instead sends
``tool-approval-request`` for the call itself and the page runs the tool once
approved; the result must come back with that approval.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from google.adk.tools import BaseTool, ToolContext
from google.genai import types

__all__ = ("FrontendTool", "ToolKinds", "frontend_tool", "tool_kinds")


class FrontendTool(BaseTool):
    """A browser-executed tool, declared to the model with a JSON schema."""

    def __init__(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any] | None = None,
        *,
        require_approval: bool = False,
    ) -> None:
        super().__init__(name=name, description=description, is_long_running=True)
        self.parameters = parameters or {"type": "object", "properties": {}}
        self.require_approval = require_approval

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=self.parameters
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        # Nothing runs on the server: no response keeps the call pending for the client.
        return None


def frontend_tool(
    name: str,
    description: str,
    parameters: dict[str, Any] | None = None,
    *,
    require_approval: bool = False,
) -> FrontendTool:
    """Declare a tool the browser executes.

    >>> get_location = frontend_tool("get_location", "The user's position.",
    ...                              require_approval=True)
    >>> agent = LlmAgent(..., tools=[get_weather, get_location])
    """
    return FrontendTool(name, description, parameters, require_approval=require_approval)


@dataclass(frozen=True, slots=True)
class ToolKinds:
    """The tools of an agent tree by kind, by name.

    A long-running call is the browser's only if its tool is a ``FrontendTool``; any other
    long-running tool (ADK's ``LongRunningFunctionTool``) runs on the server, and its call
    is completed later by the server (``AdkApp.complete_tool_call``, the HTTP endpoint) or,
    for the tools in ``client_completes``, by the page (``addToolOutput``).
    """

    browser: frozenset[str] = frozenset()
    approval: frozenset[str] = frozenset()
    """Browser tools the user approves before the page runs them."""
    long_running: frozenset[str] = frozenset()
    client_completes: frozenset[str] = frozenset()
    errors: Mapping[str, Callable[[Any], str | None]] = field(default_factory=dict)
    """Tools with ADK's error hook (``_detect_error_in_response``), by name: which of
    their results are failures."""
    rewritten: frozenset[str] = frozenset()
    """Agents whose model responses an ``after_model_callback`` may rewrite (``ALL_AGENTS``:
    a plugin implements one, so every agent's): their partial text is held back by
    default (``StreamingOptions.hold_partials``)."""


ALL_AGENTS: Final = "*"


def tool_kinds(
    agent: Any, client_completes: Iterable[str] = (), plugins: Iterable[Any] = ()
) -> ToolKinds:
    """Walk the agent and its sub-agents, and a workflow's nodes (an ``AgentTool``'s agent
    runs apart, in a runner of its own; toolsets are not listed)."""
    browser: set[str] = set()
    approval: set[str] = set()
    long_running: set[str] = set()
    errors: dict[str, Callable[[Any], str | None]] = {}
    rewritten = {ALL_AGENTS} if any(_rewrites(p) for p in plugins) else set()
    agents = [agent]
    while agents:
        current = agents.pop()
        if getattr(current, "after_model_callback", None):
            rewritten.add(str(getattr(current, "name", "")))
        for tool in getattr(current, "tools", None) or ():
            if isinstance(tool, FrontendTool):
                browser.add(tool.name)
                if tool.require_approval:
                    approval.add(tool.name)
            elif isinstance(tool, BaseTool) and tool.is_long_running:
                long_running.add(tool.name)
            detect = getattr(tool, "_detect_error_in_response", None)
            if isinstance(tool, BaseTool) and callable(detect):
                errors[tool.name] = detect
        agents.extend(getattr(current, "sub_agents", None) or ())
        graph = getattr(current, "graph", None)  # a Workflow: its nodes, agents among them
        agents.extend(getattr(graph, "nodes", None) or ())
    completes = frozenset(client_completes)
    unknown = completes - long_running
    if unknown:
        raise ValueError(
            f"client_completes names tools that are not long-running server "
            f"tools of the agent: {', '.join(sorted(unknown))}"
        )
    return ToolKinds(
        frozenset(browser),
        frozenset(approval),
        frozenset(long_running),
        completes,
        errors,
        frozenset(rewritten),
    )


def _rewrites(plugin: Any) -> bool:
    """A plugin that implements ``after_model_callback`` (ADK's base class does nothing)."""
    from google.adk.plugins.base_plugin import BasePlugin

    own = getattr(type(plugin), "after_model_callback", None)
    return own is not None and own is not BasePlugin.after_model_callback
