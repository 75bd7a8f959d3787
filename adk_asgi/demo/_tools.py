"""Tools of the demo agent.

Server-side tools run in Python: ``get_weather`` and ``process_payment`` (the
latter gated by ADK's tool confirmation). Browser-side tools (``get_location``,
``change_bgm``) are only *declared* here; the browser runs them and sends the
result back. They are all declared in :func:`frontend_tools` so the declaration
style can be swapped in one place.
"""

from __future__ import annotations

import itertools
import zlib
from typing import Any

from google.adk.tools import BaseTool, FunctionTool

# ADK builds the function declarations from the annotations at runtime, so
# ToolContext must be importable here (not only under TYPE_CHECKING).
from google.adk.tools.tool_context import ToolContext

from ..pauses.tools import frontend_tool

PAYMENT_LOG: list[dict[str, Any]] = []
"""Every payment that actually ran, oldest first (tests assert on it)."""

_transaction_ids = itertools.count(1)

# Known cities get fixed answers so demos read naturally; others are derived
# from a CRC of the name (stable across processes, unlike hash()).
_KNOWN_WEATHER: dict[str, tuple[str, int]] = {
    "tokyo": ("sunny", 22),
    "東京": ("sunny", 22),
    "osaka": ("cloudy", 20),
    "大阪": ("cloudy", 20),
    "london": ("rainy", 14),
    "paris": ("cloudy", 18),
    "new york": ("windy", 16),
}
_CONDITIONS = ("sunny", "cloudy", "rainy", "windy", "snowy")


def get_weather(location: str) -> dict[str, Any]:
    """Get the current weather for a city.

    Args:
        location: The city name, e.g. "Tokyo".

    Returns:
        The forecast: condition, temperature in °C and humidity in percent.
    """
    key = location.strip().lower()
    crc = zlib.crc32(key.encode())
    condition, temperature = _KNOWN_WEATHER.get(
        key, (_CONDITIONS[crc % len(_CONDITIONS)], (crc >> 8) % 35 - 5)
    )
    if condition == "snowy":
        temperature = min(temperature, 0)
    return {
        "location": location,
        "condition": condition,
        "temperature_c": temperature,
        "humidity_percent": 40 + crc % 50,
        "forecast": f"{condition}, {temperature}°C",
    }


def process_payment(
    amount: float,
    recipient: str,
    currency: str = "USD",
    tool_context: ToolContext | None = None,
) -> dict[str, Any]:
    """Send money to a recipient. The user must approve every payment.

    Args:
        amount: How much to send, e.g. 50.
        recipient: Who receives the money, e.g. "Hanako".
        currency: ISO currency code, e.g. "USD".

    Returns:
        The transaction receipt, or an error.
    """
    confirmation = tool_context.tool_confirmation if tool_context is not None else None
    if confirmation is not None:
        # ADK never calls a rejected tool; checked anyway so the function
        # cannot pay without an approval when called some other way.
        if not confirmation.confirmed:
            return {"error": "This tool call is rejected."}
        # The approver may change the amount (ToolConfirmation.payload).
        payload = confirmation.payload if isinstance(confirmation.payload, dict) else {}
        amount = payload.get("amount", amount)
    try:
        value = float(amount)
    except (TypeError, ValueError):
        return {"error": f"Invalid amount: {amount!r}."}
    if not value > 0:
        return {"error": f"The amount must be positive, got {value:g}."}
    receipt: dict[str, Any] = {
        "status": "success",
        "transaction_id": f"txn-{next(_transaction_ids):06d}",
        "amount": int(value) if value.is_integer() else value,
        "recipient": recipient,
        "currency": currency.upper(),
    }
    PAYMENT_LOG.append(dict(receipt))
    return receipt


FRONTEND_TOOL_NAMES: frozenset[str] = frozenset({"get_location", "change_bgm"})
"""Names of the tools the browser executes."""


def frontend_tools() -> list[BaseTool]:
    """The browser-executed tools: declared for the model, executed by the page."""
    return [
        frontend_tool(
            "get_location",
            "Get the user's current location (latitude and longitude) from the browser. "
            "The user must approve sharing it.",
            require_approval=True,
        ),
        frontend_tool(
            "change_bgm",
            "Change the background music playing in the browser.",
            {
                "type": "object",
                "properties": {
                    "track": {"type": "integer", "description": "Track number, e.g. 1."}
                },
                "required": ["track"],
            },
        ),
    ]


def server_tools() -> list[BaseTool]:
    """Tools executed by the server."""
    return [FunctionTool(get_weather), FunctionTool(process_payment, require_confirmation=True)]
