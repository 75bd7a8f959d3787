"""An agent the Gemini emulator has never seen, as a newcomer writes one: a stock-price
tool and an order tool that needs the user's confirmation (``require_confirmation=True``),
on a Gemini model named by string (the environment says where Gemini is).

No script knows these tools: on the emulator's default script a message naming a tool
calls it, with arguments from its schema and the message ("use get_stock_price
symbol=GOOG"). The tools are deterministic (no clock, no counter), so a conversation
recorded once replays with the same tool results.
"""

from __future__ import annotations

import zlib
from typing import Any, Literal

from google.adk.agents import LlmAgent
from google.adk.tools import FunctionTool

__all__ = ("build_agent", "get_stock_price", "place_order", "root_agent")


def get_stock_price(symbol: str) -> dict[str, Any]:
    """The latest price of a stock.

    Args:
        symbol: The ticker symbol, e.g. "GOOG".
    """
    code = symbol.strip().upper()
    price = 20 + zlib.crc32(code.encode()) % 90_000 / 100
    return {"symbol": code, "price": price, "currency": "USD"}


def place_order(symbol: str, quantity: int, side: Literal["buy", "sell"] = "buy") -> dict[str, Any]:
    """Place a market order. The user confirms every order.

    Args:
        symbol: The ticker symbol.
        quantity: How many shares.
        side: "buy" or "sell".
    """
    code = symbol.strip().upper()
    order_id = f"ord-{zlib.crc32(f'{code}:{quantity}:{side}'.encode()):08x}"
    return {
        "order_id": order_id,
        "symbol": code,
        "quantity": quantity,
        "side": side,
        "status": "placed",
    }


def build_agent(model: Any = "gemini-2.5-flash") -> LlmAgent:
    """The broker; ``model`` is a model name or an ADK model (e.g. the emulator's)."""
    return LlmAgent(
        name="broker",
        model=model,
        description="Quotes stock prices and places orders.",
        instruction="You are a careful stock broker. Quote prices with get_stock_price and "
        "place orders with place_order; the user confirms every order.",
        tools=[get_stock_price, FunctionTool(place_order, require_confirmation=True)],
    )


root_agent = build_agent()
