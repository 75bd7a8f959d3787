"""Grounding on the real model stack: an agent on ADK's ``Gemini`` class answers through
the emulator with every kind of grounding a Gemini response carries — Google Search
(``web``, its queries and the search suggestions), Google Maps, image search, Vertex AI
Search / RAG (``retrieved_context``, a web page and a stored document), the segment
citations (``grounding_supports``) and ``citation_metadata`` — driven by the real AI SDK
clients (ai 5, strict 6 and 7, every chunk validated). Each source is a source part, the
rest a ``data-grounding`` part; the history route returns the same parts. The chat page
(Chromium) lists the sources and shows Google's search suggestions as rendered, also
after a reload.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any, Final

import httpx
import pytest
from agents.grounding import answer as grounded
from google.adk.agents import LlmAgent

from adk_asgi import AdkApp
from adk_asgi.testing.gemini import GeminiEmulator

from support import ROOT, LoopbackServer, serve
from support.aisdk_client import run_chat_versions
from support.web_harness import web_tooling_problem

pytestmark = pytest.mark.node

VERSIONS: Final = ("ai5", "ai6strict", "ai7")
RUNNER: Final = ROOT / "tests" / "browser" / "run.mjs"
SHOTS: Final = ROOT / "test-artifacts" / "browser-grounding"
AGENT: Final = ("--agent", "grounding", "--transport", "sse")


@pytest.fixture(scope="module")
def emulator() -> Iterator[GeminiEmulator]:
    with GeminiEmulator(grounded.script(), tokens_per_chunk=4) as running:
        yield running


@pytest.fixture(scope="module")
def messages(emulator: GeminiEmulator) -> Iterator[dict[str, list[dict[str, Any]]]]:
    """The answer's parts for each client, and from the history (``"history"``)."""
    agent = LlmAgent(name="guide", model=emulator.gemini("gemini-2.5-flash"), instruction="Answer.")
    with LoopbackServer(AdkApp(agent=agent, app_name="guide", warm_up=False)) as server:
        steps = [{"action": "send", "text": "the capital of Portugal?"}]
        out: dict[str, list[dict[str, Any]]] = {}
        for version, report in run_chat_versions(
            server.url, steps, versions=VERSIONS, chat_id="grounding"
        ).items():
            assert not any(r["invalid"] for r in report["requests"]), report["problems"]
            assert report["stepResults"][0]["status"] == "ready", report["problems"]
            out[version] = local(report["messages"][-1])
        history = httpx.get(f"{server.url}/grounding-ai7", timeout=10).json()["messages"]
        out["history"] = local(history[-1])
        yield out


@pytest.fixture(scope="module")
def page(emulator: GeminiEmulator) -> dict[str, Any]:
    """The chat page in Chromium (``run.mjs --agent grounding``, SSE) on ``adk-asgi serve
    --model gemini-2.5-flash`` (the demo agent on ``Gemini``) through the emulator."""
    problem = web_tooling_problem(browser=True)
    if problem:
        pytest.fail(problem, pytrace=False)
    with serve("--model", "gemini-2.5-flash", env=emulator.env) as url:
        done = subprocess.run(
            [*("node", str(RUNNER), "--url", f"{url}/", "--out", str(SHOTS)), *AGENT],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.browser
@pytest.mark.slow
def test_the_page_shows_the_sources_and_the_search_suggestions(page: dict[str, Any]) -> None:
    """As wide as the answer, the chip's link opening Google Search in a new tab; the
    answer's file named by its ``display_name``; the same after a reload (run.mjs checks
    it)."""
    [result] = page["results"]
    assert result["ok"], result["error"]


def local(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The message's parts, its ids without the message id (``{messageId}-s1``: ``s1``)."""
    parts: list[dict[str, Any]] = json.loads(
        json.dumps(message["parts"]).replace(f'"{message["id"]}-', '"')
    )
    return parts


SEEN: Final = [*VERSIONS, "history"]


def sources(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in parts if p["type"].startswith("source-")]


def meta(seen: str, adk: dict[str, Any]) -> dict[str, Any]:
    """A source's metadata as ``seen`` keeps it."""
    return {"providerMetadata": {"adk": adk}}


@pytest.mark.parametrize("seen", SEEN)
def test_every_source_kind_is_a_source_part(
    messages: dict[str, list[dict[str, Any]]], seen: str
) -> None:
    assert sources(messages[seen]) == [
        {
            "type": "source-url",
            "sourceId": "s1",
            "url": "https://pt.test/lisbon",
            "title": "Lisbon",
        },
        {
            "type": "source-url",
            "sourceId": "s2",
            "url": "https://maps.google.com/?cid=28",
            "title": "Tram 28",
            **meta(seen, {"kind": "maps", "placeId": "places/28"}),
        },
        {
            "type": "source-document",
            "sourceId": "s3",
            "mediaType": "application/pdf",
            "title": "Tram guide",
            "filename": "trams.pdf",
            **meta(
                seen,
                {
                    "kind": "retrievedContext",
                    "text": "Tram 28 runs from Martim Moniz to Campo de Ourique.",
                },
            ),
        },
        {
            "type": "source-url",
            "sourceId": "s4",
            "url": "https://intranet.test/lisbon",
            "title": "Lisbon notes",
            **meta(seen, {"kind": "retrievedContext"}),
        },
        {
            "type": "source-url",
            "sourceId": "s5",
            "url": "https://photos.test/tram",
            "title": "Tram",
            **meta(seen, {"kind": "image", "imageUrl": "https://img.test/tram.jpg"}),
        },
        {
            "type": "source-url",
            "sourceId": "s6",
            "url": "https://wiki.test/Lisbon",
            "title": "Lisbon",
            **meta(seen, {"kind": "citation"}),
        },
    ]


@pytest.mark.parametrize("seen", SEEN)
def test_queries_suggestions_and_citations_are_a_data_grounding_part(
    messages: dict[str, list[dict[str, Any]]], seen: str
) -> None:
    [part] = [p for p in messages[seen] if p["type"] == "data-grounding"]
    assert part["data"] == {
        "searchQueries": ["capital of portugal"],
        "retrievalQueries": ["lisbon trams"],
        "searchEntryPoint": grounded.SUGGESTIONS,
        "supports": [
            {
                "text": "Lisbon is the capital of Portugal.",
                "startIndex": 0,
                "endIndex": 34,
                "sourceIds": ["s1", "s1"],
                "confidence": [0.9, 0.8],
            },
            {
                "text": "The tram 28 crosses it.",
                "startIndex": 35,
                "endIndex": 58,
                "sourceIds": ["s2", "s3"],
            },
        ],
        "citations": [{"sourceId": "s6", "startIndex": 0, "endIndex": 34, "license": "CC-BY-SA"}],
    }


def test_the_store_uris_stay_on_the_server(messages: dict[str, list[dict[str, Any]]]) -> None:
    for parts in messages.values():
        assert "gs://" not in str(parts) and "ragCorpora" not in str(parts)
