"""Offline demo agent: a scripted model, its tools, and a ready-made ``root_agent``.

``DemoModel`` answers from fixed rules on the newest message (case-insensitive,
English or Japanese), streams one partial response per word, and never touches
the network:

* ``weather`` / ``forecast`` / ``天気`` (city from "in <City>" or "<都市>の天気",
  default Tokyo) -> "Let me check the weather in Tokyo." + ``get_weather``;
* "Send 50 dollars to Hanako" / "花子さんに50ドル送金してください" -> one
  ``process_payment`` call per "<amount> <currency> to <Name>" (confirmation-gated);
* "where am I" / ``location`` / ``現在地`` -> ``get_location`` (browser tool);
* ``BGM`` / "play|change|switch ... track|music" / ``トラック`` / ``曲を`` ->
  ``change_bgm(track=N)`` (N from "track N", default 1; browser tool);
* a message starting with ``think`` -> thought parts, then the answer;
* ``please fail`` -> an ``LlmResponse`` with ``error_code="DEMO_ERROR"``;
  ``please raise`` -> :class:`DemoModelError` after two streamed tokens;
* ``story`` / ``long`` -> a 60-token story; ``bench N`` -> exactly N tokens;
* anything else -> a three-sentence reply that quotes the message.

A message whose last content holds function responses gets an answer built from
the results ("The weather in Tokyo is sunny, 22°C.", "Sent 50 USD to Hanako.",
"The payment to Hanako was cancelled.", ...).
"""

from __future__ import annotations

from ._agent import INSTRUCTION, build_demo_agent
from ._live import DemoLiveConnection
from ._model import DemoModel
from ._rules import ERROR_CODE, MODEL_NAME, DemoModelError
from ._tools import (
    FRONTEND_TOOL_NAMES,
    PAYMENT_LOG,
    frontend_tools,
    get_weather,
    process_payment,
    server_tools,
)

__all__ = [
    "ERROR_CODE",
    "FRONTEND_TOOL_NAMES",
    "INSTRUCTION",
    "MODEL_NAME",
    "PAYMENT_LOG",
    "DemoLiveConnection",
    "DemoModel",
    "DemoModelError",
    "build_demo_agent",
    "frontend_tools",
    "get_weather",
    "process_payment",
    "root_agent",
    "server_tools",
]

root_agent = build_demo_agent()
"""Default demo agent (no token delay), discoverable by ``adk web``-style loaders."""
