"""Artifacts on the chat page in a real browser: Debian's Chromium (headless) driven by
playwright-core against `adk-asgi serve` serving the artifacts test agent
(tests/agents/artifacts). Over SSE and over WebSocket (protocol B), a tool saves a PNG with
``tool_context.save_artifact``; the page shows it as an image loaded through the file
part's URL (decoded at its real size), and the page fetches the same URL with a range
request (206, the PNG's bytes 1-3). Scenarios: ``tests/browser/run.mjs --agent artifacts``.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any, Final

import pytest

from support import ROOT, serve
from support.web_harness import web_tooling_problem

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RUNNER: Final = ROOT / "tests" / "browser" / "run.mjs"
ARTIFACTS: Final = ROOT / "test-artifacts" / "browser-artifacts"
PLAN: Final = [("sse", "artifact-image"), ("websocket", "artifact-image")]


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    problem = web_tooling_problem(browser=True)
    if problem:
        pytest.fail(problem, pytrace=False)
    tests = str(ROOT / "tests")
    with serve("agents.artifacts.agent:app", env={"PYTHONPATH": tests}) as url:
        done = subprocess.run(
            [
                "node",
                str(RUNNER),
                "--url",
                f"{url}/",
                "--out",
                str(ARTIFACTS),
                "--agent",
                "artifacts",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize(("transport", "name"), PLAN, ids=[f"{t}-{n}" for t, n in PLAN])
def test_artifact_image_on_the_page(report: dict[str, Any], transport: str, name: str) -> None:
    found = [r for r in report["results"] if r["transport"] == transport and r["name"] == name]
    assert len(found) == 1, f"{name} over {transport} did not run"
    result = found[0]
    assert result["ok"], f"{name} over {transport}: {result['error']}"
    assert (result["facts"]["width"], result["facts"]["height"]) == (96, 48)
