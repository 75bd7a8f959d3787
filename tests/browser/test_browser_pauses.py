"""The chat page answering ADK's pauses in a real browser (Debian's Chromium, headless,
driven by playwright-core; scenarios in ``tests/browser/pauses.mjs``), against two real
``adk-asgi serve`` — the trips workflow and the accounts assistant — and a real OAuth2
provider on loopback: a form built from a pydantic schema, a workflow tool confirmation
approved and denied, an API key in a password field, "Connect your account" through the
provider's consent page in a popup; a reload during each pause brings it back.

The accounts server logs at DEBUG; its logs and every response the page's API calls got
are searched for the API key and the OAuth2 tokens the provider issued.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any, Final

import pytest

from support import ROOT, LoopbackServer, serve
from support.provider_server import WEATHER_KEY, Provider
from support.web_harness import web_tooling_problem

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RUNNER: Final = ROOT / "tests" / "browser" / "pauses.mjs"
ARTIFACTS: Final = ROOT / "test-artifacts" / "browser"
SCENARIOS: Final = ("workflow-approve", "workflow-deny", "api-key", "oauth")


@pytest.fixture(scope="module")
def run() -> Iterator[tuple[dict[str, Any], str, Provider]]:
    problem = web_tooling_problem(browser=True)
    if problem:
        pytest.fail(problem, pytrace=False)
    provider = Provider()
    logs: list[str] = []
    with (
        LoopbackServer(provider.app) as service,
        serve("tests.agents.trips.agent:app") as trips,
        serve(
            "tests.agents.accounts.agent:app",
            "--log-level",
            "debug",
            env={"ACCOUNTS_PROVIDER_URL": service.url},
            output=logs,
        ) as accounts,
    ):
        provider.client.redirect_uris.append(f"{accounts}/api/chat/oauth2/callback")
        done = subprocess.run(
            [
                "node",
                str(RUNNER),
                "--trips",
                f"{trips}/",
                "--accounts",
                f"{accounts}/",
                "--key",
                WEATHER_KEY,
                "--out",
                str(ARTIFACTS),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        report: dict[str, Any] = json.loads(done.stdout)
    yield report, "".join(logs), provider


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenario(run: tuple[dict[str, Any], str, Provider], name: str) -> None:
    report, _, _ = run
    found = [r for r in report["results"] if r["name"] == name]
    assert len(found) == 1, f"{name} did not run"
    assert found[0]["ok"], f"{name}: {found[0]['error']}"


def test_no_secret_reached_the_page_or_the_logs(run: tuple[dict[str, Any], str, Provider]) -> None:
    report, logs, provider = run
    assert all(r["ok"] for r in report["results"])
    secrets = [WEATHER_KEY, *provider.access_tokens, *provider.refresh_tokens]
    assert len(secrets) == 3, provider.state.issued  # the key, one sign-in's two tokens
    assert ("weather", WEATHER_KEY) in provider.state.seen  # the tool got the key
    assert ("repos", provider.access_tokens[0]) in provider.state.seen
    bodies = "\n".join(report["bodies"])
    assert "adk_request_credential" in bodies and "DEBUG" in logs  # what was searched
    for secret in secrets:
        assert secret not in bodies, f"{secret[:6]}… reached the page"
        assert secret not in logs, f"{secret[:6]}… is in the server's logs"
