"""The npm client `adk-asgi` (clients/js): its version follows the Python package's, it
type-checks, its Vitest suite passes against a real `adk-asgi serve` with ai 5, 6 and 7,
and the packed tarball installs, imports, runs a chat and type-checks in an empty
project with the lowest and newest release of each `ai` major it supports."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest

import adk_asgi

from support import ROOT, serve
from support.web_harness import CLIENT_DIR, WEB_DIR, client_build_lock, web_tooling_problem

PACKAGE_JSON: Final = CLIENT_DIR / "package.json"
# The lowest and the newest tested release of each major the peer range allows.
AI_VERSIONS: Final = ("5.0.92", "5.0.277", "6.0.0", "6.0.326", "7.0.0", "7.0.173")


def _manifest() -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads(PACKAGE_JSON.read_text())
    return manifest


def _node(
    *command: str, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    problem = web_tooling_problem()
    if problem:
        pytest.fail(problem, pytrace=False)
    with client_build_lock():
        return subprocess.run(
            list(command),
            cwd=CLIENT_DIR,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env={**os.environ, **(env or {})},
        )


# -- the manifest -----------------------------------------------------------------------


def test_version_is_the_python_packages() -> None:
    version = _manifest()["version"]
    assert version == adk_asgi.__version__
    # each changelog has a section for it
    for changelog in (CLIENT_DIR / "CHANGELOG.md", ROOT / "CHANGELOG.md"):
        assert re.search(rf"^## \[?{re.escape(version)}\]?", changelog.read_text(), re.M), changelog
    # the page's lockfile records the linked package: it must not go stale
    lock = json.loads((WEB_DIR / "package-lock.json").read_text())
    assert lock["packages"]["../../clients/js"]["version"] == version
    assert (
        lock["packages"]["../../clients/js"]["peerDependencies"] == _manifest()["peerDependencies"]
    )


def test_manifest_is_publishable() -> None:
    manifest = _manifest()
    assert manifest["name"] == "adk-asgi" and "private" not in manifest
    assert manifest["type"] == "module" and manifest["sideEffects"] is False
    assert manifest["exports"]["."] == {
        "types": "./dist/index.d.ts",
        "import": "./dist/index.js",
        "default": "./dist/index.js",
    }
    assert manifest["types"] == "./dist/index.d.ts"
    assert manifest["files"] == ["dist", "README.md", "CHANGELOG.md", "LICENSE"]
    assert manifest["license"] == "Apache-2.0"
    assert (CLIENT_DIR / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()
    assert manifest["engines"] == {"node": ">=20"}
    assert "dependencies" not in manifest  # nothing but its peer, `ai`
    # the peer range is what the packaging test installs: its lowest version of each
    # major, and nothing the package does not test
    assert manifest["peerDependencies"] == {"ai": "^5.0.92 || ^6.0.0 || ^7.0.0"}
    lowest = {v.split(".")[0]: v for v in reversed(AI_VERSIONS)}
    assert [f"^{lowest[major]}" for major in ("5", "6", "7")] == (
        manifest["peerDependencies"]["ai"].split(" || ")
    )
    check = (CLIENT_DIR / "test" / "pack" / "check.mjs").read_text()
    listed = re.search(r"const VERSIONS = \[([^\]]*)\]", check)
    assert listed and re.findall(r"'([^']+)'", listed.group(1)) == list(AI_VERSIONS)
    # the Vitest projects are the newest of each major
    dev = manifest["devDependencies"]
    assert (dev["ai5"], dev["ai6"], dev["ai"]) == ("npm:ai@5.0.277", "npm:ai@6.0.326", "7.0.173")


# -- the package's own tests ------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.node
def test_typecheck_and_vitest_suite(tmp_path: Path) -> None:
    typecheck = _node("npm", "run", "typecheck", "--silent")
    assert typecheck.returncode == 0, typecheck.stdout + typecheck.stderr
    report = tmp_path / "vitest.json"
    with serve(token_delay=0.005) as url:
        done = _node(
            "npx",
            "vitest",
            "run",
            "--reporter=json",
            f"--outputFile={report}",
            env={"ADK_ASGI_URL": url},
        )
    assert report.exists(), done.stdout + done.stderr
    result: dict[str, Any] = json.loads(report.read_text())
    failed = [
        t["fullName"]
        for f in result["testResults"]
        for t in f["assertionResults"]
        if t["status"] == "failed"
    ]
    assert failed == [] and done.returncode == 0, (failed, done.stderr[-3000:])
    # per ai version: the transport's 13 and the browser tools' 14 (ai 5 skips the 12
    # that need approvals: it has none); once: audio 6, frames 12, liveUrl 9, types 3
    assert (result["numPassedTests"], result["numPendingTests"]) == (105, 12), result


@pytest.mark.slow
@pytest.mark.node
def test_packed_tarball_installs_imports_runs_and_typechecks() -> None:
    with serve(token_delay=0.005) as url:
        done = _node("node", "test/pack/check.mjs", env={"ADK_ASGI_URL": url})
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-6000:]
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert sorted(r["ai"] for r in results) == sorted(AI_VERSIONS), output
    for r in results:
        approvals = not r["ai"].startswith("5.")
        assert r["sse"] == "ok" and r["live"] == ("ok with approval" if approvals else "ok"), r
        assert "declarations.ts" in r["typecheck"], r
        assert ("sample-approvals.ts" in r["typecheck"]) == approvals, r
    assert "all passed" in done.stdout
