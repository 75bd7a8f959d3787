"""The stocks broker with ADK's own ``request_input`` tool as well: a chat on it has a tool
call, an approval (``place_order``) and a request for input, the pauses a chat exported as
an eval case keeps. On the Gemini emulator's default script each is called by naming it
("adk_request_input message=\"How many?\"").
"""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.tools import FunctionTool, request_input

from tests.agents.stocks.agent import get_stock_price, place_order

__all__ = ("root_agent",)

root_agent = LlmAgent(
    name="broker_desk",
    model="gemini-2.5-flash",
    description="Quotes stock prices, places orders and asks when unsure.",
    instruction="You are a careful stock broker. Quote prices with get_stock_price, place "
    "orders with place_order (the user confirms every order) and ask the user with "
    "adk_request_input when something is unclear.",
    tools=[get_stock_price, FunctionTool(place_order, require_confirmation=True), request_input],
)
