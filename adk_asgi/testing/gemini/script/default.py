"""The default script: a model for any agent, from the functions its request declares.

In order, for each request:

1. **After function results** (the newest content holds function responses): one
   sentence per result, "NAME returned {...}." or "NAME failed: ...." (the demo agent's
   own sentences for its tools, e.g. "The weather in Paris is cloudy, 18°C.").
2. **The demo's failure phrases**: "please fail", "please raise", "please fail with
   429" (see demo.py), whatever the agent.
3. **A message naming declared functions**: each declared function whose name appears
   in the user's message as a word (``get_stock_price``, any case) is called, in the
   order the message names them (several names: parallel calls), with arguments from
   its schema and the message (`arguments_for`). A function the request does not
   declare is never called.
   **A message naming an agent** that ``transfer_to_agent`` can reach (the ``agent_name``
   values ADK declares: sub-agents, parent, peers) transfers there, once per user message
   (the agent it reaches then answers the same message by these rules).
4. **The demo agent's phrases** ("What's the weather in Paris?", "Send 50 dollars to
   Hanako", "Where am I?", "Play track 2") when the request declares the function the
   phrase calls with the parameters it passes, e.g. ``get_weather(location)``. A phrase
   wins over rule 3 when it calls a function the message names (its arguments are
   better than generated ones).
5. **Anything else**: the demo's other phrases ("think ...", "story", "bench N") and
   an echo of the message. For the demo agent the echo suggests the demo's phrases; for
   any other agent it names that agent's own tools and how a message calls them.

The user's message is the newest user content with text, skipping the contents ADK
writes to tell an agent what another agent did ("For context: ...").
"""

from __future__ import annotations

import re

from google.genai import types

from adk_asgi.demo import _answers, _rules

from .arguments import arguments_for, parameter_names, parameters_schema
from .demo import demo_reply, emulated
from .exchange import Reply, Request

__all__ = ("default_reply", "named_functions", "user_message")

# The demo agent's tools and the parameters its phrases pass them.
_DEMO_PARAMETERS: dict[str, frozenset[str]] = {
    "get_weather": frozenset({"location"}),
    "process_payment": frozenset({"amount", "recipient", "currency"}),
    "get_location": frozenset(),
    "change_bgm": frozenset({"track"}),
}
_OTHER_AGENT = "For context:"
_TRANSFER = "transfer_to_agent"


def default_reply(request: Request) -> Reply:
    """The default script's reply to ``request`` (the rules above).

    >>> from google.genai import types
    >>> quote = types.FunctionDeclaration(name="get_stock_price", parameters_json_schema={
    ...     "type": "object", "properties": {"symbol": {"type": "string"}}})
    >>> asked = Request("gemini-2.5-flash", (types.UserContent("Use get_stock_price"),),
    ...                 declarations=(quote,))
    >>> [(call.name, call.args) for call in default_reply(asked).calls]
    [('get_stock_price', {'symbol': 'symbol'})]
    >>> undeclared = Request("gemini-2.5-flash", (types.UserContent("Use get_stock_price"),))
    >>> default_reply(undeclared).calls, default_reply(undeclared).text[:32]
    ((), 'You said: "Use get_stock_price".')
    """
    if request.tool_results:
        names = {r.name for r in request.tool_results if r.name}
        generic = {name for name in names if not _demo_tool(request, name)}
        return emulated(
            _answers.answer_tool_results(request.contents, request.tool_results, generic=generic)
        )
    demo = demo_reply(request)
    if demo.error is not None or demo.finish_reason != "STOP":
        return demo
    message = user_message(request)
    named = named_functions(message, request)
    if demo.calls and all(_fits(request, call) for call in demo.calls):
        if not named or any(call.name in named for call in demo.calls):
            return demo
    if named:
        return Reply(
            calls=tuple(
                types.FunctionCall(name=name, args=arguments_for(_declared(request, name), message))
                for name in named
            )
        )
    if (agent := _named_agent(request)) is not None:
        return Reply(calls=(types.FunctionCall(name=_TRANSFER, args={"agent_name": agent}),))
    if _serves_demo(request):
        if demo.calls and request.contents:
            return emulated(_rules.echo_reply(request.contents[-1]))
        return demo
    if demo.calls or (request.contents and demo.text == _demo_echo(request)):
        return _echo(message, request)
    return demo


def _serves_demo(request: Request) -> bool:
    """The request is the demo agent's (it declares the demo's weather and payment tools):
    its echo invites the demo's phrases."""
    return _demo_tool(request, "get_weather") and _demo_tool(request, "process_payment")


def _demo_echo(request: Request) -> str:
    return _rules.echo_reply(request.contents[-1]).text


def _echo(message: str, request: Request) -> Reply:
    """An echo of the user's message for any agent but the demo: it names the agent's own
    tools and how a message calls them (never the demo's phrases)."""
    words = message.split()
    snippet = " ".join(words[:8]) + (" …" if len(words) > 8 else "")
    said = f'You said: "{snippet}". ' if snippet else "Hello! "
    tools = [d for d in request.declarations if d.name and d.name != _TRANSFER]
    if not tools:
        return Reply(
            f"{said}This is the Gemini API emulator's default script: it echoes, and "
            "calls a tool when a message names one (this request declares none)."
        )
    listed = ", ".join(_signature(d) for d in tools)
    first = tools[0]
    example = " ".join([f"use {first.name}", *(f"{p}=..." for p in _shown(first)[:2])])
    return Reply(
        f"{said}This is the Gemini API emulator's default script: name one of this "
        f'agent\'s tools in a message to call it ({listed}), e.g. "{example}".'
    )


def _shown(declaration: types.FunctionDeclaration) -> list[str]:
    """The declaration's parameters, the required ones first."""
    schema = parameters_schema(declaration) or {}
    required = schema.get("required")
    first = [str(n) for n in required] if isinstance(required, list) else []
    return first + sorted(n for n in parameter_names(declaration) if n not in first)


def _signature(declaration: types.FunctionDeclaration) -> str:
    return f"{declaration.name}({', '.join(_shown(declaration))})"


def user_message(request: Request) -> str:
    """The text of the newest user content that has text, other than ADK's account of
    another agent's turn."""
    return _user_message(request)[1]


def _user_message(request: Request) -> tuple[int, str]:
    for index in range(len(request.contents) - 1, -1, -1):
        content = request.contents[index]
        if content.role not in (None, "user"):
            continue
        text = "".join(p.text for p in content.parts or () if p.text and not p.thought)
        if text and not text.startswith(_OTHER_AGENT):
            return index, text
    return -1, ""


def _named_agent(request: Request) -> str | None:
    """The agent the user's message names that ``transfer_to_agent`` reaches, unless a
    transfer already answered that message."""
    declaration = request.declaration(_TRANSFER)
    schema = (parameters_schema(declaration) if declaration is not None else None) or {}
    properties = schema.get("properties")
    agent = properties.get("agent_name") if isinstance(properties, dict) else None
    agents = agent.get("enum") if isinstance(agent, dict) else None
    if not isinstance(agents, list) or not agents:
        return None
    index, message = _user_message(request)
    for content in request.contents[index + 1 :]:
        for part in content.parts or ():
            if (part.function_call and part.function_call.name == _TRANSFER) or (
                part.text and _TRANSFER in part.text
            ):
                return None
    found = [
        (m.start(), str(agent))
        for agent in agents
        if (m := re.search(rf"(?<!\w){re.escape(str(agent))}(?!\w)", message, re.IGNORECASE))
    ]
    return min(found)[1] if found else None


def named_functions(message: str, request: Request) -> tuple[str, ...]:
    """The declared functions ``message`` names (as words, any case), in its order."""
    found: list[tuple[int, str]] = []
    for name in request.function_names:
        match = re.search(rf"(?<!\w){re.escape(name)}(?!\w)", message, re.IGNORECASE)
        if match:
            found.append((match.start(), name))
    return tuple(name for _, name in sorted(found))


def _declared(request: Request, name: str) -> types.FunctionDeclaration:
    return request.declaration(name) or types.FunctionDeclaration(name=name)


def _fits(request: Request, call: types.FunctionCall) -> bool:
    """The request declares the function with every parameter the call passes."""
    declaration = request.declaration(call.name or "")
    if declaration is None:
        return False
    return set(call.args or {}) <= parameter_names(declaration)


def _demo_tool(request: Request, name: str) -> bool:
    """The request declares the demo agent's tool ``name`` (with its parameters)."""
    expected = _DEMO_PARAMETERS.get(name)
    declaration = request.declaration(name)
    if expected is None or declaration is None:
        return False
    required = expected - {"currency"}
    return required <= parameter_names(declaration)
