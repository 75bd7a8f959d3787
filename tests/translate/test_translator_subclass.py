"""An application's own translator (``AdkApp(translator=...)``): one overridden hook changes
what the page sees over SSE, in the chat's history and over the WebSocket alike — the
example of docs/reference/event-mapping.md, run as written there."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from adk_asgi import AdkApp, EventTranslator
from adk_asgi.demo import build_demo_agent
from adk_asgi.translate.factory import live_class
from adk_asgi.translate.live import LiveTranslator

from support import ROOT, LoopbackServer, chat_body, parse_sse, user_message
from support.ws_client import LiveClient, dicts, ws_url

PAGE = ROOT / "docs" / "reference" / "event-mapping.md"


def _documented() -> dict[str, Any]:
    """The page's example, run as written (``root_agent``: the demo agent)."""
    section = PAGE.read_text().split("## Your own translator", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    names: dict[str, Any] = {"root_agent": build_demo_agent(token_delay=0)}
    # The reader's own agent (``from my_pkg.agent import root_agent``) is the demo's here.
    code = re.sub(r"^from my_pkg\.agent import root_agent.*$", "", match.group(1), flags=re.M)
    assert code != match.group(1), "the example no longer imports the reader's agent"
    exec(code, names)
    return names


def _weather_outputs(chunks: list[Any]) -> list[Any]:
    return [c["output"] for c in dicts(chunks) if c["type"] == "tool-output-available"]


@pytest.fixture
def app() -> AdkApp:
    chat = _documented()["chat"]
    assert isinstance(chat, AdkApp)
    return chat


async def test_the_hook_changes_the_stream_and_the_history_alike(app: AdkApp) -> None:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        body = chat_body("sub-1", user_message("What's the weather in Tokyo?"))
        streamed = parse_sse((await client.post("/", json=body)).text)
        [output] = _weather_outputs(streamed)
        assert set(output) == {"condition"}
        history = (await client.get("/sub-1")).json()["messages"]
    [part] = [p for p in history[-1]["parts"] if p["type"] == "tool-get_weather"]
    assert part["output"] == output  # a reload shows what the stream showed


async def test_live_turns_run_the_hook_too(app: AdkApp) -> None:
    with LoopbackServer(app) as server:
        client = await LiveClient.open(ws_url(server.url))
        await client.say("What's the weather in Tokyo?")
        [output] = _weather_outputs(await client.turn())
        assert set(output) == {"condition"}
        await client.close()


def test_the_live_class_combines_the_hooks_with_the_live_ones() -> None:
    documented = _documented()["OnlyTheCondition"]
    live = live_class(documented)
    assert issubclass(live, LiveTranslator) and issubclass(live, documented)
    assert live_class(EventTranslator) is LiveTranslator


def test_a_translator_is_an_event_translator() -> None:
    with pytest.raises(TypeError, match="EventTranslator"):
        AdkApp(build_demo_agent(), translator=dict)  # type: ignore[arg-type]


def test_a_translator_with_slots_combines_with_the_live_one() -> None:
    class Slotted(EventTranslator):
        __slots__ = ("extra",)

    live = live_class(Slotted)
    translator = live("m")
    translator.extra = 1
    assert isinstance(translator, Slotted) and isinstance(translator, LiveTranslator)
