"""Tools the model calls but the browser executes.

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

from typing import Any

from google.adk.tools import BaseTool, ToolContext
from google.genai import types

__all__ = ("FrontendTool", "frontend_tool")


class FrontendTool(BaseTool):
    """A browser-executed tool, declared to the model with a JSON schema."""

    def __init__(self, name: str, description: str,
                 parameters: dict[str, Any] | None = None, *,
                 require_approval: bool = False) -> None:
        super().__init__(name=name, description=description, is_long_running=True)
        self.parameters = parameters or {"type": "object", "properties": {}}
        self.require_approval = require_approval

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(name=self.name, description=self.description,
                                         parameters_json_schema=self.parameters)

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        # Nothing runs on the server: no response keeps the call pending for the client.
        return None


def frontend_tool(name: str, description: str, parameters: dict[str, Any] | None = None, *,
                  require_approval: bool = False) -> FrontendTool:
    """Declare a tool the browser executes.

    >>> get_location = frontend_tool("get_location", "The user's position.",
    ...                              require_approval=True)
    >>> agent = LlmAgent(..., tools=[get_weather, get_location])
    """
    return FrontendTool(name, description, parameters, require_approval=require_approval)
