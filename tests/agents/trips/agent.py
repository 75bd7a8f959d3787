"""A trip planner as an ADK 2.13 ``Workflow`` (no model): it asks the user for the budget
with a pydantic ``response_schema``, picks a hotel within it, and books it with a
``FunctionTool(..., require_confirmation=True)`` used directly as a workflow node, which
makes ADK ask for the user's approval (``wf_tool_confirmation:<node path>``).

    START -> ask_budget -> choose_hotel -> book_hotel (confirmation) -> summarize

``root_agent`` is the workflow; ``app`` serves it as an ADK ``App``
(``adk-asgi serve tests.agents.trips.agent:app``).
"""

from __future__ import annotations

from typing import Any, Literal

from google.adk.apps import App
from google.adk.events import RequestInput
from google.adk.tools import FunctionTool
from google.adk.tools.tool_context import ToolContext
from google.adk.workflow import Workflow
from pydantic import BaseModel, Field

__all__ = ("BOOKINGS", "Budget", "app", "root_agent")

BOOKINGS: list[dict[str, Any]] = []
"""Every booking that ran (tests assert on it)."""


class Traveller(BaseModel):
    name: str = Field(min_length=1, description="Who travels")
    age: int | None = Field(default=None, ge=0, le=130)


class Budget(BaseModel):
    """What the trip may cost."""

    amount: int = Field(ge=50, le=100_000, description="The most we may spend")
    currency: Literal["EUR", "USD", "JPY"] = "EUR"
    flexible: bool = Field(default=False, description="A little over is fine")
    travellers: list[Traveller] = Field(default_factory=list)


HOTELS = (("Casa do Rio", 90), ("Hotel Alfama", 160), ("Palácio Grande", 420))


def ask_budget(node_input: Any) -> RequestInput:
    return RequestInput(
        interrupt_id="ask_budget",
        message="How much may we spend on the Lisbon trip?",
        payload={"destination": "Lisbon", "nights": 3},
        response_schema=Budget,
    )


def choose_hotel(node_input: dict[str, Any]) -> dict[str, Any]:
    # ADK hands optional fields the user left out as None.
    budget = Budget.model_validate({k: v for k, v in node_input.items() if v is not None})
    nightly = budget.amount / 3
    name, price = max((h for h in HOTELS if h[1] <= nightly), key=lambda h: h[1], default=HOTELS[0])
    return {
        "hotel": name,
        "nights": 3,
        "price_per_night": price,
        "currency": budget.currency,
        "guests": max(1, len(budget.travellers)),
    }


def book_hotel(
    hotel: str,
    nights: int,
    price_per_night: int,
    currency: str,
    guests: int,
    tool_context: ToolContext,
) -> dict[str, Any]:
    """Book the hotel (asks the user first)."""
    confirmation = tool_context.tool_confirmation
    note = (
        confirmation.payload.get("note")
        if confirmation is not None and isinstance(confirmation.payload, dict)
        else None
    )
    booking = {
        "booking": f"BK-{len(BOOKINGS) + 1:04d}",
        "hotel": hotel,
        "nights": nights,
        "total": price_per_night * nights,
        "currency": currency,
        "guests": guests,
    }
    if note:
        booking["note"] = note
    BOOKINGS.append(booking)
    return booking


def summarize(node_input: dict[str, Any]) -> str:
    if "error" in node_input:
        return f"Nothing was booked: {node_input['error']}"
    return (
        f"Booked {node_input['hotel']} for {node_input['nights']} nights "
        f"({node_input['total']} {node_input['currency']}), {node_input['booking']}."
    )


root_agent = Workflow(
    name="trip_planner",
    edges=[
        (
            "START",
            ask_budget,
            choose_hotel,
            FunctionTool(book_hotel, require_confirmation=True),
            summarize,
        )
    ],
)
app = App(name="trips", root_agent=root_agent)
