"""The measurements of one row: a single stream, a sweep level, idle memory.

Every function takes a ``Proc`` (the row's process: CPU, RSS, GC counters) and its
driver, and returns plain dicts for ``results.json``; ``summarize_*`` turn repetitions
into medians. Server CPU is the process's user+system time (psutil) over the phase,
divided by the tokens the client received.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import statistics
import time
from pathlib import Path
from typing import Any

from .client import Contender, StreamResult, WsContender, WsPhases, raw_stream
from .procs import HOST, Driver, Proc, StreamDriver, running
from .rows import Row


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def med(values: list[float]) -> float:
    values = [v for v in values if v == v]
    return statistics.median(values) if values else float("nan")


# -- single stream --------------------------------------------------------------------


async def single(d: Driver, tokens: int) -> dict[str, Any]:
    r = await d.stream(f"bench {tokens}", keep_stamps=True, limit_s=60)
    gaps = [b - a for a, b in itertools.pairwise(r.stamps)]
    return {
        "ok": r.complete(tokens),
        "duration": r.duration,
        "ttfc": r.ttfc,
        "ttft": r.ttft,
        "connect": r.connect,
        "frames": r.frames,
        "token_frames": r.token_frames,
        "gap_p50": pct(gaps, 0.5),
        "gap_p99": pct(gaps, 0.99),
        "error": r.error,
    }


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


# -- sweep levels ---------------------------------------------------------------------


def _gc_delta(before: dict[str, Any] | None, after: dict[str, Any] | None) -> dict[str, Any]:
    if before is None or after is None:
        return {}
    out: dict[str, Any] = {
        "collections": [
            a["collections"] - b["collections"]
            for a, b in zip(after["gc_stats"], before["gc_stats"], strict=True)
        ]
    }
    if after.get("gc_s") is not None and before.get("gc_s") is not None:
        out["seconds"] = [a - b for a, b in zip(after["gc_s"], before["gc_s"], strict=True)]
    return out


async def level(
    proc: Proc,
    d: Driver,
    tokens: int,
    concurrency: int,
    waves: int,
    limit_s: float,
    gc: bool = True,
) -> dict[str, Any]:
    """``waves`` rounds of ``concurrency`` simultaneous "bench ``tokens``" streams."""
    prompt = f"bench {tokens}"
    sessions = await d.sessions(concurrency * waves)
    gc0 = await proc.gc_stats() if gc else None
    cpu0, sys0, ccpu0 = proc.cpu(), proc.cpu_sys(), time.process_time()
    start = time.perf_counter()
    results = await d.waves(prompt, concurrency, sessions, limit_s)
    wall = time.perf_counter() - start
    server_cpu, client_cpu = proc.cpu() - cpu0, time.process_time() - ccpu0
    server_sys = proc.cpu_sys() - sys0
    gc1 = await proc.gc_stats() if gc else None
    streams = len(results)
    completed = [r for r in results if r.complete(tokens)]
    delivered = sum(r.received(tokens) for r in results)
    errors: dict[str, int] = {}
    for r in results:
        if not r.complete(tokens):
            key = r.error or (
                f"status {r.status}, {r.token_frames} text deltas, terminal "
                f"marker {'seen' if r.done else 'missing'}"
            )
            errors[key[:100]] = errors.get(key[:100], 0) + 1
    gc_delta = _gc_delta(gc0, gc1)
    out = {
        "tokens": tokens,
        "concurrency": concurrency,
        "waves": waves,
        "streams": streams,
        "wall": wall,
        "completed": len(completed),
        "completion": len(completed) / streams,
        "delivered_tokens": delivered,
        "tokens_per_s": delivered / wall,
        "frames_per_s": sum(r.frames for r in results) / wall,
        "ttfb_p50_ms": med([r.ttfb * 1e3 for r in completed if r.ttfb is not None]),
        "ttfc_p50_ms": med([r.ttfc * 1e3 for r in completed if r.ttfc is not None]),
        "ttft_p50_ms": med([r.ttft * 1e3 for r in completed if r.ttft is not None]),
        "server_cpu_s": server_cpu,
        "cpu_us_per_token": server_cpu / delivered * 1e6 if delivered else float("nan"),
        "sys_us_per_token": server_sys / delivered * 1e6 if delivered else float("nan"),
        "server_cpu_util": server_cpu / wall,
        "client_cpu_util": client_cpu / wall,
        "rss_after_kb": proc.rss_kb(),
        "gc": gc_delta,
        "errors": errors,
    }
    if delivered and "seconds" in gc_delta:
        out["gc_us_per_token"] = sum(gc_delta["seconds"]) / delivered * 1e6
    return out


def summarize_level(runs: list[dict[str, Any]], hwm_kb: int) -> dict[str, Any]:
    first = runs[0]
    gc_runs = [r for r in runs if "gc_us_per_token" in r]
    delivered = [r["delivered_tokens"] for r in runs if r["delivered_tokens"]]
    return {
        "tokens": first["tokens"],
        "concurrency": first["concurrency"],
        "waves": first["waves"],
        "reps": runs,
        "completion": min(r["completion"] for r in runs),
        "tokens_per_s": med([r["tokens_per_s"] for r in runs]),
        "frames_per_s": med([r["frames_per_s"] for r in runs]),
        "cpu_us_per_token": med([r["cpu_us_per_token"] for r in runs]),
        "sys_us_per_token": med([r.get("sys_us_per_token", float("nan")) for r in runs]),
        "ttfb_p50_ms": med([r.get("ttfb_p50_ms", float("nan")) for r in runs]),
        "ttfc_p50_ms": med([r["ttfc_p50_ms"] for r in runs]),
        "ttft_p50_ms": med([r["ttft_p50_ms"] for r in runs]),
        "server_cpu_util": med([r["server_cpu_util"] for r in runs]),
        "client_cpu_util": med([r["client_cpu_util"] for r in runs]),
        "wall": med([r["wall"] for r in runs]),
        "gc_us_per_token": med([r["gc_us_per_token"] for r in gc_runs]) if gc_runs else None,
        # Collections of generations 0/1/2 per 1000 tokens (medians).
        "gc_per_ktoken": [
            med(
                [
                    r["gc"]["collections"][g] / r["delivered_tokens"] * 1e3
                    for r in runs
                    if r.get("gc") and r["delivered_tokens"]
                ]
            )
            for g in range(3)
        ]
        if delivered
        else None,
        "rss_after_kb": runs[-1]["rss_after_kb"],
        "peak_rss_kb": hwm_kb,
    }


# -- idle memory ----------------------------------------------------------------------


async def idle_sse(
    row: Row, streams: int, delay: float, settle: float, log_dir: Path
) -> dict[str, Any]:
    """RSS growth per open SSE stream whose reply is still pending (slow model)."""
    async with running(row, log_dir, token_delay=delay) as proc:
        d = StreamDriver(proc)
        contender = d.contender
        assert isinstance(contender, Contender)
        hold = asyncio.Event()
        tasks: list[asyncio.Task[StreamResult]] = []

        async def open_streams(n: int) -> int:
            events = [asyncio.Event() for _ in range(n)]
            tasks.extend(
                asyncio.create_task(
                    raw_stream(
                        HOST,
                        proc.port,
                        contender,
                        "bench 2",
                        opened=e,
                        hold=hold,
                        limit_s=delay * 3,
                    )
                )
                for e in events
            )
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(60):
                    await asyncio.gather(*[e.wait() for e in events])
            return sum(e.is_set() for e in events)

        try:
            await open_streams(5)  # pays lazy imports and first-run allocations
            proc.warm()
            await asyncio.sleep(settle)
            before = proc.rss_kb()
            opened = await open_streams(streams)
            await asyncio.sleep(settle)
            after = proc.rss_kb()
        finally:
            hold.set()
            await asyncio.gather(*tasks, return_exceptions=True)
            await d.close()
        return {
            "streams": streams,
            "opened": opened,
            "rss_before_kb": before,
            "rss_after_kb": after,
            "kb_per_stream": (after - before) / opened if opened else float("nan"),
        }


async def idle_ws(
    row: Row, n: int, settle: float, log_dir: Path, compression: str | None
) -> dict[str, Any]:
    """RSS growth per open idle WebSocket, read twice on the same connections: right
    after the handshake (nothing sent yet), then after each did one short turn and
    sits idle with its live run open (the state of a chat page between messages)."""
    async with running(row, log_dir) as proc:
        d = StreamDriver(proc, "raw", compression)
        assert isinstance(d.contender, WsContender)
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
            proc.warm()
            await asyncio.sleep(settle)
            before = proc.rss_kb()
            # ADK's /run_live needs its sessions first: created here, so they count.
            sessions = await d.sessions(n)
            phases = [WsPhases(go, release) for _ in range(n)]
            tasks.extend(
                asyncio.create_task(
                    d.stream("bench 2", session_id=session_id, phases=p, limit_s=120 + 4 * settle)
                )
                for session_id, p in zip(sessions, phases, strict=True)
            )
            connected = await all_set([p.connected for p in phases])
            await asyncio.sleep(settle)
            mid = proc.rss_kb()
            go.set()
            turned = await all_set([p.turned for p in phases])
            await asyncio.sleep(settle)
            after = proc.rss_kb()
        finally:
            go.set()
            release.set()
            results = await asyncio.gather(*tasks, return_exceptions=True)
            await d.close()
        complete = sum(isinstance(r, StreamResult) and r.complete(2) for r in results)
        return {
            "streams": n,
            "opened": connected,
            "turned": turned,
            "complete": complete,
            "rss_before_kb": before,
            "rss_connected_kb": mid,
            "rss_after_turn_kb": after,
            "kb_per_stream": (mid - before) / connected if connected else float("nan"),
            "kb_per_stream_after_turn": (after - before) / turned if turned else float("nan"),
        }


async def tool_call(d: Driver) -> dict[str, Any]:
    """One tool-call turn ("What's the weather in Tokyo?") after a first one."""
    prompt = "What's the weather in Tokyo?"
    await d.stream(prompt, limit_s=60, tool=True)
    r = await d.stream(prompt, keep_stamps=True, limit_s=60, tool=True)
    return {
        "status": r.status,
        "frames": r.frames,
        "duration_ms": r.duration * 1e3,
        "ok": r.error is None and (r.done or r.clean_end),
        "error": r.error,
    }
