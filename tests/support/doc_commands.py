"""The shell commands the documentation gives, and a shell that runs them as written in a
virtual environment (tests/package/test_dist.py, tests/package/test_benchmarks.py).

`documented_commands` reads the ``bash`` blocks of a page: one command per line, a line
ending in ``\\`` continued, comments dropped. `DocShell` runs them with the environment's
``bin`` first on ``PATH``; what it changes is said at `DocShell.rewrite` (the port, and the
package's name for the locally built distribution, since the tests run offline).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

import httpx

from .ports import free_port

__all__ = ("DocShell", "clean_environment", "documented_commands")

FENCE: Final = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)
DOC_PORT: Final = "8000"


def documented_commands(page: Path) -> list[str]:
    """Every command of the page's ``bash`` blocks, comments and continuations resolved."""
    commands: list[str] = []
    for block in FENCE.findall(page.read_text()):
        pending = ""
        heredoc: str | None = None
        for line in block.splitlines():
            if heredoc is not None:  # a here-document belongs to its command
                pending += "\n" + line
                if line.strip() == heredoc:
                    commands.append(pending)
                    pending, heredoc = "", None
                continue
            code = _without_comment(line).rstrip()
            if not code and not pending:
                continue
            if code.endswith("\\"):
                pending += code[:-1].rstrip() + " "
                continue
            pending += code.strip() if pending else code
            if match := re.search(r"<<-?'?(\w+)'?", pending):
                heredoc = match.group(1)
                continue
            commands.append(pending.strip())
            pending = ""
    return commands


def _without_comment(line: str) -> str:
    """``line`` without a trailing ``# comment`` (outside quotes)."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index]
    return line


class DocShell:
    """Runs documented commands in ``cwd`` with ``venv`` first on ``PATH``.

    ``package`` (a wheel or a source tree) stands for ``adk-asgi`` in ``pip install``
    lines; a server (``adk-asgi serve``, ``scripts/demo``) gets a free port instead of
    8000 (its ``--port 8000``, or none), which a machine running tests in parallel cannot
    promise, and ``127.0.0.1:8000`` means the server last started."""

    def __init__(self, venv: Path, cwd: Path, package: str, env: dict[str, str]) -> None:
        self.venv = venv
        self.cwd = cwd
        self.package = package
        self.env = {
            **env,
            "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
            "VIRTUAL_ENV": str(venv),
        }
        self.port = DOC_PORT
        self.ran: list[str] = []

    def rewrite(self, command: str) -> str:
        text = command
        if text.startswith("pip install "):
            text = re.sub(r"(?<=[\s'])adk-asgi(?=[\s'\[]|$)", self.package, text)
        if re.match(r"(scripts/demo|adk-asgi serve)\b", text):
            self.port = str(free_port())
            if f"--port {DOC_PORT}" in text:
                text = text.replace(f"--port {DOC_PORT}", f"--port {self.port}")
            elif "--port" not in text:
                text += f" --port {self.port}"
        return text.replace(f"127.0.0.1:{DOC_PORT}", f"127.0.0.1:{self.port}")

    def run(self, command: str, *, timeout: float = 600) -> str:
        """Run ``command`` to its end; its output (it must succeed)."""
        self.ran.append(command)
        done = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", self.rewrite(command)],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done.stdout

    def source(self, command: str) -> None:
        """Run ``command`` (``set -a; . ./x.env; set +a``) and keep the environment it
        leaves, as the next commands of that shell would."""
        self.ran.append(command)
        done = subprocess.run(
            ["bash", "-c", f"{command}\nenv -0"],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        self.env = dict(item.split("=", 1) for item in done.stdout.split("\0") if "=" in item)

    @contextmanager
    def serving(
        self, command: str, *, env_file: str | None = None, extra: str = "", within: float = 240
    ) -> Iterator[subprocess.Popen[str]]:
        """Run a server ``command`` (it runs until stopped) until the block ends: ready
        when ``env_file`` appears, else when its page answers on its port. ``extra``
        arguments are added (said where a test adds any)."""
        self.ran.append(command)
        if env_file:
            (self.cwd / env_file).unlink(missing_ok=True)
        text = self.rewrite(command) + (f" {extra}" if extra else "")
        process = subprocess.Popen(
            ["bash", "-c", text],
            cwd=self.cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + within
            while not self._ready(env_file):
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    out = process.stdout.read() if process.stdout else ""
                    raise AssertionError(f"{command} did not start:\n{out[-4000:]}")
                time.sleep(0.2)
            yield process
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()

    def _ready(self, env_file: str | None) -> bool:
        if env_file:
            return (self.cwd / env_file).is_file()
        try:
            return httpx.get(f"http://127.0.0.1:{self.port}/", timeout=5).status_code == 200
        except httpx.TransportError:
            return False


def clean_environment() -> dict[str, str]:
    """This process's environment without Python's, a virtual environment's or Google's
    settings (the documented commands get nothing else)."""
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GOOGLE_", "GEMINI_", "VIRTUAL_ENV", "PYTHON", "SSL_CERT"))
    }
