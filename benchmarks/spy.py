"""Sampling profiles of a running benchmark process (py-spy), and the per-µs account.

``Recorder`` attaches ``py-spy record --native`` to a process for the length of one
measurement; ``account`` turns its samples into shares of named cost centres (the
categories of issue 14: ADK's telemetry, Context/callbacks, pydantic, sessions, GC,
our translator, the SSE channel, the stream recorder, uvicorn, the event loop, ...).
Multiplied by the CPU µs per token measured over the same window, a share is µs per
token. Every sample is attributed to exactly one centre, by the first rule (in
``RULES`` order) that matches its stack, so the centres add up to 100 %.

py-spy samples the process's threads at a fixed rate while they run (``--idle`` off),
so a share of samples is a share of CPU time; ``--native`` shows the C frames, which is
how the garbage collector (``gc_collect_main``, ``collect``) becomes visible, charged
to whatever allocation triggered it.
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import sys
from collections import Counter
from pathlib import Path
from typing import Any

Stack = tuple[str, ...]  # root first; "func (file:line)" as py-spy prints it


def py_spy() -> str | None:
    exe = Path(sys.executable).parent / "py-spy"
    return str(exe) if exe.exists() else shutil.which("py-spy")


class Recorder:
    """``py-spy record`` attached to ``pid`` until ``stop()``."""

    def __init__(self, pid: int, out: Path, rate: int = 250, native: bool = True) -> None:
        self.pid = pid
        self.out = out
        self.rate = rate
        self.native = native
        self.proc: asyncio.subprocess.Process | None = None
        self.log = out.with_suffix(".log")

    async def start(self) -> None:
        self.out.unlink(missing_ok=True)
        exe = py_spy()
        if exe is None:
            raise RuntimeError("py-spy is not installed (pip install py-spy)")
        cmd = [
            exe,
            "record",
            "--pid",
            str(self.pid),
            "--rate",
            str(self.rate),
            "--format",
            "raw",
            "--output",
            str(self.out),
            "--full-filenames",
        ]
        if self.native:
            cmd.append("--native")
        with self.log.open("wb") as log:
            self.proc = await asyncio.create_subprocess_exec(*cmd, stdout=log, stderr=log)
        await asyncio.sleep(0.5)  # attach before the measured work starts
        if self.proc.returncode is not None:
            raise RuntimeError(f"py-spy exited: {self.log.read_text()[-500:]}")

    async def stop(self) -> None:
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        proc.send_signal(signal.SIGINT)  # py-spy writes its output on SIGINT
        try:
            await asyncio.wait_for(proc.wait(), 30)
        except TimeoutError:
            proc.kill()
            await proc.wait()


def read_raw(path: Path) -> Counter[Stack]:
    """py-spy's raw (collapsed) format: ``frame;frame;... count`` per line."""
    stacks: Counter[Stack] = Counter()
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            stack, _, count = line.rpartition(" ")
            if stack and count.isdigit():
                stacks[tuple(stack.split(";"))] += int(count)
    return stacks


def _file(frame: str) -> str:
    # "name (path:line)" -> path
    inner = frame[frame.rfind("(") + 1 : -1] if frame.endswith(")") else ""
    return inner.rpartition(":")[0] or inner


def _func(frame: str) -> str:
    return frame.split(" (", 1)[0]


def _is_py(path: str) -> bool:
    return path.endswith(".py") or path.startswith("<frozen")


def _is_stdlib(path: str) -> bool:
    return path.startswith("<frozen") or ("/lib/python3" in path and "/site-packages/" not in path)


# Native frames where a thread waits (not CPU work): such samples are dropped.
_IDLE = (
    "epoll_wait",
    "uv__io_poll",
    "PyThread_acquire_lock_timed",
    "select",
    "poll",
    "sem_timedwait",
    "pthread_cond_wait",
    "pthread_cond_timedwait",
)
# Native frames that run the loop itself: the boundary above which a stack is the
# loop's, not a coroutine's.
_LOOP_NATIVE = (
    "task_step",
    "task_step_impl",
    "TaskStepMethWrapper_call",
    "Handle__run",
    "task_wakeup",
    "TaskWakeupMethWrapper_call",
)
_GC = ("gc_collect_main", "gc_collect_with_callback", "gc_collect_generations")
_WRITE = (
    "UVStream__try_write",
    "UVStream_write",
    "UVStream__exec_write",
    "sock_sendmsg",
    "__libc_send",
    "send",
    "sendmsg",
    "writev",
)

IDLE = "(idle: waiting thread)"


def classify(stack: Stack) -> str:
    """The cost centre of one sample (``IDLE`` for a thread that only waits)."""
    funcs = [_func(f) for f in stack]
    files = [_file(f) for f in stack]
    if any(f in _GC for f in funcs):
        if "GcClock.__call__" in funcs:
            return "GC: the benchmark's gc.callbacks clock"
        return "GC (the collector, all generations)"
    if funcs and (
        funcs[-1] in _IDLE
        or any(
            f in ("Condition.wait", "Queue.get") and _is_stdlib(p)
            for f, p in zip(funcs, files, strict=True)
        )
    ):
        return IDLE
    # The innermost Python frame, and the innermost frame that is not the stdlib (the
    # code that asked for the work); stop at the loop's own native frames.
    leaf = owner = -1
    for i in range(len(stack) - 1, -1, -1):
        if funcs[i] in _LOOP_NATIVE and not _is_py(files[i]):
            break
        if _is_py(files[i]):
            if leaf < 0:
                leaf = i
            if not _is_stdlib(files[i]):
                owner = i
                break
    if owner < 0:
        if (
            leaf >= 0
            and "/asyncio/" not in files[leaf]
            and "/runpy" not in files[leaf]
            and "<frozen runpy>" not in files[leaf]
            and funcs[leaf] not in ("Runner.run", "run_forever", "run_until_complete")
        ):
            return "other stdlib (no library caller on the stack)"
        return "event loop (uvloop/asyncio: scheduling, callbacks, I/O)"
    native_after = funcs[(leaf if leaf >= 0 else owner) + 1 :]
    if any(f in _WRITE for f in native_after) or (native_after and native_after[-1] == "write"):
        return "kernel: socket writes (one per send)"
    path, func = files[owner], funcs[owner]
    if "/site-packages/pydantic" in path or "/google/genai/" in path:
        # Model code: charged to whoever builds, reads or copies the models.
        for j in range(owner - 1, -1, -1):
            p = files[j]
            if (
                _is_py(p)
                and not _is_stdlib(p)
                and "/pydantic" not in p
                and "/google/genai/" not in p
            ):
                if "/adk_asgi/" in p and "/adk_asgi/demo/" not in p:
                    return "adk-asgi: pydantic/genai model calls"
                if "/adk_asgi/demo/" in p:
                    return "demo model (scripted LLM)"
                break
        return "ADK: pydantic + genai models (init, getattr, copy, validate)"
    return _owner_centre(path, func, files)


def _owner_centre(path: str, func: str, files: list[str]) -> str:
    if "/adk_asgi/demo/" in path:
        return "demo model (scripted LLM)"
    if "/adk_asgi/" in path:
        return _ours(path.rsplit("/adk_asgi/", 1)[1], func)
    if "/benchmarks/naive.py" in path:
        return "naive bridge: its own code"
    if "/benchmarks/" in path:
        return "benchmark harness code (ceiling driver, knobs)"
    if "/opentelemetry/" in path or "/google/adk/telemetry/" in path:
        return "ADK: telemetry (spans, semconv attributes, OTel context)"
    if "/google/adk/sessions/" in path:
        if any(
            "/adk_asgi/http/endpoint.py" in p
            or "/benchmarks/naive.py" in p
            or "/benchmarks/ceiling.py" in p
            for p in files
        ) and not any("/google/adk/runners.py" in p or "/google/adk/flows/" in p for p in files):
            return "session get/create (ADK InMemorySessionService)"
        return "ADK: session append_event (InMemorySessionService)"
    for needle, centre in _ADK_PARTS:
        if needle in path:
            return centre
    if "/google/adk/" in path:
        return "ADK: other modules"
    if "/uvicorn/" in path or "/httptools/" in path:
        return "uvicorn + httptools"
    if (
        "/starlette/" in path
        or "/anyio/" in path
        or "/fastapi/" in path
        or "/sse_starlette/" in path
    ):
        return "starlette / anyio / fastapi"
    if "/websockets/" in path:
        return "websockets (uvicorn's WebSocket protocol)"
    if "/msgspec/" in path:
        return "adk-asgi: chunk encoding (msgspec, wire/chunks.py)"
    if "/site-packages/" in path:
        return "other package: " + path.split("/site-packages/", 1)[1].split("/", 1)[0]
    return "other"


# adk-asgi's modules (paths under adk_asgi/) by cost centre; the first prefix that matches.
_OURS = (
    ("translate/translator.py", "adk-asgi: EventTranslator"),
    ("translate/message.py", "adk-asgi: EventTranslator"),
    ("translate/blocks.py", "adk-asgi: EventTranslator"),
    ("translate/lanes.py", "adk-asgi: EventTranslator"),
    ("wire/jsonable.py", "adk-asgi: EventTranslator"),
    ("translate/tool_parts.py", "adk-asgi: EventTranslator"),
    ("translate/response_meta.py", "adk-asgi: EventTranslator"),
    ("translate/surface.py", "adk-asgi: EventTranslator"),
    ("translate/live.py", "adk-asgi: live translator"),
    ("wire/chunks.py", "adk-asgi: chunk encoding (msgspec, wire/chunks.py)"),
    ("http/turn/sse.py", "adk-asgi: SSE channel (open, write, close)"),
    ("stores/", "adk-asgi: stream recording, owners, turn locks"),
    ("adk/sessions.py", "adk-asgi: session get/create + turn planning"),
    ("adk/memory_sessions.py", "adk-asgi: session get/create + turn planning"),
    ("http/turn/plan.py", "adk-asgi: session get/create + turn planning"),
    ("http/turn/seed.py", "adk-asgi: session get/create + turn planning"),
    ("wire/request.py", "adk-asgi: request read, decode, auth"),
    ("transport/asgi.py", "adk-asgi: request read, decode, auth"),
    ("transport/limits.py", "adk-asgi: request read, decode, auth"),
    ("transport/auth.py", "adk-asgi: request read, decode, auth"),
    ("adk/runtime.py", "adk-asgi: run config per turn"),
    ("adk/plugin.py", "adk-asgi: BridgePlugin / live gate (ADK plugin callbacks)"),
    ("live/gate/gate.py", "adk-asgi: BridgePlugin / live gate (ADK plugin callbacks)"),
    ("observability/", "adk-asgi: observability (metrics, spans, log context)"),
    ("observability/failures.py", "adk-asgi: observability (metrics, spans, log context)"),
    ("app.py", "adk-asgi: middleware, app routing, CLI page app"),
    ("middleware.py", "adk-asgi: middleware, app routing, CLI page app"),
    ("mount.py", "adk-asgi: middleware, app routing, CLI page app"),
    ("cli/", "adk-asgi: middleware, app routing, CLI page app"),
    ("live/protocol/socket.py", "adk-asgi: live socket (send lock, watchdog, limits)"),
    (
        "live/turns/conversation.py",
        "adk-asgi: live turns (Conversation: emit, record, bookkeeping)",
    ),
    ("live/protocol/protocol_a.py", "adk-asgi: live frame codec (protocol A/B)"),
    ("live/protocol/protocol_b.py", "adk-asgi: live frame codec (protocol A/B)"),
    ("live/protocol/commands.py", "adk-asgi: live frame codec (protocol A/B)"),
    ("live/run/link.py", "adk-asgi: live model link (LiveModel, resumption bookkeeping)"),
    ("live/run/models.py", "adk-asgi: live model link (LiveModel, resumption bookkeeping)"),
    ("live/", "adk-asgi: live connection (inbox, pump, run, endpoint)"),
)


def _ours(path: str, func: str) -> str:
    """The cost centre of adk-asgi's own code (``path`` relative to ``adk_asgi/``)."""
    if path == "http/turn/sse.py" and func in ("SSEChannel._listen", "SSEChannel._tick"):
        return "adk-asgi: SSE channel tasks (disconnect listener, timer)"
    for prefix, centre in _OURS:
        if path.startswith(prefix):
            return centre
    return "adk-asgi: chat endpoint (post, run, produce, emit)"


_ADK_PARTS = (
    ("/google/adk/agents/context.py", "ADK: Context / callbacks / plugins"),
    ("/google/adk/agents/callback_context.py", "ADK: Context / callbacks / plugins"),
    ("/google/adk/agents/readonly_context.py", "ADK: Context / callbacks / plugins"),
    ("/google/adk/tools/tool_context.py", "ADK: Context / callbacks / plugins"),
    ("/google/adk/plugins/", "ADK: Context / callbacks / plugins"),
    ("/google/adk/agents/invocation_context.py", "ADK: InvocationContext"),
    ("/google/adk/flows/llm_flows/", "ADK: LLM flow (finalizer, processors, planner)"),
    ("/google/adk/workflow/", "ADK: workflow (node runner, scheduler)"),
    ("/google/adk/agents/", "ADK: agents (LlmAgent, BaseAgent)"),
    ("/google/adk/runners.py", "ADK: Runner (run_async, event queue)"),
    ("/google/adk/utils/", "ADK: utils (_runner_utils, model copies)"),
    ("/google/adk/events/", "ADK: events"),
    ("/google/adk/models/", "ADK: models (LlmResponse, BaseLlm)"),
)


def account(stacks: Counter[Stack]) -> dict[str, Any]:
    """Samples per cost centre, with shares of the working (non-idle) samples."""
    centres: Counter[str] = Counter()
    for stack, n in stacks.items():
        centres[classify(stack)] += n
    idle = centres.pop(IDLE, 0)
    total = sum(centres.values())
    return {
        "samples": total,
        "idle_samples": idle,
        "centres": {
            k: {"samples": v, "share": v / total if total else 0.0}
            for k, v in centres.most_common()
        },
    }


def functions(stacks: Counter[Stack], *, self_time: bool) -> Counter[str]:
    """Samples per function (``file:function``): where the innermost Python frame is
    (``self_time``), or anywhere on the stack (inclusive, counted once per sample)."""
    out: Counter[str] = Counter()
    for stack, n in stacks.items():
        if classify(stack) == IDLE:
            continue
        names = [f"{_short(_file(f))}:{_func(f)}" for f in stack if _is_py(_file(f))]
        if self_time:
            if names:
                out[names[-1]] += n
        else:
            for name in set(names):
                out[name] += n
    return out


def _short(path: str) -> str:
    for marker in ("/site-packages/", "/lib/python3.11/", "/adk_asgi/", "/benchmarks/"):
        if marker in path:
            head = marker.strip("/") + "/" if marker in ("/adk_asgi/", "/benchmarks/") else ""
            return head + path.split(marker, 1)[1]
    return path


def top_self(stacks: Counter[Stack], n: int = 30) -> list[tuple[str, float]]:
    """The functions with the most self samples, as shares of the working samples."""
    counts = functions(stacks, self_time=True)
    total = sum(counts.values()) or 1
    return [(k, v / total) for k, v in counts.most_common(n)]


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.spy A.txt [B.txt] [--cpu A_US,B_US]``: the account of one
    py-spy raw file (or two side by side, with the difference), in % or, given the CPU
    µs per token of each window, in µs per token; then the functions whose inclusive
    share differs most."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m benchmarks.spy")
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--cpu", default=None, help="CPU µs per token of each file")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument(
        "--inclusive",
        action="store_true",
        help="compare two files by inclusive time (default: self time)",
    )
    args = parser.parse_args(argv)
    stacks = [read_raw(f) for f in args.files]
    cpu = [float(x) for x in args.cpu.split(",")] if args.cpu else [100.0] * len(stacks)
    unit = "µs/token" if args.cpu else "%"
    accounts = [account(s) for s in stacks]
    names: dict[str, None] = {}
    for a in accounts:
        names.update(dict.fromkeys(a["centres"]))
    print(f"{'cost centre':<62}" + "".join(f"{f.stem[:18]:>20}" for f in args.files))
    for name in names:
        vals = [
            (a["centres"].get(name, {}).get("share", 0.0)) * c
            for a, c in zip(accounts, cpu, strict=True)
        ]
        print(f"{name[:62]:<62}" + "".join(f"{v:20.1f}" for v in vals))
    print(f"{'total (' + unit + ')':<62}" + "".join(f"{c:20.1f}" for c in cpu))
    print(
        f"{'samples (idle dropped)':<62}"
        + "".join(f"{a['samples']:>14} ({a['idle_samples']})" for a in accounts)
    )
    if len(stacks) == 2:
        inc = [functions(s, self_time=not args.inclusive) for s in stacks]
        tot = [a["samples"] or 1 for a in accounts]
        diff = {
            k: inc[0][k] / tot[0] * cpu[0] - inc[1][k] / tot[1] * cpu[1]
            for k in set(inc[0]) | set(inc[1])
        }
        kind = "inclusive" if args.inclusive else "self"
        print(f"\n{kind} {unit}, largest differences (first − second):")
        for k, v in sorted(diff.items(), key=lambda kv: -abs(kv[1]))[: args.top]:
            print(f"  {v:+8.1f}  {k}")
    else:
        print(f"\nself time, top {args.top}:")
        for k, v in top_self(stacks[0], args.top):
            print(f"  {v * cpu[0]:8.1f}  {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
