"""`adk-asgi serve` forked from a process that has already imported and warmed the package.

Starting ``python -m adk_asgi serve`` costs about 2.5 s of CPU before it serves anything:
importing google-adk, google-genai and the package (1.9 s), then ADK's first-run imports
and schema building (``adk_asgi.adk.warmup``, 0.6 s). The process tests start it dozens
of times. Here a fork server (the standard library's ``multiprocessing`` forkserver, one
per test process) pays that once: it imports ``adk_asgi.cli.main`` and runs the warm-up,
then every server is a fork of it that sets up what ``exec`` would have given it (its own
session and process group, working directory, environment, ``sys.path`` with
``PYTHONPATH``, ``sys.argv``, stdin from ``/dev/null``, stdout and stderr to the log) and
calls the CLI's ``main()``, exiting as the interpreter would (atexit handlers run, the
exit code or the signal that ended it reported). From ``main()`` on it runs the same code
as an exec'd server; only its start-up is cheaper.

``exec`` is still used where the start-up is what a test checks: another program (a fresh
virtual environment's ``adk-asgi``), and every server when ``ADK_ASGI_TEST_EXEC=1``.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import json
import multiprocessing
import multiprocessing.forkserver
import os
import subprocess
import sys
import traceback
from collections.abc import Mapping, Sequence
from multiprocessing.process import BaseProcess

from .paths import TESTS

# What the fork server imports once: the CLI, then ADK's first run (its import does both).
PRELOAD = "support.forkserver_preload"


def enabled() -> bool:
    return os.environ.get("ADK_ASGI_TEST_EXEC", "") != "1"


@functools.cache
def _base_path() -> tuple[str, ...]:
    """``sys.path`` of a plain ``python`` (no PYTHONPATH) after its first entry, the
    script's directory, which a server gets from its working directory instead."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "-c", "import json, sys; print(json.dumps(sys.path[1:]))"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd="/",
    ).stdout
    return tuple(json.loads(out))


@functools.cache
def _context() -> multiprocessing.context.ForkServerContext:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([PRELOAD])
    # The fork server imports PRELOAD from tests/ before it knows this process's sys.path
    # (Python 3.11), and an import error there only leaves it cold: it starts now, with
    # tests/ on its PYTHONPATH (each fork gets its own environment and sys.path).
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (str(TESTS), saved)))
    try:
        multiprocessing.forkserver.ensure_running()
    finally:
        if saved is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = saved
    return context


def _child(
    argv: list[str],
    env: dict[str, str],
    cwd: str,
    log: str,
    keep_stdout: bool,
    path: list[str],
) -> None:
    """In the fork: become what ``subprocess.Popen(start_new_session=True)`` of
    ``python -m adk_asgi serve ...`` would have been, then run the CLI."""
    os.setsid()
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    sys.path[:] = path
    # as ``python -m adk_asgi`` has it: the module's file, then the arguments
    sys.argv = [str(importlib.util.find_spec("adk_asgi.__main__").origin), *argv]  # type: ignore[union-attr]
    null = os.open(os.devnull, os.O_RDWR)
    out = os.open(log, os.O_WRONLY | os.O_APPEND)
    os.dup2(null, 0)
    os.dup2(out if keep_stdout else null, 1)
    os.dup2(out, 2)
    os.close(null)
    os.close(out)
    if env.get("PYTHONUNBUFFERED"):
        for stream in (sys.stdout, sys.stderr):
            stream.reconfigure(write_through=True)  # type: ignore[union-attr]
    from adk_asgi.cli.main import main

    code: int | str | None
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    except BaseException:
        traceback.print_exc()
        code = 1
    atexit._run_exitfuncs()  # as the interpreter does at exit
    # multiprocessing turns this into the exit code (a text: printed, then 1) and flushes
    sys.exit(code)


class ForkedServe:
    """The part of ``subprocess.Popen`` the tests use (``pid``, ``poll``, ``wait``) for a
    forked server."""

    def __init__(
        self, argv: Sequence[str], env: Mapping[str, str], cwd: str, log: str, stdout: bool
    ) -> None:
        pythonpath = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        path = [cwd, *(os.path.abspath(os.path.join(cwd, p)) for p in pythonpath)]
        path += _base_path()
        self._process: BaseProcess = _context().Process(
            target=_child,
            args=(list(argv), dict(env), cwd, log, stdout, path),
            daemon=False,
        )
        self._process.start()
        pid = self._process.pid
        assert pid is not None
        self.pid = pid

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        code = self._process.exitcode
        if code is None:
            raise subprocess.TimeoutExpired(["adk-asgi", "serve"], timeout or 0)
        return code
