"""`adk-asgi serve` in a subprocess: the one way the tests start it.

``with Serve(*args) as server:`` starts ``adk-asgi serve *args`` on a free loopback port,
waits until it answers HTTP, and stops it at the end; ``server.base`` is its root URL,
``server.url`` its chat endpoint, ``server.output()`` everything it printed. The special
cases use its parts: several servers started together and then waited for (their start-ups
overlap), a signal to the process group (workers draining on SIGTERM), ``kill -9`` (a crash),
another program (the ``adk-asgi`` of a fresh virtual environment).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

import httpx

from . import forked
from .paths import ROOT
from .ports import free_port

DEFAULT_MOUNT = "/api/chat"
# The default program: forked from a warm fork server instead (support.forked), the same
# ``main()`` without the 2.5 s of CPU its imports and ADK's warm-up cost each start.
EXEC: tuple[str, ...] = (sys.executable, "-m", "adk_asgi")


class Serve:
    """``adk-asgi serve`` started at construction, in a process group of its own.

    Never with a Gemini key: environment variables starting with ``drop_env`` (``GOOGLE_``)
    are dropped, then ``env`` is added. ``token_delay`` and ``log_level``, when given, become
    their flags (``args`` come after them, so a test's own flag wins). Its stdout and stderr
    go to a file, never to a pipe (a verbose server must not block on a full pipe); with
    ``stdout=False`` only stderr is kept (e.g. JSON log lines alone).
    """

    def __init__(
        self,
        *args: str,
        token_delay: float | None = None,
        log_level: str | None = None,
        env: dict[str, str] | None = None,
        drop_env: tuple[str, ...] = ("GOOGLE_",),
        cwd: Path | str = ROOT,
        program: Sequence[str | Path] = EXEC,
        stdout: bool = True,
        ready_timeout: float = 60,
    ) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        mount = args[args.index("--mount") + 1] if "--mount" in args else DEFAULT_MOUNT
        self.url = self.base + mount
        self.ready_timeout = ready_timeout
        flags = ["--host", "127.0.0.1", "--port", str(self.port)]
        if token_delay is not None:
            flags += ["--token-delay", str(token_delay)]
        if log_level is not None:
            flags += ["--log-level", log_level]
        environment = {k: v for k, v in os.environ.items() if not k.startswith(drop_env)}
        environment |= env or {}
        self._log = tempfile.NamedTemporaryFile("w+")
        self._final: str | None = None
        self.command = [*map(str, program), "serve", *flags, *args]
        self.proc: subprocess.Popen[str] | forked.ForkedServe
        if tuple(program) == EXEC and forked.enabled():
            self.proc = forked.ForkedServe(
                self.command[len(EXEC) :],
                environment,
                str(cwd),
                self._log.name,
                stdout,
            )
        else:
            self.proc = subprocess.Popen(
                self.command,
                cwd=cwd,
                env=environment,
                stdout=self._log if stdout else subprocess.DEVNULL,
                stderr=self._log,
                text=True,
                start_new_session=True,
            )

    def __enter__(self) -> Serve:
        try:
            return self.wait_ready()
        except BaseException:
            self.stop()
            raise

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    def wait_ready(self) -> Serve:
        """Returns once the server answers HTTP (any status). If it exits or does not answer
        within ``ready_timeout`` seconds, stops it and raises with its output."""
        deadline = time.monotonic() + self.ready_timeout
        while True:
            try:
                httpx.get(f"{self.base}/healthz", timeout=5)
                return self
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                code = self.stop()
                raise RuntimeError(
                    f"{' '.join(self.command)} did not start (exit code {code}):\n" + self.output()
                )
            time.sleep(0.1)

    def output(self) -> str:
        """Everything the server printed so far (all of it, once stopped)."""
        if self._final is not None:
            return self._final
        self._log.flush()
        self._log.seek(0)
        return self._log.read()

    def signal(self, signum: int) -> None:
        """``signum`` to the server's process group (the supervisor and its workers)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signum)

    def stop(self, timeout: float = 20) -> int:
        """SIGTERM to the group, SIGKILL after ``timeout`` seconds; the exit code (negative:
        the signal that ended it). Stopping a stopped server is harmless."""
        if self.proc.poll() is None:
            self.signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.signal(signal.SIGKILL)
            code = self.proc.wait()
        self.signal(signal.SIGKILL)  # workers a killed supervisor left behind
        if self._final is None:
            self._final = self.output()
            self._log.close()
        return code


@contextmanager
def serve(
    *args: str,
    token_delay: float = 0.01,
    env: dict[str, str] | None = None,
    output: list[str] | None = None,
) -> Iterator[str]:
    """`Serve` (the offline demo agent unless ``args`` name a target) at warning level;
    yields its base URL. ``output`` gets everything the server printed, once it stopped."""
    server = Serve(*args, token_delay=token_delay, log_level="warning", env=env)
    try:
        with server:
            yield server.base
    finally:
        if output is not None:
            output.append(server.output())
