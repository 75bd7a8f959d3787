"""The chat page in Chromium on ADK's real `Gemini` class: `adk-asgi serve --model
gemini-2.5-flash` with nothing but the Gemini emulator's environment, one scenario per
transport of tests/browser/run.mjs (the same scenarios as on the scripted model):
an approved payment over SSE (ai@7 `DefaultChatTransport`) and over the WebSocket
(ai@7 `WebSocketChatTransport`, live mode on the demo's default Live API model, answered
as speech with its transcript), and a spoken question over protocol A (Chromium's fake
microphone in, the model's audio out, both transcriptions) and the camera over protocol A
(Chromium's fake camera through the npm package's ``FrameCapture``: JPEG frames at 1 a
second reach the Live API as ``image/jpeg`` blobs, and the model says what it got)."""

from __future__ import annotations

import json
import subprocess
from typing import Any, Final

import pytest

from adk_asgi.live.run.models import DEFAULT_GEMINI_LIVE_MODEL
from adk_asgi.testing.gemini import GeminiEmulator

from support import ROOT, serve
from support.web_harness import web_tooling_problem

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RUNNER: Final = ROOT / "tests" / "browser" / "run.mjs"
ARTIFACTS: Final = ROOT / "test-artifacts" / "browser-gemini"
PLAN: Final = [
    ("sse", "approve"),
    ("websocket", "approve"),
    ("voice", "voice-talk"),
    ("voice", "voice-camera"),
]


@pytest.fixture(scope="module")
def report(gemini_emulator: GeminiEmulator) -> dict[str, Any]:
    problem = web_tooling_problem(browser=True)
    if problem:
        pytest.fail(problem, pytrace=False)
    before = len(gemini_emulator.journal)  # the emulator is shared by the whole run
    with serve("--model", "gemini-2.5-flash", env=gemini_emulator.env) as url:
        done = subprocess.run(
            [
                "node",
                str(RUNNER),
                "--url",
                f"{url}/",
                "--out",
                str(ARTIFACTS),
                "--only",
                ",".join(sorted({name for _, name in PLAN})),
                "--min-speech-chunks",
                "2",
            ],  # one spoken 8-token chunk per step at least
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    result["journal"] = list(gemini_emulator.journal)[before:]
    return result


def test_every_scenario_ran(report: dict[str, Any]) -> None:
    assert sorted((r["transport"], r["name"]) for r in report["results"]) == sorted(PLAN)


@pytest.mark.parametrize(("transport", "name"), PLAN, ids=[f"{t}-{n}" for t, n in PLAN])
def test_scenario(report: dict[str, Any], transport: str, name: str) -> None:
    (result,) = [r for r in report["results"] if r["transport"] == transport and r["name"] == name]
    assert result["ok"], f"{name} over {transport}: {result['error']}"


def test_the_page_ran_on_the_emulator(report: dict[str, Any]) -> None:
    """Not the scripted model: the payment went through google-genai's streaming call,
    and the live runs connected to the Live API with the demo's Live model."""
    journal = report["journal"]
    streamed = [
        r
        for r in journal
        if r.kind == "streamGenerateContent"
        and r.data["model"] == "gemini-2.5-flash"
        and "Hanako" in json.dumps(r.data)
    ]
    assert streamed
    setups = [json.dumps(r.data) for r in journal if r.kind == "setup"]
    assert sum(DEFAULT_GEMINI_LIVE_MODEL in s for s in setups) >= 2  # WebSocket and voice
    voice = [r for r in journal if r.kind == "realtimeInput" and "audio" in json.dumps(r.data)]
    assert voice  # the fake microphone's PCM reached the Live API


def test_the_camera_reached_the_live_api(report: dict[str, Any]) -> None:
    (camera,) = [r for r in report["results"] if r["name"] == "voice-camera"]
    journal = report["journal"]
    blobs = [
        blob
        for r in journal
        if r.kind == "realtimeInput"
        for blob in [*(r.data.get("mediaChunks") or []), r.data.get("video")]
        if blob
    ]
    images = [b for b in blobs if b.get("mimeType", b.get("mime_type")) == "image/jpeg"]
    assert len(images) >= 2, blobs  # the page's frames, as image/jpeg blobs
    # the Live API took them all (no 1007 close), and its demo script saw them
    assert not [r for r in journal if r.kind == "close" and "image" in json.dumps(r.data)]
    assert camera["facts"]["answer"].startswith("I can see ")
    assert "the newest is image/jpeg" in camera["facts"]["answer"]
