"""Scripting the emulated model: what it answers to each request.

A script is any callable `(Request) -> Reply`. `Script` builds one from rules (`Rule`)
tried in order, falling back to the default script (`default_reply`: it calls the
functions a message names, and otherwise answers with the demo agent's phrases):

>>> import re
>>> from google.genai import types
>>> from adk_asgi.testing.gemini import Reply, Request, Rule, Script
>>> script = Script(
...     Rule("refund", Reply.call("issue_refund", order_id="A-1")),
...     Rule.tool_result("issue_refund", Reply("Your refund is on its way.")),
...     Rule("busy", Reply.fail(503)),
...     Rule(re.compile(r"\\bhello\\b", re.I), Reply("Hi!", thought="A greeting.")),
... )
>>> reply = script(Request("gemini-2.5-flash", (types.UserContent("I want a refund"),)))
>>> [(call.name, call.args) for call in reply.calls]
[('issue_refund', {'order_id': 'A-1'})]
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from .default import default_reply
from .exchange import Reply, Request, ScriptFn

__all__ = ("Matcher", "ReplyFactory", "Rule", "Script")


ReplyFactory = Reply | str | Callable[[Request], Reply]
Matcher = str | re.Pattern[str] | Callable[[Request], bool]


@dataclass(frozen=True, slots=True)
class Rule:
    """Answer with ``reply`` when ``match`` matches.

    For text turns (``on="text"``, the default) ``match`` is a case-insensitive
    substring or a regular expression searched in `Request.text`, or a
    predicate on the request. For tool-result turns (``on="tool_result"``, see
    `tool_result`) a string matches the name of any returned function.
    ``reply`` is a `Reply`, a plain string, or a callable building one.
    """

    match: Matcher
    reply: ReplyFactory
    on: Literal["text", "tool_result"] = "text"

    @classmethod
    def tool_result(cls, match: Matcher, reply: ReplyFactory) -> Rule:
        """A rule for the turn after function results (``match`` names a function)."""
        return cls(match, reply, on="tool_result")

    def matches(self, request: Request) -> bool:
        if self.on == "tool_result":
            if not request.tool_results:
                return False
            names = [r.name or "" for r in request.tool_results]
            if isinstance(self.match, str):
                return self.match in names
            if isinstance(self.match, re.Pattern):
                return any(self.match.search(name) for name in names)
            return self.match(request)
        if request.tool_results:
            return False
        if isinstance(self.match, str):
            return self.match.lower() in request.text.lower()
        if isinstance(self.match, re.Pattern):
            return self.match.search(request.text) is not None
        return self.match(request)

    def build(self, request: Request) -> Reply:
        if isinstance(self.reply, Reply):
            return self.reply
        if isinstance(self.reply, str):
            return Reply(self.reply)
        return self.reply(request)


class Script:
    """Rules tried in order; the first that matches answers.

    When none matches, ``fallback`` answers: a `Reply`, a callable, or None for
    the default script (`default_reply`): a call of each declared function the message
    names, a sentence about any function result, the demo agent's phrases (those that
    call a function only when the request declares it) and an echo of anything else.
    """

    def __init__(self, *rules: Rule, fallback: Reply | ScriptFn | None = None) -> None:
        self.rules: tuple[Rule, ...] = rules
        self.fallback = fallback

    def __repr__(self) -> str:
        return f"Script({len(self.rules)} rules, fallback={self.fallback!r})"

    def __call__(self, request: Request) -> Reply:
        for rule in self.rules:
            if rule.matches(request):
                return rule.build(request)
        if isinstance(self.fallback, Reply):
            return self.fallback
        if self.fallback is not None:
            return self.fallback(request)
        return default_reply(request)
