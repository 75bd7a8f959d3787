"""Markdown report (and a PNG chart of the concurrency sweep) from ``results.json``."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

SSE_NAMES = ("adk-asgi", "adk-api-server", "ag-ui-adk")
WS_NAMES = ("adk-asgi-live", "adk-api-server-live", "adk-asgi-live-b")
NAMES = SSE_NAMES + WS_NAMES
LABELS = {
    "ceiling": "ceiling (in-process `Runner.run_async`)",
    "adk-asgi": "adk-asgi SSE (`POST /api/chat`)",
    "adk-api-server": "ADK api_server (`POST /run_sse`, streaming)",
    "ag-ui-adk": "ag-ui-adk (FastAPI endpoint, SSE)",
    "ceiling-live": "live ceiling (in-process `Runner.run_live`)",
    "adk-asgi-live": "adk-asgi live (WebSocket `/api/chat`, protocol A)",
    "adk-api-server-live": "ADK api_server `/run_live` (WebSocket)",
    "adk-asgi-live-b": "adk-asgi live, protocol B (AI SDK v7 `chunk` frames)",
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
    out += ws_summary(results)
    enc = _get(results, "micro", "encoding")
    if enc:
        worst = max(v["msgspec sse_frame"] for v in enc.values())
        typical = enc["text-delta"]["msgspec sse_frame"]
        out.append(("typical chunk encoding ≤ 1 µs", "met" if typical <= 1000 else "not met",
                    f"text-delta {typical:.0f} ns; slowest of the three typical chunks "
                    f"{worst:.0f} ns"))
    return out


def ws_summary(results: dict[str, Any]) -> list[tuple[str, str, str]]:
    """adk-asgi live vs ADK /run_live: ratios only (the issue sets no WebSocket target)."""
    contenders = results.get("contenders", {})
    ours, peer = _measured(results, "adk-asgi-live"), _measured(results, "adk-api-server-live")
    if ours is None or peer is None:
        missing = "adk-asgi-live" if ours is None else "adk-api-server-live"
        status = contenders.get(missing, {}).get("status", "not run")
        return [("WebSocket: adk-asgi live vs ADK `/run_live`", "not measured",
                 f"{missing}: {status}")]
    out: list[tuple[str, str, str]] = []
    a, b = _get(ours, "single", "tokens_per_s"), _get(peer, "single", "tokens_per_s")
    if (r := _ratio(a, b)) is not None:
        out.append(("WebSocket single-stream throughput, adk-asgi live ÷ ADK `/run_live`",
                    "ratio", f"{a:,.0f} vs {b:,.0f} tokens/s = {r:.2f}×"))
    a, b = _get(ours, "cpu", "cpu_ms_per_stream"), _get(peer, "cpu", "cpu_ms_per_stream")
    if (r := _ratio(a, b)) is not None:
        out.append(("WebSocket server CPU per connection-turn (lower is better)", "ratio",
                    f"{a:.1f} vs {b:.1f} ms = {r:.2f}×"))
    c = _get(results.get("ceiling-live"), "cpu", "cpu_ms_per_stream")
    if (r := _ratio(a, c)) is not None:
        out.append(("adk-asgi live server CPU over the in-process `run_live` ceiling", "ratio",
                    f"{a:.1f} vs {c:.1f} ms = {(r - 1) * 100:+.0f} %"))
    for level in (200, 1000):
        la, lb = _level(ours, level), _level(peer, level)
        what = f"WebSocket, {level} simultaneous connections (one turn each)"
        if la and lb:
            r = _ratio(la["tokens_per_s"], lb["tokens_per_s"])
            out.append((what, "ratio",
                        f"{la['tokens_per_s']:,.0f} vs {lb['tokens_per_s']:,.0f} tokens/s"
                        + (f" = {r:.2f}×" if r else "")
                        + f"; completion {la['completion']:.1%} vs {lb['completion']:.1%}"))
        else:
            out.append((what, "not measured", f"level {level} not in this run (quick mode)"))
    for key, what in (("kb_per_stream", "just connected"),
                      ("kb_per_stream_after_turn", "after one turn")):
        a, b = _get(ours, "idle", key), _get(peer, "idle", key)
        if (r := _ratio(a, b)) is not None:
            out.append((f"memory per idle WebSocket, {what} (lower is better)", "ratio",
                        f"{a:.1f} vs {b:.1f} KiB = {r:.2f}×"))
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
        ws = name in WS_NAMES
        style, label = ("--", f"{name} (WebSocket)") if ws else ("-", f"{name} (SSE)")
        ax1.plot(xs, [lv["tokens_per_s"] for lv in levels], style, marker="o", label=label)
        ax2.plot(xs, [lv["completion"] * 100 for lv in levels], style, marker="o", label=label)
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_xlabel("simultaneous streams (SSE) / connections (WebSocket)")
        ax.grid(True, alpha=0.3)
    ax1.set_ylabel("total tokens/s (median of reps)")
    ax1.set_ylim(bottom=0)
    ax2.set_ylabel("completed streams (%)")
    ax2.set_ylim(0, 105)
    if ax1.get_lines():
        ax1.legend(fontsize=8)
    tokens = results["plan"]["sweep_tokens"]
    fig.suptitle(f"Concurrency sweep: every stream 'bench {tokens}' (demo agent, 2 cores)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _rss_cells(row: dict[str, Any]) -> str:
    """The three RSS cells (MB) every memory table starts with, each followed by '| '."""
    return (f"| {_f(row.get('rss_after_warmup_kb', 0) / 1024)} "
            f"| {_f(row.get('peak_rss_single_kb', 0) / 1024)} "
            f"| {_f(row.get('peak_rss_sweep_kb', 0) / 1024)} ")


def _status(results: dict[str, Any], name: str) -> str:
    row = results.get(name) if name.startswith("ceiling") else \
        results.get("contenders", {}).get(name)
    return str((row or {}).get("status", "not run"))


def _single_table(results: dict[str, Any], names: tuple[str, ...], ws: bool) -> list[str]:
    lines = []
    connect = " connect ms |" if ws else ""
    lines.append("| contender | tokens/s | frames/s | frames/stream | stream ms |" + connect
                 + " first chunk ms | first token ms | gap p50 µs | gap p99 µs "
                 "| server CPU ms/stream | CPU µs/frame | client CPU µs/frame | peak RSS MB |")
    lines.append("|---|" + "---:|" * (13 if ws else 12))
    for name in names:
        row = results.get(name) if name.startswith("ceiling") else \
            results.get("contenders", {}).get(name)
        if not row or row.get("status") != "measured":
            lines.append(f"| {LABELS[name]} | {_status(results, name)} |"
                         + "|" * (12 if ws else 11) + " ")
            continue
        s, c = row.get("single", {}), row.get("cpu", {})
        peak = row.get("peak_rss_single_kb")
        client = None if name.startswith("ceiling") else c.get("client_cpu_us_per_frame")
        cells = [_f(s.get("tokens_per_s")), _f(s.get("frames_per_s")), _f(s.get("frames")),
                 _f(s.get("duration_ms"), 1)]
        if ws:
            cells.append(_f(s.get("connect_ms"), 2))
        cells += [_f(s.get("ttfc_ms"), 2), _f(s.get("ttft_ms"), 2), _f(s.get("gap_p50_us")),
                  _f(s.get("gap_p99_us")), _f(c.get("cpu_ms_per_stream"), 1),
                  _f(c.get("cpu_us_per_frame")), _f(client),
                  _f(peak / 1024 if peak else None, 0)]
        lines.append(f"| {LABELS[name]} | " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def _ratio_table(results: dict[str, Any], ours_name: str, names: tuple[str, ...],
                 sweep: list[Any]) -> list[str]:
    ours = _measured(results, ours_name)
    lines = ["| contender | single-stream tokens/s | server CPU per stream (lower is better) "
             "| first token | " + " | ".join(f"sweep c={c}" for c, _ in sweep) + " |",
             "|---|---:|---:|---:|" + "---:|" * len(sweep)]
    for name in names:
        row = results.get(name) if name.startswith("ceiling") else _measured(results, name)
        if name == ours_name or not row or row.get("status") != "measured" or not ours:
            continue
        cells = [
            _f(_ratio(_get(ours, "single", "tokens_per_s"), _get(row, "single", "tokens_per_s")),
               2, "×"),
            _f(_ratio(_get(ours, "cpu", "cpu_ms_per_stream"),
                      _get(row, "cpu", "cpu_ms_per_stream")), 2, "×"),
            _f(_ratio(_get(ours, "single", "ttft_ms"), _get(row, "single", "ttft_ms")), 2, "×"),
        ]
        for c, _ in sweep:
            la, lb = _level(ours, c), _level(row, c)
            cells.append(_f(_ratio(la and la["tokens_per_s"], lb and lb["tokens_per_s"]), 2,
                            "×") if not name.startswith("ceiling") else "–")
        lines.append(f"| {LABELS[name]} | " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def _profile_section(prof: dict[str, Any] | None, title: str, unit: str) -> list[str]:
    if not prof:
        return []
    if "groups" not in prof:
        return [f"## {title}\n", f"{prof.get('status', 'not run')}\n"]
    lines = [f"## {title}\n",
             f"{prof['streams']} sequential {unit} of \"bench {prof['tokens']}\" after warm-up; "
             f"self time summed by source file ({prof['total_s']:.2f} s profiled, "
             f"≈ {prof['per_frame_us']:.0f} µs per frame under the profiler, which inflates "
             "Python-heavy code).\n",
             "| group | s | share |", "|---|---:|---:|"]
    for g, v in prof["groups"].items():
        lines.append(f"| {g} | {v['s']:.3f} | {v['share']:.1%} |")
    lines += ["", "| component | s | share |", "|---|---:|---:|"]
    for c, v in prof["components"].items():
        if v["share"] >= 0.003:
            lines.append(f"| {c} | {v['s']:.3f} | {v['share']:.1%} |")
    lines.append("")
    if prof.get("inclusive_s"):
        lines.append("Inclusive time of our functions: " + ", ".join(
            f"`{k}` {v * 1000:.1f} ms" for k, v in prof["inclusive_s"].items()) + ".\n")
    return lines


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
    compression = results.get("ws_compression", "deflate") or "none"
    add(f"- clients, all in one process: {results['client']} asyncio HTTP/1.1 streams (SSE); "
        f"the `websockets` asyncio client, permessage-deflate offered: {compression} "
        "(WebSocket); every server a separate `python -m benchmarks.serve <contender>` "
        "process under uvicorn (uvloop + httptools, websockets-sansio, access log off), "
        "loopback TCP\n")
    add("## What is measured\n")
    add(f"Same agent everywhere: `adk_asgi.demo.build_demo_agent(token_delay=0)` with its 7 "
        f"tools, in-memory sessions, a new chat/session per stream. A stream is the reply to "
        f"\"bench {plan['tokens']}\" (exactly {plan['tokens']} streamed tokens, one partial "
        f"ADK event each). Contenders send different numbers of frames for the same reply "
        f"(adk-asgi SSE and live: tokens + 7 UI chunks incl. `[DONE]`; api_server `/run_sse`: "
        f"tokens + 1 events; `/run_live`: tokens + 2 events; ag-ui-adk: tokens + 5 events), "
        f"so **throughput is compared in tokens/s** (same work); frames/s is shown too.\n")
    add(f"- single stream: {plan['single_runs']} sequential runs, medians; time to first "
        "chunk (any frame) and to first token (first text-delta frame) from the request's "
        "first byte (SSE) or from sending the user frame on the open socket (WebSocket; "
        "the handshake is the `connect` column); gaps between consecutive frames as read by "
        "the client (frames arriving in one read count as a 0 gap)")
    add(f"- server CPU: psutil user+system CPU time of the server process before/after "
        f"{plan['cpu_batches']} batches of {plan['cpu_batch']} sequential streams (WebSocket: "
        "connections, one turn each); median of the batches (the ceilings use "
        "`time.process_time()` in this process, same batches); client CPU the same way "
        "around the same batches")
    add(f"- concurrency sweep: N streams (WebSocket: N connections, one turn each) of \"bench "
        f"{plan['sweep_tokens']}\" started at once, levels × reps = {plan['sweep']}, each rep "
        f"bounded by {plan['sweep_timeout']:.0f} s; completion = 200/101 + all tokens + the "
        "terminal marker/clean end; throughput = completed tokens / wall time")
    add(f"- idle SSE streams: a fresh server with `--token-delay {plan['idle_delay']:.0f}`, "
        f"{plan['idle_streams']} streams opened and held (headers received, run sleeping in "
        "the model), RSS delta / streams (after 5 warm-up streams)")
    add(f"- idle WebSockets: a fresh server (no token delay), {plan['idle_streams']} "
        "connections opened and held; RSS delta / connections right after the handshakes "
        "(\"connected\"), then again after each did one \"bench 2\" turn and sits idle with "
        "its live run open (\"after a turn\"); ADK `/run_live` sessions are created over REST "
        "after the baseline reading, so they count (adk-asgi creates its own on the first "
        "message). All idle servers are measured side by side.")
    add("- ADK `/run_live` needs its session before the socket opens: created over REST "
        "before every timed part and before every CPU reading\n")
    add("## Single stream: SSE\n")
    lines += _single_table(results, ("ceiling", *SSE_NAMES), ws=False)
    add("## Single stream: WebSocket (one connection, one turn)\n")
    lines += _single_table(results, ("ceiling-live", *WS_NAMES), ws=True)
    add("## Ratios (adk-asgi SSE ÷ contender, medians)\n")
    lines += _ratio_table(results, "adk-asgi", ("ceiling", *SSE_NAMES), plan["sweep"])
    add("## Ratios (adk-asgi live ÷ contender, medians)\n")
    lines += _ratio_table(results, "adk-asgi-live", ("ceiling-live", *WS_NAMES), plan["sweep"])
    add("## Concurrency sweep\n")
    add(f"Every stream: \"bench {plan['sweep_tokens']}\" (WebSocket: one connection doing one "
        "turn). Medians over reps; completion is the worst rep.\n")
    add("| contender | streams | completed | tokens/s | frames/s | first chunk p50 ms "
        "| wall s | server CPU | client CPU |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in NAMES:
        row = _measured(results, name)
        if not row:
            add(f"| {name} | {_status(results, name)} |||||||| ")
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
    add("## Memory\n")
    add("| contender | RSS after warm-up MB | peak RSS, single-stream phase MB "
        "| peak RSS after sweep MB | idle streams open | KiB per open idle stream |")
    add("|---|---:|---:|---:|---:|---:|")
    for name in SSE_NAMES:
        row = _measured(results, name)
        if not row:
            continue
        idle = row.get("idle", {})
        add(f"| {name} {_rss_cells(row)}"
            f"| {idle.get('opened', '–')}/{idle.get('streams', '–')} "
            f"| {_f(idle.get('kb_per_stream'), 1)} |"
            + (f" {idle['error']}" if "error" in idle else ""))
    add("")
    add("| contender | RSS after warm-up MB | peak RSS, single-stream phase MB "
        "| peak RSS after sweep MB | idle sockets open / after a turn "
        "| KiB per idle WebSocket, connected | KiB per idle WebSocket, after a turn |")
    add("|---|---:|---:|---:|---:|---:|---:|")
    for name in WS_NAMES:
        row = _measured(results, name)
        if not row:
            continue
        idle = row.get("idle", {})
        add(f"| {name} {_rss_cells(row)}"
            f"| {idle.get('opened', '–')}/{idle.get('streams', '–')} · "
            f"{idle.get('complete', '–')}/{idle.get('streams', '–')} "
            f"| {_f(idle.get('kb_per_stream'), 1)} "
            f"| {_f(idle.get('kb_per_stream_after_turn'), 1)} |"
            + (f" {idle['error']}" if "error" in idle else ""))
    add("")
    add("Tool-call turn (\"What's the weather in Tokyo?\", one request or connection, after "
        "warm-up, to the end of the answer): "
        + "; ".join(f"{n} {_f(_get(_measured(results, n), 'tool_call', 'duration_ms'), 1)} ms "
                    f"/ {_get(_measured(results, n), 'tool_call', 'frames')} frames"
                    for n in NAMES if _measured(results, n)) + "\n")
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
        live = micro.get("live")
        if live:
            add("Live path, ns per call (one partial text event; one text-delta frame; one "
                "non-blocking send):\n")
            add("| operation | ns |")
            add("|---|---:|")
            for group in ("translate", "frames", "send"):
                for k, v in live.get(group, {}).items():
                    add(f"| {k} | {_f(v)} |")
            add("")
        instrumentation = micro.get("instrumentation")
        if instrumentation:
            add("Instrumentation with no OpenTelemetry SDK configured (the default), ns:\n")
            add("| span and metrics of one turn | ns |")
            add("|---|---:|")
            for k, v in instrumentation.items():
                add(f"| {k} | {_f(v, 1) if v < 100 else _f(v)} |")
            add("")
    lines += _profile_section(results.get("profile"),
                              "Profile of the adk-asgi SSE hot path (cProfile, server process)",
                              "streams")
    lines += _profile_section(results.get("profile-live"),
                              "Profile of the adk-asgi live hot path (cProfile, server "
                              "process)", "WebSocket connections (one turn each)")
    add("## Targets and WebSocket ratios\n")
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
