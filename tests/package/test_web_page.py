"""The chat page: the committed build equals a fresh build from examples/web (so the
page shipped in the wheel is reproducible; the build builds the npm client in clients/js
first, which the page imports), and how the CLI serves the page. The npm client's own
tests are in test_js_client.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from adk_asgi.cli.site import WEB_DIR, SiteApp, page_url

from support import ROOT, serve
from support.web_harness import WEB_DIR as EXAMPLE_DIR
from support.web_harness import client_build_lock, web_tooling_problem


def _tree(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def _node(
    *command: str, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    problem = web_tooling_problem()
    if problem:
        pytest.fail(problem, pytrace=False)
    with client_build_lock():
        return subprocess.run(
            list(command),
            cwd=EXAMPLE_DIR,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env={**os.environ, **(env or {})},
        )


# -- the built page -------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.node
def test_committed_page_equals_a_fresh_build(tmp_path: Path) -> None:
    out = tmp_path / "web"
    done = _node("npm", "run", "build", "--silent", env={"WEB_OUT_DIR": str(out)})
    assert done.returncode == 0, done.stdout + done.stderr  # tsc --noEmit, then vite build
    built, committed = _tree(out), _tree(WEB_DIR)
    assert sorted(built) == sorted(committed), (
        "adk_asgi/_web is stale: run `npm --prefix examples/web run build` and commit it"
    )
    for name, content in built.items():
        assert content == committed[name], f"{name} differs from a fresh build"


def test_built_page_is_complete_and_relative() -> None:
    index = (WEB_DIR / "index.html").read_text()
    assets = sorted(p.name for p in (WEB_DIR / "assets").iterdir())
    assert any(a.endswith(".js") for a in assets) and any(a.endswith(".css") for a in assets)
    for asset in assets:
        assert f"./assets/{asset}" in index  # relative: the page works under any prefix
    for path in WEB_DIR.rglob("*"):
        if path.is_file():
            text = path.read_bytes()
            # Top-level folders of build machines (spelled in pieces so this file does
            # not itself name them), and this checkout's own path.
            roots = [b"/" + name + b"/" for name in (b"tmp", b"root", b"work")]
            for machine_path in (*roots, str(ROOT).encode()):
                assert machine_path not in text, f"{machine_path!r} in {path.name}"


# -- serving --------------------------------------------------------------------------


async def _get(app: Any, method: str, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        return await client.request(method, path)


async def test_site_serves_the_page_and_json_errors() -> None:
    site = SiteApp(WEB_DIR)
    page = await _get(site, "GET", "/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<div id="root"></div>' in page.text
    asset = next((WEB_DIR / "assets").glob("*.js")).name
    script = await _get(site, "GET", f"/assets/{asset}")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    missing = await _get(site, "GET", "/api/unknown")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    post = await _get(site, "POST", "/")
    assert post.status_code == 405 and post.json()["error"]["code"] == "method_not_allowed"
    escape = await _get(site, "GET", "/../pyproject.toml")
    assert escape.status_code == 404


async def test_site_without_a_built_page_says_so(tmp_path: Path) -> None:
    site = SiteApp(tmp_path)
    page = await _get(site, "GET", "/")
    assert page.status_code == 404 and "no chat page" in page.text
    assert page.headers["content-type"].startswith("text/html")
    other = await _get(site, "GET", "/assets/x.js")
    assert other.status_code == 404 and other.json()["error"]["code"] == "not_found"


def test_page_url() -> None:
    assert page_url("127.0.0.1", 8000, "/api/chat") == "http://127.0.0.1:8000/"
    assert page_url("0.0.0.0", 9000, "/chat") == "http://127.0.0.1:9000/?api=/chat"
    assert page_url("::1", 8000, "/api/chat") == "http://[::1]:8000/"


def test_cli_serves_page_next_to_the_endpoint() -> None:
    with serve("--mount", "/chat") as url:
        page = httpx.get(f"{url}/", timeout=10)
        assert page.status_code == 200 and '<div id="root"></div>' in page.text
        stream = httpx.get(f"{url}/chat/some-chat/stream", timeout=10)
        assert stream.status_code == 204  # the chat endpoint, at its mount
        assert httpx.get(f"{url}/api/chat/x/stream", timeout=10).status_code == 404
