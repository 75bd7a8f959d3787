"""A throwaway PostgreSQL server for the session-store tests.

Uses the server binaries of the machine's PostgreSQL (Debian's ``postgresql``
package: ``/usr/lib/postgresql/<version>/bin``, found through ``pg_config
--bindir``, a glob or ``PATH``). The cluster lives in a fresh temporary
directory, listens on a free loopback port (and a unix socket in that
directory), trusts local connections, and is removed when stopped. ``initdb``
refuses to run as root, so as root the server runs as the unprivileged
``postgres`` user the package creates.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from .ports import free_port

_TOOLS = ("initdb", "pg_ctl", "postgres")


def find_bindir() -> Path | None:
    """The directory holding initdb, pg_ctl and postgres, or None."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        if out.returncode == 0 and out.stdout.strip():
            candidates.append(Path(out.stdout.strip()))
    versions = glob.glob("/usr/lib/postgresql/*/bin")
    candidates += [Path(p) for p in sorted(versions, key=_version, reverse=True)]
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(initdb).resolve().parent)
    for directory in candidates:
        if all((directory / tool).is_file() for tool in _TOOLS):
            return directory
    return None


def _version(path: str) -> int:
    part = Path(path).parent.name
    return int(part) if part.isdigit() else 0


class PostgresServer:
    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="adk-asgi-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.user: str | None = None
        if os.geteuid() == 0:
            try:
                entry = pwd.getpwnam("postgres")
            except KeyError:
                raise RuntimeError(
                    "running as root and there is no `postgres` user to run the server as"
                ) from None
            self.user = "postgres"
            os.chown(self.root, entry.pw_uid, entry.pw_gid)

    def _run(self, *argv: str, timeout: float = 60) -> None:
        command = [str(self.bindir / argv[0]), *argv[1:]]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        result = subprocess.run(
            command, cwd=self.root, capture_output=True, text=True, timeout=timeout, check=False
        )
        if result.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(
                f"{' '.join(argv[:2])} failed ({result.returncode}):\n"
                f"{result.stdout}{result.stderr}{tail}"
            )

    @property
    def _options(self) -> str:
        return (
            f"-p {self.port} -c listen_addresses=127.0.0.1 "
            f"-c unix_socket_directories={self.root} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off"
        )

    def start(self) -> PostgresServer:
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-locale",
            "--no-sync",
        )
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-o",
            self._options,
            "-l",
            str(self.root / "server.log"),
            "-w",
            "-t",
            "60",
            "start",
        )
        return self

    def halt(self) -> None:
        """Stop the server at once, keeping its data (an outage; ``resume`` ends it)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def resume(self) -> None:
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-o",
            self._options,
            "-l",
            str(self.root / "server.log"),
            "-w",
            "-t",
            "60",
            "start",
        )

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def create_database(self, name: str) -> str:
        """A new empty database; its ``postgresql+asyncpg://`` URL."""
        command = [
            str(self.bindir / "createdb"),
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            "postgres",
            name,
        ]
        if not (self.bindir / "createdb").is_file():
            command = ["createdb", *command[1:]]
        subprocess.run(command, check=True, capture_output=True, timeout=30)
        return self.url(name)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/{database}"
