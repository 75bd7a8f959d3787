"""CI smoke run of the benchmark suite (``python -m benchmarks --quick --reps 1
--single-runs 1``: the quick plan's phases and levels, one rep each), and the
naive bridge (the suite's floor) under the real AI SDK client.

The run must finish, exit 0 and hold a measured row for every contender, the naive
bridge, the three in-process ceilings and adk-asgi on ADK's real ``Gemini`` against the
Gemini API emulator (``adk-asgi@gemini``, the emulator mode's smoke row), and the voice
phase's rows (adk-asgi's protocol A and ADK's ``/run_live``, push-to-talk sessions on the
emulator's Live API) with every session's every answer heard in full. Nothing about
timings is asserted: benchmarks report, tests assert. A contender whose peer package is missing is a
"skipped: not installed" row in the results, which fails here on purpose.

The run is the documented one, from a fresh environment: in a copy of the repository,
a fresh ``.venv`` gets the README's first install line (``pip install -e '.[testing]'``, the
newcomer's) and benchmarks/RESULTS.md's ``pip install -e '.[bench]'``, the README's
``scripts/demo`` serves the demo from it twice (the README's curl gets its answer; the
second start skips the install: under 5 s from the command to ``adk-asgi serve``), and
``python -m benchmarks --quick --reps 1 --single-runs 1`` runs in it; so the ``bench``
extra must bring all the quick run needs (tests/support/doc_commands.py runs the
commands).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from support import ROOT, LoopbackServer, parse_sse
from support.aisdk_client import run_chat_versions, run_ws_chat

SERVERS = (
    "adk-asgi",
    "adk-naive",
    "adk-api-server",
    "ag-ui-adk",
    "adk-asgi-live",
    "adk-naive-live",
    "adk-api-server-live",
)
CEILINGS = ("ceiling", "ceiling-plain", "ceiling-live")
GEMINI = ("adk-asgi@gemini",)  # no idle phase: it measures the server, not the model
VOICE = ("adk-asgi-voice", "adk-api-server-voice")  # the voice phase only
OURS = ("adk-asgi", "adk-naive", "adk-asgi-live", "adk-naive-live", *CEILINGS, *GEMINI)
# --quick with one rep per sweep level and one single-stream round (instead of 2 and 3):
# every phase of every row still runs and is reported, at about half the time; the
# numbers of a smoke run are not read anyway.
QUICK_ARGS = ("--quick", "--reps", "1", "--single-runs", "1")
HARD_TIMEOUT_S = 360  # a hang guard, not a speed check (--quick takes ≈ 1 min on 2 quiet
# cores; under a loaded machine starting its eleven processes alone took 2 min)


def _copy_of_the_repository(where: Path) -> Path:
    """The files git tracks or would track, as a clone has them."""
    names = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    clone = where / "adk-asgi"
    for name in names:
        source = ROOT / name
        if source.is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
    return clone


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository with a fresh ``.venv`` that the documented commands
    filled: RESULTS.md's bench install, then the README's ``scripts/demo`` (and its curl)."""
    from support.doc_commands import DocShell, clean_environment, documented_commands

    copy = _copy_of_the_repository(tmp_path_factory.mktemp("clone"))
    readme = documented_commands(ROOT / "README.md")
    results = documented_commands(ROOT / "benchmarks" / "RESULTS.md")
    assert "scripts/demo" in readme and "pip install -e '.[bench]'" in results
    first = next(c for c in readme if c.startswith("pip install"))
    assert first == "pip install -e '.[testing]'", "the README's first install line is a clone's"
    # The .venv scripts/demo would create; the bench install first, so that one pip run
    # installs everything (scripts/demo's own `pip install -e .` then finds it all).
    # PIP_NO_COMPILE: no .pyc for every installed package up front (what runs compiles).
    subprocess.run(["python3", "-m", "venv", str(copy / ".venv")], check=True, timeout=120)
    shell = DocShell(copy / ".venv", copy, ".", clean_environment() | {"PIP_NO_COMPILE": "1"})
    start = time.monotonic()
    shell.run(first)
    shell.run("pip install -e '.[bench]'")
    installed = time.monotonic() - start
    starts: list[tuple[float, float]] = []
    for _ in range(2):
        start = time.monotonic()
        execed = _exec_seen(copy / ".venv" / "bin" / "adk-asgi")
        with shell.serving("scripts/demo"):
            page = time.monotonic() - start
            (curl,) = [c for c in readme if c.startswith("curl -N") and "chat-1" in c]
            chunks = [c for c in parse_sse(shell.run(curl)) if isinstance(c, dict)]
            assert "Tokyo is sunny" in "".join(c.get("delta", "") for c in chunks)
        starts.append((execed.result() - start, page))
    print(
        f"\n  fresh .venv, pip install -e '.[testing]' and '.[bench]': {installed:.0f} s"
        + "".join(
            f"\n  scripts/demo start {n}: adk-asgi serve after {to_exec:.1f} s, the page "
            f"after {to_page:.1f} s"
            for n, (to_exec, to_page) in enumerate(starts, 1)
        )
    )
    # Nothing changed: the second start goes straight to the server (no pip). Its own
    # start-up (imports, ADK's warm-up) is the server's, measured by the benchmarks.
    assert starts[1][0] < 5, f"the second scripts/demo took {starts[1][0]:.1f} s to serve"
    return copy


class _Seen:
    def __init__(self) -> None:
        self.at: float | None = None
        self.done = threading.Event()

    def result(self) -> float:
        self.done.wait(timeout=600)
        assert self.at is not None, "adk-asgi serve never started"
        return self.at


def _exec_seen(program: Path) -> _Seen:
    """When a process running ``program`` (scripts/demo's exec of it) first appears."""
    seen = _Seen()
    needle = str(program).encode()

    def watch() -> None:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            for pid in os.listdir("/proc"):
                try:
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes() if pid.isdigit() else b""
                except OSError:
                    continue
                if needle in cmdline and b"serve" in cmdline:
                    seen.at = time.monotonic()
                    seen.done.set()
                    return
            time.sleep(0.02)
        seen.done.set()

    threading.Thread(target=watch, daemon=True).start()
    return seen


def _run_quick(clone: Path, out: Path) -> tuple[int, str, float]:
    from support.doc_commands import clean_environment

    start = time.monotonic()
    proc = subprocess.Popen(
        [
            str(clone / ".venv" / "bin" / "python"),
            "-m",
            "benchmarks",
            *QUICK_ARGS,
            "--out",
            str(out),
        ],
        cwd=clone,
        env=clean_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
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
        pytest.fail(
            f"python -m benchmarks {' '.join(QUICK_ARGS)} still running after {HARD_TIMEOUT_S} s:\n"
            + output[-4000:]
        )
    return proc.returncode, output, time.monotonic() - start


@pytest.mark.slow
def test_quick_benchmark_run_reports_every_contender(clone: Path, tmp_path: Path) -> None:
    code, output, elapsed = _run_quick(clone, tmp_path)
    print(f"python -m benchmarks {' '.join(QUICK_ARGS)}: {elapsed:.0f} s")
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
            f"{name}: sweep levels missing"
        )
        if name in OURS:  # a broken harness or bridge shows up as missing tokens
            for lv in row["sweep"]:
                assert lv["completion"] == 1.0, f"{name}: {lv['reps'][-1]['errors']}"
                if name in SERVERS and not name.endswith("-live"):  # SSE: headers, first chunk
                    assert 0 < lv["ttfb_p50_ms"] <= lv["ttfc_p50_ms"] <= lv["ttft_p50_ms"], lv
    voice = results["plan"]["voice"]
    assert voice["levels"] and voice["turns"] >= 1
    # each voice server on core 0 alone; the client and the emulator on the others
    assert results["voice"]["server_cores"] == [0]
    assert 0 not in results["voice"]["client_and_emulator_cores"]
    for name in VOICE:
        row = rows.get(name, {})
        assert row.get("status") == "measured", f"{name}: {row.get('status', 'no row')}"
        assert row["cores"] == [0], f"{name}: its threads may run on cores {row['cores']}"
        assert [lv["sessions"] for lv in row.get("voice", [])] == [n for n, _ in voice["levels"]], (
            f"{name}: voice levels missing"
        )
        for lv in row["voice"]:
            for rep in lv["reps"]:
                turns = rep["sessions"] * voice["turns"]
                # Every session ended every turn, each answer with all of its audio.
                assert rep["completion"] == 1.0, f"{name}: {rep['errors']}"
                assert rep["turns"] == turns, name
                assert rep["audio_frames"] == turns * voice["answer_tokens"], name
                assert rep["eos_audio_p99_ms"] == rep["eos_audio_p99_ms"], name  # not NaN
        assert row["voice_knee"]["median"] is not None, name
    assert "micro" in results
    assert results["emulator"]["tokens_per_chunk"] == 8
    report = (tmp_path / "report.md").read_text()
    for name in SERVERS + CEILINGS + GEMINI + VOICE:
        assert f"| {name} |" in report, f"{name} missing from the report"
    assert "## Voice" in report
    assert "| TTFB p50 ms | first chunk p50 ms | first token p50 ms |" in report
    assert "| first chunk p50 ÷ ref | first token p50 ÷ ref |" in report
    assert "### Against the naive live bridge (`adk-naive-live`)" in report


def test_naive_bridge_streams_what_every_ai_sdk_client_accepts() -> None:
    """The floor must be a correct bridge, or beating it means nothing: every chunk passes
    each client version's own schema (ai6strict rejects unknown keys), the text arrives
    whole, and a second turn on the same chat works."""
    from benchmarks.naive import build_naive_app

    steps = [
        {"action": "send", "text": "bench 5"},
        {"action": "send", "text": "What's the weather in Tokyo?"},
    ]
    with LoopbackServer(build_naive_app()) as server:
        reports = run_chat_versions(f"{server.url}/api/chat", steps, chat_id="naive-1")
    for version, report in reports.items():
        assert report["ok"], (version, report["problems"], report["chatErrors"])
        assert [r["status"] for r in report["requests"]] == [200, 200], version
        assert all(r["sawDone"] and not r["invalid"] for r in report["requests"]), version
        texts = [
            "".join(p.get("text", "") for p in m["parts"] if p["type"] == "text")
            for m in report["messages"]
            if m["role"] == "assistant"
        ]
        assert texts == [
            "w1 w2 w3 w4 w5",
            "Let me check the weather in Tokyo.The weather in Tokyo is sunny, 22°C.",
        ], (version, texts)


def test_naive_live_bridge_streams_what_the_live_client_accepts() -> None:
    """The live rows' floor must be a correct bridge too: the npm package's
    ``AdkLiveTransport`` (protocol A, on ai 7, the version drive-ws runs) validates every
    chunk with ai's own schema, each reply arrives whole, and a second message on the same
    connection gets its own reply."""
    from benchmarks.naive import build_naive_live_app

    steps = [{"action": "send", "text": "bench 5"}, {"action": "send", "text": "bench 3"}]
    with LoopbackServer(build_naive_live_app()) as server:
        report = run_ws_chat(
            f"{server.url}/api/chat", steps, chat_id="naive-live-1", transport="adk"
        )
    assert report["ok"], (report["problems"], report["chatErrors"])
    assert not report["invalid"], report["invalid"]
    texts = [
        "".join(p.get("text", "") for p in m["parts"] if p["type"] == "text")
        for m in report["messages"]
        if m["role"] == "assistant"
    ]
    assert texts == ["w1 w2 w3 w4 w5", "w1 w2 w3"], texts


@pytest.mark.slow
def test_the_docs_extra_builds_the_site(clone: Path) -> None:
    """docs/development/docs.md's commands in the copy's fresh ``.venv``: the ``docs`` extra
    brings all the strict build needs."""
    from support.doc_commands import DocShell, clean_environment, documented_commands

    install, build = documented_commands(ROOT / "docs" / "development" / "docs.md")[:2]
    assert (install, build) == (
        ".venv/bin/pip install -e '.[docs]'",
        ".venv/bin/mkdocs build --strict",
    )
    shell = DocShell(
        clone / ".venv",
        clone,
        ".",
        clean_environment() | {"PIP_NO_COMPILE": "1", "NO_MKDOCS_2_WARNING": "1"},
    )
    start = time.monotonic()
    shell.run(install)
    installed = time.monotonic() - start
    shell.run(build)
    print(
        f"\n  pip install -e '.[docs]': {installed:.0f} s, mkdocs build --strict: "
        f"{time.monotonic() - start - installed:.0f} s"
    )
    assert (clone / "site" / "testing" / "gemini-emulator" / "index.html").is_file()


def test_the_voice_knee_is_where_p99_crosses_300_ms() -> None:
    """The sessions per core a voice row holds: the last level under the bound before the
    first over it, the crossing interpolated between them; a level with a failed session
    breaks it whatever its p99; held everywhere, the sweep's top is a lower bound."""
    from benchmarks.voice import knee

    assert knee([(10, 1.0, 80.0, 0.1), (50, 1.0, 200.0, 0.4), (100, 1.0, 400.0, 0.5)]) == {
        "held": 50,
        "broke": 100,
        "sessions_per_core": 75.0,
        "above_sweep": False,
        "load_bound": False,
    }
    # a later level under the bound again does not count: the first break ends it
    back = knee([(10, 1.0, 80.0, 0.1), (25, 1.0, 350.0, 0.2), (50, 1.0, 250.0, 0.3)])
    assert back is not None and back["held"] == 10
    failed = knee([(10, 1.0, 80.0, 0.1), (25, 0.96, 90.0, 0.2)])
    assert failed is not None and (failed["held"], failed["sessions_per_core"]) == (10, 10.0)
    top = knee([(10, 1.0, 80.0, 0.1), (25, 1.0, 90.0, 0.2)])
    assert top is not None and top["above_sweep"] and top["sessions_per_core"] == 25.0
    # broken where the client and emulator were saturated: said so
    bound = knee([(10, 1.0, 80.0, 0.5), (25, 1.0, 900.0, 0.95)])
    assert bound is not None and bound["load_bound"]
    never = knee([(10, 1.0, 301.0, 0.1)])
    assert never is not None and never["sessions_per_core"] == 0.0
    assert knee([]) is None


def test_instruction_workers_stream_every_token() -> None:
    """What ``python -m benchmarks.instructions`` runs under valgrind, without it: every row
    drives its app in process and every turn streams all of its tokens (the worker exits
    with an error otherwise, so a count never stands for failed turns)."""
    from benchmarks.instructions import ROWS

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.instructions",
            "--worker",
            ",".join(ROWS),
            "--connections",
            "2",
            "--tokens",
            "20",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # four warm-up turns and one batch of two connections per row
    assert done.stdout.splitlines() == [f"{row}: 6 turns of 20 tokens" for row in ROWS]


async def test_an_instruction_worker_refuses_a_turn_that_streamed_less() -> None:
    import benchmarks.instructions as instructions

    async def short_turn(number: int) -> int:
        return 19

    real = instructions.build_turn
    instructions.build_turn = lambda row, tokens: (short_turn, None)
    try:
        with pytest.raises(SystemExit, match="streamed"):
            await instructions.run_worker("adk-asgi-live", 2, 20, 1)
    finally:
        instructions.build_turn = real


def test_instructions_per_token_are_the_extra_batches_alone() -> None:
    """The count of the longer run minus the shorter one, over the extra batches' tokens;
    each row against its own ceiling and naive bridge."""
    from benchmarks.instructions import Count, instructions_of, report

    assert instructions_of("==15694== \n==15694== I   refs:      8,737,930,083\n") == 8737930083
    with pytest.raises(ValueError):
        instructions_of("==1== ERROR SUMMARY: 0 errors")
    counts = [
        Count("ceiling-live", 9_000_000, 12_000_000, 6000),
        Count("adk-naive-live", 9_000_000, 12_300_000, 6000),
        Count("adk-asgi-live", 9_500_000, 13_100_000, 6000),
        Count("adk-asgi", 9_000_000, 9_600_000, 1000),
    ]
    assert [c.per_token for c in counts] == [500.0, 550.0, 600.0, 600.0]
    table = report(counts).splitlines()
    assert table[2] == "| ceiling-live | 0.5 k | 1.000× | 0.909× |"
    assert table[4] == "| adk-asgi-live | 0.6 k | 1.200× | 1.091× |"
    assert table[5] == "| adk-asgi | 0.6 k | – | – |"  # its SSE ceiling and bridge: not counted
