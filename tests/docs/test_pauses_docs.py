"""docs/human-in-the-loop.md's shell examples, run in bash as they are written against real
servers (only the host changes; the API key is put in for the page's stand-in): each one
starts its chat, picks the ids its answer needs from the stream (the paused message's
``messageId``, the waiting call's ``toolCallId``) and resumes the real paused run — a
request for input, then the workflow's confirmation; a credential. (The tool
confirmation's shell example is run by tests/docs/test_docs_examples.py.)"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents.accounts.agent import build_app as build_accounts
from agents.trips.agent import app as trips_app

from adk_asgi import AdkApp

from support import ROOT, LoopbackServer, parse_sse
from support.provider_server import WEATHER_KEY, Provider

PAGE = ROOT / "docs" / "human-in-the-loop.md"
DOC_URL = "localhost:8000/api/chat"
FENCE = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)


def block(needle: str) -> str:
    """The page's one ``bash`` block that holds ``needle``."""
    (found,) = [b for b in FENCE.findall(PAGE.read_text()) if needle in b]
    return str(found)


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, str]]:
    provider = Provider()
    with (
        LoopbackServer(provider.app) as service,
        LoopbackServer(AdkApp(adk_app=trips_app, warm_up=False)) as trips,
        LoopbackServer(AdkApp(adk_app=build_accounts(service.url), warm_up=False)) as accounts,
    ):
        yield {"trips": trips.url, "accounts": accounts.url}


def bash(script: str, url: str, cwd: Path) -> list[dict[str, Any]]:
    """Run ``script`` (the page's blocks, one shell) against ``url``; the chunks it printed."""
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script.replace(DOC_URL, url.removeprefix("http://"))],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [c for c in parse_sse(done.stdout) if isinstance(c, dict)]


def chunks_of(path: Path) -> list[dict[str, Any]]:
    return [c for c in parse_sse(path.read_text()) if isinstance(c, dict)]


def test_the_input_and_workflow_answers_resume_their_pauses(
    servers: dict[str, str], tmp_path: Path
) -> None:
    asked, confirmed = block('"plan a trip"'), block("tool-book_hotel")
    assert "msg-trip" not in asked + confirmed and "ask_budget" not in asked  # ids from the stream
    done = bash(asked + confirmed, servers["trips"], tmp_path)
    first = chunks_of(tmp_path / "trip1.txt")
    paused = first[0]["messageId"]
    answered = chunks_of(tmp_path / "trip2.txt")
    assert answered[0] == {"type": "start", "messageId": paused}
    assert any(c["type"] == "tool-approval-request" for c in answered)
    assert done[0] == {"type": "start", "messageId": paused}  # one assistant message throughout
    booked = next(c for c in done if c["type"] == "tool-output-available")
    assert (
        booked["toolCallId"] == "wf_tool:trip_planner@1/book_hotel@1" and booked["output"]["hotel"]
    )


def test_the_credential_answer_resumes_its_pause(servers: dict[str, str], tmp_path: Path) -> None:
    script = block("tool-adk_request_credential")
    assert script.count("wk-live-...") == 1
    done = bash(script.replace("wk-live-...", WEATHER_KEY), servers["accounts"], tmp_path)
    asked = chunks_of(tmp_path / "weather1.txt")
    call = next(
        c
        for c in asked
        if c.get("toolName") == "adk_request_credential" and c["type"] == "tool-input-available"
    )
    assert done[0] == {"type": "start", "messageId": asked[0]["messageId"]}
    weather = next(c for c in done if c.get("toolCallId") == call["input"]["functionCallId"])
    assert weather["output"]["forecast"] == "sunny, 24°C"
    assert WEATHER_KEY not in json.dumps(done)


def test_an_answer_sent_as_the_old_page_wrote_it_is_refused(
    servers: dict[str, str], tmp_path: Path
) -> None:
    """The page's answer under a made-up message id (as it once read): 409
    ``wrong_message_id`` naming the id to use, instead of a reply split in two."""
    asked = block('"plan a trip"').replace("trip-1", "trip-made-up")
    made_up = asked.replace('"id": "$MESSAGE_ID"', '"id": "msg-trip"')
    assert made_up != asked
    script = made_up.replace("-d @- > trip2.txt", "-d @- -o answer.json")
    assert script != made_up
    url = servers["trips"].removeprefix("http://")
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script.replace(DOC_URL, url)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    paused = chunks_of(tmp_path / "trip1.txt")[0]["messageId"]
    error = json.loads((tmp_path / "answer.json").read_text())["error"]
    assert error["code"] == "wrong_message_id" and repr(paused) in error["message"]
