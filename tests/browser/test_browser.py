"""The chat page in a real browser: Debian's Chromium (headless) driven by
playwright-core against a real `adk-asgi serve`.

The scenarios live in ``tests/browser/run.mjs`` (one Chromium for the whole run, a
fresh browser context per scenario); this module starts the server, runs them once
and turns each scenario of the JSON report into a test. Run just these with
``.venv/bin/python -m pytest -m browser`` (see docs/development/chat-page.md).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest

from support import ROOT, serve
from support.web_harness import web_tooling_problem

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RUNNER: Final = ROOT / "tests" / "browser" / "run.mjs"
ARTIFACTS: Final = ROOT / "test-artifacts" / "browser"

SCENARIOS: Final = (
    "text",
    "reasoning",
    "weather",
    "approve",
    "deny",
    "two-payments",
    "location",
    "location-denied",
    "bgm",
)
PLAN: Final = [(t, s) for t in ("sse", "websocket") for s in SCENARIOS] + [
    ("voice", "voice-talk"),
    ("voice", "voice-approve"),
    ("voice", "voice-camera"),
    ("voice", "voice-screen"),
    ("voice", "voice-location"),
    ("sse", "history"),
    ("sse", "payments-ran-once"),
]


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    problem = web_tooling_problem(browser=True)
    if problem:
        pytest.fail(problem, pytrace=False)
    with serve(token_delay=0.02) as url:
        done = subprocess.run(
            ["node", str(RUNNER), "--url", f"{url}/", "--out", str(ARTIFACTS)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _result(report: dict[str, Any], transport: str, name: str) -> dict[str, Any]:
    found = [r for r in report["results"] if r["transport"] == transport and r["name"] == name]
    assert len(found) == 1, f"{name} over {transport} did not run"
    return found[0]


def test_every_scenario_ran(report: dict[str, Any]) -> None:
    assert sorted((r["transport"], r["name"]) for r in report["results"]) == sorted(PLAN)


@pytest.mark.parametrize(("transport", "name"), PLAN, ids=[f"{t}-{n}" for t, n in PLAN])
def test_scenario(report: dict[str, Any], transport: str, name: str) -> None:
    result = _result(report, transport, name)
    assert result["ok"], f"{name} over {transport}: {result['error']}"


@pytest.mark.parametrize("transport", ["sse", "websocket"])
def test_streaming_is_visible(report: dict[str, Any], transport: str) -> None:
    facts = _result(report, transport, "text")["facts"]
    assert facts["partialRenders"] >= 5  # the reply grew on screen token by token


def test_the_model_saw_the_camera(report: dict[str, Any]) -> None:
    """The fake camera's frames reached the demo's live model, which says what it got."""
    facts = _result(report, "voice", "voice-camera")["facts"]
    seen = re.fullmatch(
        r"I can see (\d+) image\(s\) so far; the newest is image/jpeg, "
        r"(\d+) bytes\.",
        facts["answer"],
    )
    assert seen, facts
    assert 1 <= int(seen.group(1)) <= facts["frames"] and int(seen.group(2)) > 1000
    # Chromium's fake camera is 640x480: under 768, sent at its own size
    assert facts["preview"] == {"width": 640, "height": 480}
    screen = _result(report, "voice", "voice-screen")["facts"]
    assert screen["screen"]["width"] > 0 and screen["frames"] >= 4


def test_payments_ran_exactly_once(report: dict[str, Any]) -> None:
    # The demo numbers transactions per server process: approved payments got
    # consecutive numbers in run order, so nothing ran twice and no denied one ran.
    txns = [r["facts"]["txn"] for r in report["results"] if "txn" in r.get("facts", {})]
    assert txns == [f"txn-{i:06d}" for i in range(1, len(txns) + 1)]
    # approve, two-payments (Alice) x2 transports, voice, history (after a reload), last check
    assert len(txns) == 7


def test_approval_screenshots_saved(report: dict[str, Any]) -> None:
    for transport in ("sse", "websocket"):
        for name in ("approve", "two-payments", "location"):
            shot = ARTIFACTS / f"{name}-{transport}-approval.png"
            assert shot.is_file() and shot.stat().st_size > 10_000, shot
            assert Path(shot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def shapes_report() -> dict[str, Any]:
    """The page on the code-execution test agent and the fan-out workflow (tests/agents/code,
    tests/agents/fanout), each served by its own ``adk-asgi serve``."""
    problem = web_tooling_problem(browser=True)
    if problem:
        pytest.fail(problem, pytrace=False)
    results: list[dict[str, Any]] = []
    for name in ("code", "fanout"):
        with serve(f"tests.agents.{name}.agent:root_agent") as url:
            done = subprocess.run(
                ["node", str(RUNNER), "--url", f"{url}/", "--out", str(ARTIFACTS), "--agent", name],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        assert done.returncode == 0, done.stderr
        results += json.loads(done.stdout)["results"]
    return {"results": results}


@pytest.mark.parametrize("transport", ["sse", "websocket"])
def test_the_page_shows_code_and_its_output(shapes_report: dict[str, Any], transport: str) -> None:
    result = _result(shapes_report, transport, "code")
    assert result["ok"], f"code over {transport}: {result['error']}"
    assert result["facts"]["printed"].strip() == "4"


@pytest.mark.parametrize("transport", ["sse", "websocket"])
def test_the_page_shows_branch_authors_and_node_outputs(
    shapes_report: dict[str, Any], transport: str
) -> None:
    result = _result(shapes_report, transport, "fanout")
    assert result["ok"], f"fanout over {transport}: {result['error']}"
    assert result["facts"]["authors"] == ["pros", "cons"]
