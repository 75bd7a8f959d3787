"""CI smoke run of the benchmark suite (``python -m benchmarks --quick``).

The run must finish, exit 0 and hold a measured row for every contender and both
in-process ceilings. Nothing about timings is asserted: benchmarks report, tests
assert. A contender whose peer package is missing is a "skipped: not installed" row
in the results, which fails here on purpose (the test command installs the ``bench``
extra).
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

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
CONTENDERS = ("adk-asgi", "adk-api-server", "ag-ui-adk", "adk-asgi-live",
              "adk-api-server-live")
CEILINGS = ("ceiling", "ceiling-live")
HARD_TIMEOUT_S = 240  # a hang guard, not a speed check (--quick takes ≈ 40 s on 2 cores)


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


def test_quick_benchmark_run_reports_every_contender(tmp_path: Path) -> None:
    code, output, elapsed = _run_quick(tmp_path)
    print(f"python -m benchmarks --quick: {elapsed:.0f} s")
    assert code == 0, output[-4000:]
    results = json.loads((tmp_path / "results.json").read_text())
    rows = results["contenders"]
    for name in CONTENDERS:
        assert name in rows, f"no row for {name}"
        row = rows[name]
        assert row["status"] == "measured", f"{name}: {row['status']}"
        for key in ("single", "cpu", "sweep", "idle", "tool_call"):
            assert key in row, f"{name}: no {key!r} in its row"
        assert "error" not in row["idle"], f"{name}: idle phase: {row['idle']['error']}"
        assert [lv["concurrency"] for lv in row["sweep"]] == [
            c for c, _ in results["plan"]["sweep"]], f"{name}: sweep levels missing"
    for name in CEILINGS:
        assert results.get(name, {}).get("status") == "measured", f"{name}: {results.get(name)}"
    assert "micro" in results
    report = (tmp_path / "report.md").read_text()
    for name in CONTENDERS:
        assert f"| {name} |" in report, f"{name} missing from the report"
