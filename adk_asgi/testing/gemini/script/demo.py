"""The demo agent's phrases as an emulator script.

The replies come from `adk_asgi.demo._rules.plan_reply`, the rules of the offline
``DemoModel``, so ADK's real ``Gemini`` model pointed at the emulator behaves like the
scripted demo: "What's the weather in Paris?" -> text and ``get_weather``, a function
result -> a sentence about it, "think ..." -> thoughts, "story", "bench N", an echo.
`demo_reply` applies them whatever the request declares; the default script
(default.py) applies those that call a function only when the request declares it.

The demo's failures become what Gemini would send:

* "please fail" -> a turn that ends with ``finishReason: OTHER`` and the demo's message
  (ADK reports it as an ``error_code``); on a Live API connection, which has no finish
  reasons, the connection closes with 1011 and the message;
* "please raise" -> two streamed tokens, then 500 INTERNAL in the middle of the stream;
* "please fail with 429" (or any 4xx/5xx code) -> that API error, e.g. 429
  RESOURCE_EXHAUSTED, 500 INTERNAL, 503 UNAVAILABLE.
"""

from __future__ import annotations

import re

from adk_asgi.demo import _rules

from ..errors import ApiError
from .exchange import Reply, Request

__all__ = ("demo_reply", "emulated")

_FAIL_WITH = re.compile(r"please\s+fail\s+with\s+(\d{3})\b", re.IGNORECASE)


def demo_reply(request: Request) -> Reply:
    """The demo agent's reply to ``request``."""
    if match := _FAIL_WITH.search(request.text):
        code = int(match.group(1))
        if 400 <= code <= 599:
            return Reply(error=ApiError(code))
    return emulated(_rules.plan_reply(list(request.contents)))


def emulated(plan: _rules.Reply) -> Reply:
    """A demo model's reply as the emulator's."""
    if plan.error is not None:
        return Reply.blocked(plan.error)
    if plan.raise_after is not None:
        return Reply(
            text=plan.text,
            thought=plan.thought,
            error=ApiError(500),
            fail_after=plan.raise_after,
        )
    return Reply(text=plan.text, thought=plan.thought, calls=plan.calls)
