"""The documentation's examples, run: the ``>>>`` examples of the testing package's
docstrings and the ``pycon`` blocks of the pages as doctests; the shell snippets that
answer an approval (docs/human-in-the-loop.md) and follow a completed long-running call
(docs/your-own-agents.md) run in bash, as written, against real servers (only the port
of ``127.0.0.1:8000`` differs); the emulator page's knobs table names every knob and
flag. The install lines and commands of the README, getting started and the emulator
page run in fresh virtual environments in tests/package/test_dist.py and
tests/package/test_benchmarks.py.
"""

from __future__ import annotations

import doctest
import importlib
import json
import os
import pkgutil
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import httpx
import pytest
from agents.team.agent import build_app

import adk_asgi.testing.gemini as gemini_package
from adk_asgi import AdkMiddleware
from adk_asgi.demo import PAYMENT_LOG, build_demo_agent
from adk_asgi.testing.gemini import EmulatorSettings
from adk_asgi.testing.gemini.__main__ import _parser

from support import ROOT, LoopbackServer, not_found_app, parse_sse
from support.aisdk_client import node_harness_problem, run_chat

DOCS: Final = ROOT / "docs"
FENCE: Final = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
DOC_HOST: Final = "127.0.0.1:8000"


def blocks(page: Path, language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(page.read_text()) if lang == language]


def section(page: Path, heading: str) -> str:
    """The text of ``page`` under ``heading`` (up to the next heading of any level)."""
    text = page.read_text()
    start = text.index(heading + "\n")
    following = re.search(r"^#{1,6} ", text[start + len(heading) :], re.M)
    return text[start : start + len(heading) + (following.start() if following else len(text))]


def run_bash(script: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


# -- doctests ----------------------------------------------------------------------------


def testing_modules() -> list[str]:
    return sorted(
        m.name
        for m in pkgutil.walk_packages(gemini_package.__path__, gemini_package.__name__ + ".")
        if not m.name.endswith(("__main__", "pytest_plugin"))
    )


def test_docstring_examples_run_as_doctests() -> None:
    attempted = {}
    for name in testing_modules():
        result = doctest.testmod(
            importlib.import_module(name),
            optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        )
        assert result.failed == 0, name
        attempted[name.rpartition(".")[2]] = result.attempted
    for module in ("script", "arguments", "default", "emulator", "recorder"):
        assert attempted[module] > 0, module  # the examples are there, and ran


@pytest.mark.parametrize(
    "page",
    sorted(p for p in DOCS.rglob("*.md") if blocks(p, "pycon")),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_page_examples_run_as_doctests(page: Path) -> None:
    parser, runner = (
        doctest.DocTestParser(),
        doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE),
    )
    names: dict[str, Any] = {}  # one namespace per page: later blocks use earlier ones
    for index, block in enumerate(blocks(page, "pycon")):
        test = parser.get_doctest(block, names, f"{page.name}[{index}]", str(page), 0)
        runner.run(test, clear_globs=False)
        names.update(test.globs)
    assert runner.summarize(verbose=False).failed == 0


# -- approvals from a shell --------------------------------------------------------------


@pytest.fixture(scope="module")
def demo() -> Iterator[LoopbackServer]:
    agent = build_demo_agent(token_delay=0)
    with LoopbackServer(
        AdkMiddleware(not_found_app, path="/api/chat", agent=agent, warm_up=False)
    ) as server:
        yield server


def test_the_documented_approval_body_answers_an_approval(
    demo: LoopbackServer, tmp_path: Path
) -> None:
    asked, answered = blocks_under(DOCS / "human-in-the-loop.md", "### Answering from a shell")
    PAYMENT_LOG.clear()
    host = demo.url.removeprefix("http://")
    run_bash(asked.replace(DOC_HOST, host), tmp_path)
    assert PAYMENT_LOG == []  # asked, not paid
    out = run_bash(
        (asked + answered).replace(DOC_HOST, host).replace("chat-pay", "chat-pay2"), tmp_path
    )
    chunks = [c for c in parse_sse(out) if isinstance(c, dict)]
    first = [c for c in parse_sse((tmp_path / "turn1.txt").read_text()) if isinstance(c, dict)]
    assert chunks[0] == {"type": "start", "messageId": first[0]["messageId"]}  # the same message
    assert [c["type"] for c in chunks].count("tool-output-available") == 1
    assert "".join(c.get("delta", "") for c in chunks) == "Sent 50 USD to Hanako."
    assert [p["recipient"] for p in PAYMENT_LOG] == ["Hanako"]  # one payment, the approved one


def blocks_under(page: Path, heading: str) -> list[str]:
    return [body for lang, body in FENCE.findall(section(page, heading)) if lang == "bash"]


@pytest.mark.node
def test_the_documented_approval_body_is_what_the_ai_sdk_sends(demo: LoopbackServer) -> None:
    """The documented answer holds what ai@7 sends for the same approval, field for field
    (but the metadata, which the server does not read)."""
    if (problem := node_harness_problem()) is not None:
        pytest.fail(problem, pytrace=False)
    report = run_chat(
        "ai7",
        f"{demo.url}/api/chat",
        [
            {"action": "send", "text": "Send 50 dollars to Hanako"},
            {"action": "approve", "approved": True},
        ],
        chat_id="chat-pay",
        auto_send="approvals",
    )
    sent = report["requests"][1]["body"]
    _, answered = blocks_under(DOCS / "human-in-the-loop.md", "### Answering from a shell")
    body = answered.split("<<EOF\n", 1)[1].rsplit("EOF", 1)[0]
    user, assistant = sent["messages"]
    ids = {
        "$MESSAGE_ID": assistant["id"],
        "$TOOL_CALL_ID": assistant["parts"][1]["toolCallId"],
        "$APPROVAL_ID": assistant["parts"][1]["approval"]["id"],
    }
    for name, value in ids.items():
        body = body.replace(name, value)
    documented = json.loads(body)
    assert documented["id"] == sent["id"] and documented["trigger"] == sent["trigger"]
    doc_user, doc_assistant = documented["messages"]
    assert (doc_user["role"], doc_user["parts"]) == (user["role"], user["parts"])
    assert (doc_assistant["id"], doc_assistant["role"]) == (assistant["id"], "assistant")
    for ours, theirs in zip(doc_assistant["parts"], assistant["parts"], strict=True):
        assert ours.items() <= theirs.items(), (ours, theirs)


# -- the follower of a completed long-running call ------------------------------------------


def test_a_follower_of_a_completed_call_opens_the_stream_after_the_202(tmp_path: Path) -> None:
    app = AdkMiddleware(not_found_app, path="/api/chat", adk_app=build_app(), warm_up=False)
    with LoopbackServer(app) as server, httpx.Client(base_url=server.url, timeout=20) as http:
        asked = parse_sse(
            http.post(
                "/api/chat",
                json={
                    "id": "ticket-doc",
                    "messages": [
                        {
                            "id": "u1",
                            "role": "user",
                            "parts": [{"type": "text", "text": "open a ticket please"}],
                        }
                    ],
                },
            ).text
        )
        call = next(
            c
            for c in asked
            if isinstance(c, dict)
            and c["type"] == "tool-input-available"
            and c["toolName"] == "open_ticket"
        )
        # Before the completion there is no turn to follow: 204, nothing.
        early = http.get("/api/chat/ticket-doc/stream")
        assert (early.status_code, early.text) == (204, "")
        (snippet,) = blocks_under(DOCS / "your-own-agents.md", "## Long-running tools")
        out = run_bash(
            snippet.replace(DOC_HOST, server.url.removeprefix("http://")),
            tmp_path,
            env={"CHAT_ID": "ticket-doc", "TOOL_CALL_ID": call["toolCallId"]},
        )
    accepted, _, stream = out.partition("}")
    message_id = json.loads(accepted + "}")["messageId"]
    chunks = [c for c in parse_sse(stream) if isinstance(c, dict)]
    assert chunks[0] == {"type": "start", "messageId": message_id}
    assert {
        "type": "tool-output-available",
        "toolCallId": call["toolCallId"],
        "output": {"status": "resolved"},
    } in chunks
    assert chunks[-1]["type"] == "finish"


# -- the emulator page's knobs ---------------------------------------------------------------


def test_the_knobs_table_names_every_knob_and_flag() -> None:
    page = (DOCS / "testing" / "gemini-emulator.md").read_text()
    knobs = section(DOCS / "testing" / "gemini-emulator.md", "## Knobs")
    import dataclasses

    for field in dataclasses.fields(EmulatorSettings):
        if field.init:
            assert f"| `{field.name}` |" in knobs, field.name
    for action in _parser()._actions:
        for flag in action.option_strings:
            if flag.startswith("--") and flag != "--help":
                field = flag[2:].replace("-", "_")
                assert flag in page or f"`{field}`" in knobs, flag
