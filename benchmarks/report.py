"""Markdown report (and a PNG chart of the sweeps) from ``results.json``.

The tables lead with what issue 14 asks: per reply length and concurrency level,
server CPU µs per token and tokens/s of every row, and the ratios against the naive
bridge (``adk-naive``) and the plain in-process ceiling (``ceiling-plain``) from the
same run. "Paired" ratios are the median of per-repetition ratios (repetition *i* of
one row against repetition *i* of the other, which ran next to each other).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from . import voice_report
from .ratios import format_paired as _pr
from .ratios import spread

NAIVE = "adk-naive"
PLAIN = "ceiling-plain"
OURS = "adk-asgi"
GC_OFF = "adk-asgi-gc-off"
OURS_LIVE = "adk-asgi-live"
OURS_LIVE_B = "adk-asgi-live-b"  # protocol B (ai 7's WebSocketChatTransport framing)
LIVE_CEILING = "ceiling-live"
NAIVE_LIVE = "adk-naive-live"  # the live rows' floor: the naive bridge over WebSocket
PAIRS = ((OURS, GC_OFF), (GC_OFF, "adk-asgi-bare"), ("adk-asgi-sse-starlette", "adk-asgi-bare"))


def _f(value: Any, digits: int = 0, suffix: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}f}{suffix}"


def _mb(kb: Any) -> str:
    return _f(kb / 1024 if kb else None)


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


def _gemini(name: str) -> bool:
    """A ``ROW@gemini`` row (ADK's Gemini against the emulator, ``benchmarks.emulator``)."""
    return "gemini" in name.partition("@")[2].split("+")


def _names(results: dict[str, Any], live: bool | None = None) -> list[str]:
    rows = results.get("rows", {})
    return [n for n in rows if live is None or rows[n]["live"] == live]


def _level(row: dict[str, Any] | None, tokens: int, concurrency: int) -> dict[str, Any] | None:
    for lv in (row or {}).get("sweep", []):
        if lv["tokens"] == tokens and lv["concurrency"] == concurrency:
            return dict(lv)
    return None


def _workloads(results: dict[str, Any]) -> list[tuple[int, int]]:
    """Every (tokens, concurrency) measured, longest replies first."""
    seen: dict[tuple[int, int], None] = {}
    for row in results.get("contenders", {}).values():
        for lv in row.get("sweep", []) if isinstance(row, dict) else []:
            seen[(lv["tokens"], lv["concurrency"])] = None
    return sorted(seen, key=lambda k: (-k[0], k[1]))


def paired(a: dict[str, Any] | None, b: dict[str, Any] | None, key: str) -> dict[str, Any]:
    """Ratio of medians, and the median/min/max of per-repetition ratios."""
    if not a or not b:
        return {}
    per = [
        ra[key] / rb[key]
        for ra, rb in zip(a["reps"], b["reps"], strict=False)
        if ra.get(key) and rb.get(key)
    ]
    return spread(_ratio(a.get(key), b.get(key)), per)


# -- targets ----------------------------------------------------------------------------


def targets(results: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Issue 14's targets: (target, verdict, numbers)."""
    out: list[tuple[str, str, str]] = []
    ours, naive, plain = (_measured(results, n) for n in (OURS, NAIVE, PLAIN))
    for tokens, c in _workloads(results):
        la, ln, lp = _level(ours, tokens, c), _level(naive, tokens, c), _level(plain, tokens, c)
        if la and ln:
            cpu = paired(la, ln, "cpu_us_per_token")
            tput = paired(la, ln, "tokens_per_s")
            ok = (cpu["ratio"] or 9) <= 1.0 and (tput["ratio"] or 0) >= 1.0
            out.append(
                (
                    f"{c} streams × {tokens} tokens: CPU/token ≤ naive and tokens/s ≥ naive",
                    "met" if ok else "not met",
                    f"CPU {la['cpu_us_per_token']:.0f} vs {ln['cpu_us_per_token']:.0f} µs "
                    f"= {_pr(cpu)}; tokens/s {la['tokens_per_s']:,.0f} vs "
                    f"{ln['tokens_per_s']:,.0f} = {_pr(tput)}",
                )
            )
        if la and lp and c <= 200:
            cpu = paired(la, lp, "cpu_us_per_token")
            out.append(
                (
                    f"{c} streams × {tokens} tokens: CPU/token ≤ 1.0× plain ceiling",
                    "met" if (cpu["ratio"] or 9) <= 1.0 else "not met",
                    f"{la['cpu_us_per_token']:.0f} vs {lp['cpu_us_per_token']:.0f} µs = {_pr(cpu)}",
                )
            )
        lo = _level(_measured(results, GC_OFF), tokens, c)
        if la and c >= 1000 and lo and la.get("peak_rss_kb") and lo.get("peak_rss_kb"):
            # Today's server is the CLI without its GC tuning (the row that turns it off).
            grown = la["peak_rss_kb"] / lo["peak_rss_kb"]
            out.append(
                (
                    f"peak RSS at {c} streams × {tokens} tokens ≤ +10 % over the "
                    f"server without GC tuning ({GC_OFF})",
                    "met" if grown <= 1.10 else "not met",
                    f"{_mb(la.get('peak_rss_kb'))} vs {_mb(lo.get('peak_rss_kb'))} MB "
                    f"peak ({grown:.2f}×); after the level {_mb(la.get('rss_after_kb'))} "
                    f"vs {_mb(lo.get('rss_after_kb'))} MB",
                )
            )
        elif la and c >= 1000:
            out.append(
                (
                    f"peak RSS at {c} streams × {tokens} tokens (≤ +10 % over the "
                    "baseline of 2026-11-23)",
                    "measured",
                    f"{_mb(la.get('peak_rss_kb'))} MB peak, "
                    f"{_mb(la.get('rss_after_kb'))} MB after the level",
                )
            )
    ceiling = _measured(results, LIVE_CEILING)
    for name, protocol in ((OURS_LIVE, "A"), (OURS_LIVE_B, "B")):
        live = _measured(results, name)
        for tokens, c in _workloads(results):
            la, lc = _level(live, tokens, c), _level(ceiling, tokens, c)
            if la and lc:
                cpu = paired(la, lc, "cpu_us_per_token")
                out.append(
                    (
                        f"live (protocol {protocol}), {c} connections × {tokens} tokens: "
                        "CPU/token ≤ 1.5× live ceiling",
                        "met" if (cpu["ratio"] or 9) <= 1.5 else "not met",
                        f"{la['cpu_us_per_token']:.0f} vs {lc['cpu_us_per_token']:.0f} µs = "
                        f"{_pr(cpu)}",
                    )
                )
    return out


# -- chart ------------------------------------------------------------------------------


def chart(results: dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    token_sizes = sorted({t for t, _ in _workloads(results)}, reverse=True)
    if not token_sizes:
        return False
    fig, axes = plt.subplots(len(token_sizes), 2, figsize=(11, 4 * len(token_sizes)), squeeze=False)
    for (ax1, ax2), tokens in zip(axes, token_sizes, strict=True):
        for name in _names(results):
            levels = [
                lv
                for lv in (_measured(results, name) or {}).get("sweep", [])
                if lv["tokens"] == tokens
            ]
            if not levels:
                continue
            xs = [lv["concurrency"] for lv in levels]
            style = "--" if results["rows"][name]["live"] else "-"
            ax1.plot(xs, [lv["tokens_per_s"] for lv in levels], style, marker="o", label=name)
            ax2.plot(xs, [lv["cpu_us_per_token"] for lv in levels], style, marker="o", label=name)
        for ax in (ax1, ax2):
            ax.set_xscale("log")
            ax.set_xlabel("simultaneous streams (WebSocket rows dashed)")
            ax.grid(True, alpha=0.3)
            ax.set_ylim(bottom=0)
        ax1.set_ylabel(f"tokens/s, {tokens}-token replies")
        ax2.set_ylabel(f"server CPU µs per token, {tokens}-token replies")
        if ax1.get_lines():
            ax1.legend(fontsize=7)
    fig.suptitle("Sweeps: medians of repetitions (demo agent, 2 cores)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


# -- sections ---------------------------------------------------------------------------


def _sweep_tables(results: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for tokens in sorted({t for t, _ in _workloads(results)}, reverse=True):
        levels = sorted({c for t, c in _workloads(results) if t == tokens})
        lines += [
            f"### {tokens}-token replies\n",
            "CPU µs per token (server process, user+sys) and tokens/s, medians of "
            "repetitions; `GC` is the collector's share of that CPU "
            "(`gc.callbacks` clock).\n",
            "| row | "
            + " | ".join(f"{c} streams: µs/token · tokens/s · GC µs" for c in levels)
            + " |",
            "|---|" + "---:|" * len(levels),
        ]
        for name in _names(results):
            row = _measured(results, name)
            cells = []
            for c in levels:
                lv = _level(row, tokens, c)
                cells.append(
                    "–"
                    if lv is None
                    else f"**{_f(lv['cpu_us_per_token'])}** · {_f(lv['tokens_per_s'])} · "
                    f"{_f(lv.get('gc_us_per_token'))}"
                    + ("" if lv["completion"] >= 1 else f" ({lv['completion']:.0%} complete)")
                )
            if any(c != "–" for c in cells):
                lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines += [
            "",
            "| row | streams | reps | completion | tokens/s | CPU µs/token "
            "| of which kernel | GC µs/token | GCs per 1k tokens (gen 0/1/2) "
            "| TTFB p50 ms | first chunk p50 ms | first token p50 ms | server CPU "
            "| client CPU | peak RSS MB | RSS after MB |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name in _names(results):
            for c in levels:
                lv = _level(_measured(results, name), tokens, c)
                if lv is None:
                    continue
                streams = str(c) if lv["waves"] == 1 else f"{c} ×{lv['waves']}"
                lines.append(
                    f"| {name} | {streams} | {len(lv['reps'])} | {lv['completion']:.1%} "
                    f"| {_f(lv['tokens_per_s'])} | {_f(lv['cpu_us_per_token'])} "
                    f"| {_f(lv.get('sys_us_per_token'))} "
                    f"| {_f(lv.get('gc_us_per_token'))} | {_gcs(lv.get('gc_per_ktoken'))} "
                    f"| {_f(lv.get('ttfb_p50_ms'), 1)} | {_f(lv.get('ttfc_p50_ms'), 1)} "
                    f"| {_f(lv['ttft_p50_ms'], 1)} | {lv['server_cpu_util']:.0%} "
                    f"| {lv['client_cpu_util']:.0%} | {_mb(lv.get('peak_rss_kb'))} "
                    f"| {_mb(lv.get('rss_after_kb'))} |"
                )
        lines.append("")
    return lines


def _gcs(per_k: list[float] | None) -> str:
    return "–" if not per_k else " / ".join(_f(x, 1 if x < 10 else 0) for x in per_k)


def _ratio_tables(results: dict[str, Any]) -> list[str]:
    lines = [
        "Ratio of medians, then in brackets the paired median and range of "
        "per-repetition ratios. CPU: lower is better; tokens/s: higher is better.\n"
    ]
    refs = (
        (NAIVE, "the naive bridge"),
        (PLAIN, "the plain ceiling"),
        (LIVE_CEILING, "the live ceiling"),
        (NAIVE_LIVE, "the naive live bridge"),
    )
    # The @gemini rows against the @gemini references: the same model path on both sides.
    for ref, label in (*refs, *((f"{r}@gemini", f"{t} on Gemini") for r, t in refs)):
        base = _measured(results, ref)
        if base is None:
            continue
        live_ref = ref.partition("@")[0] in (LIVE_CEILING, NAIVE_LIVE)
        rows = [
            n
            for n in _names(results)
            if n != ref and _gemini(n) == _gemini(ref) and results["rows"][n]["live"] == live_ref
        ]
        table = [
            f"### Against {label} (`{ref}`)\n",
            "| row | replies × streams | CPU/token ÷ ref | tokens/s ÷ ref "
            "| first chunk p50 ÷ ref | first token p50 ÷ ref |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for name in rows:
            row = _measured(results, name)
            for tokens, c in _workloads(results):
                la, lb = _level(row, tokens, c), _level(base, tokens, c)
                if la and lb:
                    table.append(
                        f"| {name} | {tokens} × {c} "
                        f"| {_pr(paired(la, lb, 'cpu_us_per_token'))} "
                        f"| {_pr(paired(la, lb, 'tokens_per_s'))} "
                        f"| {_pr(paired(la, lb, 'ttfc_p50_ms'))} "
                        f"| {_pr(paired(la, lb, 'ttft_p50_ms'))} |"
                    )
        if len(table) > 3:
            lines += [*table, ""]
    ab = [
        "### A/B: each `ROW@KNOBS` against `ROW`, and the paired rows\n",
        "Paired rows: `adk-asgi` against `adk-asgi-gc-off` (what the GC tuning buys), "
        "`adk-asgi-gc-off` against `adk-asgi-bare` (what the CLI adds to the middleware), "
        "`adk-asgi-sse-starlette` against `adk-asgi-bare` (sse-starlette against the own "
        "SSE channel).\n",
        "| row | against ROW | replies × streams | CPU/token ÷ ROW | tokens/s ÷ ROW | "
        "first chunk p50 ÷ ROW | first token p50 ÷ ROW | GC µs/token (ROW → this) "
        "| peak RSS MB (ROW → this) |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    known = results.get("rows", {})
    pairs = [(n, n.partition("@")[0]) for n in _names(results) if "@" in n]
    pairs += [(a, b) for a, b in PAIRS if a in known and b in known]
    for name, base_name in pairs:
        if base_name not in known:
            continue
        row, base = _measured(results, name), _measured(results, base_name)
        for tokens, c in _workloads(results):
            la, lb = _level(row, tokens, c), _level(base, tokens, c)
            if la and lb:
                ab.append(
                    f"| {name} | {base_name} | {tokens} × {c} "
                    f"| {_pr(paired(la, lb, 'cpu_us_per_token'))} "
                    f"| {_pr(paired(la, lb, 'tokens_per_s'))} "
                    f"| {_pr(paired(la, lb, 'ttfc_p50_ms'))} "
                    f"| {_pr(paired(la, lb, 'ttft_p50_ms'))} "
                    f"| {_f(lb.get('gc_us_per_token'))} → "
                    f"{_f(la.get('gc_us_per_token'))} "
                    f"| {_mb(lb.get('peak_rss_kb'))} → {_mb(la.get('peak_rss_kb'))} |"
                )
    if len(ab) > 3:
        lines += [*ab, ""]
    return lines


def _single_table(results: dict[str, Any], live: bool) -> list[str]:
    lines = [
        "| row | tokens/s | frames/stream | stream ms |"
        + (" connect ms |" if live else "")
        + " first chunk ms | first token ms | gap p50 µs | gap p99 µs |",
        "|---|" + "---:|" * (8 if live else 7),
    ]
    for name in _names(results, live):
        row = _measured(results, name)
        s = (row or {}).get("single")
        if not s:
            continue
        cells = [_f(s["tokens_per_s"]), _f(s["frames"]), _f(s["duration_ms"], 1)]
        if live:
            cells.append(_f(s.get("connect_ms"), 2))
        cells += [
            _f(s["ttfc_ms"], 2),
            _f(s["ttft_ms"], 2),
            _f(s["gap_p50_us"]),
            _f(s["gap_p99_us"]),
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def _memory(results: dict[str, Any]) -> list[str]:
    lines = [
        "| row | RSS after warm-up MB | peak RSS, single MB | peak RSS, whole run MB "
        "| idle streams open | KiB per idle stream (WebSocket: connected · after a "
        "turn) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name in _names(results):
        row = _measured(results, name)
        if not row:
            continue
        idle = row.get("idle", {})
        per = _f(idle.get("kb_per_stream"), 1)
        if "kb_per_stream_after_turn" in idle:
            per += " · " + _f(idle.get("kb_per_stream_after_turn"), 1)
        lines.append(
            f"| {name} | {_mb(row.get('rss_after_warmup_kb'))} "
            f"| {_mb(row.get('peak_rss_single_kb'))} "
            f"| {_mb(row.get('peak_rss_sweep_kb'))} "
            f"| {idle.get('opened', '–')}/{idle.get('streams', '–')} | {per} |"
            + (f" {idle['error']}" if "error" in idle else "")
        )
    lines.append("")
    return lines


def _is_measured_apart(centre: str) -> bool:
    """Centres the account takes from unprofiled measurements instead of samples."""
    return centre.startswith(("GC", "kernel:"))


def account(results: dict[str, Any], key: str) -> dict[str, float] | None:
    """µs per token by cost centre for one profile (``"ROW c=N"``).

    Totals come from the same row and level of the sweep (no profiler running): server
    CPU ``T``, the collector's time ``G`` (``gc.callbacks``) and kernel time ``K``
    (psutil). The profile splits the rest, ``T − G − K``, by its samples outside the
    collector and outside socket-write syscalls. Those two are left out of the shares
    because they are measured directly, and because a blocking profiler's pause lands
    at the next kernel entry, which over-samples the frames that enter the kernel
    (py-spy put 14–25 % of the samples in ``write`` where psutil measured 3 % kernel
    time); dropping them and renormalizing keeps the rest unbiased.
    """
    prof = (results.get("profiles") or {}).get(key)
    if not prof or "centres" not in prof:
        return None
    row = _measured(results, prof["row"])
    lv = _level(row, prof["tokens"], prof["concurrency"])
    if lv is None:
        return None
    total, gc = lv["cpu_us_per_token"], lv.get("gc_us_per_token") or 0.0
    kernel = lv.get("sys_us_per_token") or 0.0
    rest = {c: v["samples"] for c, v in prof["centres"].items() if not _is_measured_apart(c)}
    n = sum(rest.values()) or 1
    out = {c: k / n * (total - gc - kernel) for c, k in rest.items()}
    out["GC (gc.callbacks clock, unprofiled sweep)"] = gc
    out["kernel (psutil system time, unprofiled sweep)"] = kernel
    out["total"] = total
    return out


def _profiles(results: dict[str, Any]) -> list[str]:
    profs = results.get("profiles")
    if not profs:
        return []
    if "status" in profs:
        return ["## Profiles (py-spy)\n", f"{profs['status']}\n"]
    accounts = {k: a for k in profs if (a := account(results, k)) is not None}
    lines: list[str] = []
    if accounts:
        keys = list(accounts)
        centres: dict[str, None] = {}
        for a in accounts.values():
            centres.update(dict.fromkeys(c for c in a if c != "total"))
        order = sorted(centres, key=lambda c: -max(a.get(c, 0.0) for a in accounts.values()))
        diffs = [
            (f"{OURS} − {NAIVE} c={c}", f"{OURS} c={c}", f"{NAIVE} c={c}")
            for c in sorted({profs[k]["concurrency"] for k in keys})
            if f"{OURS} c={c}" in accounts and f"{NAIVE} c={c}" in accounts
        ]
        lines += [
            "## Account: CPU µs per token by cost centre\n",
            "Per profiled level: server CPU per token `T`, collector time `G` and "
            "kernel time `K` from the same row and level of the sweep (no profiler); "
            "`T − G − K` split by the py-spy samples outside the collector and "
            "outside socket-write syscalls (`benchmarks/report.py: account`; the "
            "cost centres are `benchmarks/spy.py: classify`).\n",
            "| cost centre | " + " | ".join(keys + [d[0] for d in diffs]) + " |",
            "|---|" + "---:|" * (len(keys) + len(diffs)),
        ]
        for c in order:
            cells = [_f(accounts[k].get(c), 1) if accounts[k].get(c) else "–" for k in keys]
            cells += [
                _f(accounts[a].get(c, 0.0) - accounts[b].get(c, 0.0), 1, "") for _, a, b in diffs
            ]
            lines.append(f"| {c} | " + " | ".join(cells) + " |")
        cells = [f"**{_f(accounts[k]['total'])}**" for k in keys]
        cells += [f"**{accounts[a]['total'] - accounts[b]['total']:+.0f}**" for _, a, b in diffs]
        lines.append("| **total** | " + " | ".join(cells) + " |")
        lines.append("")
    keys = list(profs)
    lines += [
        "### Raw py-spy shares (% of working samples)\n",
        "| cost centre | " + " | ".join(keys) + " |",
        "|---|" + "---:|" * len(keys),
    ]
    centres = {}
    for p in profs.values():
        centres.update(dict.fromkeys(p["centres"]))
    for c in centres:
        cells = [_f((_get(profs[k], "centres", c, "share") or 0.0) * 100, 1) for k in keys]
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    lines.append(
        "| CPU µs/token under the profiler | "
        + " | ".join(
            _f(profs[k].get("profiled_cpu_us_per_token", profs[k].get("cpu_us_per_token")))
            for k in keys
        )
        + " |"
    )
    lines.append(
        "| samples (idle dropped) | "
        + " | ".join(f"{profs[k]['samples']} ({profs[k].get('idle_samples', 0)})" for k in keys)
        + " |"
    )
    lines.append("")
    return lines


def render(results: dict[str, Any], chart_name: str | None) -> str:
    plan = results["plan"]
    m = results["machine"]
    lines: list[str] = []
    add = lines.append
    add(f"# adk-asgi benchmark results ({plan['mode']} mode)\n")
    add(
        f"Command: `{results['command']}` (from the repository root, with the `bench` extra "
        f"installed). Run took {results.get('elapsed_s', 0):.0f} s, finished "
        f"{m['date']}.\n"
    )
    add("## Machine\n")
    add(
        f"- {m['nproc']} cores: {m['cpu_model']}; {m['mem_total_gb']} GiB; Linux "
        f"{m['kernel']} (a VM; other jobs may share the host, so expect noise)"
    )
    load = results.get("loadavg", {})
    add(
        "- load average (1/5/15 min) at the start: "
        + " / ".join(_f(x, 2) for x in load.get("start", []))
        + "; after the measurements: "
        + " / ".join(_f(x, 2) for x in load.get("after_measurements", []))
    )
    add(f"- Python {m['python']}; " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()))
    add(
        f"- clients in this process: {results['client']} asyncio HTTP/1.1 streams (SSE), the "
        "`websockets` client (permessage-deflate offered: "
        f"{results.get('ws_compression') or 'none'}); loopback TCP\n"
    )
    add("## Rows\n")
    add("| row | what | process knobs | seen in the process after warm-up |")
    add("|---|---|---|---|")
    for name, info in results.get("rows", {}).items():
        row = results.get("contenders", {}).get(name, {})
        status = row.get("status", "not run")
        seen = ", ".join(f"{k} {v}" for k, v in (row.get("process") or {}).items())
        add(
            f"| {name} | {info['label']}"
            + ("" if status == "measured" else f" (**{status}**)")
            + f" | {info['knobs']} | {seen or '–'} |"
        )
    add("")
    add(
        "Same agent everywhere: `adk_asgi.demo.build_demo_agent(token_delay=0)`, in-memory "
        'sessions, a new chat/session per stream; "bench N" streams exactly N tokens, one '
        "partial ADK event each. Server CPU is the row process's user+system time "
        "(psutil) over a level, divided by the tokens the client received. A 1-stream "
        "level streams replies one after another (`×N` in the tables) so that each "
        "repetition runs long enough for the CPU clock. Every level round-robins over the "
        "rows, the order rotating per repetition.\n"
    )
    emu = results.get("emulator")
    if emu:
        add(
            f"`ROW@gemini` rows: the same contender with the demo agent on ADK's real "
            f"`Gemini` model (`{emu['model']}`; `{emu['live_model']}` on WebSocket rows) "
            "against the Gemini API emulator (`adk_asgi.testing.gemini`, a process of its "
            'own whose CPU is not counted), which streams "bench N" in chunks of '
            f"{emu['tokens_per_chunk']} tokens: a reply of N tokens is N/"
            f"{emu['tokens_per_chunk']} partial events, and CPU per token is still divided "
            "by the N tokens received. The knob A/B table shows what the real model path "
            "costs over the scripted one.\n"
        )
    add("## Targets (issue 14)\n")
    add("| target | verdict | numbers |")
    add("|---|---|---|")
    for target, verdict, numbers in [*targets(results), *voice_report.targets(results)]:
        add(f"| {target} | **{verdict}** | {numbers} |")
    add("")
    add("## Sweeps\n")
    lines += _sweep_tables(results)
    if chart_name:
        add(f"![sweeps]({chart_name})\n")
    add("## Ratios\n")
    lines += _ratio_tables(results)
    lines += _profiles(results)
    lines += voice_report.section(results)
    add("## Single stream\n")
    add(
        f'{plan["single_runs"]} interleaved rounds of one "bench {plan["tokens"]}" stream, '
        "medians. First chunk/token from the request's first byte (SSE) or from sending the "
        "user frame on the open socket (WebSocket; the handshake is `connect`).\n"
    )
    lines += _single_table(results, live=False)
    lines += _single_table(results, live=True)
    add("## Memory\n")
    lines += _memory(results)
    tools = [
        f"{n} {_f(_get(_measured(results, n), 'tool_call', 'duration_ms'), 1)} ms"
        for n in _names(results)
        if _measured(results, n)
    ]
    add(
        'Tool-call turn ("What\'s the weather in Tokyo?", after warm-up): '
        + "; ".join(tools)
        + "\n"
    )
    micro = results.get("micro")
    if micro:
        add("## Microbenchmarks (ns per call, median of repeats)\n")
        add(
            "| chunk | bytes | msgspec `sse_frame` | `json.dumps(dict)` framed "
            "| pydantic `model_dump_json` framed |"
        )
        add("|---|---:|---:|---:|---:|")
        for chunk, v in micro["encoding"].items():
            add(
                f"| {chunk} | {v['bytes']} | {_f(v['msgspec sse_frame'])} "
                f"| {_f(v['json.dumps(dict)'])} | {_f(v['pydantic model_dump_json'])} |"
            )
        add("")
        live = micro.get("live")
        if live:
            add(
                "Live path, ns per call (one partial text event; one text-delta frame; one "
                "non-blocking send):\n"
            )
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
    for name, prof in (results.get("cprofile") or {}).items():
        add(f"## cProfile of {name}\n")
        if "groups" not in prof:
            add(f"{prof.get('status')}\n")
            continue
        add("| group | s | share |")
        add("|---|---:|---:|")
        for g, v in prof["groups"].items():
            add(f"| {g} | {v['s']:.3f} | {v['share']:.1%} |")
        add("")
    return "\n".join(lines)


def write_report(results: dict[str, Any], out_dir: Path) -> Path:
    png = out_dir / "concurrency.png"
    has_chart = chart(results, png)
    path = out_dir / "report.md"
    path.write_text(render(results, png.name if has_chart else None))
    return path
