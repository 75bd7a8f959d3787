"""``python -m benchmarks [--quick]``: run every row, then write a JSON result file and a
Markdown report.

Each row is a process of its own (``benchmarks.rows``): servers on loopback ports
driven by this process's raw asyncio HTTP/1.1 streams (``--client httpx`` for httpx)
or the ``websockets`` client, and in-process ceilings driven by JSON commands. All rows
run side by side and every phase round-robins over them (the order rotates per
repetition), so the drifts of a shared VM hit every row alike; ratios from one run are
the numbers to compare. Every loop is bounded in count and time; processes are stopped
in ``finally``. The exit status is 0 unless the harness itself breaks: a missing peer
package is a "skipped" row and noisy timings never fail the run.

Subsets and experiments: ``--contenders adk-asgi adk-naive ceiling-plain``,
``--sweep 50,200 --tokens 500 --reps 3``, process knobs for every row (``--gc-threshold
20000,50,50``, ``--gc-freeze``, ``--loop uvloop``, ``--otel-off``, ``--env K=V``) or per
row (``--contenders adk-asgi adk-asgi@gc=20000,50,50+freeze``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import psutil

from . import emulator
from .knobs import Knobs, parse_threshold
from .phases import (
    idle_sse,
    idle_ws,
    level,
    med,
    single,
    summarize_level,
    summarize_single,
    tool_call,
)
from .procs import HOST, Driver, Proc, StreamDriver, driver_for, running
from .rows import DEFAULT_ROWS, QUICK_ROWS, VOICE_ROWS, Row, parse_row
from .serve import raise_fd_limit
from .voice import VoicePhase, VoicePlan


@dataclass(frozen=True)
class Sweep:
    """Levels of simultaneous "bench ``tokens``" streams, for some rows."""

    tokens: int
    levels: tuple[tuple[int, int], ...]  # (concurrency, repetitions)
    rows: tuple[str, ...] | None = None  # base names; None: every row
    skip: tuple[tuple[int, str], ...] = ()  # (concurrency, base name) left out
    gemini: bool | None = None  # the @gemini rows only (True), none of them (False), or any

    def has(self, row: Row, concurrency: int) -> bool:
        return (
            (self.rows is None or row.base.name in self.rows)
            and (self.gemini is None or self.gemini == row.knobs.gemini)
            and (concurrency, row.base.name) not in self.skip
        )


# The voice sweep: 10 to 150 sessions of 3 push-to-talk turns (1 s spoken, a 2 s answer)
# on one core, 3 reps (≈ 15 min: 14.5 on the loaded 2-core VM on 2026-11-28).
FULL_VOICE = VoicePlan(levels=((10, 3), (25, 3), (50, 3), (100, 3), (150, 3)))


@dataclass(frozen=True)
class Plan:
    mode: str
    tokens: int = 200  # single-stream phase
    single_runs: int = 9
    sweeps: tuple[Sweep, ...] = ()
    # A rep of the 1-stream level streams one reply after another until it has this
    # many tokens (psutil's CPU clock ticks at 10 ms: one reply is too short to time).
    min_rep_tokens: int = 5000
    # Each rep's time limit: this, or the level's tokens at 500 tokens/s if longer (a
    # limit is a hang guard; a rep cut by it counts as incomplete streams).
    sweep_timeout: float = 180.0
    pause: float = 0.3  # between reps
    idle_streams: int = 1000
    idle_delay: float = 30.0
    idle_settle: float = 3.0  # wait before each RSS reading of the idle phase
    micro_quick: bool = False
    profile_rows: tuple[str, ...] = ("adk-asgi", "adk-naive", "ceiling-plain")
    profile_levels: tuple[int, ...] = (50, 200)
    profile_tokens: int = 500
    profile_rate: int = 250
    profile_rounds: int = 2
    cprofile_streams: int = 0
    fresh_per_level: bool = True  # restart the rows' processes before each level
    voice: VoicePlan = FULL_VOICE
    voice_beside: bool = False  # start the voice rows beside the others, not after them


QUICK = Plan(
    mode="quick",
    single_runs=3,
    min_rep_tokens=500,
    sweeps=(Sweep(20, ((1, 2), (50, 2))),),
    sweep_timeout=30.0,
    pause=0.1,
    idle_streams=100,
    idle_settle=1.5,
    micro_quick=True,
    profile_rows=(),
    fresh_per_level=False,
    # Two sessions of one short turn per voice row: the phase works, end to end.
    voice=VoicePlan(levels=((2, 1),), turns=1, speech_s=0.4, answer_tokens=10, pause_s=0.0),
    voice_beside=True,
)
# The full run (≈ 40 min on a quiet 2-core VM). 3 reps: the workload, 500-token
# replies, at 1, 50 and 200 streams for adk-asgi (the CLI, with and without its GC
# tuning), the naive bridge, the plain ceiling, and at 1 and 50 streams for the
# middleware alone, the sse-starlette channel, the resumable ceiling and ADK's
# api_server; 200-token replies over WebSocket at 1, 50 and 200 connections; one rep of
# 1000 streams with 200-token replies for adk-asgi with and without the GC tuning and the
# naive bridge (≈ 3 min per rep and row; memory at 1000 streams). The @gemini rows
# (--emulator, or named): 200-token replies at 1 and 50 streams, 3 reps. Then the voice
# sweep (FULL_VOICE, ≈ 15 min more).
FULL = Plan(
    mode="full",
    sweeps=(
        Sweep(
            500,
            ((1, 3), (50, 3), (200, 3)),
            (
                "adk-asgi",
                "adk-asgi-gc-off",
                "adk-asgi-bare",
                "adk-asgi-sse-starlette",
                "adk-naive",
                "ceiling-plain",
                "ceiling",
                "adk-api-server",
            ),
            skip=(
                (200, "ceiling"),
                (200, "adk-api-server"),
                (200, "adk-asgi-bare"),
                (200, "adk-asgi-sse-starlette"),
            ),
            gemini=False,
        ),
        Sweep(
            200,
            ((1, 3), (50, 3), (200, 3)),
            ("adk-asgi-live", "adk-naive-live", "adk-api-server-live", "ceiling-live"),
            gemini=False,
        ),
        Sweep(200, ((1000, 1),), ("adk-asgi", "adk-asgi-gc-off", "adk-naive"), gemini=False),
        Sweep(200, ((1, 3), (50, 3)), gemini=True),
    ),
)


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _rotated(names: list[str], k: int) -> list[str]:
    k %= max(1, len(names))
    return names[k:] + names[:k]


@dataclass
class Live:
    """The rows that are up: their processes and drivers."""

    procs: dict[str, Proc] = field(default_factory=dict)
    drivers: dict[str, Driver] = field(default_factory=dict)


async def _start(
    rows: list[Row],
    results: dict[str, Any],
    args: argparse.Namespace,
    live: Live,
    log_dir: Path,
    first: bool,
) -> None:
    """Start and warm up ``rows`` side by side; the first start also records start-up
    time, a tool-call turn and what the process reports about itself."""
    out: dict[str, Any] = results["contenders"]

    async def up(row: Row) -> None:
        proc = Proc(row, log_dir=log_dir)
        live.procs[row.name] = proc
        try:
            await proc.start()
            startup = await proc.wait_ready()
            d = driver_for(proc, args.client, args.ws_compression)
            live.drivers[row.name] = d
            for _ in range(3):
                await d.stream("bench 20", limit_s=60)
            if first:
                out[row.name] = {
                    "status": "measured",
                    "startup_s": startup,
                    "tool_call": await tool_call(d),
                }
            proc.warm()
            if row.knobs.cpus:
                proc.pin(row.knobs.cpus)
            stats = await proc.gc_stats()
            if first:
                out[row.name]["rss_after_warmup_kb"] = proc.rss_kb()
                if stats is not None:
                    info = {k: stats.get(k) for k in ("threshold", "frozen", "loop")}
                    info.update({k: v for k, v in proc.ready_info.items() if k != "ready"})
                    out[row.name]["process"] = info
        except Exception as exc:
            status = f"error{'' if first else ' in a restart'}: {type(exc).__name__}: {exc}"
            out.setdefault(row.name, {})["status"] = status
            live.drivers.pop(row.name, None)
            log(f"{row.name}: {status}")

    await asyncio.gather(*[up(row) for row in rows])


@contextlib.asynccontextmanager
async def fleet(
    rows: list[Row],
    results: dict[str, Any],
    args: argparse.Namespace,
    log_dir: Path,
    first: bool = False,
) -> AsyncIterator[Live]:
    """``rows`` running side by side (fresh processes), stopped on exit."""
    live = Live()
    try:
        await _start(rows, results, args, live, log_dir, first)
        yield live
    finally:
        for d in live.drivers.values():
            with contextlib.suppress(Exception):
                await d.close()
        await asyncio.gather(*[p.stop() for p in live.procs.values()], return_exceptions=True)


async def run_level(
    sweep: Sweep,
    concurrency: int,
    reps: int,
    names: list[str],
    plan: Plan,
    live: Live,
    results: dict[str, Any],
) -> None:
    """The reps of one level, round-robin over ``names`` (the order rotates per rep)."""
    out: dict[str, dict[str, Any]] = results["contenders"]
    waves = 1 if concurrency > 1 else max(1, -(-plan.min_rep_tokens // sweep.tokens))
    log(
        f"sweep: {concurrency} streams × {sweep.tokens} tokens"
        + (f" ({waves} in a row)" if waves > 1 else "")
        + f", {reps} reps, "
        f"{len(names)} rows"
    )
    limit = max(plan.sweep_timeout, concurrency * sweep.tokens / 500)
    runs: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    for rep in range(reps):
        for name in _rotated(names, rep):
            d = live.drivers.get(name)
            if d is None or (runs[name] and runs[name][-1]["completion"] < 0.5):
                continue  # failing at this level: more reps only burn time
            try:
                run = await level(live.procs[name], d, sweep.tokens, concurrency, waves, limit)
            except Exception as exc:
                out[name]["status"] = f"error in sweep: {type(exc).__name__}: {exc}"
                live.drivers.pop(name, None)
                log(f"{name}: {out[name]['status']}")
                continue
            runs[name].append(run)
            log(
                f"  {name}: {run['completed']}/{run['streams']} in {run['wall']:.2f}s, "
                f"{run['tokens_per_s']:.0f} tok/s, {run['cpu_us_per_token']:.0f} µs "
                "CPU/token"
                + (f" (GC {run['gc_us_per_token']:.0f})" if "gc_us_per_token" in run else "")
            )
            await asyncio.sleep(plan.pause)
    for name, name_runs in runs.items():
        if name_runs:
            proc = live.procs[name]
            summary = summarize_level(name_runs, proc.hwm_kb())
            out[name].setdefault("sweep", []).append(summary)
            out[name]["peak_rss_sweep_kb"] = max(
                out[name].get("peak_rss_sweep_kb", 0), summary["peak_rss_kb"]
            )


async def measure_all(
    rows: list[Row], plan: Plan, args: argparse.Namespace, log_dir: Path, results: dict[str, Any]
) -> None:
    """Start every row, measure single streams; then each sweep level, on fresh
    processes of the rows it covers (``plan.fresh_per_level``: a level's numbers do not
    depend on what the process served before, e.g. the sessions an in-memory store keeps,
    which the collector scans); then the profiles; then idle memory."""
    out: dict[str, dict[str, Any]] = results["contenders"]

    def measured(names: list[Row]) -> list[Row]:
        return [r for r in names if out.get(r.name, {}).get("status") == "measured"]

    levels = [(sweep, c, reps) for sweep in plan.sweeps for c, reps in sweep.levels]
    async with fleet(rows, results, args, log_dir, first=True) as live:
        if plan.single_runs:
            log(f"single stream, {plan.single_runs} interleaved rounds")
            singles: dict[str, list[dict[str, Any]]] = {n: [] for n in live.drivers}
            for k in range(plan.single_runs):
                for name in _rotated(list(singles), k):
                    if name in live.drivers:
                        try:
                            singles[name].append(await single(live.drivers[name], plan.tokens))
                        except Exception as exc:
                            out[name]["status"] = f"error in single: {type(exc).__name__}: {exc}"
                            live.drivers.pop(name, None)
            for name, name_singles in singles.items():
                if name in live.drivers:
                    out[name]["single"] = summarize_single(name_singles, plan.tokens)
                    out[name]["peak_rss_single_kb"] = live.procs[name].hwm_kb()
        if not plan.fresh_per_level:
            for sweep, c, reps in levels:
                names = [r.name for r in measured(rows) if sweep.has(r, c)]
                if names:
                    await run_level(sweep, c, reps, names, plan, live, results)
            await profiles(plan, args, live, results)
    if plan.fresh_per_level:
        for sweep, c, reps in levels:
            here = [r for r in measured(rows) if sweep.has(r, c)]
            if here:
                async with fleet(here, results, args, log_dir) as live:
                    await run_level(
                        sweep,
                        c,
                        reps,
                        [r.name for r in here if r.name in live.drivers],
                        plan,
                        live,
                        results,
                    )
        wanted = [r for r in measured(rows) if r.name in plan.profile_rows]
        if wanted and not args.skip_profile:
            for c in plan.profile_levels:
                async with fleet(wanted, results, args, log_dir) as live:
                    await profiles(replace(plan, profile_levels=(c,)), args, live, results)
    if args.skip_idle:
        return
    # The @gemini rows: idle streams measure the server, not the model behind it.
    servers = [r for r in measured(rows) if r.kind != "ceiling" and not r.knobs.gemini]
    log(f"idle streams/sockets: {', '.join(r.name for r in servers)} (fresh servers, side by side)")

    async def idle(row: Row) -> None:
        try:
            if row.kind == "ws":
                out[row.name]["idle"] = await idle_ws(
                    row, plan.idle_streams, plan.idle_settle, log_dir, args.ws_compression
                )
            else:
                out[row.name]["idle"] = await idle_sse(
                    row, plan.idle_streams, plan.idle_delay, plan.idle_settle, log_dir
                )
        except Exception as exc:
            out[row.name]["idle"] = {"error": f"{type(exc).__name__}: {exc}"}

    # RSS is per process, so the servers can be measured at the same time.
    await asyncio.gather(*[idle(row) for row in servers])


async def profiles(
    plan: Plan, args: argparse.Namespace, live: Live, results: dict[str, Any]
) -> None:
    """py-spy over one level per profiled row, ``plan.profile_rounds`` times with the rows
    interleaved (the VM's drifts hit every row alike), rows one at a time (the profiler
    needs the other core). The raw stacks of a row's rounds are added up."""
    from collections import Counter

    from .spy import Recorder, Stack, account, py_spy, read_raw, top_self

    wanted = [n for n in plan.profile_rows if n in live.drivers]
    if args.skip_profile or not wanted or not plan.profile_levels:
        return
    if py_spy() is None:
        results["profiles"] = {"status": "skipped: py-spy not installed"}
        log("profiles skipped: py-spy not installed (pip install py-spy)")
        return
    prof: dict[str, Any] = results.setdefault("profiles", {})
    for concurrency in plan.profile_levels:
        stacks: dict[str, Counter[Stack]] = {n: Counter() for n in wanted}
        runs: dict[str, list[dict[str, Any]]] = {n: [] for n in wanted}
        for k in range(plan.profile_rounds):
            for name in _rotated(wanted, k):
                proc, d = live.procs[name], live.drivers[name]
                path = args.out / f"spy-{name.replace('@', '_')}-c{concurrency}-{k}.txt"
                log(
                    f"profile {k + 1}/{plan.profile_rounds} (py-spy --native, "
                    f"{plan.profile_rate} Hz): {name}, {concurrency} streams × "
                    f"{plan.profile_tokens} tokens"
                )
                recorder = Recorder(proc.pid, path, plan.profile_rate)
                try:
                    await recorder.start()
                    runs[name].append(
                        await level(
                            proc,
                            d,
                            plan.profile_tokens,
                            concurrency,
                            1,
                            max(plan.sweep_timeout, concurrency * plan.profile_tokens / 500),
                        )
                    )
                finally:
                    await recorder.stop()
                stacks[name] += read_raw(path)
        for name in wanted:
            prof[f"{name} c={concurrency}"] = {
                "row": name,
                "concurrency": concurrency,
                "tokens": plan.profile_tokens,
                "rounds": plan.profile_rounds,
                # Under the profiler (its pauses inflate these; the account uses the
                # sweep's unprofiled numbers).
                "profiled_cpu_us_per_token": med([r["cpu_us_per_token"] for r in runs[name]]),
                "completion": min(r["completion"] for r in runs[name]),
                **account(stacks[name]),
                "top_self": top_self(stacks[name]),
            }


async def _get(port: int, path: str) -> None:
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(f"GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n".encode())
    await asyncio.wait_for(reader.read(), 30)
    writer.close()


async def run_cprofile(
    row: Row, streams: int, tokens: int, args: argparse.Namespace, log_dir: Path
) -> dict[str, Any]:
    """cProfile of one ``benchmarks.serve`` row over ``streams`` sequential streams,
    switched on after the warm-up (``/__profile/start|stop``)."""
    from .profile import summarize

    path = args.out / f"{row.name}.prof"
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    async with running(row, log_dir, cprofile=path) as proc:
        d = StreamDriver(proc, "raw", args.ws_compression)
        try:
            for _ in range(3):
                await d.stream("bench 20", limit_s=60)
            sessions = await d.sessions(streams)
            await _get(proc.port, "/__profile/start")
            for session_id in sessions:
                await d.stream(f"bench {tokens}", limit_s=120, session_id=session_id)
            await _get(proc.port, "/__profile/stop")
        finally:
            await d.close()
    return summarize(path, streams=streams, tokens=tokens)


def machine_info() -> dict[str, Any]:
    model = "unknown"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    versions: dict[str, str] = {}
    from importlib.metadata import PackageNotFoundError, version

    for pkg in (
        "adk-asgi",
        "google-adk",
        "google-genai",
        "ag-ui-adk",
        "ag-ui-protocol",
        "uvicorn",
        "uvloop",
        "httptools",
        "starlette",
        "sse-starlette",
        "fastapi",
        "msgspec",
        "pydantic",
        "httpx",
        "psutil",
        "py-spy",
    ):
        try:
            versions[pkg] = version(pkg)
        except PackageNotFoundError:
            versions[pkg] = "not installed"
    return {
        "nproc": os.cpu_count(),
        "cpu_model": model,
        "python": sys.version.split()[0],
        "platform": sys.platform,
        "mem_total_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "kernel": os.uname().release,
        "versions": versions,
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


def _loadavg() -> list[float]:
    with contextlib.suppress(OSError), open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]
    return []


async def main_async(args: argparse.Namespace, plan: Plan, rows: list[Row]) -> dict[str, Any]:
    log_dir: Path = args.out / "logs"
    results: dict[str, Any] = {
        "plan": asdict(plan),
        "machine": machine_info(),
        "command": " ".join(["python -m benchmarks", *sys.argv[1:]]),
        "client": args.client,
        "ws_compression": args.ws_compression,
        "rows": {
            r.name: {
                "base": r.base.name,
                "kind": r.kind,
                "live": r.live,
                "label": r.base.label,
                "knobs": r.knobs.describe(),
            }
            for r in rows
        },
        "contenders": {},
        "loadavg": {"start": _loadavg()},
    }
    started = time.perf_counter()
    measured: list[Row] = []
    for row in rows:
        if importlib.util.find_spec(row.base.peer_module.split(".")[0]) is None:
            results["contenders"][row.name] = {"status": "skipped: not installed"}
            log(f"{row.name}: skipped (not installed)")
        else:
            measured.append(row)
    log(f"starting {', '.join(r.name for r in measured)}")
    async with contextlib.AsyncExitStack() as stack:
        if any(r.knobs.gemini for r in measured):
            await stack.enter_async_context(emulator.running(log_dir))
            results["emulator"] = {
                "tokens_per_chunk": emulator.TOKENS_PER_CHUNK,
                "model": emulator.TEXT_MODEL,
                "live_model": emulator.LIVE_MODEL,
            }
            log(f"Gemini API emulator up ({emulator.TOKENS_PER_CHUNK} tokens per chunk)")
        voice = [r for r in measured if r.kind == "voice"]
        phase = None
        if voice and plan.voice.levels:
            phase = VoicePhase(
                voice, plan.voice, log_dir, results, compression=args.ws_compression, log=log
            )
            stack.push_async_callback(phase.aclose)
        # The smoke run starts the voice processes beside the other rows (its time); a
        # measuring run after them, so that they disturb no measurement.
        starting = (
            asyncio.create_task(phase.start()) if phase is not None and plan.voice_beside else None
        )
        try:
            await measure_all(
                [r for r in measured if r.kind != "voice"], plan, args, log_dir, results
            )
        except BaseException:
            if starting is not None:
                starting.cancel()
            raise
        if phase is not None:
            await (starting if starting is not None else phase.start())
            results["loadavg"]["before_voice"] = _loadavg()
            await phase.run()
            await phase.aclose()
    results["loadavg"]["after_measurements"] = _loadavg()
    if not args.skip_micro:
        log("microbenchmarks")
        from .micro import run as run_micro

        results["micro"] = run_micro(plan.micro_quick)
    if plan.cprofile_streams:
        for row in measured:
            if row.base.cprofile:
                log(f"cProfile ({row.name}, {plan.cprofile_streams} streams)")
                try:
                    results.setdefault("cprofile", {})[row.name] = await run_cprofile(
                        row, plan.cprofile_streams, plan.tokens, args, log_dir
                    )
                except Exception as exc:
                    results.setdefault("cprofile", {})[row.name] = {
                        "status": f"error: {type(exc).__name__}: {exc}"
                    }
    results["elapsed_s"] = time.perf_counter() - started
    results["loadavg"]["end"] = _loadavg()
    return results


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",") if x)


def _plan(args: argparse.Namespace) -> Plan:
    plan = QUICK if args.quick else FULL
    if args.sweep or args.tokens or args.reps:
        default_levels = tuple(c for s in plan.sweeps for c, _ in s.levels)
        levels = _ints(args.sweep) if args.sweep else tuple(dict.fromkeys(default_levels))
        tokens = (
            _ints(args.tokens)
            if args.tokens
            else tuple(dict.fromkeys(s.tokens for s in plan.sweeps))
        )

        def reps(c: int) -> int:
            if args.reps:
                return int(args.reps)
            return 2 if args.quick else (3 if c >= 1000 else 5)

        plan = replace(
            plan, sweeps=tuple(Sweep(t, tuple((c, reps(c)) for c in levels)) for t in tokens)
        )
    if args.single_runs is not None:
        plan = replace(plan, single_runs=args.single_runs)
    if args.profile_rows is not None:
        plan = replace(plan, profile_rows=tuple(filter(None, args.profile_rows.split(","))))
    if args.profile_levels is not None:
        plan = replace(plan, profile_levels=_ints(args.profile_levels))
    if args.profile_tokens is not None:
        plan = replace(plan, profile_tokens=args.profile_tokens)
    if args.cprofile_streams is not None:
        plan = replace(plan, cprofile_streams=args.cprofile_streams)
    if args.keep_processes:
        plan = replace(plan, fresh_per_level=False)
    voice = plan.voice
    voice_reps = args.voice_reps or args.reps
    if args.voice_sessions is not None or voice_reps:
        sessions = (
            _ints(args.voice_sessions)
            if args.voice_sessions is not None
            else tuple(n for n, _ in voice.levels)
        )
        voice = replace(
            voice,
            levels=tuple((n, voice_reps or dict(voice.levels).get(n, 3)) for n in sessions),
        )
    if args.voice_turns is not None:
        voice = replace(voice, turns=args.voice_turns)
    return replace(plan, voice=voice)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="CI smoke run (≈ 1 min): short replies, levels 1 and 50",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="result directory (default benchmarks/results/<mode>)",
    )
    parser.add_argument("--client", choices=("raw", "httpx"), default="raw")
    parser.add_argument(
        "--contenders",
        nargs="+",
        default=None,
        metavar="ROW[@KNOBS]",
        help="rows to run (default: all but the opt-in ones); see "
        "benchmarks/rows.py; ROW@gc=20000,50,50+freeze+loop=uvloop"
        "+otel-off+env=K=V+gctime=off adds knobs to one row",
    )
    parser.add_argument(
        "--sweep",
        default=None,
        help="concurrency levels, e.g. 1,50,200,1000 (replaces the plan's "
        "sweeps: every level for every row and --tokens)",
    )
    parser.add_argument("--tokens", default=None, help="reply lengths of the sweep, e.g. 500")
    parser.add_argument(
        "--reps",
        type=int,
        default=None,
        help="repetitions per level (default 5, 3 at 1000 streams)",
    )
    parser.add_argument(
        "--single-runs", type=int, default=None, help="single-stream rounds (0 skips the phase)"
    )
    parser.add_argument("--skip-idle", action="store_true")
    parser.add_argument("--skip-micro", action="store_true")
    parser.add_argument("--skip-profile", action="store_true")
    parser.add_argument(
        "--profile-rows",
        default=None,
        help="rows py-spy profiles after the sweep (comma-separated)",
    )
    parser.add_argument("--profile-levels", default=None, help="e.g. 50,200")
    parser.add_argument("--profile-tokens", type=int, default=None)
    parser.add_argument(
        "--keep-processes",
        action="store_true",
        help="one process per row for the whole run (default: fresh "
        "processes for every sweep level)",
    )
    parser.add_argument(
        "--cprofile-streams",
        type=int,
        default=None,
        help="cProfile the -bare rows over N sequential streams",
    )
    knobs = parser.add_argument_group("process knobs for every row")
    knobs.add_argument("--gc-threshold", type=parse_threshold, default=None, metavar="A,B,C")
    knobs.add_argument(
        "--gc-freeze",
        action="store_true",
        help="gc.collect(); gc.freeze() after each row's warm-up",
    )
    knobs.add_argument("--loop", choices=("asyncio", "uvloop"), default=None)
    knobs.add_argument("--otel-off", action="store_true", help="OTEL_SDK_DISABLED=true")
    knobs.add_argument("--env", action="append", default=[], metavar="K=V")
    knobs.add_argument(
        "--no-gc-time", action="store_true", help="no gc.callbacks clock in the rows' processes"
    )
    parser.add_argument(
        "--ws-compression",
        choices=("deflate", "none"),
        default="deflate",
        help="WebSocket client: offer permessage-deflate like browsers (default) or not",
    )
    parser.add_argument(
        "--emulator",
        action="store_true",
        help="add ROW@gemini for every row: the same contender on ADK's "
        "real Gemini model against the Gemini API emulator (its own "
        "process; 8 tokens per chunk), reported as rows of their own",
    )
    voice = parser.add_argument_group("the voice phase (benchmarks/voice.py)")
    voice.add_argument(
        "--voice-only",
        action="store_true",
        help="only the voice rows (" + ", ".join(VOICE_ROWS) + "): the voice phase alone",
    )
    voice.add_argument(
        "--voice-sessions",
        default=None,
        metavar="N,N,...",
        help="simultaneous voice sessions per level (default 10,25,50,100,150; quick: 2; "
        "empty: no voice phase)",
    )
    voice.add_argument(
        "--voice-reps", type=int, default=None, help="repetitions per voice level (default 3)"
    )
    voice.add_argument(
        "--voice-turns", type=int, default=None, help="turns per voice session (default 3)"
    )
    parser.add_argument("--no-report", action="store_true", help="only write results.json")
    args = parser.parse_args(argv)
    if args.ws_compression == "none":
        args.ws_compression = None
    env = [tuple(e.split("=", 1)) for e in args.env if "=" in e]
    if args.otel_off:
        env.append(("OTEL_SDK_DISABLED", "true"))
    extra = Knobs(
        gc_threshold=args.gc_threshold,
        gc_freeze=args.gc_freeze,
        loop=args.loop,
        gc_time=not args.no_gc_time,
        env=tuple((k, v) for k, v in env),
    )
    if args.voice_only:
        if args.contenders:
            parser.error("--voice-only picks the rows itself; drop --contenders")
        args.contenders = list(VOICE_ROWS)
        args.skip_micro = True
    names = args.contenders or list(QUICK_ROWS if args.quick else DEFAULT_ROWS)
    if args.emulator:
        names += [
            f"{n}{'+' if '@' in n else '@'}gemini"
            for n in names
            if "gemini" not in n.partition("@")[2].split("+")
            and n.partition("@")[0] not in VOICE_ROWS  # on the voice emulator already
        ]
        names = list(dict.fromkeys(names))
    try:
        rows = [parse_row(n, extra) for n in names]
    except ValueError as exc:
        parser.error(str(exc))
    plan = _plan(args)
    args.out = args.out or Path(__file__).parent / "results" / plan.mode
    args.out.mkdir(parents=True, exist_ok=True)
    limit = raise_fd_limit()
    top = max((c for s in plan.sweeps for c, _ in s.levels), default=1)
    if limit < 4 * max(top, plan.idle_streams) + 256:
        log(f"warning: file descriptor limit {limit} may be too low for the sweep")
    try:
        import uvloop  # the client side: fast enough to never be the bottleneck
    except ImportError:
        results = asyncio.run(main_async(args, plan, rows))
    else:
        results = uvloop.run(main_async(args, plan, rows))
    (args.out / "results.json").write_text(json.dumps(results, indent=1, default=str))
    if not args.no_report:
        from .report import write_report

        write_report(results, args.out)
    log(f"done in {results['elapsed_s']:.0f}s; results in {args.out}")
    return 0
