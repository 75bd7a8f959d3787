"""Process-level knobs of a benchmark process, and the launcher that applies them.

``python -m benchmarks.knobs [--gc-threshold A,B,C] [--gc-freeze] [--loop asyncio|uvloop]
[--no-gc-time] -- -m MODULE ARGS...`` applies the knobs, then runs ``MODULE`` exactly as
``python -m MODULE ARGS...`` would (``runpy``), so ``-- -m adk_asgi serve ...`` is the
CLI users run, with whatever process-level defaults it sets itself.

- ``--gc-threshold``: ``gc.set_threshold(A, B, C)`` before the module is imported.
- ``--gc-freeze``: ``gc.collect(); gc.freeze()`` when the harness says warm-up is over
  (``SIGUSR1``, sent to every benchmark process after its warm-up; a no-op without it).
- ``--loop``: the event loop of a uvicorn server's ``loop="auto"`` (uvicorn's choice is
  uvloop when installed) and of the in-process ceiling (``BENCH_LOOP``; Python's
  asyncio loop by default).
- GC accounting (on unless ``--no-gc-time``): ``gc.callbacks`` time every collection
  per generation; ``SIGUSR2`` writes the totals, with ``gc.get_stats()``, as JSON to
  ``$BENCH_STATS_FILE``. Its own cost is two Python calls per collection.
- The parent-death signal: a benchmark process gets SIGTERM when the harness that
  started it (``$BENCH_PARENT_PID``) dies, so a killed run leaves no servers behind.

Environment variables (``OTEL_SDK_DISABLED``, ...) are the harness's business: it sets
them on the process it starts.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import gc
import json
import os
import runpy
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

LOOPS = ("asyncio", "uvloop")


@dataclass(frozen=True)
class Knobs:
    """The knobs of one benchmark row (``ROW@knob+knob`` on the harness command line)."""

    gc_threshold: tuple[int, int, int] | None = None
    gc_freeze: bool = False
    loop: str | None = None  # None: the process's own default
    gc_time: bool = True
    env: tuple[tuple[str, str], ...] = ()
    gemini: bool = False  # ADK's Gemini against the emulator (benchmarks.emulator)
    # The cores it runs on once warmed up (the harness pins every thread: ``Proc.pin``;
    # start-up and warm-up use every core); (): any.
    cpus: tuple[int, ...] = ()

    @classmethod
    def parse(cls, text: str, base: Knobs | None = None) -> Knobs:
        """``gc=20000,50,50+freeze+loop=uvloop+otel-off+env=K=V+gctime=off+gemini+cpu=0``
        on top of ``base``; an empty string is ``base``."""
        knobs = base or cls()
        for item in filter(None, text.split("+")):
            key, _, value = item.partition("=")
            if key == "gc":
                knobs = replace(knobs, gc_threshold=parse_threshold(value))
            elif key == "freeze":
                knobs = replace(knobs, gc_freeze=True)
            elif key == "loop" and value in LOOPS:
                knobs = replace(knobs, loop=value)
            elif key == "otel-off":
                knobs = replace(knobs, env=(*knobs.env, ("OTEL_SDK_DISABLED", "true")))
            elif key == "env" and "=" in value:
                k, _, v = value.partition("=")
                knobs = replace(knobs, env=(*knobs.env, (k, v)))
            elif key == "gctime" and value in ("on", "off"):
                knobs = replace(knobs, gc_time=value == "on")
            elif key == "gemini" and not value:
                knobs = replace(knobs, gemini=True)
            elif key == "cpu" and value:
                knobs = replace(knobs, cpus=parse_cpus(value))
            else:
                raise ValueError(
                    f"unknown knob {item!r} (gc=A,B,C, freeze, loop=asyncio|"
                    "uvloop, otel-off, env=K=V, gctime=on|off, gemini, cpu=N[,M])"
                )
        return knobs

    def launcher_args(self) -> list[str]:
        args: list[str] = []
        if self.gc_threshold is not None:
            args += ["--gc-threshold", ",".join(map(str, self.gc_threshold))]
        if self.gc_freeze:
            args.append("--gc-freeze")
        if self.loop is not None:
            args += ["--loop", self.loop]
        if not self.gc_time:
            args.append("--no-gc-time")
        return args

    def describe(self) -> str:
        parts = []
        if self.gemini:
            parts.append("ADK `Gemini` via the emulator, 8 tokens/chunk")
        if self.gc_threshold is not None:
            parts.append("gc.set_threshold(" + ", ".join(map(str, self.gc_threshold)) + ")")
        if self.gc_freeze:
            parts.append("gc.freeze() after warm-up")
        if self.loop is not None:
            parts.append(f"{self.loop} loop")
        parts += [f"{k}={v}" for k, v in self.env]
        if not self.gc_time:
            parts.append("no GC timing")
        if self.cpus:
            parts.append("pinned to core " + ",".join(map(str, self.cpus)))
        return ", ".join(parts) or "defaults"


def parse_threshold(value: str) -> tuple[int, int, int]:
    numbers = tuple(int(x) for x in value.split(","))
    if len(numbers) != 3:
        raise ValueError(f"gc threshold is A,B,C, not {value!r}")
    return numbers[0], numbers[1], numbers[2]


def parse_cpus(value: str) -> tuple[int, ...]:
    cpus = tuple(sorted({int(x) for x in value.split(",") if x}))
    if not cpus or min(cpus) < 0:
        raise ValueError(f"cores are N[,M...], not {value!r}")
    return cpus


class GcClock:
    """Time spent in collections, per generation (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.seconds = [0.0, 0.0, 0.0]
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds[info["generation"]] += time.perf_counter() - self._started


def die_with_parent() -> None:
    """Linux: get SIGTERM when the process named by ``BENCH_PARENT_PID`` dies."""
    parent = os.environ.get("BENCH_PARENT_PID")
    if parent is None or not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != int(parent):  # the parent died before prctl
        raise SystemExit(1)


def loop_factory() -> Callable[[], Any] | None:
    """The loop the ceiling runs on: ``BENCH_LOOP`` (set by ``--loop``), else asyncio's."""
    if os.environ.get("BENCH_LOOP") == "uvloop":
        import uvloop

        return uvloop.new_event_loop
    return None


def _use_loop(loop: str) -> None:
    os.environ["BENCH_LOOP"] = loop
    import uvicorn.config

    # uvicorn resolves loop="auto" through this table when it starts serving.
    uvicorn.config.LOOP_FACTORIES["auto"] = uvicorn.config.LOOP_FACTORIES[loop]


def install(*, freeze: bool, gc_time: bool, stats_file: Path | None) -> None:
    clock = GcClock() if gc_time else None
    if clock is not None:
        gc.callbacks.append(clock)
    frozen = [0]

    def warm(_signum: int, _frame: Any) -> None:
        if freeze and not frozen[0]:
            gc.collect()
            gc.freeze()
            frozen[0] = gc.get_freeze_count()

    seq = [0]

    def dump(_signum: int, _frame: Any) -> None:
        if stats_file is None:
            return
        seq[0] += 1
        try:
            loop = type(asyncio.get_running_loop()).__module__
        except RuntimeError:
            loop = os.environ.get("BENCH_LOOP", "asyncio") + " (between runs)"
        data = {
            "seq": seq[0],
            "gc_s": clock.seconds if clock else None,
            "gc_stats": gc.get_stats(),
            "frozen": gc.get_freeze_count(),
            "threshold": gc.get_threshold(),
            "loop": loop,
        }
        tmp = stats_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(stats_file)

    signal.signal(signal.SIGUSR1, warm)
    signal.signal(signal.SIGUSR2, dump)


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv:
        raise SystemExit("usage: python -m benchmarks.knobs [knobs] -- -m MODULE ARGS...")
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="python -m benchmarks.knobs")
    parser.add_argument("--gc-threshold", type=parse_threshold, default=None)
    parser.add_argument("--gc-freeze", action="store_true")
    parser.add_argument("--loop", choices=LOOPS, default=None)
    parser.add_argument("--no-gc-time", action="store_true")
    args = parser.parse_args(argv[:split])
    rest = argv[split + 1 :]
    if len(rest) < 2 or rest[0] != "-m":
        raise SystemExit("expected -- -m MODULE ARGS...")
    die_with_parent()
    if args.gc_threshold is not None:
        gc.set_threshold(*args.gc_threshold)
    if args.loop is not None:
        _use_loop(args.loop)
    stats = os.environ.get("BENCH_STATS_FILE")
    install(
        freeze=args.gc_freeze,
        gc_time=not args.no_gc_time,
        stats_file=Path(stats) if stats else None,
    )
    if os.environ.get("PYTHONPATH") and sys.path and sys.path[0] == os.getcwd():
        # `-m` put the working directory (the harness's root) first: an `env=PYTHONPATH=DIR`
        # knob (another checkout, for an A/B) must come before it to be the code that runs.
        sys.path.append(sys.path.pop(0))
    module = rest[1]
    sys.argv = [module, *rest[2:]]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
