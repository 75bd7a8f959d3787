"""The default script for any agent: a message naming a declared function calls it with
arguments generated from its schema, a function result gets a sentence, an undeclared
function is never called, the demo's phrases only with the demo's tools; `Reply.call`'s
signature. Over HTTP and the Live API through google-genai's own clients."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from adk_asgi.testing.gemini import GeminiEmulator, Reply, Request, arguments_for, default_reply

from .helpers import DEMO_TOOLS, TEXT_MODEL
from .test_gemini_live_rules import live, say, turn


def declare(name: str, schema: dict[str, Any] | None = None) -> types.FunctionDeclaration:
    return types.FunctionDeclaration(name=name, parameters_json_schema=schema)


QUOTE = declare(
    "get_stock_price",
    {
        "type": "object",
        "required": ["symbol"],
        "properties": {
            "symbol": {"type": "string"},
            "exchange": {"type": "string", "default": "NASDAQ"},
        },
    },
)
ORDER = declare(
    "place_order",
    {
        "type": "object",
        "required": ["symbol", "quantity", "side", "limit"],
        "$defs": {
            "Item": {
                "type": "object",
                "required": ["sku"],
                "properties": {
                    "sku": {"type": "string", "minLength": 6},
                    "qty": {"type": "integer", "default": 1},
                },
            }
        },
        "properties": {
            "symbol": {"type": "string", "maxLength": 3},
            "quantity": {"type": "integer", "minimum": 10, "maximum": 5},
            "side": {"type": "string", "enum": ["buy", "sell"]},
            "limit": {"anyOf": [{"type": "null"}, {"type": "number", "exclusiveMinimum": 0}]},
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
            "note": {"type": "string"},
        },
    },
)


def ask(
    *texts: str,
    declarations: tuple[types.FunctionDeclaration, ...] = (QUOTE, ORDER),
    live: bool = False,
) -> Reply:
    contents = tuple(types.UserContent(text) for text in texts)
    return default_reply(Request(TEXT_MODEL, contents, declarations=declarations, live=live))


def calls(reply: Reply) -> list[tuple[str | None, dict[str, Any] | None]]:
    return [(call.name, call.args) for call in reply.calls]


# -- arguments from the schema ------------------------------------------------------------


def test_arguments_follow_the_documented_rule() -> None:
    assert arguments_for(QUOTE) == {"symbol": "symbol"}  # optional parameters left out
    assert arguments_for(ORDER) == {
        "symbol": "sym",  # the name, cut to maxLength
        "quantity": 5,  # minimum, capped at maximum
        "side": "buy",  # the first of enum
        "limit": 1.0,  # anyOf: the first alternative that is not null
    }
    # Every property when the schema has no required list; $ref, minLength, arrays,
    # defaults, formats, booleans.
    everything = declare(
        "f",
        {
            "type": "object",
            "$defs": ORDER.parameters_json_schema["$defs"],  # type: ignore[index]
            "properties": {
                "items": {"type": "array", "minItems": 2, "items": {"$ref": "#/$defs/Item"}},
                "when": {"type": "string", "format": "date-time"},
                "flag": {"type": "boolean"},
                "nothing": {"type": "null"},
                "tags": {"type": ["array", "null"], "items": {"type": "string"}},
                "example": {"type": "string", "examples": ["first", "2nd"]},
            },
        },
    )
    assert arguments_for(everything) == {
        "items": [{"sku": "skuxxx"}, {"sku": "skuxxx"}],
        "when": "2025-01-01T00:00:00Z",
        "flag": True,
        "nothing": None,
        "tags": ["tags"],
        "example": "first",
    }


def test_arguments_from_a_gemini_schema() -> None:
    # Tools declared with `parameters` (Gemini's Schema, upper-case types), as MCP and
    # OpenAPI tools and hand-written declarations are.
    schema = types.Schema(
        type=types.Type.OBJECT,
        required=["city", "days", "units"],
        properties={
            "city": types.Schema(type=types.Type.STRING),
            "days": types.Schema(type=types.Type.INTEGER, minimum=3),
            "units": types.Schema(type=types.Type.STRING, enum=["metric", "imperial"]),
            "hourly": types.Schema(type=types.Type.BOOLEAN),
        },
    )
    forecast = types.FunctionDeclaration(name="forecast", parameters=schema)
    assert arguments_for(forecast) == {"city": "city", "days": 3, "units": "metric"}
    assert arguments_for(forecast, "forecast city=Kyoto days=2 hourly=yes") == {
        "city": "Kyoto",
        "days": 2,
        "units": "metric",
        "hourly": True,
    }
    assert arguments_for(types.FunctionDeclaration(name="ping")) == {}


def test_arguments_given_in_the_message() -> None:
    message = (
        "place_order symbol=GOOG, quantity=3 side=sell limit=101.5 "
        'note="two words" items=[{"sku":"ABC123"}].'
    )
    assert arguments_for(ORDER, message) == {
        "symbol": "GOOG",
        "quantity": 3,
        "side": "sell",
        "limit": 101.5,
        "items": [{"sku": "ABC123"}],
        "note": "two words",
    }
    # A value that does not convert stays a string; part of a longer word is no assignment.
    assert arguments_for(ORDER, "quantity=many mysymbol=X")["quantity"] == "many"
    assert arguments_for(ORDER, "mysymbol=X")["symbol"] == "sym"


# -- the default script -------------------------------------------------------------------


def test_a_named_function_is_called() -> None:
    assert calls(ask("What does get_stock_price say for symbol=AAPL?")) == [
        ("get_stock_price", {"symbol": "AAPL"})
    ]
    assert calls(ask("USE GET_STOCK_PRICE")) == [("get_stock_price", {"symbol": "symbol"})]
    # Several names: parallel calls, in the order the message names them.
    both = ask("place_order after get_stock_price")
    assert [name for name, _ in calls(both)] == ["place_order", "get_stock_price"]
    # The name as a word only.
    assert calls(ask("get_stock_prices and xplace_order")) == []
    # It answers the newest user message: an older one naming a tool does not count.
    assert calls(ask("use get_stock_price", "thanks")) == []


def test_an_undeclared_function_is_never_called() -> None:
    for text in (
        "use get_stock_price",
        "What's the weather in Tokyo?",
        "Send 5 dollars to Bo",
        "Where am I?",
        "Play track 2",
    ):
        reply = ask(text, declarations=())
        assert reply.calls == (), text
        assert reply.text.startswith("You said:"), text  # the echo, as before


def test_demo_phrases_need_the_demo_tools() -> None:
    demo = DEMO_TOOLS[0].function_declarations or []
    assert calls(ask("What's the weather in Paris?", declarations=tuple(demo))) == [
        ("get_weather", {"location": "Paris"})
    ]
    # A get_weather of the agent's own, with other parameters: the phrase does not apply.
    own = declare(
        "get_weather",
        {"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}},
    )
    assert calls(ask("What's the weather in Paris?", declarations=(own,))) == []
    assert calls(ask("get_weather city=Paris", declarations=(own,))) == [
        ("get_weather", {"city": "Paris"})
    ]
    # Naming a demo tool: the phrase's arguments win over generated ones.
    assert calls(ask("use get_weather for the weather in Oslo", declarations=tuple(demo))) == [
        ("get_weather", {"location": "Oslo"})
    ]
    # The phrases without tools and the failure phrases work for any agent.
    assert ask("think about tea", declarations=()).thought
    assert ask("please fail with 429 using get_stock_price").error is not None
    assert ask("please fail").finish_reason == "OTHER"


def test_function_results_get_a_sentence() -> None:
    call = types.FunctionCall(name="get_stock_price", args={"symbol": "GOOG"})
    result = types.FunctionResponse(name="get_stock_price", response={"price": 1.5})
    contents = (
        types.UserContent("use get_stock_price"),
        types.ModelContent([types.Part(function_call=call)]),
        types.UserContent([types.Part(function_response=result)]),
    )
    reply = default_reply(Request(TEXT_MODEL, contents, declarations=(QUOTE,)))
    assert (reply.text, reply.calls) == ('get_stock_price returned {"price": 1.5}.', ())
    failed = types.FunctionResponse(name="place_order", response={"error": "rejected"})
    contents = (*contents[:2], types.UserContent([types.Part(function_response=failed)]))
    assert default_reply(Request(TEXT_MODEL, contents)).text == "place_order failed: rejected."
    # A get_weather of the agent's own gets the generic sentence, not the demo's.
    weather = types.FunctionResponse(name="get_weather", response={"temp": 3})
    contents = (*contents[:2], types.UserContent([types.Part(function_response=weather)]))
    own = declare("get_weather", {"type": "object", "properties": {"city": {"type": "string"}}})
    assert default_reply(Request(TEXT_MODEL, contents, declarations=(own,))).text == (
        'get_weather returned {"temp": 3}.'
    )


def test_another_agents_account_is_not_the_users_message() -> None:
    # ADK tells a sub-agent what its parent did in user contents "For context: ...":
    # the user's message is the one before them.
    told = types.UserContent("For context: [root] called tool `transfer_to_agent`")
    reply = default_reply(
        Request(TEXT_MODEL, (types.UserContent("use get_stock_price"), told), declarations=(QUOTE,))
    )
    assert calls(reply) == [("get_stock_price", {"symbol": "symbol"})]


def test_naming_an_agent_transfers_once() -> None:
    transfer = declare(
        "transfer_to_agent",
        {
            "type": "object",
            "required": ["agent_name"],
            "properties": {"agent_name": {"type": "string", "enum": ["billing", "travel"]}},
        },
    )
    asked = (types.UserContent("travel first, then billing"),)
    reply = default_reply(Request(TEXT_MODEL, asked, declarations=(transfer,)))
    assert calls(reply) == [("transfer_to_agent", {"agent_name": "travel"})]
    # Once a transfer answered the message (the model's own call, or ADK's account of
    # another agent's), no more: the agent reached answers it.
    done = types.ModelContent(
        [
            types.Part(
                function_call=types.FunctionCall(
                    name="transfer_to_agent", args={"agent_name": "travel"}
                )
            )
        ]
    )
    told = types.UserContent("For context: [root] called tool `transfer_to_agent`")
    for after in (done, told):
        again = default_reply(Request(TEXT_MODEL, (*asked, after), declarations=(transfer,)))
        assert again.calls == (), after
    # A declared function the message names comes first.
    both = default_reply(
        Request(
            TEXT_MODEL,
            (types.UserContent("billing: get_stock_price"),),
            declarations=(transfer, QUOTE),
        )
    )
    assert [name for name, _ in calls(both)] == ["get_stock_price"]


def test_reply_call_signature() -> None:
    assert Reply.call("f").calls[0].args == {}
    both = Reply.call("f", {"text": "in the dict"}, n=1, text="Before the call.")
    assert (both.text, both.calls[0].args) == ("Before the call.", {"text": "in the dict", "n": 1})
    with pytest.raises(
        TypeError,
        match=r"the reply\'s text is keyword-only, "
        r'Reply.call\("f", text="hi", ...\)',
    ):
        Reply.call("f", "hi")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a dict, not list"):
        Reply.call("f", [1])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"\['n'\] given twice"):
        Reply.call("f", {"n": 1}, n=2)


# -- on the wire --------------------------------------------------------------------------


QUOTE_TOOL = types.Tool(function_declarations=[QUOTE])


async def test_http_calls_the_named_function_then_answers(emulator: GeminiEmulator) -> None:
    client = emulator.client()
    config = types.GenerateContentConfig(tools=[QUOTE_TOOL])
    history: list[types.Content] = [types.UserContent("price? use get_stock_price symbol=GOOG")]
    first = await client.aio.models.generate_content(
        model=TEXT_MODEL, contents=history, config=config
    )
    (call,) = first.function_calls or []
    assert (call.name, call.args) == ("get_stock_price", {"symbol": "GOOG"})
    history += [
        types.ModelContent([types.Part(function_call=call)]),
        types.UserContent(
            [
                types.Part.from_function_response(
                    name="get_stock_price", response={"symbol": "GOOG", "price": 171.2}
                )
            ]
        ),
    ]
    answer = await client.aio.models.generate_content(
        model=TEXT_MODEL, contents=history, config=config
    )
    assert answer.text == 'get_stock_price returned {"price": 171.2, "symbol": "GOOG"}.'


async def test_live_calls_the_named_function_then_answers(emulator: GeminiEmulator) -> None:
    config = types.LiveConnectConfig(response_modalities=[types.Modality.TEXT], tools=[QUOTE_TOOL])
    async with live(emulator, config) as session:
        await say(session, "quote please: get_stock_price")
        messages = await turn(session)
        (call,) = [c for m in messages if m.tool_call for c in m.tool_call.function_calls or ()]
        assert (call.name, call.args) == ("get_stock_price", {"symbol": "symbol"})
        await session.send_tool_response(
            function_responses=[
                types.FunctionResponse(id=call.id, name=call.name, response={"price": 2})
            ]
        )
        answer = await turn(session)
    assert "".join(m.text or "" for m in answer) == 'get_stock_price returned {"price": 2}.'


# -- several agents (ADK's real Runner and Gemini) ------------------------------------------


async def test_naming_an_agent_transfers_once_and_it_calls_its_own_tool(
    emulator: GeminiEmulator,
) -> None:
    """The desk has no stock tool; naming the broker transfers there, and the broker,
    answering the same message, calls the tool the message names. Naming both agents
    transfers once: the broker does not transfer back to the desk."""
    from agents.stocks.agent import build_agent
    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner

    model = emulator.gemini(TEXT_MODEL)
    helper = LlmAgent(name="helper", model=model, description="Small talk.")
    desk = LlmAgent(
        name="desk",
        model=model,
        description="The front desk.",
        sub_agents=[build_agent(model), helper],
    )
    runner = InMemoryRunner(agent=desk)
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u")

    async def say(text: str) -> list[tuple[str, str, Any]]:
        message = types.UserContent(text)
        steps = []
        async for event in runner.run_async(
            user_id="u", session_id=session.id, new_message=message
        ):
            for part in (event.content.parts or ()) if event.content else ():
                if part.function_call:
                    steps.append((event.author, "call", part.function_call.name))
                elif part.function_response:
                    steps.append((event.author, "result", part.function_response.name))
                elif part.text:
                    steps.append((event.author, "text", part.text))
        return steps

    try:
        steps = await say("Ask the broker: get_stock_price symbol=GOOG (desk, then broker)")
    finally:
        await runner.close()
    assert steps[:4] == [
        ("desk", "call", "transfer_to_agent"),
        ("desk", "result", "transfer_to_agent"),
        ("broker", "call", "get_stock_price"),
        ("broker", "result", "get_stock_price"),
    ]
    assert steps[4][:2] == ("broker", "text") and steps[4][2].startswith(
        'get_stock_price returned {"currency": "USD", "price": '
    )
    assert len(steps) == 5
