"""What `adk-asgi serve` serves: modules, attributes, ADK `App`s and `Runner`s, ADK's agent
folders (with their `.env`), and one clear line for every target it cannot serve."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService

from adk_asgi import AdkApp, AdkMiddleware
from adk_asgi.cli.targets import TargetError, load_target
from adk_asgi.demo import build_demo_agent

from support import ROOT, not_found_app

AGENT = "from adk_asgi.demo import build_demo_agent\nroot_agent = build_demo_agent()\n"
APP = textwrap.dedent("""\
    from google.adk.apps import App
    from adk_asgi.demo import build_demo_agent
    app = App(name="folder_app", root_agent=build_demo_agent())
    """)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A working directory with a package, a single-agent folder and a folder of agents."""
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "agent.py").write_text(AGENT)
    (tmp_path / "shop" / "only_app.py").write_text(APP)
    (tmp_path / "shop" / "other.py").write_text("thing = 42\n")
    agents = tmp_path / "agents"
    for name, code in (("weather", AGENT), ("billing", APP)):
        (agents / name).mkdir(parents=True)
        (agents / name / "__init__.py").write_text("from . import agent\n")
        (agents / name / "agent.py").write_text(code)
    (agents / "weather" / ".env").write_text("ADK_ASGI_TEST_FROM_DOTENV=weather\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ADK_ASGI_TEST_FROM_DOTENV", raising=False)
    yield tmp_path
    for module in [m for m in sys.modules if m.split(".")[0] in ("shop", "weather", "billing")]:
        del sys.modules[module]


def test_modules_and_attributes(project: Path) -> None:
    target = load_target("shop.agent:root_agent")
    assert (target.kind, target.value.name, target.where) == (
        "agent",
        "assistant",
        "shop.agent:root_agent",
    )
    assert load_target("shop.agent").where == "shop.agent:root_agent"
    assert load_target("shop.agent").value is load_target("shop.agent:root_agent").value
    folder = load_target("shop")  # a folder in the working directory: ADK's agent folder
    assert folder.where == "shop" and folder.value.name == "assistant"
    app = load_target("shop.only_app")
    assert app.kind == "app" and app.where == "shop.only_app:app"


def test_agent_folders_and_their_env(project: Path) -> None:
    single = load_target("agents/weather")
    assert single.kind == "agent" and os.environ["ADK_ASGI_TEST_FROM_DOTENV"] == "weather"
    assert load_target("agents", "billing").kind == "app"
    assert load_target(str(project / "agents"), "weather").value.name == "assistant"


@pytest.mark.parametrize(
    ("spec", "agent", "message"),
    [
        ("nothing_here", None, "no module named 'nothing_here'"),
        ("shop.agent:nope", None, "module 'shop.agent' has no attribute 'nope'"),
        ("shop.other", None, "shop.other defines neither root_agent nor app"),
        (
            "shop.other:thing",
            None,
            "shop.other:thing is a int, not an ADK agent, Workflow, App or Runner",
        ),
        (
            "agents",
            None,
            "'agents' holds the agents billing, weather; choose one with --agent NAME",
        ),
        ("agents", "nope", "no agent 'nope' in 'agents' (found: billing, weather)"),
        ("./missing", None, "no folder './missing'"),
        ("shop.agent", "weather", "--agent 'weather' goes with an agents folder"),
        ("bad spec!", None, "invalid target 'bad spec!'"),
    ],
)
def test_every_failure_is_one_clear_line(
    project: Path, spec: str, agent: str | None, message: str
) -> None:
    with pytest.raises(TargetError) as caught:
        load_target(spec, agent)
    text = str(caught.value)
    assert text.startswith("adk-asgi: ") and message in text and "\n" not in text


def test_a_broken_module_is_one_line_too(project: Path) -> None:
    (project / "broken.py").write_text("import this_does_not_exist_either\n")
    with pytest.raises(TargetError, match="importing 'broken' failed: ModuleNotFoundError"):
        load_target("broken")
    (project / "raising.py").write_text("raise RuntimeError('no key configured')\n")
    with pytest.raises(TargetError, match="importing 'raising' failed: RuntimeError: no key"):
        load_target("raising")


def test_serve_prints_one_line_and_nothing_about_serving(project: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "adk_asgi", "serve", "shop.nope", "--port", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode != 0
    assert result.stdout == ""  # no "chat endpoint at ..." before failing
    assert (
        result.stderr.strip() == "adk-asgi: no module named 'shop.nope' (looked in "
        f"{project} and sys.path)"
    )


def test_adk_app_is_its_own_keyword() -> None:
    agent = build_demo_agent()
    app = App(name="mine", root_agent=agent)
    chat = AdkMiddleware(not_found_app, path="/api/chat", adk_app=app)
    assert chat.adk.runtime.runner.app_name == "mine"
    for make in (
        lambda: AdkMiddleware(not_found_app, path="/api/chat", app=app),
        lambda: AdkApp(app=app),
    ):
        with pytest.raises(TypeError, match=r"adk_app=my_app"):
            make()


def test_apps_are_served_resumable_and_runners_must_be() -> None:
    app = App(name="plain", root_agent=build_demo_agent())
    runner = AdkApp(adk_app=app).runtime.runner
    assert runner.resumability_config is not None and runner.resumability_config.is_resumable
    assert app.resumability_config is None  # the user's App is not changed
    plain = Runner(app=app, session_service=InMemorySessionService())
    with pytest.raises(ValueError, match="the Runner is not resumable"):
        AdkApp(runner=plain)


def test_serve_refuses_a_runner_that_is_not_resumable(project: Path) -> None:
    (project / "runner_mod.py").write_text(
        textwrap.dedent("""\
        from google.adk.apps import App
        from google.adk.runners import Runner
        from google.adk.sessions import InMemorySessionService
        from adk_asgi.demo import build_demo_agent
        runner = Runner(app=App(name="r", root_agent=build_demo_agent()),
                        session_service=InMemorySessionService())
        """)
    )
    result = subprocess.run(
        [sys.executable, "-m", "adk_asgi", "serve", "runner_mod:runner", "--port", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode != 0 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "adk-asgi: runner_mod:runner: the Runner is not resumable"
    ), result.stderr
