"""A realistic multi-agent ADK app on scripted models (offline), for the tests.

    concierge (root)                    tools: researcher (an AgentTool), remember, recall,
      |                                        explode (raises), crash/fail (model errors)
      |                                 before_model_callback: "forbidden" never reaches
      |                                   the model; after_tool_callback stamps remember's
      |                                   result
      +-- billing (sub-agent)           refund (require_confirmation=True), send_money
      |                                 (asks with tool_context.request_confirmation(hint,
      |                                 payload) and pays what the payload says on approval;
      |                                 raises for "mallory"),
      |                                 open_ticket (LongRunningFunctionTool: "pending"),
      |                                 explode; output_key "billing_note"
      +-- travel (sub-agent)            book_trip (LongRunningFunctionTool: "pending"),
                                        get_location (a browser tool); output_key
                                        "trip_summary"

Which agent does what is decided by keywords in the user's message (see each planner);
anything a sub-agent does not handle goes back to the concierge. ``root_agent`` is the ADK
agent-folder convention; ``app`` is the same agents as a resumable ADK ``App``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.apps import App, ResumabilityConfig
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.tools import AgentTool, BaseTool, FunctionTool, LongRunningFunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from adk_asgi import frontend_tool

from .scripted import Reply, ScriptedModel, latest, summary

__all__ = (
    "LEDGER",
    "MODEL_SECRET",
    "TOOL_SECRET",
    "app",
    "build_app",
    "build_root_agent",
    "root_agent",
)

TOOL_SECRET: Final = "SECRET-tool-7f3a9c"
MODEL_SECRET: Final = "SECRET-model-41be02"
LEDGER: list[dict[str, Any]] = []
"""Every refund and transfer that actually ran (tests assert on it)."""

_AMOUNT = re.compile(r"(\d+(?:\.\d+)?)")
_SEND = re.compile(r"send (\d+(?:\.\d+)?) to (\w+)", re.IGNORECASE)


# -- tools --------------------------------------------------------------------------------


def remember(key: str, value: str, tool_context: ToolContext) -> dict[str, Any]:
    """Remember a fact for this chat (session state)."""
    tool_context.state[key] = value
    return {"remembered": key}


def recall(tool_context: ToolContext) -> dict[str, Any]:
    """Everything remembered in this chat."""
    return {
        "facts": {
            k: v
            for k, v in tool_context.state.to_dict().items()
            if not k.startswith(("app:", "user:", "temp:"))
        }
    }


def explode(tool_context: ToolContext) -> dict[str, Any]:
    """A tool that fails."""
    raise ValueError(f"the reactor exploded: {TOOL_SECRET}")


def refund(amount: float) -> dict[str, Any]:
    """Refund money to the user's card (the user confirms)."""
    LEDGER.append({"kind": "refund", "amount": amount})
    return {"refunded": amount}


def send_money(amount: float, to: str, tool_context: ToolContext) -> dict[str, Any]:
    """Send money; asks the user to confirm the amount and recipient (they may edit them)."""
    confirmation = tool_context.tool_confirmation
    if confirmation is None:
        tool_context.request_confirmation(
            hint=f"Send {amount:g} to {to}?", payload={"amount": amount, "to": to}
        )
        return {"status": "awaiting confirmation"}
    if not confirmation.confirmed:
        return {"status": "cancelled"}
    paid = dict(confirmation.payload or {})
    if paid.get("to") == "mallory":
        raise PermissionError(f"blocked recipient: {TOOL_SECRET}")
    LEDGER.append({"kind": "transfer", **paid})
    return {"status": "sent", **paid}


def open_ticket(subject: str) -> dict[str, Any]:
    """Open a support ticket; someone answers it later (long-running)."""
    return {"status": "pending", "ticket": "T-1", "subject": subject}


def book_trip(city: str) -> dict[str, Any]:
    """Ask the travel desk to book a trip; confirmed later (long-running)."""
    return {"status": "pending", "city": city}


get_location = frontend_tool("get_location", "The user's current position (the browser).")


# -- callbacks ------------------------------------------------------------------------------


def refuse_forbidden(
    callback_context: CallbackContext, llm_request: LlmRequest
) -> LlmResponse | None:
    """before_model_callback: some requests never reach the model."""
    said = latest(llm_request.contents)
    if said is not None and said.text and "forbidden" in said.text.lower():
        return LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text="I cannot help with that.")])
        )
    return None


def stamp_remember(
    tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: dict[str, Any]
) -> dict[str, Any] | None:
    """after_tool_callback: the concierge stamps what remember returned."""
    if tool.name == "remember":
        return {**tool_response, "stamped": True}
    return None


# -- planners -------------------------------------------------------------------------------


def _transfer(agent: str, text: str = "") -> Reply:
    return Reply(text=text, calls=(("transfer_to_agent", {"agent_name": agent}),))


def concierge(contents: Sequence[types.Content]) -> Reply | None:
    said = latest(contents)
    if said is None:
        return None
    if said.responses:
        return Reply(text=summary(said.responses))
    text = said.text or ""
    low = text.lower()
    if any(w in low for w in ("refund", "send ", "ticket", "billing", "pay")):
        return _transfer("billing", "Let me get billing.")
    if any(w in low for w in ("trip", "travel", "where am i")):
        return _transfer("travel")
    if low.startswith("research"):
        return Reply(calls=(("researcher", {"request": text[len("research") :].strip()}),))
    if low.startswith("remember"):
        return Reply(calls=(("remember", {"key": "fact", "value": text[8:].strip()}),))
    if "recall" in low:
        return Reply(calls=(("recall", {}),))
    if "explode" in low:
        return Reply(text="Trying the reactor.", calls=(("explode", {}),))
    if "crash" in low:
        return Reply(
            text="This answer will break halfway through",
            raise_after=3,
            raise_text=f"model crashed: {MODEL_SECRET}",
        )
    if "fail" in low:
        return Reply(error=("RESOURCE_EXHAUSTED", f"quota gone: {MODEL_SECRET}"))
    if "think" in low:
        return Reply(thought="Let me think about it.", text="Thought about it.")
    return Reply(text=f"You said: {text}")


def billing(contents: Sequence[types.Content]) -> Reply | None:
    said = latest(contents)
    if said is None:
        return None
    if said.responses:
        return Reply(text=summary(said.responses))
    low = (said.text or "").lower()
    if (match := _SEND.search(said.text or "")) is not None:
        return Reply(calls=(("send_money", {"amount": float(match[1]), "to": match[2]}),))
    if "refund" in low and (amount := _AMOUNT.search(low)) is not None:
        return Reply(calls=(("refund", {"amount": float(amount[1])}),))
    if "ticket" in low:
        return Reply(calls=(("open_ticket", {"subject": said.text}),))
    if "explode" in low:
        return Reply(calls=(("explode", {}),))
    return _transfer("concierge")


def travel(contents: Sequence[types.Content]) -> Reply | None:
    said = latest(contents)
    if said is None:
        return None
    if said.responses:
        return Reply(text=summary(said.responses))
    low = (said.text or "").lower()
    if "trip" in low:
        city = (said.text or "").rsplit(" ", 1)[-1]
        return Reply(calls=(("book_trip", {"city": city}),))
    if "where am i" in low:
        return Reply(calls=(("get_location", {}),))
    return _transfer("concierge")


def researcher(contents: Sequence[types.Content]) -> Reply | None:
    said = latest(contents)
    text = said.text if said is not None and said.text else "nothing"
    return Reply(text=f"Research notes on {text}.")


# -- the app ------------------------------------------------------------------------------


def build_root_agent(delay: float = 0.0, *, model: BaseLlm | None = None) -> LlmAgent:
    """The agents on scripted models, or every one on ``model`` (e.g. ADK's ``Gemini``
    against the Gemini API emulator, scripted by ``gemini_script.py``)."""

    def llm(planner: Any) -> BaseLlm:
        return model if model is not None else ScriptedModel(planner=planner, delay=delay)

    research = LlmAgent(
        name="researcher",
        model=llm(researcher),
        description="Looks things up.",
        instruction="Research the request.",
    )
    billing_agent = LlmAgent(
        name="billing",
        model=llm(billing),
        description="Refunds, payments and tickets.",
        instruction="Handle billing.",
        output_key="billing_note",
        tools=[
            FunctionTool(refund, require_confirmation=True),
            send_money,
            LongRunningFunctionTool(open_ticket),
            explode,
        ],
    )
    travel_agent = LlmAgent(
        name="travel",
        model=llm(travel),
        description="Trips and where the user is.",
        instruction="Handle travel.",
        output_key="trip_summary",
        tools=[LongRunningFunctionTool(book_trip), get_location],
    )
    return LlmAgent(
        name="concierge",
        model=llm(concierge),
        description="The front desk.",
        instruction="Help the user or hand over to billing or travel.",
        sub_agents=[billing_agent, travel_agent],
        tools=[AgentTool(research), remember, recall, explode],
        before_model_callback=refuse_forbidden,
        after_tool_callback=stamp_remember,
    )


def build_app(delay: float = 0.0, *, resumable: bool = True, model: BaseLlm | None = None) -> App:
    return App(
        name="team",
        root_agent=build_root_agent(delay, model=model),
        resumability_config=ResumabilityConfig(is_resumable=resumable),
    )


root_agent = build_root_agent()
app = build_app()
