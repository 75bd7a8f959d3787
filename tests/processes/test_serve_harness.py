"""The test harness's `Serve` (tests/support/serve.py): a server forked from the warm fork
server (support.forked) behaves as an exec'd one where a test can see it, and
``ADK_ASGI_TEST_EXEC=1`` execs it (docs/development/index.md says both)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support import Serve, forked


@pytest.mark.parametrize("exec_", [False, True], ids=["forked", "exec"])
def test_forked_and_execd_servers_agree(
    exec_: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if exec_:
        monkeypatch.setenv("ADK_ASGI_TEST_EXEC", "1")
    # A target only its working directory and PYTHONPATH make importable, then a bad flag:
    # the CLI's own exit code and usage line, through the output the test reads.
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "shop.py").write_text("x = 1\n")
    server = Serve("shop:missing", "--no-such-flag", cwd=tmp_path, env={"PYTHONPATH": "lib"})
    assert isinstance(server.proc, subprocess.Popen) == exec_
    assert isinstance(server.proc, forked.ForkedServe) != exec_
    assert server.proc.wait(60) == 2
    server.stop()
    assert "usage: adk-asgi" in server.output() and "--no-such-flag" in server.output()
    # A working directory's module, found as an exec'd `python -m adk_asgi` finds it.
    found = Serve("shop:missing", cwd=tmp_path, env={"PYTHONPATH": "lib"})
    assert found.proc.wait(60) != 0
    found.stop()
    assert "module 'shop' has no attribute 'missing'" in found.output()
