"""One text wherever it is read (issue 28, item 2): an ``after_model_callback`` or a
plugin that rewrites only the final response (tests/agents/redact) leaves nothing of the
streamed text on screen. By default the partial text of such an agent is held back
(``StreamingOptions.hold_partials="rewritten"``): the page (ai 5, 6 and 7 over SSE, every
chunk validated), the session and the history (``GET {api}/{chatId}``) hold the edited
text, and no chunk carries the redacted word. Before: the page kept the streamed
``... swordfish ...`` while the history held ``... [REDACTED] ...``.

Whenever the final text differs from what streamed anyway (``hold_partials="never"``
standing in for a model or a plugin nothing detects), the final event corrects the page:
text that only goes on (``sign``) comes as one more delta, any other difference ends the
streamed block marked ``providerMetadata.adk.replaced`` and writes the final text as a new
block; the page's parts but the replaced ones are the history. Before: the page ended with
the streamed text only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

import pytest
from agents.redact import agent as redact
from starlette.applications import Starlette

from adk_asgi import AdkApp, StreamingOptions, mount

from support import LoopbackServer
from support.aisdk_client import drive_history, require_node_harness

pytestmark = pytest.mark.node

VERSIONS: Final = ("ai5", "ai6", "ai7")
APPS: Final = ("callback", "plugin", "streamed", "signed")


@pytest.fixture(scope="module")
def results() -> Iterator[dict[tuple[str, str], dict[str, Any]]]:
    require_node_harness()
    site = Starlette()
    mount(site, "/callback", AdkApp(agent=redact.build_root_agent(), warm_up=False))
    mount(site, "/plugin", AdkApp(adk_app=redact.app, warm_up=False))
    # An app that asks for partials anyway: the stream shows them, the reload the edit.
    mount(
        site,
        "/streamed",
        AdkApp(
            agent=redact.build_root_agent(),
            warm_up=False,
            streaming=StreamingOptions(hold_partials="never"),
        ),
    )
    mount(
        site,
        "/signed",
        AdkApp(
            agent=redact.build_root_agent(signed=True),
            warm_up=False,
            streaming=StreamingOptions(hold_partials="never"),
        ),
    )
    with LoopbackServer(site) as server:
        runs = [
            {
                "ai": ai,
                "api": f"{server.url}/{name}",
                "chatId": f"{name}-{ai}",
                "steps": [{"action": "send", "text": "say it"}],
                "timeoutMs": 30_000,
            }
            for name in APPS
            for ai in VERSIONS
        ]
        results = drive_history(runs, concurrency=4)
        yield {(r["chatId"].rsplit("-", 1)[0], r["ai"]): r for r in results}


def said(message: dict[str, Any]) -> list[str]:
    return [p["text"] for p in message["parts"] if p["type"] == "text"]


@pytest.mark.parametrize("app", ["callback", "plugin"])
@pytest.mark.parametrize("ai", VERSIONS)
def test_a_rewritten_final_answer_is_what_the_page_shows(
    app: str, ai: str, results: dict[tuple[str, str], dict[str, Any]]
) -> None:
    result = results[(app, ai)]
    report = result["report"]
    assert report["ok"], report["problems"]
    assert redact.SECRET_WORD not in json.dumps(report["requests"][0]["chunks"])
    assert said(report["messages"][-1]) == [redact.REDACTED]
    assert result["validation"]["ok"], result["validation"]
    assert result["history"]["body"]["messages"] == report["messages"]


def shown(message: dict[str, Any]) -> dict[str, Any]:
    """The message without the text parts its final text replaced."""
    parts = [
        p
        for p in message["parts"]
        if not (
            p["type"] == "text" and (p.get("providerMetadata") or {}).get("adk", {}).get("replaced")
        )
    ]
    return {**message, "parts": parts}


@pytest.mark.parametrize("ai", VERSIONS)
def test_a_final_text_unlike_the_streamed_one_replaces_it(
    ai: str, results: dict[tuple[str, str], dict[str, Any]]
) -> None:
    """``hold_partials="never"``: the text streams, then the final event replaces it."""
    result = results[("streamed", ai)]
    report = result["report"]
    assert report["ok"], report["problems"]
    assert result["validation"]["ok"], result["validation"]
    chunks = report["requests"][0]["chunks"]
    deltas = [c for c in chunks if c["type"] == "text-delta"]
    assert len(deltas) > 1 and redact.SECRET_WORD in json.dumps(deltas)
    page = report["messages"][-1]
    replaced = [p for p in page["parts"] if p not in shown(page)["parts"]]
    assert [p["text"] for p in replaced] == [redact.SAID]
    assert said(shown(page)) == [redact.REDACTED]
    history = result["history"]["body"]["messages"]
    assert said(history[-1]) == [redact.REDACTED]
    assert history == [*report["messages"][:-1], shown(page)]


@pytest.mark.parametrize("ai", VERSIONS)
def test_a_final_text_that_goes_on_comes_as_one_more_delta(
    ai: str, results: dict[tuple[str, str], dict[str, Any]]
) -> None:
    result = results[("signed", ai)]
    report = result["report"]
    assert report["ok"], report["problems"]
    assert result["validation"]["ok"], result["validation"]
    deltas = [c["delta"] for c in report["requests"][0]["chunks"] if c["type"] == "text-delta"]
    assert "".join(deltas) == redact.SIGNED and deltas[-1] == " (checked)"
    assert said(report["messages"][-1]) == [redact.SIGNED]
    assert result["history"]["body"]["messages"] == report["messages"]
