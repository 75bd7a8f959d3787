"""A chat becomes an ADK eval case and a replayable test.

`adk-asgi serve` runs the broker desk (tests/agents/brokerdesk) on ADK's real `Gemini`
class through an emulator recording to a cassette (the emulator's default script stands in
for Google); ai@7's `DefaultChatTransport` asks for a quote (a tool call), an order the user
approves, and gets a request for input the page answers.
`GET {api}/{chatId}/evalset` and `adk-asgi export-eval` give the chat as an `EvalSet`
(validated by ADK's own class); ADK's `AgentEvaluator` then runs the exported set against
an emulator replaying the cassette, offline, and passes with the tool trajectory matched —
and fails once the expected tool argument is changed.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import httpx
import pytest
from google.adk.evaluation.eval_set import EvalSet
from google.adk.evaluation.evaluation_generator import EvaluationGenerator
from google.adk.evaluation.evaluator import EvalStatus
from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator

from adk_asgi.cli.main import main
from adk_asgi.testing.gemini import GeminiEmulator
from adk_asgi.testing.gemini.cassettes.recorder import Upstream

from support import serve
from support.aisdk_client import require_node_harness, run_chat_versions

pytestmark = pytest.mark.node

KEY: Final = "real-key-of-the-stand-in"
CHAT: Final = "evalchat"
AGENT: Final = "tests.agents.brokerdesk"
STEPS: Final[list[dict[str, Any]]] = [
    {"action": "send", "text": "What is Google at? Use get_stock_price symbol=GOOG"},
    {"action": "send", "text": "Buy 10 shares: place_order symbol=GOOG quantity=10"},
    {"action": "approve", "approved": True},
    {"action": "send", "text": 'More? adk_request_input message="How many more shares?"'},
    {"action": "toolOutput", "tool": "adk_request_input", "output": 5},
    {"action": "sendEmpty"},
]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The chat, run once through a recording emulator: its URL, database and cassette."""
    require_node_harness()
    folder = tmp_path_factory.mktemp("evalset")
    cassette, database = folder / "chat.cassette", folder / "sessions.db"
    url = f"sqlite+aiosqlite:///{database}"
    with (
        GeminiEmulator(tls=False, api_key=KEY) as google,
        GeminiEmulator(record=cassette, upstream=Upstream(google.base_url, KEY)) as recorder,
        serve(f"{AGENT}.agent:root_agent", "--session-db", url, env=recorder.env) as base,
    ):
        reports = run_chat_versions(
            f"{base}/api/chat",
            STEPS,
            chat_id=CHAT,
            auto_send="approvals",
            versions=("ai7",),
            timeout=60,
        )
        report = reports["ai7"]
        assert report["ok"], (report["error"], report["problems"])
        yield {"base": base, "chat": f"{CHAT}-ai7", "cassette": cassette, "db": url, "dir": folder}


@pytest.fixture(scope="module")
def exported(recorded: dict[str, Any]) -> dict[str, Any]:
    response = httpx.get(f"{recorded['base']}/api/chat/{recorded['chat']}/evalset", timeout=30)
    assert response.status_code == 200, response.text
    assert response.headers["content-disposition"].endswith('.evalset.json"')
    eval_set: dict[str, Any] = response.json()
    return eval_set


def calls_of(invocation: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    events = (invocation.get("intermediate_data") or {}).get("invocation_events") or []
    return [
        (part["function_call"]["name"], part["function_call"].get("args") or {})
        for event in events
        for part in (event.get("content") or {}).get("parts") or []
        if part.get("function_call")
    ]


def test_the_route_answers_adks_eval_set(exported: dict[str, Any]) -> None:
    eval_set = EvalSet.model_validate(exported)  # ADK's own model
    (case,) = eval_set.eval_cases
    assert case.session_input is not None and case.session_input.app_name == "broker_desk"
    conversation = exported["eval_cases"][0]["conversation"]
    said = [p.get("text") for i in conversation for p in i["user_content"]["parts"]]
    assert said[0] == STEPS[0]["text"]
    assert calls_of(conversation[0]) == [("get_stock_price", {"symbol": "GOOG"})]
    assert '"price"' in conversation[0]["final_response"]["parts"][0]["text"]
    # The order and its approval, the request for input and its answer, as ADK recorded
    # them: each call, then the user's answer as the next invocation's content.
    names = [name for i in conversation[1:] for name, _ in calls_of(i)]
    assert "place_order" in names and "adk_request_confirmation" in names, conversation
    assert ("adk_request_input", {"message": "How many more shares?"}) in [
        call for i in conversation for call in calls_of(i)
    ]
    answers = [
        p["function_response"]
        for i in conversation
        for p in i["user_content"]["parts"]
        if p.get("function_response")
    ]
    assert {a["name"] for a in answers} == {"adk_request_confirmation", "adk_request_input"}


def test_a_chat_that_is_not_yours_gets_404(recorded: dict[str, Any]) -> None:
    # The same answer as the history route's, for a chat of another user or of none.
    missing = httpx.get(f"{recorded['base']}/api/chat/nochat/evalset", timeout=30)
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "chat_not_found"


def test_the_command_exports_the_same_set_with_its_cassette(
    recorded: dict[str, Any], exported: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    out = recorded["dir"] / "cli.evalset.json"
    code = main(
        [
            *("export-eval", f"{AGENT}.agent:root_agent"),
            *("--session-db", recorded["db"], "--chat", recorded["chat"], "--out", str(out)),
            *("--cassette", str(recorded["cassette"])),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    written = json.loads(out.read_text())
    conversation = written["eval_cases"][0]["conversation"]
    assert conversation == exported["eval_cases"][0]["conversation"]
    copy = out.with_name("cli.cassette")
    assert copy.read_bytes() == Path(recorded["cassette"]).read_bytes()
    assert "cli.cassette" in printed
    missing = main(
        [
            *("export-eval", f"{AGENT}.agent:root_agent"),
            *("--session-db", recorded["db"], "--chat", "nochat"),
        ]
    )
    assert missing == 1
    assert "no chat 'nochat' of app 'broker_desk'" in capsys.readouterr().err


def _evaluate(eval_set: dict[str, Any], cassette: Path) -> EvalStatus:
    """ADK's evaluation of the set's one case against the replaying emulator: what
    ``AgentEvaluator`` runs (inference by ``EvaluationGenerator``, the tool trajectory scored
    by ``TrajectoryEvaluator`` at threshold 1.0), without its metric registry, whose imports
    need ``google-adk[eval]`` (Vertex AI's SDK) that no test here needs."""
    expected = EvalSet.model_validate(eval_set)
    with GeminiEmulator(replay=cassette) as replaying:
        saved = {k: os.environ.get(k) for k in replaying.env}
        os.environ.update(replaying.env)
        try:
            (responses,) = asyncio.run(
                EvaluationGenerator.generate_responses(expected, AGENT, repeat_num=1)
            )
            (actual,) = responses.responses
            result = TrajectoryEvaluator(threshold=1.0).evaluate_invocations(
                actual, expected.eval_cases[0].conversation
            )
            return result.overall_eval_status
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def _before_the_pause(eval_set: dict[str, Any]) -> dict[str, Any]:
    """The set with the turns before the approval: ADK's evaluation sends a recorded answer
    (a function response) as it was, and the id of the confirmation it answers is new on
    every run, so ADK refuses it (``Function call not found for function response ids``)."""
    trimmed: dict[str, Any] = json.loads(json.dumps(eval_set))
    trimmed["eval_cases"][0]["conversation"] = trimmed["eval_cases"][0]["conversation"][:1]
    return trimmed


def test_adks_evaluation_replays_the_chat_and_passes(
    recorded: dict[str, Any], exported: dict[str, Any]
) -> None:
    exported = _before_the_pause(exported)
    assert _evaluate(exported, recorded["cassette"]) == EvalStatus.PASSED


def test_a_changed_tool_argument_fails_the_evaluation(
    recorded: dict[str, Any], exported: dict[str, Any]
) -> None:
    exported = _before_the_pause(exported)
    changed = json.loads(json.dumps(exported).replace('"symbol": "GOOG"', '"symbol": "MSFT"'))
    assert changed != exported
    assert _evaluate(changed, recorded["cassette"]) == EvalStatus.FAILED
