"""Benchmark processes and their drivers.

``Proc`` starts one row's process (``python -m benchmarks.knobs ... -- -m ...``), waits
until it answers, reads its CPU time, RSS and GC counters, signals the end of warm-up
and stops it. ``StreamDriver`` sends a server HTTP/WebSocket streams;
``CeilingDriver`` sends a ceiling worker JSON commands. Both answer with
``StreamResult``s, so every phase treats servers and ceilings alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, BinaryIO

import httpx
import psutil

from . import emulator
from .client import (
    CONTENDERS,
    Contender,
    StreamResult,
    WsContender,
    WsPhases,
    httpx_stream,
    raw_stream,
    ws_stream,
)
from .rows import Row

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def proc_status_kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


class Proc:
    """One row's process."""

    def __init__(
        self, row: Row, *, log_dir: Path, token_delay: float = 0.0, cprofile: Path | None = None
    ) -> None:
        self.row = row
        self.name = row.name
        self.port = free_port()
        self.log_dir = log_dir
        self.token_delay = token_delay
        self.cprofile = cprofile
        tag = "".join(c if c.isalnum() or c in "-_" else "_" for c in row.name)
        self.stats_file = log_dir / f"stats-{tag}-{self.port}.json"
        kind = "ceiling" if row.kind == "ceiling" else "server"
        self.log_path = log_dir / f"{kind}-{tag}-{self.port}.log"
        self.proc: asyncio.subprocess.Process | None = None
        self.ps: psutil.Process | None = None
        self._stats_seq = 0
        self.ready_info: dict[str, Any] = {}
        self._lock = asyncio.Lock()  # one ceiling command at a time

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    async def start(self) -> None:
        row = self.row
        if row.kind == "voice":
            gemini = emulator.voice_env()
        else:
            gemini = emulator.env_for(row.live) if row.knobs.gemini else {}
        cmd = [
            sys.executable,
            "-m",
            "benchmarks.knobs",
            *row.knobs.launcher_args(),
            "--",
            "-m",
            *row.base.command(self.port, self.token_delay, emulator.MODELS if gemini else None),
        ]
        if self.cprofile is not None and row.base.cprofile:
            cmd += ["--profile", str(self.cprofile)]
        env = dict(
            os.environ,
            PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
            PYTHONWARNINGS="ignore",
            BENCH_PARENT_PID=str(os.getpid()),
            BENCH_STATS_FILE=str(self.stats_file),
        )
        env.update(dict(row.knobs.env))
        env.update(gemini)
        with self._fresh_log() as log:
            if row.kind == "ceiling":
                self.proc = await asyncio.create_subprocess_exec(
                    *cmd,
                    cwd=ROOT,
                    env=env,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=log,
                    limit=64 << 20,
                )
            else:
                self.proc = await asyncio.create_subprocess_exec(
                    *cmd, cwd=ROOT, env=env, stdout=log, stderr=asyncio.subprocess.STDOUT
                )
        self.ps = psutil.Process(self.proc.pid)

    def _new_port(self) -> None:
        self.port = free_port()
        self.stats_file = self.stats_file.with_name(
            f"{self.stats_file.name.rsplit('-', 1)[0]}-{self.port}.json"
        )
        self.log_path = self.log_path.with_name(
            f"{self.log_path.name.rsplit('-', 1)[0]}-{self.port}.log"
        )

    def _listens(self) -> bool:
        """Whether this row's process (or a child of it) listens on ``self.port``."""
        assert self.ps is not None
        try:
            procs = [self.ps, *self.ps.children(recursive=True)]
            return any(
                c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == self.port
                for p in procs
                for c in p.net_connections(kind="inet")
            )
        except psutil.Error:
            return False

    def _fresh_log(self) -> BinaryIO:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.stats_file.unlink()
        return open(self.log_path, "wb")

    async def wait_ready(self, limit_s: float = 120.0) -> float:
        start = time.perf_counter()
        assert self.proc is not None
        if self.row.kind == "ceiling":
            assert self.proc.stdout is not None
            line = await asyncio.wait_for(self.proc.stdout.readline(), limit_s)
            if not line or not json.loads(line).get("ready"):
                raise RuntimeError(f"ceiling {self.name} did not start (see {self.log_path})")
            self.ready_info = json.loads(line)
            return time.perf_counter() - start
        deadline = start + limit_s
        retries = 3
        while time.perf_counter() < deadline:
            if self.proc.returncode is not None:
                if retries and b"already in use" in self.log_path.read_bytes():
                    # Another process (a test running beside this one) took the port
                    # between free_port() and the server's bind: start again elsewhere.
                    retries -= 1
                    self._new_port()
                    await self.start()
                    continue
                raise RuntimeError(
                    f"server {self.name} exited with {self.proc.returncode} (see {self.log_path})"
                )
            try:
                reader, writer = await asyncio.open_connection(HOST, self.port)
                writer.write(b"GET /__ready HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
                line = await asyncio.wait_for(reader.readline(), 5)
                writer.close()
                # Only our own server counts: another process may answer on the port.
                if line.startswith(b"HTTP/1.1") and self._listens():
                    return time.perf_counter() - start
            except (OSError, TimeoutError):
                pass
            await asyncio.sleep(0.1)
        raise RuntimeError(f"server {self.name} not ready after {limit_s}s")

    async def command(self, cmd: dict[str, Any], limit_s: float) -> dict[str, Any]:
        """One ceiling command and its answer."""
        assert self.proc is not None and self.proc.stdin is not None
        assert self.proc.stdout is not None
        async with self._lock:
            self.proc.stdin.write(json.dumps(cmd).encode() + b"\n")
            await self.proc.stdin.drain()
            line = await asyncio.wait_for(self.proc.stdout.readline(), limit_s)
        if not line:
            raise RuntimeError(f"ceiling {self.name} exited (see {self.log_path})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def cpu(self) -> float:
        assert self.ps is not None
        t = self.ps.cpu_times()
        return float(t.user + t.system)

    def cpu_sys(self) -> float:
        """Kernel time alone (socket writes and reads, epoll)."""
        assert self.ps is not None
        return float(self.ps.cpu_times().system)

    def rss_kb(self) -> int:
        return proc_status_kb(self.pid, "VmRSS")

    def hwm_kb(self) -> int:
        return proc_status_kb(self.pid, "VmHWM")

    def pin(self, cpus: tuple[int, ...]) -> None:
        """Every thread of the process and its children on ``cpus`` from now on (what
        ``taskset -a`` does; threads started later inherit it)."""
        assert self.ps is not None
        for p in [self.ps, *self.ps.children(recursive=True)]:
            for thread in p.threads():
                with contextlib.suppress(OSError):
                    os.sched_setaffinity(thread.id, cpus)

    def warm(self) -> None:
        """Warm-up is over (``gc.freeze()`` now, if the row asks for it)."""
        os.kill(self.pid, signal.SIGUSR1)

    async def gc_stats(self, limit_s: float = 5.0) -> dict[str, Any] | None:
        """The process's GC totals (``benchmarks.knobs``), None if it does not answer."""
        self._stats_seq += 1
        os.kill(self.pid, signal.SIGUSR2)
        deadline = time.perf_counter() + limit_s
        while time.perf_counter() < deadline:
            with contextlib.suppress(OSError, ValueError):
                data: dict[str, Any] = json.loads(self.stats_file.read_text())
                if data["seq"] >= self._stats_seq:
                    self._stats_seq = data["seq"]
                    return data
            await asyncio.sleep(0.01)
        return None

    async def stop(self) -> None:
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        if proc.stdin is not None:  # a ceiling worker ends with its input
            proc.stdin.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 10)
            if proc.returncode is not None:
                return
        proc.send_signal(signal.SIGINT)
        try:
            await asyncio.wait_for(proc.wait(), 20)
        except TimeoutError:
            proc.kill()
            await asyncio.wait_for(proc.wait(), 5)


@contextlib.asynccontextmanager
async def running(row: Row, log_dir: Path, **kwargs: Any) -> AsyncIterator[Proc]:
    proc = Proc(row, log_dir=log_dir, **kwargs)
    try:
        await proc.start()
        await proc.wait_ready()
        yield proc
    finally:
        await proc.stop()


class StreamDriver:
    """Streams to a server: raw HTTP/1.1 (or httpx) for SSE, ``websockets`` for live."""

    def __init__(
        self, proc: Proc, client: str = "raw", ws_compression: str | None = "deflate"
    ) -> None:
        assert proc.row.base.client is not None
        self.proc = proc
        self.chunk = emulator.TOKENS_PER_CHUNK if proc.row.knobs.gemini else 1
        self.contender: Contender | WsContender = CONTENDERS[proc.row.base.client]
        self.client_kind = client
        self.ws_compression = ws_compression
        self.http: httpx.AsyncClient | None = None
        self.rest: httpx.AsyncClient | None = None
        contender = self.contender
        if isinstance(contender, WsContender):
            if contender.session_path is not None:
                self.rest = httpx.AsyncClient(
                    base_url=f"http://{HOST}:{proc.port}",
                    timeout=30,
                    limits=httpx.Limits(max_connections=20),
                )
        elif client == "httpx":
            self.http = httpx.AsyncClient(
                timeout=None, limits=httpx.Limits(max_connections=None, max_keepalive_connections=0)
            )

    @property
    def tool_turns(self) -> int:
        contender = self.contender
        return contender.tool_turns if isinstance(contender, WsContender) else 1

    async def sessions(self, n: int) -> list[str]:
        """Session ids for ``n`` WebSocket streams; created over REST first when the
        contender needs that (ADK's /run_live), outside every timed part."""
        ids = [uuid.uuid4().hex for _ in range(n)]
        contender = self.contender
        if (
            self.rest is None
            or not isinstance(contender, WsContender)
            or contender.session_path is None
        ):
            return ids
        path = contender.session_path
        rest = self.rest

        async def create(session_id: str) -> None:
            response = await rest.post(path(session_id), json={})
            response.raise_for_status()

        async with asyncio.timeout(120):
            for i in range(0, n, 100):
                await asyncio.gather(*[create(x) for x in ids[i : i + 100]])
        return ids

    async def stream(
        self,
        prompt: str,
        *,
        keep_stamps: bool = False,
        limit_s: float = 120.0,
        session_id: str | None = None,
        tool: bool = False,
        phases: WsPhases | None = None,
    ) -> StreamResult:
        contender = self.contender
        port = self.proc.port
        if isinstance(contender, WsContender):
            if session_id is None:
                session_id = (await self.sessions(1))[0]
            r = await ws_stream(
                HOST,
                port,
                contender,
                prompt,
                session_id=session_id,
                keep_stamps=keep_stamps,
                limit_s=limit_s,
                turns=contender.tool_turns if tool else 1,
                compression=self.ws_compression,
                phases=phases,
            )
        elif self.http is not None:
            r = await httpx_stream(
                self.http,
                f"http://{HOST}:{port}",
                contender,
                prompt,
                keep_stamps=keep_stamps,
                limit_s=limit_s,
            )
        else:
            r = await raw_stream(
                HOST, port, contender, prompt, keep_stamps=keep_stamps, limit_s=limit_s
            )
        r.chunk = self.chunk
        return r

    async def waves(
        self, prompt: str, concurrency: int, sessions: list[str], limit_s: float
    ) -> list[StreamResult]:
        """Rounds of ``concurrency`` simultaneous streams, one per session id (from
        ``sessions()``, called before the timed part)."""
        out: list[StreamResult] = []
        for w in range(-(-len(sessions) // concurrency)):
            out += await asyncio.gather(
                *[
                    self.stream(prompt, limit_s=limit_s, session_id=s)
                    for s in sessions[w * concurrency : (w + 1) * concurrency]
                ]
            )
        return out

    async def close(self) -> None:
        for client in (self.http, self.rest):
            if client is not None:
                await client.aclose()


class CeilingDriver:
    """Turns in a ceiling worker: the same answers as streams, from ADK's events."""

    tool_turns = 1

    def __init__(self, proc: Proc) -> None:
        self.proc = proc
        self.chunk = emulator.TOKENS_PER_CHUNK if proc.row.knobs.gemini else 1

    def _result(self, turn: dict[str, Any]) -> StreamResult:
        r = StreamResult(
            chunk=self.chunk,
            status=200 if not turn.get("error") else 0,
            frames=turn["frames"],
            token_frames=turn["tokens"],
            done=turn["done"],
            error=turn.get("error"),
            t_start=turn["start"],
            t_first=turn["first"],
            t_first_token=turn["first_token"],
            t_end=turn["end"],
        )
        r.stamps = turn.get("stamps") or []
        return r

    async def sessions(self, n: int) -> list[str]:
        return [""] * n  # the worker makes its own

    async def stream(
        self,
        prompt: str,
        *,
        keep_stamps: bool = False,
        limit_s: float = 120.0,
        session_id: str | None = None,
        tool: bool = False,
        phases: WsPhases | None = None,
    ) -> StreamResult:
        answer = await self.proc.command(
            {
                "turns": 1,
                "concurrency": 1,
                "prompt": prompt,
                "limit": limit_s,
                "keep_stamps": keep_stamps,
            },
            limit_s + 30,
        )
        return self._result(answer["turns"][0])

    async def waves(
        self, prompt: str, concurrency: int, sessions: list[str], limit_s: float
    ) -> list[StreamResult]:
        waves = -(-len(sessions) // concurrency)
        answer = await self.proc.command(
            {
                "turns": len(sessions),
                "concurrency": concurrency,
                "prompt": prompt,
                "limit": limit_s,
            },
            limit_s * waves + 60,
        )
        return [self._result(t) for t in answer["turns"]]

    async def close(self) -> None:
        return None


Driver = StreamDriver | CeilingDriver


def driver_for(proc: Proc, client: str = "raw", ws_compression: str | None = "deflate") -> Driver:
    if proc.row.kind == "ceiling":
        return CeilingDriver(proc)
    return StreamDriver(proc, client, ws_compression)
