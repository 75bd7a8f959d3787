"""A help-desk intake as an ADK 2.13 ``Workflow`` (no model) whose first node speaks before
the pause: it greets, then asks for the topic (``RequestInput``), then files the ticket.

    START -> greet -> ask_topic (RequestInput) -> file_ticket

On resume ADK 2.13 re-yields ``greet``'s output event (the node itself ran once: its
``GREETINGS`` count says so); the page and the history must show it once
(tests/clients/test_resumed_workflows.py).
"""

from __future__ import annotations

from typing import Any, Final

from google.adk.events import RequestInput
from google.adk.workflow import Workflow

__all__ = ("GREETING", "GREETINGS", "root_agent", "ticket")

GREETING: Final = "Welcome to the help desk."
GREETINGS: list[str] = []
"""Every run of ``greet`` (tests assert it ran once per chat)."""


def greet(node_input: Any) -> str:
    GREETINGS.append(str(node_input))
    return GREETING


def ask_topic(node_input: Any) -> RequestInput:
    return RequestInput(interrupt_id="ask_topic", message="What is your question about?")


def ticket(topic: Any) -> str:
    """What ``file_ticket`` answers for ``topic``."""
    return f"Ticket filed about {topic}."


def file_ticket(node_input: Any) -> str:
    return ticket(node_input)


root_agent = Workflow(name="intake", edges=[("START", greet, ask_topic, file_ticket)])
