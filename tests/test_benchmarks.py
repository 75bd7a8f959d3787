"""CI smoke run of the benchmark suite (``python -m benchmarks --quick``), and the
naive bridge (the suite's floor) under the real AI SDK client.

The run must finish, exit 0 and hold a measured row for every contender, the naive
bridge, the three in-process ceilings and adk-asgi on ADK's real ``Gemini`` against the
Gemini API emulator (``adk-asgi@gemini``, the emulator mode's smoke row). Nothing about
timings is asserted: benchmarks report, tests assert. A contender whose peer package is missing is a
"skipped: not installed" row in the results, which fails here on purpose (the test
command installs the ``bench`` extra).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aisdk_client import run_chat_versions
from conftest import LoopbackServer

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ("adk-asgi", "adk-naive", "adk-api-server", "ag-ui-adk", "adk-asgi-live",
           "adk-api-server-live")
CEILINGS = ("ceiling", "ceiling-plain", "ceiling-live")
GEMINI = ("adk-asgi@gemini",)  # no idle phase: it measures the server, not the model
OURS = ("adk-asgi", "adk-naive", "adk-asgi-live", *CEILINGS, *GEMINI)
HARD_TIMEOUT_S = 360  # a hang guard, not a speed check (--quick takes ≈ 1 min on 2 quiet
# cores; under a loaded machine starting its eleven processes alone took 2 min)


def _run_quick(out: Path) -> tuple[int, str, float]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks", "--quick", "--out", str(out)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = proc.communicate(timeout=HARD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        # SIGINT lets the harness stop its servers in `finally` (they also get SIGTERM
        # when the harness dies); SIGKILL if it does not exit.
        proc.send_signal(signal.SIGINT)
        try:
            output, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            output, _ = proc.communicate()
        pytest.fail(f"python -m benchmarks --quick still running after {HARD_TIMEOUT_S} s:\n"
                    + output[-4000:])
    return proc.returncode, output, time.monotonic() - start


@pytest.mark.slow
def test_quick_benchmark_run_reports_every_contender(tmp_path: Path) -> None:
    code, output, elapsed = _run_quick(tmp_path)
    print(f"python -m benchmarks --quick: {elapsed:.0f} s")
    assert code == 0, output[-4000:]
    results = json.loads((tmp_path / "results.json").read_text())
    rows = results["contenders"]
    levels = [(s["tokens"], c) for s in results["plan"]["sweeps"] for c, _ in s["levels"]]
    for name in SERVERS + CEILINGS + GEMINI:
        assert name in rows, f"no row for {name}"
        row = rows[name]
        assert row["status"] == "measured", f"{name}: {row['status']}"
        idle = name not in CEILINGS + GEMINI
        keys = ("single", "sweep", "tool_call") + (("idle",) if idle else ())
        for key in keys:
            assert key in row, f"{name}: no {key!r} in its row"
        if idle:
            assert "error" not in row["idle"], f"{name}: idle phase: {row['idle']['error']}"
        assert [(lv["tokens"], lv["concurrency"]) for lv in row["sweep"]] == levels, (
            f"{name}: sweep levels missing")
        if name in OURS:  # a broken harness or bridge shows up as missing tokens
            for lv in row["sweep"]:
                assert lv["completion"] == 1.0, f"{name}: {lv['reps'][-1]['errors']}"
    assert "micro" in results
    assert results["emulator"]["tokens_per_chunk"] == 8
    report = (tmp_path / "report.md").read_text()
    for name in SERVERS + CEILINGS + GEMINI:
        assert f"| {name} |" in report, f"{name} missing from the report"


def test_naive_bridge_streams_what_every_ai_sdk_client_accepts() -> None:
    """The floor must be a correct bridge, or beating it means nothing: every chunk passes
    each client version's own schema (ai6strict rejects unknown keys), the text arrives
    whole, and a second turn on the same chat works."""
    from benchmarks.naive import build_naive_app

    steps = [{"action": "send", "text": "bench 5"},
             {"action": "send", "text": "What's the weather in Tokyo?"}]
    with LoopbackServer(build_naive_app()) as server:
        reports = run_chat_versions(f"{server.url}/api/chat", steps, chat_id="naive-1")
    for version, report in reports.items():
        assert report["ok"], (version, report["problems"], report["chatErrors"])
        assert [r["status"] for r in report["requests"]] == [200, 200], version
        assert all(r["sawDone"] and not r["invalid"] for r in report["requests"]), version
        texts = ["".join(p.get("text", "") for p in m["parts"] if p["type"] == "text")
                 for m in report["messages"] if m["role"] == "assistant"]
        assert texts == ["w1 w2 w3 w4 w5",
                         "Let me check the weather in Tokyo.The weather in Tokyo is sunny, "
                         "22°C."], (version, texts)
