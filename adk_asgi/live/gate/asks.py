"""What the live gate asks the user besides approvals and browser results, from inside a
tool's ``after_tool_callback`` (``live/gate/gate.py``): ADK's ``request_input`` tool (the answer,
checked against its schema, is the tool's result) and a tool's credential request (ADK's live
flow never asks: the answer goes into ADK's credential flow and the tool runs again).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from google.adk.tools import BaseTool, ToolContext
from google.genai import types

from ...pauses.credentials import store_credential
from ...pauses.kinds import INPUT_TOOL, adk_response, pending_call

if TYPE_CHECKING:
    from .gate import LiveGate

__all__ = ("ask_credential", "ask_input", "replaced")


def replaced(result: Any, new: Any) -> Any:
    """``new`` as the call's result; a dict result is replaced in place, so the agent's own
    after-tool callbacks (which run after the plugins) see the final one."""
    if isinstance(result, dict) and isinstance(new, dict):
        result.clear()
        result.update(new)
        return result
    return new


async def ask_input(gate: LiveGate, call_id: str, tool_args: dict[str, Any]) -> dict[str, Any]:
    """ADK's ``request_input`` tool: the user's answer (checked) is its result."""
    call = pending_call(types.FunctionCall(id=call_id, name=INPUT_TOOL, args=tool_args), None, None)
    assert call is not None
    decision = await gate.answer(call)
    if isinstance(decision, str):
        return {"error": decision}
    return adk_response(call, decision.response)


async def ask_credential(
    gate: LiveGate,
    tool: BaseTool,
    tool_args: dict[str, Any],
    tool_context: ToolContext,
    result: Any,
) -> dict[str, Any] | None:
    """The tool asked for a credential: ask the user, hand ADK the answer, run it again."""
    from google.adk.auth.auth_tool import AuthToolArguments

    call_id = tool_context.function_call_id or ""
    requested = tool_context.actions.requested_auth_configs[call_id]
    args = AuthToolArguments(function_call_id=call_id, auth_config=requested).model_dump(
        mode="json", by_alias=True, exclude_none=True
    )
    secret = await gate.credential(call_id, args)
    if secret is None:
        await gate.settled(call_id)
        return None  # a kind the page cannot answer: ADK's own (placeholder) result
    del tool_context.actions.requested_auth_configs[call_id]
    if isinstance(secret, str):
        return {"error": secret}
    await store_credential(
        args, secret, gate.redirect_uri, tool_context._invocation_context.session.state, call_id
    )
    again = await tool.run_async(args=tool_args, tool_context=tool_context)
    if call_id in tool_context.actions.requested_auth_configs:
        # Refused by the service: the tool asks again; the model is told it failed.
        del tool_context.actions.requested_auth_configs[call_id]
        return {"error": "The credential was not accepted."}
    return cast(dict[str, Any], replaced(result, again))
