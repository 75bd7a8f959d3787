"""An agent whose tools fail the ways ADK reports as results, not exceptions.

    clerk (LlmAgent)   find_order, count_orders -> an MCP server over streamable HTTP
                       (``mcp_server``): find_order answers ``isError: true``;
                       open_vault -> a second ``McpToolset`` of that server whose bearer
                       token it refuses: the toolset fails to connect, and ADK answers the
                       call with its "Tool 'open_vault' not found" instruction text;
                       reserve -> raises for seat 13: ``ReflectAndRetryToolPlugin``
                       answers with its reflection guidance, the model retries with 14.

Every failure's text is written for the model and names something the user must not read
(``MODEL_ONLY``). The model here only says that something failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.plugins import ReflectAndRetryToolPlugin
from google.adk.tools.mcp_tool import McpToolset, StreamableHTTPConnectionParams
from google.genai import types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from ..team.scripted import Reply, ScriptedModel, latest

__all__ = ("APP_NAME", "MODEL_ONLY", "TOKEN", "build_app", "mcp_server")

APP_NAME: Final = "clerk"
TOKEN: Final = "good-token"
MODEL_ONLY: Final = (
    "orders_2031",  # the MCP tool's isError text
    "Available tools",  # ADK's answer for a tool it does not have
    "staff seats",  # the tool's exception, in the retry plugin's error_details
    "reflection",  # the retry plugin's guidance
)
_ASKS: Final = {
    "order": ("find_order", {"order_id": 42}),
    "count": ("count_orders", {}),
    "vault": ("open_vault", {}),
    "seat": ("reserve", {"seat": 13}),
}


def mcp_server() -> Any:
    """The MCP server's ASGI app: it refuses a request without ``TOKEN``."""
    server = MCPServer("orders")

    @server.tool()
    def find_order(order_id: int) -> str:
        """One order."""
        raise ToolError(f"Order {order_id} is not in orders_2031; call find_order with a year.")

    @server.tool()
    def count_orders() -> int:
        """How many orders there are."""
        return 3

    @server.tool()
    def open_vault() -> str:
        """What the vault holds."""
        return "gold"

    inner = server.streamable_http_app(stateless_http=True, json_response=True)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if (
            scope["type"] == "http"
            and (b"authorization", f"Bearer {TOKEN}".encode()) not in (scope["headers"])
        ):
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await inner(scope, receive, send)

    return app


def reserve(seat: int) -> str:
    """Reserve a seat."""
    if seat == 13:
        raise ValueError("Seat 13 is one of the staff seats; call reserve with seat 14.")
    return f"seat {seat}"


def clerk(contents: Sequence[types.Content]) -> Reply | None:
    said = latest(contents)
    if said is None:
        return None
    for response in said.responses:
        result = response.response or {}
        if response.name == "reserve" and "reflection_guidance" in result:
            return Reply(calls=(("reserve", {"seat": 14}),))
    if said.responses:
        return Reply(text="Done, as far as it went.")
    text = (said.text or "").lower()
    for word, call in _ASKS.items():
        if word in text:
            return Reply(calls=(call,))
    return Reply(text=f"You said: {said.text}")


def build_app(mcp_url: str) -> App:
    """The app: the clerk with both toolsets of the MCP server at ``mcp_url``, and the
    retry plugin."""
    toolsets = [
        McpToolset(
            # (a loaded CI machine can take more than ADK's 5 s to connect)
            connection_params=StreamableHTTPConnectionParams(
                url=mcp_url, headers={"Authorization": f"Bearer {token}"}, timeout=30
            ),
            tool_filter=tools,
        )
        for token, tools in ((TOKEN, ["find_order", "count_orders"]), ("refused", ["open_vault"]))
    ]
    agent = LlmAgent(
        name="clerk",
        model=ScriptedModel(planner=clerk),
        instruction="Use the tools.",
        tools=[*toolsets, reserve],
    )
    return App(name=APP_NAME, root_agent=agent, plugins=[ReflectAndRetryToolPlugin(max_retries=2)])
