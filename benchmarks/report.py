"""Markdown report (and a PNG chart of the concurrency sweep) from ``results.json``."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

NAMES = ("adk-asgi", "adk-api-server", "ag-ui-adk")
LABELS = {
    "ceiling": "ceiling (in-process `Runner.run_async`)",
    "adk-asgi": "adk-asgi SSE (`POST /api/chat`)",
    "adk-api-server": "ADK api_server (`POST /run_sse`, streaming)",
    "ag-ui-adk": "ag-ui-adk (FastAPI endpoint, SSE)",
}


def _f(value: Any, digits: int = 0, suffix: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}f}{suffix}"


def _get(d: dict[str, Any] | None, *keys: str) -> Any:
    cur: Any = d
    for key in keys:
        if not isinstance(cur, dict) or key not in cur:
            return None
        cur = cur[key]
    return cur


def _ratio(a: Any, b: Any) -> float | None:
    if not a or not b or any(isinstance(x, float) and math.isnan(x) for x in (a, b)):
        return None
    return float(a) / float(b)


def _measured(results: dict[str, Any], name: str) -> dict[str, Any] | None:
    row = results.get("contenders", {}).get(name)
    return row if row and row.get("status") == "measured" else None


def _level(row: dict[str, Any] | None, concurrency: int) -> dict[str, Any] | None:
    for level in (row or {}).get("sweep", []):
        if level["concurrency"] == concurrency:
            return dict(level)
    return None


def targets(results: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(target, verdict, numbers)."""
    out: list[tuple[str, str, str]] = []
    ours = _measured(results, "adk-asgi")
    ceiling = results.get("ceiling", {})
    c_ours = _get(ours, "cpu", "cpu_ms_per_stream")
    c_ceil = _get(ceiling, "cpu", "cpu_ms_per_stream")
    r = _ratio(c_ours, c_ceil)
    if r is not None:
        out.append(("adk-asgi SSE adds ≤ 10 % server CPU per chunk over the in-process ceiling",
                    "met" if r <= 1.10 else "not met",
                    f"{c_ours:.1f} ms vs {c_ceil:.1f} ms CPU per {results['plan']['tokens']}-token "
                    f"stream: +{(r - 1) * 100:.0f} % "
                    f"({_get(ours, 'cpu', 'cpu_us_per_frame'):.0f} µs per SSE frame vs "
                    f"{_get(ceiling, 'cpu', 'cpu_us_per_frame'):.0f} µs per ADK event)"))
    for peer in ("adk-api-server", "ag-ui-adk"):
        row = _measured(results, peer)
        if row is None:
            status = results.get("contenders", {}).get(peer, {}).get("status", "not run")
            out.append((f"single-stream throughput ≥ 1.5× {peer}", "not measured", status))
            out.append((f"200 concurrent streams ≥ 2× {peer}", "not measured", status))
            continue
        a, b = _get(ours, "single", "tokens_per_s"), _get(row, "single", "tokens_per_s")
        r = _ratio(a, b)
        if r is not None:
            out.append((f"single-stream throughput ≥ 1.5× {peer}",
                        "met" if r >= 1.5 else "not met",
                        f"{a:,.0f} vs {b:,.0f} tokens/s = {r:.2f}×"))
        la, lb = _level(ours, 200), _level(row, 200)
        if la and lb:
            r = _ratio(la["tokens_per_s"], lb["tokens_per_s"])
            out.append((f"200 concurrent streams ≥ 2× {peer}",
                        "met" if r is not None and r >= 2 else "not met",
                        f"{la['tokens_per_s']:,.0f} vs {lb['tokens_per_s']:,.0f} tokens/s"
                        + (f" = {r:.2f}×" if r else "")))
        else:
            out.append((f"200 concurrent streams ≥ 2× {peer}", "not measured",
                        "level 200 not in this run (quick mode)"))
    l1000 = _level(ours, 1000)
    if l1000:
        out.append(("1000 concurrent SSE streams all complete (2 cores)",
                    "met" if l1000["completion"] >= 1 else "not met",
                    f"worst rep {l1000['completion']:.1%} complete, median wall "
                    f"{l1000['wall']:.1f} s"))
    else:
        out.append(("1000 concurrent SSE streams all complete (2 cores)", "not measured",
                    "level 1000 not in this run (quick mode)"))
    enc = _get(results, "micro", "encoding")
    if enc:
        worst = max(v["msgspec sse_frame"] for v in enc.values())
        typical = enc["text-delta"]["msgspec sse_frame"]
        out.append(("typical chunk encoding ≤ 1 µs", "met" if typical <= 1000 else "not met",
                    f"text-delta {typical:.0f} ns; slowest of the three typical chunks "
                    f"{worst:.0f} ns"))
    return out


def chart(results: dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name in NAMES:
        row = _measured(results, name)
        if not row:
            continue
        levels = row.get("sweep", [])
        xs = [lv["concurrency"] for lv in levels]
        ax1.plot(xs, [lv["tokens_per_s"] for lv in levels], marker="o", label=name)
        ax2.plot(xs, [lv["completion"] * 100 for lv in levels], marker="o", label=name)
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_xlabel("simultaneous streams")
        ax.grid(True, alpha=0.3)
    ax1.set_ylabel("total tokens/s (median of reps)")
    ax1.set_ylim(bottom=0)
    ax2.set_ylabel("completed streams (%)")
    ax2.set_ylim(0, 105)
    if ax1.get_lines():
        ax1.legend()
    tokens = results["plan"]["sweep_tokens"]
    fig.suptitle(f"Concurrency sweep: every stream 'bench {tokens}' (demo agent, 2 cores)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def render(results: dict[str, Any], chart_name: str | None) -> str:
    plan = results["plan"]
    m = results["machine"]
    lines: list[str] = []
    add = lines.append
    add(f"# adk-asgi benchmark results ({plan['mode']} mode)\n")
    add(f"Command: `{results['command']}` (from the repository root, with the `bench` extra "
        f"installed). Run took {results.get('elapsed_s', 0):.0f} s, finished "
        f"{m['date']}.\n")
    add("## Machine\n")
    add(f"- {m['nproc']} cores: {m['cpu_model']}; {m['mem_total_gb']} GiB; Linux "
        f"{m['kernel']} (a VM; other jobs may share the host, so expect noise)")
    add(f"- Python {m['python']}; "
        + ", ".join(f"{k} {v}" for k, v in m["versions"].items()))
    add(f"- client: {results['client']} asyncio HTTP/1.1 streams in one process; every "
        "server a separate `python -m benchmarks.serve <contender>` process under uvicorn "
        "(uvloop + httptools, access log off), loopback TCP\n")
    add("## What is measured\n")
    add(f"Same agent everywhere: `adk_asgi.demo.build_demo_agent(token_delay=0)` with its 7 "
        f"tools, in-memory sessions, a new chat/session per stream. A stream is the reply to "
        f"\"bench {plan['tokens']}\" (exactly {plan['tokens']} streamed tokens, one partial "
        f"ADK event each). Contenders send different numbers of SSE frames for the same reply "
        f"(adk-asgi: tokens + 7 UI chunks incl. `[DONE]`; api_server: tokens + 1 events; "
        f"ag-ui-adk: tokens + 5 events), so **throughput is compared in tokens/s** (same "
        f"work); frames/s is shown too.\n")
    add(f"- single stream: {plan['single_runs']} sequential runs, medians; time to first "
        "chunk (any frame) and to first token (first text-delta frame) from the request's "
        "first byte; gaps between consecutive frames as read by "
        "the client (frames arriving in one read count as a 0 gap)")
    add(f"- server CPU: psutil user+system CPU time of the server process before/after "
        f"{plan['cpu_batches']} batches of {plan['cpu_batch']} sequential streams; median of "
        "the batches (the ceiling uses `time.process_time()` in its own process, same "
        "batches)")
    add(f"- concurrency sweep: N streams of \"bench {plan['sweep_tokens']}\" started at once, "
        f"levels × reps = {plan['sweep']}, each rep bounded by {plan['sweep_timeout']:.0f} s; "
        "completion = 200 + all tokens + the terminal marker/clean end; throughput = "
        "completed tokens / wall time")
    add(f"- idle memory: a second server with `--token-delay {plan['idle_delay']:.0f}`, "
        f"{plan['idle_streams']} streams opened and held (headers received, run sleeping in "
        "the model), RSS delta / streams (after 5 warm-up streams)\n")
    # single stream
    add("## Single stream\n")
    add("| contender | tokens/s | frames/s | frames/stream | stream ms | first chunk ms "
        "| first token ms | gap p50 µs | gap p99 µs | server CPU ms/stream | CPU µs/frame "
        "| peak RSS MB |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows: list[tuple[str, dict[str, Any]]] = [("ceiling", results.get("ceiling", {}))]
    rows += [(n, results.get("contenders", {}).get(n, {"status": "not run"})) for n in NAMES]
    for name, row in rows:
        if row.get("status") != "measured":
            add(f"| {LABELS[name]} | {row.get('status', 'not run')} ||||||||||| ")
            continue
        s, c = row.get("single", {}), row.get("cpu", {})
        peak = row.get("peak_rss_single_kb")
        add(f"| {LABELS[name]} | {_f(s.get('tokens_per_s'))} | {_f(s.get('frames_per_s'))} "
            f"| {_f(s.get('frames'))} | {_f(s.get('duration_ms'), 1)} | {_f(s.get('ttfc_ms'), 2)} "
            f"| {_f(s.get('ttft_ms'), 2)} | {_f(s.get('gap_p50_us'))} | {_f(s.get('gap_p99_us'))} "
            f"| {_f(c.get('cpu_ms_per_stream'), 1)} | {_f(c.get('cpu_us_per_frame'))} "
            f"| {_f(peak / 1024 if peak else None, 0)} |")
    add("")
    add("WebSocket rows — adk-asgi live vs ADK `/run_live`: **not measured: live mode not "
        "shipped in this build**.\n")
    # ratios
    ours = _measured(results, "adk-asgi")
    add("## Ratios (adk-asgi ÷ contender, medians)\n")
    add("| contender | single-stream tokens/s | server CPU per stream (lower is better) "
        "| first token | " + " | ".join(f"sweep c={c}" for c, _ in plan["sweep"]) + " |")
    add("|---|---:|---:|---:|" + "---:|" * len(plan["sweep"]))
    for name, row in rows:
        if name == "adk-asgi" or row.get("status") != "measured" or not ours:
            continue
        cells = [
            _f(_ratio(_get(ours, "single", "tokens_per_s"), _get(row, "single", "tokens_per_s")),
               2, "×"),
            _f(_ratio(_get(ours, "cpu", "cpu_ms_per_stream"),
                      _get(row, "cpu", "cpu_ms_per_stream")), 2, "×"),
            _f(_ratio(_get(ours, "single", "ttft_ms"), _get(row, "single", "ttft_ms")), 2, "×"),
        ]
        for c, _ in plan["sweep"]:
            la, lb = _level(ours, c), _level(row, c)
            cells.append(_f(_ratio(la and la["tokens_per_s"], lb and lb["tokens_per_s"]), 2,
                            "×") if name != "ceiling" else "–")
        add(f"| {LABELS[name]} | " + " | ".join(cells) + " |")
    add("")
    # sweep
    add("## Concurrency sweep\n")
    add(f"Every stream: \"bench {plan['sweep_tokens']}\". Medians over reps; completion is "
        "the worst rep.\n")
    add("| contender | streams | completed | tokens/s | frames/s | first chunk p50 ms "
        "| wall s | server CPU | client CPU |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in NAMES:
        row = _measured(results, name)
        if not row:
            status = results.get("contenders", {}).get(name, {}).get("status", "not run")
            add(f"| {name} | {status} |||||||| ")
            continue
        for lv in row.get("sweep", []):
            add(f"| {name} | {lv['concurrency']} | {lv['completion']:.1%} "
                f"| {_f(lv['tokens_per_s'])} | {_f(lv['frames_per_s'])} "
                f"| {_f(lv['ttfc_p50_ms'], 1)} | {_f(lv['wall'], 2)} "
                f"| {lv['server_cpu_util']:.0%} | {lv['client_cpu_util']:.0%} |")
    add("")
    if chart_name:
        add(f"![concurrency sweep]({chart_name})\n")
    add("Server/client CPU are CPU seconds per wall second (100 % = one core saturated).\n")
    # memory
    add("## Memory\n")
    add("| contender | RSS after warm-up MB | peak RSS, single-stream phase MB "
        "| peak RSS after sweep MB | idle streams open | KiB per open idle stream |")
    add("|---|---:|---:|---:|---:|---:|")
    for name in NAMES:
        row = _measured(results, name)
        if not row:
            continue
        idle = row.get("idle", {})
        add(f"| {name} | {_f(row.get('rss_after_warmup_kb', 0) / 1024)} "
            f"| {_f(row.get('peak_rss_single_kb', 0) / 1024)} "
            f"| {_f(row.get('peak_rss_sweep_kb', 0) / 1024)} "
            f"| {idle.get('opened', '–')}/{idle.get('streams', '–')} "
            f"| {_f(idle.get('kb_per_stream'), 1)} |")
    add("")
    # tool call smoke
    add("Tool-call turn (\"What's the weather in Tokyo?\", one request, after warm-up): "
        + "; ".join(f"{n} {_f(_get(_measured(results, n), 'tool_call', 'duration_ms'), 1)} ms "
                    f"/ {_get(_measured(results, n), 'tool_call', 'frames')} frames"
                    for n in NAMES if _measured(results, n)) + "\n")
    # micro
    micro = results.get("micro")
    if micro:
        add("## Microbenchmarks (ns per call, median of repeats)\n")
        add("| chunk | bytes | msgspec `sse_frame` | `json.dumps(dict)` framed "
            "| pydantic `model_dump_json` framed |")
        add("|---|---:|---:|---:|---:|")
        for chunk, v in micro["encoding"].items():
            add(f"| {chunk} | {v['bytes']} | {_f(v['msgspec sse_frame'])} "
                f"| {_f(v['json.dumps(dict)'])} | {_f(v['pydantic model_dump_json'])} |")
        p = micro["parsing"]
        add("")
        add(f"Request parsing, 50-message history with tool parts ({p['bytes']:,} bytes):\n")
        add("| parser | µs per request |")
        add("|---|---:|")
        for k, v in p.items():
            if k != "bytes":
                add(f"| {k} | {_f(v / 1000, 1)} |")
        add("")
    # profile
    prof = results.get("profile")
    if prof and "groups" in prof:
        add("## Profile of the adk-asgi SSE hot path (cProfile, server process)\n")
        add(f"{prof['streams']} sequential streams of \"bench {prof['tokens']}\" after warm-up; "
            f"self time summed by source file ({prof['total_s']:.2f} s profiled, "
            f"≈ {prof['per_frame_us']:.0f} µs per frame under the profiler, which inflates "
            "Python-heavy code).\n")
        add("| group | s | share |")
        add("|---|---:|---:|")
        for g, v in prof["groups"].items():
            add(f"| {g} | {v['s']:.3f} | {v['share']:.1%} |")
        add("")
        add("| component | s | share |")
        add("|---|---:|---:|")
        for c, v in prof["components"].items():
            if v["share"] >= 0.003:
                add(f"| {c} | {v['s']:.3f} | {v['share']:.1%} |")
        add("")
        if prof.get("inclusive_s"):
            add("Inclusive time of our functions: " + ", ".join(
                f"`{k}` {v * 1000:.1f} ms" for k, v in prof["inclusive_s"].items()) + ".\n")
    # targets
    add("## Targets\n")
    add("| target | verdict | numbers |")
    add("|---|---|---|")
    for target, verdict, numbers in targets(results):
        add(f"| {target} | **{verdict}** | {numbers} |")
    add("")
    return "\n".join(lines)


def write_report(results: dict[str, Any], out_dir: Path) -> Path:
    png = out_dir / "concurrency.png"
    has_chart = chart(results, png)
    path = out_dir / "report.md"
    path.write_text(render(results, png.name if has_chart else None))
    return path
