"""A real nginx (the Debian package) running ``examples/nginx.conf`` for one test.

The example is an ``http``-context file; only its upstream address and listen
port are replaced (each must occur exactly once, so an edit to the example that
the tests cannot follow fails loudly). A small main config around it keeps
nginx's pid, logs and temp files in the test's own directory.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

from .paths import ROOT
from .ports import free_port

EXAMPLE = ROOT / "examples" / "nginx.conf"
INSTALL_HINT = "install the Debian package (apt-get install nginx); scripts/test does it"


def nginx_binary() -> str | None:
    # /usr/sbin is not on a normal user's PATH.
    return shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")


def example_site(upstream_port: int, listen_port: int, text: str | None = None) -> str:
    """The example with our upstream and listen port (everything else untouched)."""
    text = EXAMPLE.read_text() if text is None else text
    text, n = re.subn(
        r"(?m)^(\s*server\s+)127\.0\.0\.1:8000;", rf"\g<1>127.0.0.1:{upstream_port};", text
    )
    assert n == 1, "examples/nginx.conf: expected one `server 127.0.0.1:8000;` upstream line"
    text, n = re.subn(r"(?m)^(\s*listen\s+)80;", rf"\g<1>127.0.0.1:{listen_port};", text)
    assert n == 1, "examples/nginx.conf: expected one `listen 80;` line"
    return text


def read_timeout(text: str | None = None) -> float:
    """The example's proxy_read_timeout in seconds (one value for every location)."""
    text = EXAMPLE.read_text() if text is None else text
    values = set(re.findall(r"(?m)^\s*proxy_read_timeout\s+(\d+)s?;", text))
    assert len(values) == 1, f"expected one proxy_read_timeout value, found {values}"
    return float(values.pop())


class Nginx:
    """``with Nginx(directory, upstream_port) as proxy:`` -> ``proxy.url``.

    Runs in the foreground (``daemon off``) as a child of the test, is always
    stopped on exit, and prints its error log (pytest shows it when a test fails).
    """

    def __init__(self, directory: Path, upstream_port: int, site: str | None = None) -> None:
        binary = nginx_binary()
        if binary is None:
            raise RuntimeError(f"nginx is not installed: {INSTALL_HINT}")
        self.binary = binary
        self.dir = directory
        self.upstream_port = upstream_port
        self.site = site  # example text to use instead of examples/nginx.conf
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.error_log = directory / "error.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _write_config(self) -> Path:
        d = self.dir
        for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        (d / "site.conf").write_text(example_site(self.upstream_port, self.port, self.site))
        # As root, workers would otherwise run as `nobody`, who cannot enter
        # pytest's private temp directory.
        user = "user root;\n" if os.geteuid() == 0 else ""
        conf = d / "nginx.conf"
        conf.write_text(
            f"{user}daemon off;\n"
            "worker_processes 1;\n"
            f"pid {d}/nginx.pid;\n"
            f"error_log {self.error_log} info;\n"
            "events { worker_connections 256; }\n"
            "http {\n"
            f"    access_log {d}/access.log;\n"
            f"    client_body_temp_path {d}/client_body;\n"
            f"    proxy_temp_path {d}/proxy;\n"
            f"    fastcgi_temp_path {d}/fastcgi;\n"
            f"    uwsgi_temp_path {d}/uwsgi;\n"
            f"    scgi_temp_path {d}/scgi;\n"
            f"    include {d}/site.conf;\n"
            "}\n"
        )
        return conf

    def __enter__(self) -> Nginx:
        self.dir.mkdir(parents=True, exist_ok=True)
        for _attempt in range(5):
            self.port = free_port()
            conf = self._write_config()
            stderr = (self.dir / "stderr.log").open("ab")
            self.process = subprocess.Popen(
                [self.binary, "-p", f"{self.dir}/", "-c", str(conf), "-e", str(self.error_log)],
                stdin=subprocess.DEVNULL,
                stdout=stderr,
                stderr=stderr,
            )
            stderr.close()
            if self._wait_listening():
                return self
            self._stop()
            if "Address already in use" not in self.log():
                break
        raise RuntimeError(f"nginx did not start:\n{self.log()}")

    def _wait_listening(self) -> bool:
        assert self.process is not None
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return True
            except OSError:
                time.sleep(0.02)
        return False

    def _stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()  # SIGTERM: fast shutdown, open streams are cut
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None

    def __exit__(self, *exc: object) -> None:
        self._stop()
        print(f"--- nginx error log ({self.dir}) ---\n{self.log()}")

    def log(self) -> str:
        parts = []
        for name in ("stderr.log", "error.log"):
            path = self.dir / name
            if path.exists():
                parts.append(path.read_text(errors="replace"))
        return "".join(parts)
