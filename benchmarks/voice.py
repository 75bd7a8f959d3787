"""The voice phase: push-to-talk voice sessions against the emulator's Live API.

A session is one WebSocket doing ``turns`` turns: the user speaks (16 kHz 16-bit mono PCM,
a 40 ms frame every 40 ms, each sent when it would have been recorded), releases the
button (end of speech), and the model's spoken answer streams back at real time (the
voice emulator paces its chunks, ``benchmarks.emulator.VOICE``); a short pause, the next
turn. What a level measures, per contender and number of simultaneous sessions N:

* end of speech → first audio: from the client sending its end-of-speech frame to the
  first frame holding model audio (p50 and p99 over every turn of every session);
* % of a core per session: the server process's CPU time over the sessions' summed
  open time (CPU-seconds per session-second), with the server pinned to one core;
* peak RSS; and whether every turn of every session got all of its audio.

``knee`` reads a sweep over N: the sessions per core at which p99 stays ≤ 300 ms.
Sessions start spread over one turn's length, so their ends of speech are spread too
(a steady load, not N users releasing the button at the same instant).

The contenders (``benchmarks.rows``: the ``-voice`` rows): adk-asgi's protocol A (binary
microphone frames, ``audio_control`` start/stop: manual activity detection, the page's
push-to-talk; model audio comes as ``data-pcm`` chunks) and ADK's api_server ``/run_live``
(``LiveRequest`` JSON, the audio base64 in ``blob``; its Live API setup keeps automatic
activity detection, which ``/run_live`` has no parameter to turn off, so the end of speech
is ``audio_stream_end``, which ends the turn at once; model audio comes as events with
``inlineData``). Protocol B (ai 7's ``WebSocketChatTransport``) cannot carry audio: its
only request frames are ``send``, ``resume`` and ``abort``, each a ``useChat`` request,
and the transport keeps its socket to itself (docs/live-mode.md).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import math
import os
import struct
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import psutil
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import WebSocketException

from . import emulator
from .client import connect_ws
from .phases import med, pct
from .procs import HOST, Proc
from .rows import Row

RATE = 16_000
FRAME_S = 0.04
LIMIT_MS = 300.0  # the p99 end-of-speech → first-audio bound of the knee
# A level whose load generator (this client and the emulator, on the cores the servers do
# not use) kept its cores this busy measures the generator as much as the server.
GENERATOR_BOUND = 0.85


def _speech_frame() -> bytes:
    """40 ms of a 440 Hz tone at 16 kHz, loud enough to be speech to the emulator."""
    count = round(FRAME_S * RATE)
    return struct.pack(
        f"<{count}h", *(round(8000 * math.sin(2 * math.pi * 440 * i / RATE)) for i in range(count))
    )


FRAME = _speech_frame()


@dataclass(frozen=True, slots=True)
class VoiceContender:
    name: str
    url: Callable[[str], str]  # session id -> path and query
    begin: str | None  # sent before the user speaks (None: nothing)
    frame: str | bytes  # one 40 ms microphone frame as this contender sends it
    end: str  # end of speech
    audio_marker: str  # in a text frame that holds model audio
    done_marker: str  # in the text frame that ends the answer
    error_marker: str
    session_path: Callable[[str], str] | None = None  # REST path creating the session


def _msg(kind: str, **data: Any) -> str:
    return json.dumps({"type": kind, "version": "1.0", "data": data}, separators=(",", ":"))


def _blob(pcm: bytes) -> str:
    data = base64.b64encode(pcm).decode()
    return json.dumps({"blob": {"mime_type": f"audio/pcm;rate={RATE}", "data": data}})


CONTENDERS: dict[str, VoiceContender] = {
    "adk-asgi-voice": VoiceContender(
        "adk-asgi-voice",
        lambda sid: f"/api/chat?chatId={sid}&modality=audio",
        _msg("audio_control", action="start"),
        FRAME,
        _msg("audio_control", action="stop"),
        '"type":"data-pcm"',
        "data: [DONE]",
        'data: {"type":"error"',
    ),
    "adk-api-server-voice": VoiceContender(
        "adk-api-server-voice",
        lambda sid: (
            f"/run_live?app_name=bench_agent&user_id=bench&session_id={sid}&modalities=AUDIO"
        ),
        None,
        _blob(FRAME),
        json.dumps({"audio_stream_end": True}),
        '"inlineData"',
        '"turnComplete":true',
        '{"error"',
        session_path=lambda sid: f"/apps/bench_agent/users/bench/sessions/{sid}",
    ),
}


@dataclass(frozen=True)
class VoicePlan:
    """The voice phase's shape; ``answer_tokens`` is what the emulator hears ("bench N",
    one 40 ms chunk of speech per token) and must match how it was started."""

    levels: tuple[tuple[int, int], ...]  # (sessions, repetitions)
    turns: int = 3
    speech_s: float = 1.0  # what the user says per turn
    answer_tokens: int = 50  # the spoken answer: 50 × 40 ms = 2 s
    pause_s: float = 0.5  # between the end of an answer and the next turn
    limit_ms: float = LIMIT_MS

    @property
    def speech_frames(self) -> int:
        return max(1, round(self.speech_s / FRAME_S))

    @property
    def turn_s(self) -> float:
        return self.speech_s + self.answer_tokens * FRAME_S + self.pause_s


@dataclass(slots=True)
class VoiceTurn:
    t_end: float | None = None  # end of speech sent
    t_audio: float | None = None  # first model audio received after it
    audio_frames: int = 0
    done: bool = False
    error: str | None = None

    @property
    def latency(self) -> float | None:
        if self.t_end is None or self.t_audio is None:
            return None
        return self.t_audio - self.t_end


@dataclass(slots=True)
class VoiceSession:
    turns: list[VoiceTurn] = field(default_factory=list)
    t_open: float = 0.0
    t_close: float = 0.0
    error: str | None = None

    def complete(self, plan: VoicePlan) -> bool:
        return (
            self.error is None
            and len(self.turns) == plan.turns
            and all(
                t.done and t.error is None and t.audio_frames == plan.answer_tokens
                for t in self.turns
            )
        )


class _Reader:
    """Reads one session's frames; says when the current turn's answer ended."""

    def __init__(self, contender: VoiceContender) -> None:
        self.contender = contender
        self.turn: VoiceTurn | None = None
        self.ended = asyncio.Event()

    async def run(self, ws: ClientConnection) -> None:
        c = self.contender
        async for message in ws:
            if not isinstance(message, str) or (turn := self.turn) is None:
                continue
            if c.audio_marker in message:
                if turn.t_end is not None:
                    turn.audio_frames += 1
                    if turn.t_audio is None:
                        turn.t_audio = time.perf_counter()
            elif c.done_marker in message:
                if turn.t_end is not None:
                    turn.done = True
                    self.ended.set()
            elif message.startswith(c.error_marker):
                turn.error = message[:200]
        self.ended.set()  # the server closed the socket


async def voice_session(
    host: str,
    port: int,
    contender: VoiceContender,
    plan: VoicePlan,
    session_id: str,
    *,
    start_at: float,
    compression: str | None,
    limit_s: float,
) -> VoiceSession:
    """One session: connect at ``start_at`` (the loop's clock), ``plan.turns`` turns, close."""
    result = VoiceSession()
    loop = asyncio.get_running_loop()
    await asyncio.sleep(max(0.0, start_at - loop.time()))
    ws: ClientConnection | None = None
    reader_task: asyncio.Task[None] | None = None
    try:
        async with asyncio.timeout(limit_s):
            result.t_open = time.perf_counter()
            ws = await connect_ws(host, port, contender.url(session_id), compression)
            reader = _Reader(contender)
            reader_task = asyncio.create_task(reader.run(ws))
            for _ in range(plan.turns):
                turn = VoiceTurn()
                result.turns.append(turn)
                reader.turn = turn
                reader.ended.clear()
                if contender.begin is not None:
                    await ws.send(contender.begin)
                t0 = loop.time()
                for k in range(plan.speech_frames):
                    # A frame leaves when the microphone has recorded it.
                    await asyncio.sleep(max(0.0, t0 + (k + 1) * FRAME_S - loop.time()))
                    await ws.send(contender.frame)
                turn.t_end = time.perf_counter()
                await ws.send(contender.end)
                await reader.ended.wait()
                if not turn.done:
                    result.error = turn.error or f"closed mid-turn ({ws.close_code})"
                    break
                await asyncio.sleep(plan.pause_s)
    except TimeoutError:
        result.error = "timeout"
    except (OSError, WebSocketException) as exc:
        result.error = f"{type(exc).__name__}: {exc}"
    finally:
        result.t_close = time.perf_counter()
        if reader_task is not None:
            reader_task.cancel()
            with contextlib.suppress(BaseException):
                await reader_task
        if ws is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(5):
                    await ws.close()
    return result


async def create_sessions(host: str, port: int, contender: VoiceContender, n: int) -> list[str]:
    """Session ids; created over REST first when the contender needs that (ADK's
    /run_live), outside the timed part."""
    ids = [uuid.uuid4().hex for _ in range(n)]
    path = contender.session_path
    if path is None:
        return ids
    async with httpx.AsyncClient(base_url=f"http://{host}:{port}", timeout=30) as rest:
        for i in range(0, n, 50):
            responses = await asyncio.gather(
                *[rest.post(path(s), json={}) for s in ids[i : i + 50]]
            )
            for response in responses:
                response.raise_for_status()
    return ids


# -- a level ------------------------------------------------------------------------------


def _cpu_of(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        t = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return None
    return float(t.user + t.system)


async def voice_level(
    proc: Proc,
    contender: VoiceContender,
    n: int,
    plan: VoicePlan,
    *,
    compression: str | None,
    emulator_pid: int | None = None,
    generator_cores: int = 1,
) -> dict[str, Any]:
    """``n`` simultaneous sessions of ``plan.turns`` turns, their starts spread over one
    turn's length; ``generator_cores``: the cores this client and the emulator share."""
    ids = await create_sessions(HOST, proc.port, contender, n)
    loop = asyncio.get_running_loop()
    spread = plan.turn_s
    limit = plan.turns * (plan.turn_s + 30) + spread + 30
    cpu0, ccpu0, ecpu0 = proc.cpu(), time.process_time(), _cpu_of(emulator_pid)
    start, t0 = time.perf_counter(), loop.time()
    sessions = await asyncio.gather(
        *[
            voice_session(
                HOST,
                proc.port,
                contender,
                plan,
                session_id,
                start_at=t0 + i * spread / n,
                compression=compression,
                limit_s=limit,
            )
            for i, session_id in enumerate(ids)
        ]
    )
    wall = time.perf_counter() - start
    server_cpu, client_cpu = proc.cpu() - cpu0, time.process_time() - ccpu0
    ecpu1 = _cpu_of(emulator_pid)
    emulator_util = (ecpu1 - ecpu0) / wall if ecpu0 is not None and ecpu1 else None
    open_s = sum(s.t_close - s.t_open for s in sessions)
    turns = [t for s in sessions for t in s.turns]
    latencies = [t.latency * 1e3 for t in turns if t.latency is not None]
    later = [t.latency * 1e3 for s in sessions for t in s.turns[1:] if t.latency is not None]
    # A session's first turn also opens its Live API connection.
    firsts = [lat * 1e3 for s in sessions if s.turns and (lat := s.turns[0].latency) is not None]
    complete = sum(s.complete(plan) for s in sessions)
    errors: dict[str, int] = {}
    for s in sessions:
        if not s.complete(plan):
            key = (s.error or _turn_problem(s, plan))[:100]
            errors[key] = errors.get(key, 0) + 1
    return {
        "sessions": n,
        "turns": len(turns),
        "complete": complete,
        "completion": complete / n,
        "audio_frames": sum(t.audio_frames for t in turns),
        "wall": wall,
        "eos_audio_p50_ms": med(latencies),
        "eos_audio_p99_ms": pct(latencies, 0.99),
        "eos_audio_max_ms": max(latencies, default=float("nan")),
        "first_turn_p50_ms": med(firsts),
        "later_turns_p99_ms": pct(later, 0.99),
        "server_cpu_s": server_cpu,
        "session_s": open_s,
        # CPU-seconds per session-second: the share of a core one open session costs.
        "core_per_session": server_cpu / open_s if open_s else float("nan"),
        "server_cpu_util": server_cpu / wall,
        "client_cpu_util": client_cpu / wall,
        "emulator_cpu_util": emulator_util,
        # How busy the load generator kept its cores (1.0: saturated).
        "generator_load": (client_cpu / wall + (emulator_util or 0.0)) / generator_cores,
        "rss_after_kb": proc.rss_kb(),
        "errors": errors,
    }


def _turn_problem(s: VoiceSession, plan: VoicePlan) -> str:
    for i, t in enumerate(s.turns):
        if t.error is not None:
            return t.error
        if not t.done or t.audio_frames != plan.answer_tokens:
            return (
                f"turn {i + 1}: {t.audio_frames} of {plan.answer_tokens} audio frames, "
                f"end {'seen' if t.done else 'missing'}"
            )
    return f"{len(s.turns)} of {plan.turns} turns"


def summarize_voice(runs: list[dict[str, Any]], hwm_kb: int) -> dict[str, Any]:
    return {
        "sessions": runs[0]["sessions"],
        "reps": runs,
        "completion": min(r["completion"] for r in runs),
        "eos_audio_p50_ms": med([r["eos_audio_p50_ms"] for r in runs]),
        "eos_audio_p99_ms": med([r["eos_audio_p99_ms"] for r in runs]),
        "first_turn_p50_ms": med([r["first_turn_p50_ms"] for r in runs]),
        "later_turns_p99_ms": med([r["later_turns_p99_ms"] for r in runs]),
        "core_per_session": med([r["core_per_session"] for r in runs]),
        "server_cpu_util": med([r["server_cpu_util"] for r in runs]),
        "client_cpu_util": med([r["client_cpu_util"] for r in runs]),
        "emulator_cpu_util": med([r["emulator_cpu_util"] or float("nan") for r in runs]),
        "generator_load": med([r["generator_load"] for r in runs]),
        "rss_after_kb": runs[-1]["rss_after_kb"],
        "peak_rss_kb": hwm_kb,
    }


def knee(
    points: list[tuple[int, float, float, float]], limit_ms: float = LIMIT_MS
) -> dict[str, Any] | None:
    """Sessions (per core: the server has one) at which p99 end of speech → first audio
    stays ≤ ``limit_ms``, from ``(sessions, completion, p99 ms, generator load)`` per
    level: the last level that holds before the first that does not, then the crossing
    interpolated linearly towards that one. ``load_bound``: the level that broke it had a
    saturated load generator (``GENERATOR_BOUND``), so the server's own knee may be
    higher. None when no level was measured."""
    if not points:
        return None
    held: tuple[int, float] | None = None
    broke: tuple[int, float, float] | None = None
    for n, completion, p99, load in sorted(points):
        if completion >= 1.0 and p99 <= limit_ms:
            held = (n, p99)
        else:
            broke = (n, p99 if completion >= 1.0 else math.inf, load)
            break
    load_bound = broke is not None and broke[2] >= GENERATOR_BOUND
    if held is None:
        return {
            "held": None,
            "broke": broke[0] if broke else None,
            "sessions_per_core": 0.0,
            "load_bound": load_bound,
        }
    estimate = float(held[0])
    if broke is not None and math.isfinite(broke[1]) and broke[1] > held[1]:
        estimate = held[0] + (limit_ms - held[1]) * (broke[0] - held[0]) / (broke[1] - held[1])
    return {
        "held": held[0],
        "broke": broke[0] if broke else None,
        "sessions_per_core": estimate,
        # No level broke it: the knee is above the sweep's top.
        "above_sweep": broke is None,
        "load_bound": load_bound,
    }


def knees(levels: list[dict[str, Any]], limit_ms: float = LIMIT_MS) -> dict[str, Any]:
    """The knee of the medians, and of each repetition (repetition *i* of every level)."""
    med_points = [
        (lv["sessions"], lv["completion"], lv["eos_audio_p99_ms"], lv["generator_load"])
        for lv in levels
    ]
    reps = min((len(lv["reps"]) for lv in levels), default=0)
    per_rep = [
        knee(
            [
                (
                    lv["sessions"],
                    lv["reps"][i]["completion"],
                    lv["reps"][i]["eos_audio_p99_ms"],
                    lv["reps"][i]["generator_load"],
                )
                for lv in levels
            ],
            limit_ms,
        )
        for i in range(reps)
    ]
    return {"median": knee(med_points, limit_ms), "reps": per_rep}


# -- the phase ----------------------------------------------------------------------------


async def _warm(
    proc: Proc, contender: VoiceContender, plan: VoicePlan, compression: str | None
) -> None:
    """One short session (lazy imports, the first Live connection), then warm-up is over."""
    short = replace(plan, turns=1, pause_s=0.0)
    (session_id,) = await create_sessions(HOST, proc.port, contender, 1)
    s = await voice_session(
        HOST,
        proc.port,
        contender,
        short,
        session_id,
        start_at=asyncio.get_running_loop().time(),
        compression=compression,
        limit_s=60,
    )
    if not s.complete(short):
        raise RuntimeError(f"warm-up session failed: {s.error or _turn_problem(s, short)}")
    proc.warm()


def _contender(row: Row) -> VoiceContender:
    assert row.base.client is not None
    return CONTENDERS[row.base.client]


class VoicePhase:
    """The voice emulator and the voice rows' processes (each pinned to its core once
    warmed up, the emulator and this client kept off it), then the levels."""

    def __init__(
        self,
        rows: list[Row],
        plan: VoicePlan,
        log_dir: Path,
        results: dict[str, Any],
        *,
        compression: str | None,
        log: Callable[[str], None],
    ) -> None:
        self.rows = rows
        self.plan = plan
        self.log_dir = log_dir
        self.out: dict[str, dict[str, Any]] = results["contenders"]
        self.compression = compression
        self.log = log
        self.procs: dict[str, Proc] = {}
        self.server_cpus = {c for r in rows for c in r.knobs.cpus}
        every = set(range(os.cpu_count() or 1))
        self.others = every - self.server_cpus if self.server_cpus < every else set()
        self._stack = contextlib.AsyncExitStack()
        results["voice"] = {
            "plan": asdict(plan),
            "server_cores": sorted(self.server_cpus),
            "client_and_emulator_cores": sorted(self.others),
            "model": emulator.VOICE_MODEL,
            "chunk_s": emulator.VOICE_CHUNK_S,
        }

    async def start(self) -> None:
        """The emulator, then every row started and warmed up side by side."""
        speech = emulator.VoiceSpeech(self.plan.answer_tokens)
        await self._stack.enter_async_context(
            emulator.running(self.log_dir, voice=speech, cpus=self.others or None)
        )
        self._stack.push_async_callback(self._stop)
        self.log(f"voice: starting {', '.join(r.name for r in self.rows)}")
        await asyncio.gather(*[self._up(row) for row in self.rows])

    async def _up(self, row: Row) -> None:
        proc = Proc(row, log_dir=self.log_dir)
        self.procs[row.name] = proc
        try:
            await proc.start()
            startup = await proc.wait_ready()
            await _warm(proc, _contender(row), self.plan, self.compression)
            if row.knobs.cpus:
                proc.pin(row.knobs.cpus)
            self.out[row.name] = {
                "status": "measured",
                "startup_s": startup,
                "rss_after_warmup_kb": proc.rss_kb(),
                # Where its threads may run now (the pinning, as the kernel has it).
                "cores": sorted(
                    {c for t in proc.ps.threads() for c in os.sched_getaffinity(t.id)}
                    if proc.ps is not None
                    else ()
                ),
            }
        except Exception as exc:
            self.out[row.name] = {"status": f"error: {type(exc).__name__}: {exc}"}
            self.log(f"{row.name}: {self.out[row.name]['status']}")

    async def _stop(self) -> None:
        await asyncio.gather(*[p.stop() for p in self.procs.values()], return_exceptions=True)

    async def aclose(self) -> None:
        await self._stack.aclose()

    async def run(self) -> None:
        """Each level's repetitions round-robin over the rows (the order rotating per
        repetition), this client off the servers' core; then each row's knee."""
        plan, out = self.plan, self.out
        names = [r.name for r in self.rows if out.get(r.name, {}).get("status") == "measured"]
        emulator_pid = emulator.pid(voice=True)
        mine = os.sched_getaffinity(0)
        if self.others:
            os.sched_setaffinity(0, self.others)
        try:
            for n, reps in plan.levels:
                self.log(
                    f"voice: {n} sessions × {plan.turns} turns, {reps} reps, {len(names)} rows"
                )
                runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
                for rep in range(reps):
                    k = rep % max(1, len(names))
                    for name in names[k:] + names[:k]:
                        if runs[name] and runs[name][-1]["completion"] < 0.5:
                            continue  # failing at this level: more reps only burn time
                        proc = self.procs[name]
                        run = await voice_level(
                            proc,
                            _contender(proc.row),
                            n,
                            plan,
                            compression=self.compression,
                            emulator_pid=emulator_pid,
                            generator_cores=len(self.others or os.sched_getaffinity(0)),
                        )
                        runs[name].append(run)
                        self.log(
                            f"  {name}: {run['complete']}/{n} complete, end of speech → "
                            f"first audio p50 {run['eos_audio_p50_ms']:.0f} ms, p99 "
                            f"{run['eos_audio_p99_ms']:.0f} ms, "
                            f"{run['core_per_session']:.2%} of a core per session"
                        )
                for name, name_runs in runs.items():
                    if name_runs:
                        summary = summarize_voice(name_runs, self.procs[name].hwm_kb())
                        out[name].setdefault("voice", []).append(summary)
        finally:
            os.sched_setaffinity(0, mine)
        for name in names:
            out[name]["voice_knee"] = knees(out[name].get("voice", []), plan.limit_ms)
