"""The Gemini API emulator behind the benchmarks' ``@gemini`` rows.

``python -m benchmarks --emulator`` (or a row named ``BASE@gemini``) runs the row's
contender on ADK's real ``Gemini`` model class (google-genai's HTTP and WebSocket
clients) against ``adk_asgi.testing.gemini``, started here as a process of its own, so
its CPU is not counted in any row's. It streams "bench N" as N words in chunks of
``TOKENS_PER_CHUNK`` (what Gemini sends is closer to this than to one word per event),
so a row's text frames are ``ceil(N / TOKENS_PER_CHUNK)`` and its CPU per token is still
divided by the N tokens received.

The voice phase (``benchmarks.voice``) has an emulator of its own (``running(...,
voice=VoiceSpeech(...))``): its native-audio Live model answers every voice turn as if it
heard "bench N", one token and 40 ms of 24 kHz speech (with its transcript) per chunk, a
chunk every 40 ms: the spoken answer at real time.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

TOKENS_PER_CHUNK = 8
TEXT_MODEL = "gemini-2.5-flash"
# A Live model that answers in TEXT (native-audio ones answer in audio + transcripts).
LIVE_MODEL = "gemini-live-2.5-flash-preview"
MODELS = (TEXT_MODEL, LIVE_MODEL)
# The voice rows' Live model: native audio (answers in audio + transcripts), the one
# `adk-asgi serve --model ...` uses for live runs on Gemini.
VOICE_MODEL = "gemini-2.5-flash-native-audio-latest"
VOICE_MODELS = (TEXT_MODEL, VOICE_MODEL)
VOICE_CHUNK_S = 0.04  # seconds of speech per chunk, and between chunks

_env: dict[str, str] = {}
_voice_env: dict[str, str] = {}
_pids: dict[str, int] = {}  # "gemini" / "voice": the running emulators' process ids


def pid(voice: bool) -> int | None:
    """The running emulator's process id (its CPU is read beside a voice level's)."""
    return _pids.get("voice" if voice else "gemini")


@dataclass(frozen=True)
class VoiceSpeech:
    """How the voice emulator answers: "bench ``answer_tokens``", paced at real time."""

    answer_tokens: int


def voice_args(speech: VoiceSpeech) -> list[str]:
    return [
        "--tokens-per-chunk",
        "1",
        "--chunk-delay",
        str(VOICE_CHUNK_S),
        "--audio-seconds-per-chunk",
        str(VOICE_CHUNK_S),
        "--heard-text",
        f"bench {speech.answer_tokens}",
    ]


def model_for(live: bool) -> str:
    """The model name a row's agent uses (the emulator refuses a text model on the Live
    API and a Live model on generateContent, as Gemini does)."""
    return LIVE_MODEL if live else TEXT_MODEL


def env_for(live: bool) -> dict[str, str]:
    """What a row process needs to reach the running emulator, and its model
    (``BENCH_MODEL``, read by ``bench_model``)."""
    if not _env:
        raise RuntimeError(
            "the Gemini emulator is not running (python -m benchmarks --emulator starts it)"
        )
    return {**_env, "BENCH_MODEL": model_for(live)}


def voice_env() -> dict[str, str]:
    """What a voice row's process needs to reach the voice emulator, and its model."""
    if not _voice_env:
        raise RuntimeError("the voice emulator is not running (the voice phase starts it)")
    return {**_voice_env, "BENCH_MODEL": VOICE_MODEL}


def bench_model() -> str | None:
    """The model of a benchmark process's demo agent: None (the scripted DemoModel)
    unless the harness started it as an ``@gemini`` row."""
    return os.environ.get("BENCH_MODEL") or None


@contextlib.asynccontextmanager
async def running(
    log_dir: Path, voice: VoiceSpeech | None = None, cpus: set[int] | None = None
) -> AsyncIterator[dict[str, str]]:
    """The emulator process, up and listening, for the block's duration: the text rows'
    one, or with ``voice`` the voice phase's; ``cpus``: the cores it may run on."""
    log_dir.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 (once, at start-up)
    env = _voice_env if voice is not None else _env
    name = "voice" if voice is not None else "gemini"
    with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as tmp:
        env_file = Path(tmp) / "gemini.env"
        pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
        with open(log_dir / f"{name}-emulator.log", "wb") as log:  # noqa: ASYNC230
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "adk_asgi.testing.gemini",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--env-file",
                str(env_file),
                "--cert-dir",
                tmp,
                *(
                    voice_args(voice)
                    if voice is not None
                    else ["--tokens-per-chunk", str(TOKENS_PER_CHUNK)]
                ),
                "--log-level",
                "warning",
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                preexec_fn=pin,
            )
        try:
            async with asyncio.timeout(60):
                while not env_file.exists():
                    if proc.returncode is not None:
                        raise RuntimeError(
                            f"the Gemini emulator exited with {proc.returncode} (see {log_dir})"
                        )
                    await asyncio.sleep(0.1)
            lines = env_file.read_text().splitlines()
            env.update(dict(line.split("=", 1) for line in lines if "=" in line))
            _pids[name] = proc.pid
            yield dict(env)
        finally:
            env.clear()
            _pids.pop(name, None)
            if proc.returncode is None:
                proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), 10)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()
