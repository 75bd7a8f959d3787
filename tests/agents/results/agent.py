"""An agent whose tools return what Python tools return, not only plain dicts.

    archivist (LlmAgent)   get_quote -> a pydantic model (a Decimal, a datetime, an enum and
                           a set inside); get_shipment -> a dataclass; server_time -> a
                           datetime; get_thumbnail -> bytes; get_tags -> a set;
                           get_status -> an enum; load_memory (ADK's own: a pydantic
                           LoadMemoryResponse); get_handle -> an object with no JSON form.
                           server_time stores the time in the state ("checked_at").

ADK hands the model these results as they are (``{"result": value}`` for anything but a
dict); the model here only echoes what it was told. ``remembered()`` builds the memory
``load_memory`` searches (ADK's ``InMemoryMemoryService`` with one earlier chat in it).
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
from collections.abc import Sequence
from decimal import Decimal
from typing import Any, Final

from google.adk.agents import LlmAgent
from google.adk.events import Event
from google.adk.memory import InMemoryMemoryService
from google.adk.sessions import Session
from google.adk.tools import load_memory
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from pydantic import BaseModel

from ..team.scripted import Reply, ScriptedModel, latest

__all__ = (
    "APP_NAME",
    "CHECKED_AT",
    "MEMORY",
    "THUMBNAIL",
    "Shipment",
    "Status",
    "build_root_agent",
    "remembered",
    "root_agent",
)

APP_NAME: Final = "archive"
CHECKED_AT: Final = datetime.datetime(2031, 5, 6, 7, 8, 9, tzinfo=datetime.UTC)
THUMBNAIL: Final = b"\x89PNG\r\n\x1a\n\x00\x00"
MEMORY: Final = "My favourite city is Lisbon."
_TOOLS: Final = {
    "quote": "get_quote",
    "shipment": "get_shipment",
    "time": "server_time",
    "thumbnail": "get_thumbnail",
    "tags": "get_tags",
    "status": "get_status",
    "remember": "load_memory",
    "handle": "get_handle",
}


class Status(enum.Enum):
    SHIPPED = "shipped"


class Quote(BaseModel):
    item: str
    total: Decimal
    valid_until: datetime.datetime
    status: Status
    tags: set[str]


@dataclasses.dataclass
class Shipment:
    id: str
    items: tuple[str, ...]
    shipped_on: datetime.date
    status: Status


def get_quote() -> Quote:
    """The price of the archive box."""
    return Quote(
        item="archive box",
        total=Decimal("12.50"),
        valid_until=CHECKED_AT,
        status=Status.SHIPPED,
        tags={"fragile"},
    )


def get_shipment() -> Shipment:
    """The user's latest shipment."""
    return Shipment(
        id="S-1", items=("box", "tape"), shipped_on=CHECKED_AT.date(), status=Status.SHIPPED
    )


def server_time(tool_context: ToolContext) -> datetime.datetime:
    """The server's clock (also noted in the state)."""
    tool_context.state["checked_at"] = CHECKED_AT
    return CHECKED_AT


def get_thumbnail() -> bytes:
    """The box's picture, as bytes."""
    return THUMBNAIL


def get_tags() -> set[str]:
    """The box's tags."""
    return {"paper", "archive"}


def get_status() -> Status:
    """Where the box is."""
    return Status.SHIPPED


class _Handle:
    """A resource handle: nothing a browser could be sent."""


def get_handle() -> Any:
    """A tool that returns an object with no JSON form."""
    return {"handle": _Handle()}


def archivist(contents: Sequence[types.Content]) -> Reply | None:
    said = latest(contents)
    if said is None:
        return None
    if said.responses:
        told = " ".join(
            f"{r.name} returned {json.dumps(r.response, default=str)}." for r in said.responses
        )
        return Reply(text=f"Noted. {told}")
    text = (said.text or "").lower()
    for word, tool in _TOOLS.items():
        if word in text:
            return Reply(calls=((tool, {"query": "city"} if tool == "load_memory" else {}),))
    return Reply(text=f"You said: {said.text}")


def build_root_agent(delay: float = 0.0) -> LlmAgent:
    return LlmAgent(
        name="archivist",
        model=ScriptedModel(planner=archivist, delay=delay),
        instruction="Answer with the tools' results.",
        tools=[
            get_quote,
            get_shipment,
            server_time,
            get_thumbnail,
            get_tags,
            get_status,
            load_memory,
            get_handle,
        ],
    )


async def remembered(user_id: str = "anonymous") -> InMemoryMemoryService:
    """ADK's in-memory memory, holding one earlier chat of ``user_id``."""
    memory = InMemoryMemoryService()
    said = types.Content(role="user", parts=[types.Part(text=MEMORY)])
    session = Session(
        id="earlier",
        app_name=APP_NAME,
        user_id=user_id,
        events=[
            Event(
                id="m1",
                invocation_id="i",
                author="user",
                content=said,
                timestamp=CHECKED_AT.timestamp(),
            )
        ],
    )
    await memory.add_session_to_memory(session)
    return memory


root_agent = build_root_agent()
