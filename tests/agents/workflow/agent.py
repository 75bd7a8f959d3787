"""An ADK 2 ``Workflow`` of function nodes: an order desk, no model at all.

    START -> triage --order--> parse_order -> price -> confirm
                    --stock--> check_stock      (RetryConfig: fails once, then answers)
                    --pay----> charge_card      (raises: the card is declined)
                    --track--> call_warehouse   (timeout=0.3 s; takes longer)

``triage`` routes on the user's words (``ctx.route``) and outputs what it understood (a
dict); ``parse_order`` a dict; ``price`` a pydantic ``Quote`` (a ``Decimal``, a ``datetime``
and an enum inside: ADK hands it on as ``model_dump()``, not JSON); ``confirm`` a string.
``root_agent`` is the ADK agent-folder name ADK's tools look for; ``workflow`` the same.
"""

from __future__ import annotations

import asyncio
import datetime
import enum
import re
from decimal import Decimal
from typing import Any, Final

from google.adk.agents.context import Context
from google.adk.workflow import FunctionNode, RetryConfig, Workflow
from pydantic import BaseModel

__all__ = ("CARD_SECRET", "Quote", "build_workflow", "root_agent", "workflow")

CARD_SECRET: Final = "SECRET-card-5c1d"
VALID_UNTIL: Final = datetime.datetime(2030, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
_ORDER = re.compile(r"(\d+)\s+(\w+)")


class Currency(enum.Enum):
    EUR = "EUR"


class Quote(BaseModel):
    item: str
    quantity: int
    total: Decimal
    currency: Currency
    valid_until: datetime.datetime


def triage(ctx: Context, node_input: str) -> dict[str, Any]:
    """What the user wants, and where it goes next."""
    text = str(node_input).lower()
    kind = next((k for k in ("stock", "pay", "track") if k in text), "order")
    ctx.route = kind
    return {"request": str(node_input), "kind": kind}


def parse_order(node_input: dict[str, Any]) -> dict[str, Any]:
    match = _ORDER.search(node_input["request"])
    quantity, item = (int(match[1]), match[2]) if match else (1, "thing")
    return {"item": item, "quantity": quantity}


def price(node_input: dict[str, Any]) -> Quote:
    quantity = int(node_input["quantity"])
    return Quote(
        item=node_input["item"],
        quantity=quantity,
        total=Decimal("1.50") * quantity,
        currency=Currency.EUR,
        valid_until=VALID_UNTIL,
    )


def confirm(node_input: dict[str, Any]) -> str:
    return (
        f"Your order: {node_input['quantity']} {node_input['item']} for "
        f"{node_input['total']} {node_input['currency'].value}."
    )


def check_stock(ctx: Context, node_input: dict[str, Any]) -> str:
    """The stock service drops the first connection of every run (retried)."""
    if ctx.attempt_count == 1:
        raise ConnectionError("the stock service hung up")
    return "In stock: 12 left."


def charge_card(node_input: dict[str, Any]) -> str:
    raise PermissionError(f"card declined: {CARD_SECRET}")


async def call_warehouse(node_input: dict[str, Any]) -> str:
    await asyncio.sleep(5)
    return "It left the warehouse."


def build_workflow() -> Workflow:
    stock = FunctionNode(
        func=check_stock, retry_config=RetryConfig(max_attempts=3, initial_delay=0.01, jitter=0.0)
    )
    warehouse = FunctionNode(func=call_warehouse, timeout=0.3)
    return Workflow(
        name="orders",
        edges=[
            (
                "START",
                triage,
                {"order": parse_order, "stock": stock, "pay": charge_card, "track": warehouse},
            ),
            (parse_order, price, confirm),
        ],
    )


workflow = build_workflow()
root_agent = workflow
