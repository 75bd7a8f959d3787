"""``python -m benchmarks [--quick]``: run every contender, the ceilings and the
microbenchmarks, then write a JSON result file and a Markdown report.

Each contender is a subprocess (``python -m benchmarks.serve``) on a loopback port;
this process drives it with raw asyncio HTTP/1.1 streams (``--client httpx`` for
httpx) or, for the WebSocket contenders, the ``websockets`` asyncio client. Every loop
is bounded in count and time; servers are stopped in ``finally``.
The exit status is 0 unless the harness itself breaks: a missing peer package is a
"skipped" row and noisy timings never fail the run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import itertools
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil

from .client import (
    CONTENDERS,
    DEFAULT_CONTENDERS,
    Contender,
    StreamResult,
    WsContender,
    WsPhases,
    httpx_stream,
    raw_stream,
    ws_stream,
)
from .serve import raise_fd_limit

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
PEER_MODULES = {"adk-asgi": "adk_asgi", "adk-api-server": "google.adk.cli.fast_api",
                "ag-ui-adk": "ag_ui_adk", "adk-asgi-live": "adk_asgi",
                "adk-asgi-live-b": "adk_asgi", "adk-api-server-live": "google.adk.cli.fast_api"}


@dataclass(frozen=True)
class Plan:
    mode: str
    tokens: int = 200
    single_runs: int = 9
    cpu_batches: int = 7
    cpu_batch: int = 20
    sweep_tokens: int = 50
    sweep: tuple[tuple[int, int], ...] = ((1, 5), (50, 5), (200, 5), (1000, 3))
    sweep_timeout: float = 180.0
    pause: float = 0.5  # between sweep reps
    idle_streams: int = 1000
    idle_delay: float = 30.0
    idle_settle: float = 3.0  # wait before each RSS reading of the idle phase
    micro_quick: bool = False
    profile_streams: int = 30


QUICK = Plan(mode="quick", single_runs=5, cpu_batches=3, cpu_batch=5, sweep_tokens=20,
             sweep=((1, 2), (50, 2)), sweep_timeout=30.0, pause=0.1, idle_streams=100,
             idle_settle=1.5, micro_quick=True, profile_streams=0)
FULL = Plan(mode="full")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def med(values: list[float]) -> float:
    values = [v for v in values if v == v]
    return statistics.median(values) if values else float("nan")


def proc_status_kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


# -- servers ------------------------------------------------------------------------


class Server:
    def __init__(self, name: str, *, token_delay: float = 0.0, profile: Path | None = None,
                 log_dir: Path) -> None:
        self.name = name
        self.port = free_port()
        cmd = [sys.executable, "-m", "benchmarks.serve", name, "--port", str(self.port),
               "--token-delay", str(token_delay)]
        if profile is not None:
            cmd += ["--profile", str(profile)]
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   PYTHONWARNINGS="ignore", BENCH_PARENT_PID=str(os.getpid()))
        log_dir.mkdir(parents=True, exist_ok=True)
        self._log = open(log_dir / f"server-{name}-{self.port}.log", "wb")
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=self._log,
                                     stderr=subprocess.STDOUT)
        self.ps = psutil.Process(self.proc.pid)

    async def wait_ready(self, limit_s: float = 90.0) -> float:
        start = time.perf_counter()
        deadline = start + limit_s
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server {self.name} exited with {self.proc.returncode}")
            try:
                reader, writer = await asyncio.open_connection(HOST, self.port)
                writer.write(b"GET /__ready HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
                line = await asyncio.wait_for(reader.readline(), 5)
                writer.close()
                if line.startswith(b"HTTP/1.1"):
                    return time.perf_counter() - start
            except (OSError, TimeoutError):
                pass
            await asyncio.sleep(0.1)
        raise RuntimeError(f"server {self.name} not ready after {limit_s}s")

    def cpu(self) -> float:
        t = self.ps.cpu_times()
        return float(t.user + t.system)

    def rss_kb(self) -> int:
        return proc_status_kb(self.proc.pid, "VmRSS")

    def hwm_kb(self) -> int:
        return proc_status_kb(self.proc.pid, "VmHWM")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log.close()


@contextlib.asynccontextmanager
async def running(name: str, log_dir: Path, **kwargs: Any) -> AsyncIterator[Server]:
    server = Server(name, log_dir=log_dir, **kwargs)
    try:
        await server.wait_ready()
        yield server
    finally:
        server.stop()


# -- measurements -------------------------------------------------------------------


class Driver:
    def __init__(self, server: Server, contender: Contender | WsContender, client: str,
                 ws_compression: str | None = "deflate") -> None:
        self.server = server
        self.contender = contender
        self.client_kind = client
        self.ws_compression = ws_compression
        self.http: httpx.AsyncClient | None = None
        self.rest: httpx.AsyncClient | None = None
        if isinstance(contender, WsContender):
            if contender.session_path is not None:
                self.rest = httpx.AsyncClient(base_url=f"http://{HOST}:{server.port}",
                                              timeout=30, limits=httpx.Limits(
                                                  max_connections=20))
        elif client == "httpx":
            self.http = httpx.AsyncClient(timeout=None, limits=httpx.Limits(
                max_connections=None, max_keepalive_connections=0))

    async def sessions(self, n: int) -> list[str]:
        """Session ids for ``n`` WebSocket streams; created over REST first when the
        contender needs that (ADK's /run_live), outside every timed part."""
        ids = [uuid.uuid4().hex for _ in range(n)]
        contender = self.contender
        if self.rest is None or not isinstance(contender, WsContender) \
                or contender.session_path is None:
            return ids
        path = contender.session_path
        rest = self.rest

        async def create(session_id: str) -> None:
            response = await rest.post(path(session_id), json={})
            response.raise_for_status()

        async with asyncio.timeout(120):
            for i in range(0, n, 100):
                await asyncio.gather(*[create(x) for x in ids[i:i + 100]])
        return ids

    async def stream(self, prompt: str, *, keep_stamps: bool = False,
                     limit_s: float = 120.0, session_id: str | None = None,
                     tool: bool = False, phases: WsPhases | None = None) -> StreamResult:
        contender = self.contender
        if isinstance(contender, WsContender):
            if session_id is None:
                session_id = (await self.sessions(1))[0]
            return await ws_stream(HOST, self.server.port, contender, prompt,
                                   session_id=session_id, keep_stamps=keep_stamps,
                                   limit_s=limit_s, turns=contender.tool_turns if tool else 1,
                                   compression=self.ws_compression, phases=phases)
        if self.http is not None:
            return await httpx_stream(self.http, f"http://{HOST}:{self.server.port}",
                                      contender, prompt, keep_stamps=keep_stamps,
                                      limit_s=limit_s)
        return await raw_stream(HOST, self.server.port, contender, prompt,
                                keep_stamps=keep_stamps, limit_s=limit_s)

    async def close(self) -> None:
        for client in (self.http, self.rest):
            if client is not None:
                await client.aclose()


def _single_row(r: StreamResult, tokens: int) -> dict[str, Any]:
    gaps = [b - a for a, b in itertools.pairwise(r.stamps)]
    return {"ok": r.complete(tokens), "duration": r.duration, "ttfc": r.ttfc, "ttft": r.ttft,
            "connect": r.connect, "frames": r.frames, "token_frames": r.token_frames,
            "gap_p50": pct(gaps, 0.5), "gap_p99": pct(gaps, 0.99), "error": r.error}


def summarize_single(runs: list[dict[str, Any]], tokens: int) -> dict[str, Any]:
    ok = [r for r in runs if r["ok"]]
    return {
        "runs": runs,
        "ok_runs": len(ok),
        "duration_ms": med([r["duration"] * 1e3 for r in ok]),
        "frames": med([r["frames"] for r in ok]),
        "frames_per_s": med([r["frames"] / r["duration"] for r in ok]),
        "tokens_per_s": med([tokens / r["duration"] for r in ok]),
        "ttfc_ms": med([r["ttfc"] * 1e3 for r in ok if r["ttfc"] is not None]),
        "ttft_ms": med([r["ttft"] * 1e3 for r in ok if r["ttft"] is not None]),
        "connect_ms": med([r["connect"] * 1e3 for r in ok if r.get("connect") is not None]),
        "gap_p50_us": med([r["gap_p50"] * 1e6 for r in ok]),
        "gap_p99_us": med([r["gap_p99"] * 1e6 for r in ok]),
    }


async def cpu_batch(d: Driver, plan: Plan) -> dict[str, Any]:
    sessions = await d.sessions(plan.cpu_batch)
    cpu0, ccpu0, wall0 = d.server.cpu(), time.process_time(), time.perf_counter()
    frames = streams = 0
    for session_id in sessions:
        r = await d.stream(f"bench {plan.tokens}", limit_s=60, session_id=session_id)
        frames += r.frames
        streams += r.complete(plan.tokens)
    return {"server_cpu": d.server.cpu() - cpu0, "client_cpu": time.process_time() - ccpu0,
            "wall": time.perf_counter() - wall0, "frames": frames, "streams": streams}


def summarize_cpu(batches: list[dict[str, Any]], plan: Plan) -> dict[str, Any]:
    good = [b for b in batches if b["streams"] == plan.cpu_batch and b["frames"]]
    return {
        "batches": batches,
        "cpu_us_per_frame": med([b["server_cpu"] / b["frames"] * 1e6 for b in good]),
        "cpu_ms_per_stream": med([b["server_cpu"] / b["streams"] * 1e3 for b in good]),
        "cpu_us_per_token": med([b["server_cpu"] / (b["streams"] * plan.tokens) * 1e6
                                 for b in good]),
        "client_cpu_us_per_frame": med([b["client_cpu"] / b["frames"] * 1e6 for b in good]),
    }


async def measure_level(d: Driver, plan: Plan, concurrency: int) -> dict[str, Any]:
    prompt = f"bench {plan.sweep_tokens}"
    sessions = await d.sessions(concurrency)
    cpu0, ccpu0 = d.server.cpu(), time.process_time()
    start = time.perf_counter()
    results = await asyncio.gather(*[
        d.stream(prompt, limit_s=plan.sweep_timeout, session_id=session_id)
        for session_id in sessions])
    wall = time.perf_counter() - start
    server_cpu, client_cpu = d.server.cpu() - cpu0, time.process_time() - ccpu0
    completed = [r for r in results if r.complete(plan.sweep_tokens)]
    frames = sum(r.frames for r in completed)
    errors: dict[str, int] = {}
    for r in results:
        if not r.complete(plan.sweep_tokens):
            key = r.error or (f"status {r.status}, {r.token_frames} text deltas, terminal "
                              f"marker {'seen' if r.done else 'missing'}")
            errors[key[:100]] = errors.get(key[:100], 0) + 1
    return {
        "concurrency": concurrency, "wall": wall, "completed": len(completed),
        "completion": len(completed) / concurrency,
        "tokens_per_s": len(completed) * plan.sweep_tokens / wall,
        "frames_per_s": frames / wall,
        "ttfc_p50_ms": med([r.ttfc * 1e3 for r in completed if r.ttfc is not None]),
        "server_cpu_util": server_cpu / wall, "client_cpu_util": client_cpu / wall,
        "errors": errors,
    }


def summarize_level(concurrency: int, runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "concurrency": concurrency, "reps": runs,
        "completion": min(r["completion"] for r in runs),
        "tokens_per_s": med([r["tokens_per_s"] for r in runs]),
        "frames_per_s": med([r["frames_per_s"] for r in runs]),
        "ttfc_p50_ms": med([r["ttfc_p50_ms"] for r in runs]),
        "server_cpu_util": med([r["server_cpu_util"] for r in runs]),
        "client_cpu_util": med([r["client_cpu_util"] for r in runs]),
        "wall": med([r["wall"] for r in runs]),
    }


async def measure_idle(name: str, plan: Plan, log_dir: Path) -> dict[str, Any]:
    """RSS growth per open SSE stream whose reply is still pending (slow model)."""
    contender = CONTENDERS[name]
    assert isinstance(contender, Contender)
    async with running(name, log_dir, token_delay=plan.idle_delay) as server:
        hold = asyncio.Event()
        tasks: list[asyncio.Task[StreamResult]] = []

        async def open_streams(n: int) -> int:
            events = [asyncio.Event() for _ in range(n)]
            tasks.extend(asyncio.create_task(raw_stream(
                HOST, server.port, contender, "bench 2", opened=e, hold=hold,
                limit_s=plan.idle_delay * 3)) for e in events)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(60):
                    await asyncio.gather(*[e.wait() for e in events])
            return sum(e.is_set() for e in events)

        try:
            await open_streams(5)  # pays lazy imports and first-run allocations
            await asyncio.sleep(plan.idle_settle)
            before = server.rss_kb()
            opened = await open_streams(plan.idle_streams)
            await asyncio.sleep(plan.idle_settle)
            after = server.rss_kb()
        finally:
            hold.set()
            await asyncio.gather(*tasks, return_exceptions=True)
        return {"streams": plan.idle_streams, "opened": opened, "rss_before_kb": before,
                "rss_after_kb": after,
                "kb_per_stream": (after - before) / opened if opened else float("nan")}


async def measure_idle_ws(name: str, plan: Plan, log_dir: Path,
                          compression: str | None) -> dict[str, Any]:
    """RSS growth per open idle WebSocket, read twice on the same connections: right
    after the handshake (nothing sent yet), then after each did one short turn and
    sits idle with its live run open (the state of a chat page between messages)."""
    contender = CONTENDERS[name]
    assert isinstance(contender, WsContender)
    n = plan.idle_streams
    async with running(name, log_dir) as server:
        d = Driver(server, contender, "raw", compression)
        go, release = asyncio.Event(), asyncio.Event()
        tasks: list[asyncio.Task[StreamResult]] = []

        async def all_set(events: list[asyncio.Event]) -> int:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(60):
                    await asyncio.gather(*[e.wait() for e in events])
            return sum(e.is_set() for e in events)

        try:
            for _ in range(5):  # pays lazy imports and first-run allocations
                await d.stream("bench 2", limit_s=30)
            await asyncio.sleep(plan.idle_settle)
            before = server.rss_kb()
            # ADK's /run_live needs its sessions first: created here, so they count.
            sessions = await d.sessions(n)
            phases = [WsPhases(go, release) for _ in range(n)]
            tasks.extend(asyncio.create_task(d.stream(
                "bench 2", session_id=session_id, phases=p, limit_s=120 + 4 * plan.idle_settle))
                for session_id, p in zip(sessions, phases, strict=True))
            connected = await all_set([p.connected for p in phases])
            await asyncio.sleep(plan.idle_settle)
            mid = server.rss_kb()
            go.set()
            turned = await all_set([p.turned for p in phases])
            await asyncio.sleep(plan.idle_settle)
            after = server.rss_kb()
        finally:
            go.set()
            release.set()
            results = await asyncio.gather(*tasks, return_exceptions=True)
            await d.close()
        complete = sum(isinstance(r, StreamResult) and r.complete(2) for r in results)
        return {"streams": n, "opened": connected, "turned": turned, "complete": complete,
                "rss_before_kb": before, "rss_connected_kb": mid, "rss_after_turn_kb": after,
                "kb_per_stream": (mid - before) / connected if connected else float("nan"),
                "kb_per_stream_after_turn":
                    (after - before) / turned if turned else float("nan")}


class Ceiling:
    """``Runner.run_async`` (or ``Runner.run_live``, ``live=True``) consumed in this
    process, interleaved with the servers."""

    def __init__(self, live: bool = False) -> None:
        from .ceiling import build_runner

        self.live = live
        self.runner = build_runner()

    async def turn(self, prompt: str) -> dict[str, Any]:
        from .ceiling import one_live_turn, one_turn

        return await (one_live_turn if self.live else one_turn)(self.runner, prompt)

    async def single(self, tokens: int) -> dict[str, Any]:
        turn = await self.turn(f"bench {tokens}")
        stamps = turn["stamps"]
        gaps = [b - a for a, b in itertools.pairwise(stamps)]
        ttfc = stamps[0] - turn["start"] if stamps else None
        return {"ok": len(stamps) > tokens, "duration": turn["end"] - turn["start"],
                "ttfc": ttfc, "ttft": ttfc, "frames": len(stamps), "token_frames": tokens,
                "gap_p50": pct(gaps, 0.5), "gap_p99": pct(gaps, 0.99), "error": None}

    async def batch(self, plan: Plan) -> dict[str, Any]:
        cpu0, wall0 = time.process_time(), time.perf_counter()
        frames = 0
        for _ in range(plan.cpu_batch):
            frames += len((await self.turn(f"bench {plan.tokens}"))["stamps"])
        return {"server_cpu": time.process_time() - cpu0, "client_cpu": 0.0,
                "wall": time.perf_counter() - wall0, "frames": frames,
                "streams": plan.cpu_batch}


CEILINGS = {"ceiling": False, "ceiling-live": True}


async def measure_all(names: list[str], plan: Plan, args: argparse.Namespace, log_dir: Path,
                      results: dict[str, Any]) -> None:
    """All servers up at once; every phase round-robins over the contenders (and the
    in-process ceilings), so slow drifts of this shared VM hit every row alike."""
    rows: dict[str, dict[str, Any]] = results["contenders"]
    ceilings: dict[str, Ceiling] = {}
    wanted = {"ceiling": any(isinstance(CONTENDERS[n], Contender) for n in names),
              "ceiling-live": any(isinstance(CONTENDERS[n], WsContender) for n in names)}
    for key, live in CEILINGS.items():
        if not wanted[key]:
            continue
        try:
            ceiling = Ceiling(live)
            for _ in range(3):
                await ceiling.turn("bench 20")
            ceilings[key] = ceiling
            results[key] = {"status": "measured"}
        except Exception as exc:
            results[key] = {"status": f"error: {type(exc).__name__}: {exc}"}
    servers: dict[str, Server] = {}
    drivers: dict[str, Driver] = {}
    try:
        for name in names:
            servers[name] = Server(name, log_dir=log_dir)
        for name, server in servers.items():
            try:
                rows[name] = {"status": "measured", "startup_s": await server.wait_ready()}
                d = drivers[name] = Driver(server, CONTENDERS[name], args.client,
                                           args.ws_compression)
                for _ in range(3):
                    await d.stream("bench 20", limit_s=60)
                await d.stream("What's the weather in Tokyo?", limit_s=60, tool=True)
                tool = await d.stream("What's the weather in Tokyo?", keep_stamps=True,
                                      limit_s=60, tool=True)
                rows[name]["tool_call"] = {"status": tool.status, "frames": tool.frames,
                                           "duration_ms": tool.duration * 1e3,
                                           "ok": tool.error is None
                                           and (tool.done or tool.clean_end),
                                           "error": tool.error}
                rows[name]["rss_after_warmup_kb"] = server.rss_kb()
            except Exception as exc:
                rows[name] = {"status": f"error: {type(exc).__name__}: {exc}"}
                drivers.pop(name, None)

        async def each_ceiling(phase: str, fn: Any) -> None:
            for key, ceiling in list(ceilings.items()):
                try:
                    await fn(key, ceiling)
                except Exception as exc:
                    results[key] = {"status": f"error in {phase}: {type(exc).__name__}: {exc}"}
                    ceilings.pop(key)
                    log(f"{key}: error {exc!r}")

        async def each(phase: str, fn: Any) -> None:
            for name, d in list(drivers.items()):
                try:
                    await fn(name, d)
                except Exception as exc:
                    rows[name] = {"status": f"error in {phase}: {type(exc).__name__}: {exc}"}
                    drivers.pop(name, None)
                    log(f"{name}: error {exc!r}")

        log(f"single stream, {plan.single_runs} interleaved rounds")
        single: dict[str, list[dict[str, Any]]] = {n: [] for n in [*drivers, *ceilings]}
        for _ in range(plan.single_runs):

            async def one_ceiling(key: str, ceiling: Ceiling) -> None:
                single[key].append(await ceiling.single(plan.tokens))

            await each_ceiling("single", one_ceiling)

            async def one(name: str, d: Driver) -> None:
                r = await d.stream(f"bench {plan.tokens}", keep_stamps=True, limit_s=60)
                single[name].append(_single_row(r, plan.tokens))

            await each("single", one)
        log(f"server CPU, {plan.cpu_batches} interleaved batches")
        cpu: dict[str, list[dict[str, Any]]] = {n: [] for n in [*drivers, *ceilings]}
        for _ in range(plan.cpu_batches):

            async def batch_ceiling(key: str, ceiling: Ceiling) -> None:
                cpu[key].append(await ceiling.batch(plan))

            await each_ceiling("cpu", batch_ceiling)

            async def batch(name: str, d: Driver) -> None:
                cpu[name].append(await cpu_batch(d, plan))

            await each("cpu", batch)
        for key in ceilings:
            results[key]["single"] = summarize_single(single[key], plan.tokens)
            results[key]["cpu"] = summarize_cpu(cpu[key], plan)
        for name, d in drivers.items():
            rows[name]["single"] = summarize_single(single[name], plan.tokens)
            rows[name]["cpu"] = summarize_cpu(cpu[name], plan)
            rows[name]["peak_rss_single_kb"] = d.server.hwm_kb()
        log("concurrency sweep, reps interleaved")
        for concurrency, reps in plan.sweep:
            runs: dict[str, list[dict[str, Any]]] = {n: [] for n in drivers}
            for _ in range(reps):

                async def level(name: str, d: Driver, c: int = concurrency,
                                runs: dict[str, list[dict[str, Any]]] = runs) -> None:
                    if runs[name] and runs[name][-1]["completion"] < 0.5:
                        return  # failing at this level: more reps only burn the budget
                    run = await measure_level(d, plan, c)
                    runs[name].append(run)
                    log(f"  {name} c={c}: {run['completed']}/{c} in {run['wall']:.2f}s, "
                        f"{run['tokens_per_s']:.0f} tok/s, client cpu "
                        f"{run['client_cpu_util']:.0%}")
                    await asyncio.sleep(plan.pause)

                await each("sweep", level)
            for name in drivers:
                if runs.get(name):
                    rows[name].setdefault("sweep", []).append(
                        summarize_level(concurrency, runs[name]))
        for name, d in drivers.items():
            rows[name]["peak_rss_sweep_kb"] = d.server.hwm_kb()
    finally:
        for d in drivers.values():
            await d.close()
        for server in servers.values():
            server.stop()
    measured = [n for n in names if rows.get(n, {}).get("status") == "measured"]
    log(f"idle streams/sockets: {', '.join(measured)} (fresh servers, side by side)")

    async def idle(name: str) -> None:
        try:
            if isinstance(CONTENDERS[name], WsContender):
                rows[name]["idle"] = await measure_idle_ws(name, plan, log_dir,
                                                           args.ws_compression)
            else:
                rows[name]["idle"] = await measure_idle(name, plan, log_dir)
        except Exception as exc:
            rows[name]["idle"] = {"error": f"{type(exc).__name__}: {exc}"}

    # RSS is per process, so the servers can be measured at the same time.
    await asyncio.gather(*[idle(name) for name in measured])


async def _get(port: int, path: str) -> None:
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(f"GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n".encode())
    await asyncio.wait_for(reader.read(), 30)
    writer.close()


async def run_profile(name: str, streams: int, plan: Plan, args: argparse.Namespace,
                      log_dir: Path) -> dict[str, Any]:
    """cProfile of one adk-asgi server process (SSE or live) over ``streams``
    sequential "bench N" streams, switched on after the warm-up."""
    from .profile import summarize

    path = args.out / f"{name}.prof"
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    async with running(name, log_dir, profile=path) as server:
        d = Driver(server, CONTENDERS[name], "raw", args.ws_compression)
        try:
            for _ in range(3):
                await d.stream("bench 20", limit_s=60)
            sessions = await d.sessions(streams)
            await _get(server.port, "/__profile/start")
            for session_id in sessions:
                await d.stream(f"bench {plan.tokens}", limit_s=120, session_id=session_id)
            await _get(server.port, "/__profile/stop")
        finally:
            await d.close()
    return summarize(path, streams=streams, tokens=plan.tokens)


def machine_info() -> dict[str, Any]:
    model = "unknown"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    versions: dict[str, str] = {}
    from importlib.metadata import PackageNotFoundError, version

    for pkg in ("adk-asgi", "google-adk", "google-genai", "ag-ui-adk", "ag-ui-protocol",
                "uvicorn", "uvloop", "httptools", "starlette", "sse-starlette", "fastapi",
                "msgspec", "pydantic", "httpx", "psutil"):
        try:
            versions[pkg] = version(pkg)
        except PackageNotFoundError:
            versions[pkg] = "not installed"
    return {"nproc": os.cpu_count(), "cpu_model": model,
            "python": sys.version.split()[0], "platform": sys.platform,
            "mem_total_gb": round(psutil.virtual_memory().total / 2**30, 1),
            "kernel": os.uname().release, "versions": versions,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}


async def main_async(args: argparse.Namespace, plan: Plan) -> dict[str, Any]:
    log_dir: Path = args.out / "logs"
    results: dict[str, Any] = {"plan": asdict(plan), "machine": machine_info(),
                               "command": " ".join(["python -m benchmarks", *sys.argv[1:]]),
                               "client": args.client, "ws_compression": args.ws_compression,
                               "contenders": {}}
    started = time.perf_counter()
    names: list[str] = []
    for name in args.contenders:
        if importlib.util.find_spec(PEER_MODULES[name].split(".")[0]) is None:
            results["contenders"][name] = {"status": "skipped: not installed"}
            log(f"{name}: skipped (not installed)")
        else:
            names.append(name)
    log(f"starting {', '.join(names)}; ceilings in this process")
    await measure_all(names, plan, args, log_dir, results)
    if not args.skip_micro:
        log("microbenchmarks")
        from .micro import run as run_micro

        results["micro"] = run_micro(plan.micro_quick)
    streams = plan.profile_streams if args.profile_streams is None else args.profile_streams
    for key, name in (("profile", "adk-asgi"), ("profile-live", "adk-asgi-live")):
        if not streams or args.skip_profile or name not in names:
            continue
        log(f"profile (cProfile, {name}, {streams} streams)")
        try:
            results[key] = await run_profile(name, streams, plan, args, log_dir)
        except Exception as exc:
            results[key] = {"status": f"error: {type(exc).__name__}: {exc}"}
    results["elapsed_s"] = time.perf_counter() - started
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="CI smoke run (< 2 min): fewer runs, sweep 1 and 50")
    parser.add_argument("--out", type=Path, default=None,
                        help="result directory (default benchmarks/results/<mode>)")
    parser.add_argument("--client", choices=("raw", "httpx"), default="raw")
    parser.add_argument("--contenders", nargs="+", choices=tuple(CONTENDERS),
                        default=list(DEFAULT_CONTENDERS),
                        help="default: all but adk-asgi-live-b (protocol B, opt-in)")
    parser.add_argument("--skip-micro", action="store_true")
    parser.add_argument("--skip-profile", action="store_true")
    parser.add_argument("--profile-streams", type=int, default=None,
                        help="streams per cProfile run (default: 30 full, 0 = none quick)")
    parser.add_argument("--ws-compression", choices=("deflate", "none"), default="deflate",
                        help="WebSocket client: offer permessage-deflate like browsers "
                             "(default) or not")
    parser.add_argument("--no-report", action="store_true",
                        help="only write results.json")
    args = parser.parse_args(argv)
    if args.ws_compression == "none":
        args.ws_compression = None
    plan = QUICK if args.quick else FULL
    args.out = args.out or Path(__file__).parent / "results" / plan.mode
    args.out.mkdir(parents=True, exist_ok=True)
    limit = raise_fd_limit()
    if limit < 4 * max(c for c, _ in plan.sweep) + 256:
        log(f"warning: file descriptor limit {limit} may be too low for the sweep")
    try:
        import uvloop  # same event loop as the uvicorn servers (and the in-process ceiling)
    except ImportError:
        results = asyncio.run(main_async(args, plan))
    else:
        results = uvloop.run(main_async(args, plan))
    (args.out / "results.json").write_text(json.dumps(results, indent=1, default=str))
    if not args.no_report:
        from .report import write_report

        write_report(results, args.out)
    log(f"done in {results['elapsed_s']:.0f}s; results in {args.out}")
    return 0
