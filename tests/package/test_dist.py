"""The Python distributions as users get them: `python -m build` makes an sdist and a wheel
that `twine check` accepts; the wheel carries the built page and `py.typed`; installed
into a fresh virtual environment (no editable install: the wheel's dependencies come
from the package index, through pip's cache), `adk-asgi serve` serves the page and a chat
turn; and each extra brings what its feature imports (`redis`: the Redis stream store,
`postgres`: sessions in PostgreSQL, `otel`: the metrics endpoint), checked against real
servers."""

from __future__ import annotations

import asyncio
import email
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import httpx
import pytest
import redis

import adk_asgi
from adk_asgi.cli.site import WEB_DIR

from support import ROOT, Serve, chat_body, free_port, parse_sse, types_of, user_message
from support.pg_server import PostgresServer, find_bindir
from support.redis_server import RedisServer

VERSION: Final = adk_asgi.__version__
ADK_RANGE: Final = "<2.14,>=2.13"  # as the metadata writes pyproject's >=2.13,<2.14
# How long each step took (printed at the end of the module, for the report).
TIMES: dict[str, float] = {}


@contextmanager
def _timed(step: str) -> Iterator[None]:
    start = time.monotonic()
    yield
    TIMES[step] = time.monotonic() - start


def _run(
    *argv: str | Path, cwd: Path, timeout: float = 900, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GOOGLE_", "VIRTUAL_ENV", "PYTHON"))
    } | (env or {})
    return subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


@dataclass(frozen=True)
class Dists:
    sdist: Path
    wheel: Path


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dists]:
    """The release script's build (``scripts/release``: the sdist, the wheel from it) and
    its fresh environment with the wheel installed and checked (the npm tarball is packed
    and installed by tests/clients/test_js_client.py)."""
    out = tmp_path_factory.mktemp("dist")
    with _timed("scripts/release --no-npm --check wheel (build, fresh venv + the wheel)"):
        done = _run(
            ROOT / "scripts" / "release",
            "--out",
            out,
            "--no-npm",
            "--check",
            "wheel",
            cwd=ROOT,
            env={"PYTHON": sys.executable, "PIP_NO_COMPILE": "1"},
        )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"wheel installs into {out / 'venv-wheel'}" in done.stdout, done.stdout
    yield Dists(out / f"adk_asgi-{VERSION}.tar.gz", out / f"adk_asgi-{VERSION}-py3-none-any.whl")
    print("\n" + "\n".join(f"  {step}: {seconds:.1f} s" for step, seconds in TIMES.items()))


@pytest.fixture(scope="module")
def env(dists: Dists) -> Path:
    """The release script's fresh virtual environment (no system site-packages) with the
    wheel installed."""
    where = dists.wheel.parent / "venv-wheel"
    assert (where / "bin" / "adk-asgi").is_file()
    assert "include-system-site-packages = false" in (where / "pyvenv.cfg").read_text()
    return where


def _install_extra(where: Path, requirement: str) -> subprocess.CompletedProcess[str]:
    """One extra of the wheel into the environment. With uv when scripts/test put it in
    .venv: the same index and the same newest versions in range as pip (what is checked
    here is what each extra brings, not the installer), without pip's resolve of the whole
    environment in Python (about 12 s of CPU per extra). Else with pip, without .pyc up
    front (what is imported compiles on first use)."""
    uv = Path(sys.executable).with_name("uv")
    if uv.is_file():
        installer = [uv, "pip", "install", "--python", where / "bin" / "python"]
    else:
        installer = [where / "bin" / "python", "-m", "pip", "install", "--no-compile"]
    return _run(*installer, "--quiet", requirement, cwd=where.parent)


# -- the distributions ------------------------------------------------------------------


@pytest.mark.slow
def test_twine_check(dists: Dists) -> None:
    done = _run(
        sys.executable, "-m", "twine", "check", "--strict", dists.sdist, dists.wheel, cwd=ROOT
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2, done.stdout


@pytest.mark.slow
def test_wheel_contents(dists: Dists) -> None:
    with zipfile.ZipFile(dists.wheel) as wheel:
        names = set(wheel.namelist())
        metadata = email.message_from_bytes(wheel.read(f"adk_asgi-{VERSION}.dist-info/METADATA"))
        page = {name: wheel.read(name) for name in names if name.startswith("adk_asgi/_web/")}
        license_text = wheel.read(f"adk_asgi-{VERSION}.dist-info/licenses/LICENSE")
    assert "adk_asgi/py.typed" in names and "adk_asgi/demo/__init__.py" in names
    # the page, byte for byte as committed (and so as tests/package/test_web_page.py rebuilds it)
    committed = {
        f"adk_asgi/_web/{p.relative_to(WEB_DIR)}": p.read_bytes()
        for p in WEB_DIR.rglob("*")
        if p.is_file()
    }
    assert page == committed
    assert license_text == (ROOT / "LICENSE").read_bytes()
    assert metadata["Name"] == "adk-asgi" and metadata["Version"] == VERSION
    assert metadata["License-Expression"] == "Apache-2.0"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert sorted(metadata.get_all("Provides-Extra") or []) == sorted(extras)
    requires = metadata.get_all("Requires-Dist") or []
    assert 'redis>=5; extra == "redis"' in requires
    assert 'asyncpg>=0.29; extra == "postgres"' in requires
    # ADK as a range (patch releases), not a point: pyproject's exact specifier
    adk = [r for r in requires if r.startswith("google-adk")]
    assert sorted(r.replace(" ", "") for r in adk) == sorted(
        [
            f"google-adk{ADK_RANGE}",
            f'google-adk[db]{ADK_RANGE};extra=="postgres"',
            f'google-adk[mcp]{ADK_RANGE};extra=="test"',
        ]
    ), adk
    assert not any(name.startswith(("tests/", "examples/", "clients/")) for name in names)


@pytest.mark.slow
def test_sdist_carries_what_rebuilds_the_page(dists: Dists) -> None:
    prefix = f"adk_asgi-{VERSION}/"
    with tarfile.open(dists.sdist) as sdist:
        names = {n.removeprefix(prefix) for n in sdist.getnames()}
    for required in (
        "pyproject.toml",
        "MANIFEST.in",
        "README.md",
        "CHANGELOG.md",
        "LICENSE",
        "SECURITY.md",
        "adk_asgi/__init__.py",
        "adk_asgi/py.typed",
        "adk_asgi/_web/index.html",
        # the page's sources and lockfile, and those of the npm client it imports
        "examples/web/package.json",
        "examples/web/package-lock.json",
        "examples/web/vite.config.ts",
        "examples/web/src/App.tsx",
        "clients/js/package.json",
        "clients/js/package-lock.json",
        "clients/js/tsup.config.ts",
        "clients/js/src/index.ts",
        "clients/js/LICENSE",
        "clients/js/README.md",
        "clients/js/CHANGELOG.md",
        "examples/mount_in_fastapi.py",
    ):
        assert required in names, required
    for name in names:
        assert not re.search(r"(^|/)(node_modules|dist|__pycache__|\.venv)(/|$)", name), name
        assert not name.startswith(("tests/", "benchmarks/", "scripts/")), name


def test_version_is_written_once() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]
    dynamic = pyproject["tool"]["setuptools"]["dynamic"]
    assert dynamic["version"] == {"attr": "adk_asgi.__version__"}
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in changelog and f"## [{VERSION}]" in changelog


# -- the installed wheel ------------------------------------------------------------------


@contextmanager
def _serve(where: Path, *args: str) -> Iterator[str]:
    """`adk-asgi serve` from the venv, run outside the checkout (so nothing of it is
    importable); yields its base URL."""
    with Serve(
        *args,
        token_delay=0,
        log_level="warning",
        program=[where / "bin" / "adk-asgi"],
        cwd=where.parent,
        drop_env=("GOOGLE_", "VIRTUAL_ENV", "PYTHON"),
        ready_timeout=90,
    ) as server:
        yield server.base


def _chat_turn(url: str, chat_id: str) -> str:
    response = httpx.post(
        f"{url}/api/chat", json=chat_body(chat_id, user_message("hello there")), timeout=30
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    chunks = parse_sse(response.text)
    assert types_of(chunks)[0] == "start" and types_of(chunks)[-2:] == ["finish", "[DONE]"]
    return "".join(c["delta"] for c in chunks if isinstance(c, dict) and c["type"] == "text-delta")


@pytest.mark.slow
def test_wheel_serves_the_page_and_a_chat_turn(env: Path) -> None:
    where = _run(
        env / "bin" / "python",
        "-c",
        "import adk_asgi; print(adk_asgi.__file__); print(adk_asgi.__version__)",
        cwd=env.parent,
    )
    assert where.returncode == 0, where.stderr
    installed_at, version = where.stdout.split()
    assert Path(installed_at).is_relative_to(env) and version == VERSION
    with _timed("adk-asgi serve from the venv: up, page, one chat turn"), _serve(env) as url:
        page = httpx.get(f"{url}/", timeout=10)
        assert page.status_code == 200 and '<div id="root"></div>' in page.text
        script = re.search(r'src="\./(assets/[^"]+\.js)"', page.text)
        assert script, page.text
        asset = httpx.get(f"{url}/{script.group(1)}", timeout=10)
        assert asset.status_code == 200 and "javascript" in asset.headers["content-type"]
        assert asset.content == (WEB_DIR / script.group(1)).read_bytes()
        assert 'You said: "hello there"' in _chat_turn(url, "dist-chat")


def _python(where: Path, code: str) -> subprocess.CompletedProcess[str]:
    return _run(where / "bin" / "python", "-c", code, cwd=where.parent)


PG_CHECK: Final = (
    "from adk_asgi import session_service_from_url; "
    "session_service_from_url('postgresql+asyncpg://u@127.0.0.1:9/db')"
)


@pytest.mark.slow
def test_each_extra_brings_what_its_feature_imports(
    env: Path, dists: Dists, tmp_path: Path
) -> None:
    if shutil.which("redis-server") is None or find_bindir() is None:
        pytest.fail(
            "needs redis-server and PostgreSQL's server binaries (scripts/test installs them)",
            pytrace=False,
        )
    # Without extras the features say which extra they need (or at least fail).
    redis_missing = _python(env, "from adk_asgi import RedisStreamStore")
    assert redis_missing.returncode != 0
    assert "pip install 'adk-asgi[redis]'" in redis_missing.stderr
    assert _python(env, PG_CHECK).returncode != 0

    with _timed("install the wheel's [redis] extra"):
        assert _install_extra(env, f"{dists.wheel}[redis]").returncode == 0
    assert _python(env, PG_CHECK).returncode != 0  # redis brought nothing for postgres

    with RedisServer(tmp_path) as server, _serve(env, "--redis-url", server.url) as url:
        assert 'You said: "hello there"' in _chat_turn(url, "dist-redis")
        store = redis.Redis.from_url(server.url)
        try:
            assert any(b"dist-redis" in key for key in store.keys("*"))  # the store was used
        finally:
            store.close()

    with _timed("install the wheel's [postgres] extra"):
        assert _install_extra(env, f"{dists.wheel}[postgres]").returncode == 0
    pg = PostgresServer(find_bindir() or Path()).start()
    try:
        db = pg.create_database("dist")
        with _serve(env, "--session-db", db) as url:
            assert 'You said: "hello there"' in _chat_turn(url, "dist-pg")
        assert asyncio.run(_session_ids(db)) == ["dist-pg"]
    finally:
        pg.stop()

    # Without the wsproto extra, --ws wsproto is one line naming it; with it, it serves.
    missing = _run(
        env / "bin" / "adk-asgi",
        "serve",
        "--ws",
        "wsproto",
        "--port",
        str(free_port()),
        cwd=env.parent,
        timeout=120,
    )
    assert missing.returncode == 2
    assert missing.stderr.strip().endswith("pip install 'adk-asgi[wsproto]'"), missing.stderr
    with _timed("install the wheel's [wsproto] extra"):
        assert _install_extra(env, f"{dists.wheel}[wsproto]").returncode == 0
    with _serve(env, "--ws", "wsproto") as url:
        assert 'You said: "hello there"' in _chat_turn(url, "dist-wsproto")

    # Without the otel extra, --metrics-port says which extra it needs; with it, it serves.
    missing = _run(
        env / "bin" / "adk-asgi",
        "serve",
        "--metrics-port",
        str(free_port()),
        cwd=env.parent,
        timeout=120,
    )
    assert missing.returncode != 0
    assert "pip install 'adk-asgi[otel]'" in missing.stderr
    with _timed("install the wheel's [otel] extra"):
        assert _install_extra(env, f"{dists.wheel}[otel]").returncode == 0
    metrics_port = free_port()
    with _serve(env, "--metrics-port", str(metrics_port)) as url:
        assert 'You said: "hello there"' in _chat_turn(url, "dist-otel")
        scraped = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).text
        assert "adk_asgi_turns_total{" in scraped


async def _session_ids(url: str) -> list[str]:
    asyncpg = pytest.importorskip("asyncpg")
    connection = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        rows = await connection.fetch("SELECT id FROM sessions")
    finally:
        await connection.close()
    return [row["id"] for row in rows]


# -- the documented commands, from a fresh environment -----------------------------------

DOC_PAGES: Final = (
    ROOT / "README.md",
    ROOT / "docs" / "getting-started.md",
    ROOT / "docs" / "testing" / "gemini-emulator.md",
)
# Documented commands this test does not run here, and where they are run instead.
ELSEWHERE: Final = {
    "scripts/demo": "tests/package/test_benchmarks.py, in a copy of the repository (a fresh .venv)",
    "scripts/test": "the command that runs this test",
    "npm install adk-asgi": "tests/clients/test_js_client.py installs the packed tarball",
    "pip install -e '.[testing]'": "tests/package/test_benchmarks.py, in a copy of the repository",
}
REAL_KEY: Final = "your-real-key"  # the emulator page's placeholder, accepted by the stand-in
CLIENT: Final = """
import json, sys
from google import genai
from google.genai import types
tools = [types.Tool(function_declarations=[types.FunctionDeclaration(name=sys.argv[2])])]
client = genai.Client()
answer = client.models.generate_content(model="gemini-2.5-flash", contents=sys.argv[1],
                                        config=types.GenerateContentConfig(tools=tools))
print(json.dumps({"text": answer.text, "calls": [[c.name, c.args] for c in
                                                 answer.function_calls or ()]}))
"""


def _chat(shell: Any, text: str, chat_id: str) -> tuple[str, list[dict[str, Any]]]:
    response = httpx.post(
        f"http://127.0.0.1:{shell.port}/api/chat",
        json=chat_body(chat_id, user_message(text)),
        timeout=60,
    )
    assert response.status_code == 200, response.text
    chunks = [c for c in parse_sse(response.text) if isinstance(c, dict)]
    return "".join(c["delta"] for c in chunks if c["type"] == "text-delta"), chunks


def _python_blocks(page: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", page.read_text(), re.S | re.M)


def _project(where: Path) -> Path:
    """A user's project: ``my_pkg`` (an agent of its own: tests/agents/stocks), the quick
    start's ``my_agent.py`` (the README's, the same as getting started's) and the emulator
    page's ``fakes.py``."""
    project = where / "project"
    (quick_start,) = [b for b in _python_blocks(ROOT / "README.md") if "root_agent =" in b]
    assert quick_start in _python_blocks(ROOT / "docs" / "getting-started.md")
    project.mkdir(parents=True)
    (project / "my_agent.py").write_text(quick_start)
    (project / "my_pkg").mkdir(parents=True)
    (project / "my_pkg" / "__init__.py").write_text("")
    shutil.copy(ROOT / "tests" / "agents" / "stocks" / "agent.py", project / "my_pkg" / "agent.py")
    page = (ROOT / "docs" / "testing" / "gemini-emulator.md").read_text()
    (fakes,) = [
        b
        for b in re.findall(r"^```python\n(.*?)^```", page, re.S | re.M)
        if "script = Script(" in b and "issue_refund" in b
    ]
    (project / "fakes.py").write_text(fakes)
    return project


@pytest.mark.slow
def test_the_documented_commands_run_from_a_fresh_environment(
    env: Path, dists: Dists, tmp_path: Path
) -> None:
    """Every install line and command of the README, getting started and the emulator
    page, run as written in a fresh virtual environment with the wheel (see
    tests/support/doc_commands.py for the port and the package's name)."""
    from adk_asgi.testing.gemini import GeminiEmulator

    from support.doc_commands import DocShell, clean_environment, documented_commands

    documented = {c for page in DOC_PAGES for c in documented_commands(page)}
    shell = DocShell(env, _project(tmp_path), str(dists.wheel), clean_environment())
    # Without the testing extra, the emulator says which extra it needs.
    missing = _run(env / "bin" / "python", "-m", "adk_asgi.testing.gemini", cwd=tmp_path)
    assert missing.returncode != 0 and "pip install 'adk-asgi[testing]'" in missing.stderr
    start = time.monotonic()
    shell.run("pip install adk-asgi")
    shell.run("pip install 'adk-asgi[testing]'")
    TIMES["pip install the two documented lines (the wheel, [testing])"] = time.monotonic() - start

    # The emulator page's test through adk-asgi (httpx's ASGITransport), as written: the
    # testing extra brings what it needs (pytest, pytest-asyncio, httpx).
    page = ROOT / "docs" / "testing" / "gemini-emulator.md"
    (example,) = [b for b in _python_blocks(page) if "ASGITransport" in b]
    (shell.cwd / "test_chat_contract.py").write_text(example)
    with _timed("the emulator page's example test, with pytest from the testing extra"):
        out = shell.run("python -m pytest -q -p no:cacheprovider test_chat_contract.py")
    assert "1 passed" in out, out

    with _timed("the documented commands (servers, curl, emulator, record, replay)"):
        # The demo, and the README's and getting started's curl.
        with shell.serving("adk-asgi serve"):
            (curl,) = [c for c in documented if c.startswith("curl -N") and "chat-1" in c]
            out = shell.run(curl)
            assert '"toolName":"get_weather"' in out and "Tokyo is sunny" in "".join(
                c.get("delta", "") for c in parse_sse(out) if isinstance(c, dict)
            )

        # The quick start: the emulator, its environment, the README's my_agent.py, whose
        # tool its curl calls by naming it; the page is told about the agent.
        with shell.serving(
            "python -m adk_asgi.testing.gemini --env-file gemini.env", env_file="gemini.env"
        ):
            shell.source("set -a; . ./gemini.env; set +a")
            with shell.serving("adk-asgi serve my_agent:root_agent"):
                (curl,) = [c for c in documented if c.startswith("curl -N") and '"q1"' in c]
                chunks = [c for c in parse_sse(shell.run(curl)) if isinstance(c, dict)]
                said = "".join(c.get("delta", "") for c in chunks)
                assert said.startswith('get_stock_price returned {"price": 123.45}'), said
                page = httpx.get(f"http://127.0.0.1:{shell.port}/agent.json", timeout=10).json()
                assert page["title"] == "Talk to broker"
                assert page["suggestions"] == ["use get_stock_price"]
            with shell.serving(
                "adk-asgi serve my_pkg.agent:root_agent --port 8000 "
                "--session-db sqlite:///sessions.db"
            ):
                said, _ = _chat(shell, "hello", "doc-sqlite")
                assert said.startswith('You said: "hello"')
            assert (shell.cwd / "sessions.db").is_file()

        # The emulator page: the demo on ADK's Gemini, then --script from the current
        # directory (fakes.py).
        shell.env = clean_environment() | {"PATH": shell.env["PATH"]}
        with shell.serving(
            "python -m adk_asgi.testing.gemini --host 127.0.0.1 --port 0 --env-file gemini.env",
            env_file="gemini.env",
        ):
            shell.source("set -a; . ./gemini.env; set +a")
            with shell.serving("adk-asgi serve --model gemini-2.5-flash"):
                said, chunks = _chat(shell, "What's the weather in Tokyo?", "doc-gemini")
            assert said == "Let me check the weather in Tokyo.The weather in Tokyo is sunny, 22°C."
            assert chunks[-1]["messageMetadata"]["model"] == "gemini-2.5-flash"
        with shell.serving(
            "python -m adk_asgi.testing.gemini --script fakes:script --env-file gemini.env",
            env_file="gemini.env",
        ):
            shell.source("set -a; . ./gemini.env; set +a")
            answer = json.loads(shell.run(f"python -c '{CLIENT}' 'refund please' issue_refund"))
        assert answer == {
            "text": "Refunding order A-1.",
            "calls": [["issue_refund", {"order_id": "A-1"}]],
        }

        # Record with the page's command (its key from the environment), from a stand-in
        # for Google (the only change: --upstream), then replay without it.
        record = next(c for c in documented if "--record chat.jsonl" in c)
        shell.env = clean_environment() | {"PATH": shell.env["PATH"]}
        with GeminiEmulator(tls=False, api_key=REAL_KEY) as google:
            with shell.serving(
                record, env_file="gemini.env", extra=f"--upstream {google.base_url}"
            ):
                shell.source("set -a; . ./gemini.env; set +a")
                recorded = shell.run(f"python -c '{CLIENT}' 'use get_stock_price' get_stock_price")
            assert [r.kind for r in google.journal] == ["generateContent"]
        assert REAL_KEY not in (shell.cwd / "chat.jsonl").read_text()
        shell.env = clean_environment() | {"PATH": shell.env["PATH"]}
        with shell.serving(
            "python -m adk_asgi.testing.gemini --replay chat.jsonl --env-file gemini.env",
            env_file="gemini.env",
        ):
            shell.source("set -a; . ./gemini.env; set +a")
            replayed = shell.run(f"python -c '{CLIENT}' 'use get_stock_price' get_stock_price")
        assert (
            json.loads(replayed)
            == json.loads(recorded)
            == {"text": None, "calls": [["get_stock_price", {}]]}
        )

    not_run = documented - set(shell.ran) - set(ELSEWHERE)
    assert not not_run, f"documented commands no test runs: {sorted(not_run)}"
