"""The Gemini API emulator behind the benchmarks' ``@gemini`` rows.

``python -m benchmarks --emulator`` (or a row named ``BASE@gemini``) runs the row's
contender on ADK's real ``Gemini`` model class (google-genai's HTTP and WebSocket
clients) against ``adk_asgi.testing.gemini``, started here as a process of its own, so
its CPU is not counted in any row's. It streams "bench N" as N words in chunks of
``TOKENS_PER_CHUNK`` (what Gemini sends is closer to this than to one word per event),
so a row's text frames are ``ceil(N / TOKENS_PER_CHUNK)`` and its CPU per token is still
divided by the N tokens received.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

TOKENS_PER_CHUNK = 8
TEXT_MODEL = "gemini-2.5-flash"
# A Live model that answers in TEXT (native-audio ones answer in audio + transcripts).
LIVE_MODEL = "gemini-live-2.5-flash-preview"
MODELS = (TEXT_MODEL, LIVE_MODEL)

_env: dict[str, str] = {}


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


def bench_model() -> str | None:
    """The model of a benchmark process's demo agent: None (the scripted DemoModel)
    unless the harness started it as an ``@gemini`` row."""
    return os.environ.get("BENCH_MODEL") or None


@contextlib.asynccontextmanager
async def running(log_dir: Path) -> AsyncIterator[dict[str, str]]:
    """The emulator process, up and listening, for the block's duration."""
    log_dir.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 (once, at start-up)
    with tempfile.TemporaryDirectory(prefix="bench-gemini-") as tmp:
        env_file = Path(tmp) / "gemini.env"
        with open(log_dir / "gemini-emulator.log", "wb") as log:  # noqa: ASYNC230
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
                "--tokens-per-chunk",
                str(TOKENS_PER_CHUNK),
                "--log-level",
                "warning",
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
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
            _env.update(dict(line.split("=", 1) for line in lines if "=" in line))
            yield dict(_env)
        finally:
            _env.clear()
            if proc.returncode is None:
                proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), 10)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()
