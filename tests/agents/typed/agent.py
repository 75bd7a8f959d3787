"""A weather desk for ``adk-asgi types``: an ADK 2 ``Workflow`` that asks for the user's
preferences (``RequestInput`` with a pydantic ``response_schema``), then hands over to a
forecaster whose tools declare nested pydantic arguments, enums, optional fields and
lists, a typed result, a long-running tool and one that needs the user's approval.

    START -> ask_preferences -> note_preferences -> forecaster (output_key)

Never run by the tests (no model): only its declarations are read.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, NotRequired

from google.adk.agents import LlmAgent
from google.adk.events import RequestInput
from google.adk.tools import FunctionTool, LongRunningFunctionTool
from google.adk.workflow import Workflow
from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # pydantic's rule before Python 3.12

__all__ = ("Cancellation", "Forecast", "Preferences", "root_agent")


class Unit(StrEnum):
    celsius = "celsius"
    fahrenheit = "fahrenheit"


class Place(BaseModel):
    city: str = Field(description="The city, e.g. Lisbon")
    country: str | None = None


class Window(BaseModel):
    place: Place
    days: list[int] = Field(default_factory=list, description="Days ahead, 0 is today")


# A dict, so the part's output is the forecast itself (ADK wraps anything else as
# {"result": ...}, like cancel_trip's).
class Forecast(TypedDict):
    """The forecast."""

    temperature: float
    unit: Unit
    summary: NotRequired[str]


class Cancellation(BaseModel):
    trip_id: str
    status: str


class Preferences(BaseModel):
    """How the user likes the weather told."""

    unit: Unit = Unit.celsius
    alerts: bool = False


def get_weather(city: str, unit: Unit = Unit.celsius, window: Window | None = None) -> Forecast:
    """Get the forecast for a city.

    Args:
        city: The city.
        unit: The unit of the temperature.
        window: Where and when, for a forecast ahead.
    """
    return {"temperature": 21.5, "unit": unit, "summary": f"Sunny in {city}"}


def watch_storms(cities: list[str]) -> dict[str, Any]:
    """Watch for storms over the cities until one comes (long-running)."""
    return {"status": "watching", "cities": cities}


def cancel_trip(trip_id: str, reason: str | None = None) -> Cancellation:
    """Cancel a booked trip (the user approves first)."""
    return Cancellation(trip_id=trip_id, status="cancelled")


class Noted(BaseModel):
    unit: Unit
    alerts: bool


def note_preferences(node_input: dict[str, Any]) -> Noted:
    """A node whose output the page gets as ``data-node`` (typed by its return)."""
    return Noted.model_validate(node_input)


def ask_preferences(node_input: Any) -> RequestInput:
    return RequestInput(
        interrupt_id="preferences",
        message="How should I tell you the weather?",
        response_schema=Preferences,
    )


forecaster = LlmAgent(
    name="forecaster",
    model="gemini-2.5-flash",
    instruction="Tell the weather.",
    output_key="forecast_text",
    tools=[
        get_weather,
        LongRunningFunctionTool(watch_storms),
        FunctionTool(cancel_trip, require_confirmation=True),
    ],
)

root_agent = Workflow(
    name="weather_desk", edges=[("START", ask_preferences, note_preferences, forecaster)]
)
