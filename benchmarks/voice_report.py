"""The voice phase in the Markdown report: its targets, levels, knees and ratios.

Paired ratios, as in the other tables, are the median of per-repetition ratios
(repetition *i* of one row against repetition *i* of the other, which ran next to each
other); a knee per repetition is read from repetition *i* of every level.
"""

from __future__ import annotations

import math
from typing import Any

from .ratios import format_paired as _pr
from .ratios import spread

OURS = "adk-asgi-voice"
ADK = "adk-api-server-voice"
TARGET_KNEE = 1.3  # sessions per core at p99 ≤ 300 ms, against ADK's /run_live
TARGET_AT = 100  # sessions: p99 no worse than ADK's


def _f(value: Any, digits: int = 0, suffix: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}f}{suffix}"


def _row(results: dict[str, Any], name: str) -> dict[str, Any] | None:
    row = results.get("contenders", {}).get(name)
    return row if row and row.get("status") == "measured" and row.get("voice") else None


def _names(results: dict[str, Any]) -> list[str]:
    return [n for n in results.get("rows", {}) if _row(results, n)]


def _at(row: dict[str, Any] | None, sessions: int) -> dict[str, Any] | None:
    for lv in (row or {}).get("voice", []):
        if lv["sessions"] == sessions:
            return dict(lv)
    return None


def _knee(row: dict[str, Any] | None) -> float | None:
    k = ((row or {}).get("voice_knee") or {}).get("median")
    return None if k is None else float(k["sessions_per_core"])


def _knee_text(k: dict[str, Any] | None) -> str:
    if k is None:
        return "–"
    if k["held"] is None:
        return f"0 (p99 > 300 ms already at {k['broke']})"
    if k.get("above_sweep"):
        return f"≥ {k['held']} (held at every level)"
    bound = ", the load generator saturated there" if k.get("load_bound") else ""
    return f"{k['sessions_per_core']:.0f} (held at {k['held']}, broke at {k['broke']}{bound})"


def paired_knee(a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, Any]:
    """Knee of ``a`` ÷ knee of ``b``: of the medians, and the median and range of the
    per-repetition ratios."""
    ka, kb = _knee(a), _knee(b)
    per = [
        x["sessions_per_core"] / y["sessions_per_core"]
        for x, y in zip(
            ((a or {}).get("voice_knee") or {}).get("reps", []),
            ((b or {}).get("voice_knee") or {}).get("reps", []),
            strict=False,
        )
        if x and y and y["sessions_per_core"]
    ]
    return spread(ka / kb if ka is not None and kb else None, per)


def paired_key(a: dict[str, Any] | None, b: dict[str, Any] | None, key: str) -> dict[str, Any]:
    if not a or not b:
        return {}
    per = [
        ra[key] / rb[key]
        for ra, rb in zip(a["reps"], b["reps"], strict=False)
        if ra.get(key) and rb.get(key) and ra[key] == ra[key] and rb[key] == rb[key]
    ]
    return spread(a[key] / b[key] if a.get(key) and b.get(key) else None, per)


def targets(results: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Issue 32's voice targets: (target, verdict, numbers)."""
    ours, adk = _row(results, OURS), _row(results, ADK)
    if not ours or not adk:
        return []
    out: list[tuple[str, str, str]] = []
    knee = paired_knee(ours, adk)
    if knee["ratio"] is not None:
        out.append(
            (
                f"voice: sessions per core at p99 ≤ 300 ms ≥ {TARGET_KNEE}× ADK's `/run_live`",
                "met" if knee["ratio"] >= TARGET_KNEE else "not met",
                f"{_knee_text(ours['voice_knee']['median'])} vs "
                f"{_knee_text(adk['voice_knee']['median'])} = {_pr(knee)}",
            )
        )
    a, b = _at(ours, TARGET_AT), _at(adk, TARGET_AT)
    if a and b:
        p99 = paired_key(a, b, "eos_audio_p99_ms")
        out.append(
            (
                f"voice: p99 end of speech → first audio at {TARGET_AT} sessions ≤ ADK's",
                "met" if (p99["ratio"] or 9) <= 1.0 else "not met",
                f"{_f(a['eos_audio_p99_ms'])} vs {_f(b['eos_audio_p99_ms'])} ms = {_pr(p99)}",
            )
        )
    return out


def section(results: dict[str, Any]) -> list[str]:
    voice = results.get("voice")
    names = _names(results)
    if not voice or not names:
        return []
    plan = voice["plan"]
    lines = [
        "## Voice\n",
        f"Push-to-talk voice sessions on the emulator's Live API (`{voice['model']}`, a "
        "process of its own): each session does "
        f"{plan['turns']} turn(s) of {plan['speech_s']:g} s of 16 kHz 16-bit PCM sent in 40 ms "
        f"frames at real time, then the end of speech, then a spoken answer of "
        f"{plan['answer_tokens']} chunks of {voice['chunk_s'] * 1e3:.0f} ms (24 kHz PCM and its "
        f"transcript) streamed at real time, then {plan['pause_s']:g} s of pause; sessions "
        "start spread over one turn. The servers are pinned to core "
        + ",".join(map(str, voice["server_cores"]))
        + (
            f", this client and the emulator to core {','.join(map(str, others))}"
            if (others := voice["client_and_emulator_cores"])
            else " (one core: nothing else pinned)"
        )
        + ". End of speech → first audio: from sending the end of speech to the first frame "
        "with model audio, over every turn (a session's first turn also opens its Live API "
        "connection); % of a core per session: server CPU over the sessions' summed open "
        "time; generator load: how busy this client and the emulator kept their cores (a "
        "level over 85 % measures them as much as the server); medians of repetitions.\n",
    ]
    for target, verdict, numbers in targets(results):
        lines.append(f"- {target}: **{verdict}** — {numbers}")
    lines += [
        "",
        "| row | sessions | reps | complete | EoS → first audio p50 ms | p99 ms "
        "| first turn p50 ms | later turns p99 ms | % of a core per session "
        "| server CPU | client CPU | emulator CPU | generator load | peak RSS MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in names:
        for lv in _row(results, name)["voice"]:  # type: ignore[index]
            lines.append(
                f"| {name} | {lv['sessions']} | {len(lv['reps'])} | {lv['completion']:.0%} "
                f"| {_f(lv['eos_audio_p50_ms'])} | {_f(lv['eos_audio_p99_ms'])} "
                f"| {_f(lv['first_turn_p50_ms'])} | {_f(lv['later_turns_p99_ms'])} "
                f"| {_f(lv['core_per_session'] * 100, 2)} % "
                f"| {_f(lv['server_cpu_util'] * 100)} % | {_f(lv['client_cpu_util'] * 100)} % "
                f"| {_f(lv['emulator_cpu_util'] * 100)} % "
                f"| {_f(lv.get('generator_load', float('nan')) * 100)} % "
                f"| {_f(lv['peak_rss_kb'] / 1024 if lv.get('peak_rss_kb') else None)} |"
            )
    lines += [
        "",
        "| row | sessions per core at p99 ≤ 300 ms | per repetition |",
        "|---|---|---|",
    ]
    for name in names:
        k = _row(results, name)["voice_knee"]  # type: ignore[index]
        reps = ", ".join(_f(r["sessions_per_core"]) if r else "–" for r in k["reps"])
        lines.append(f"| {name} | {_knee_text(k['median'])} | {reps or '–'} |")
    ours, adk = _row(results, OURS), _row(results, ADK)
    if ours and adk:
        lines += [
            "",
            f"`{OURS}` ÷ `{ADK}` (paired; lower is better):\n",
            "| sessions | EoS → first audio p50 | p99 | % of a core per session |",
            "|---:|---:|---:|---:|",
        ]
        for lv in ours["voice"]:
            a, b = lv, _at(adk, lv["sessions"])
            if b:
                lines.append(
                    f"| {lv['sessions']} | {_pr(paired_key(a, b, 'eos_audio_p50_ms'))} "
                    f"| {_pr(paired_key(a, b, 'eos_audio_p99_ms'))} "
                    f"| {_pr(paired_key(a, b, 'core_per_session'))} |"
                )
    lines.append("")
    return lines
