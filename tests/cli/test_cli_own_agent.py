"""`adk-asgi serve` with a team's own agent: the app name its chats are kept under (the
App's, the agent folder's, else the root agent's; ``--app-name``), a warning when two apps
of one process share a session store under one name, a warning when it listens beyond
loopback with no ``--authenticate`` (and the hook when given), and what the chat page is
told about the agent (``agent.json``)."""

from __future__ import annotations

import logging
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.adk.sessions import InMemorySessionService

from adk_asgi import AdkApp
from adk_asgi.cli.build import build_app, resolve_target
from adk_asgi.cli.flags import parser
from adk_asgi.cli.page import DEMO_SUGGESTIONS, page_info
from adk_asgi.cli.targets import TargetError
from adk_asgi.demo import build_demo_agent

from support import ROOT, Serve, chat_body, parse_sse, text_of, user_message

STOCKS = ROOT / "tests" / "agents" / "stocks"
USERS = textwrap.dedent("""\
    from adk_asgi import AuthError

    def by_header(scope):
        for name, value in scope["headers"]:
            if name == b"x-user":
                return value.decode()
        raise AuthError(401, "Say who you are.")
    """)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A working directory holding an agent folder named unlike its agent, and an App."""
    folder = tmp_path / "trading_desk"
    folder.mkdir()
    (folder / "__init__.py").write_text("from . import agent\n")
    (folder / "agent.py").write_text((STOCKS / "agent.py").read_text())
    (tmp_path / "shop_app.py").write_text(
        "from google.adk.apps import App\nfrom adk_asgi.demo import build_demo_agent\n"
        "app = App(name='shop', root_agent=build_demo_agent())\n"
    )
    (tmp_path / "users.py").write_text(USERS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path


def _app_name(*argv: str) -> str:
    args = parser().parse_args(["serve", *argv])
    return str(build_app(args, resolve_target(args)).adk.runtime.app_name)


def test_the_app_name_is_the_served_agents(project: Path) -> None:
    assert _app_name("trading_desk.agent:root_agent") == "broker"  # the root agent's name
    assert _app_name("trading_desk") == "trading_desk"  # ADK's agent folder: its name
    assert _app_name("shop_app:app") == "shop"  # an App: its name
    assert _app_name("trading_desk", "--app-name", "desk-2") == "desk-2"
    assert _app_name("shop_app:app", "--app-name", "shop_v2") == "shop_v2"
    assert AdkApp(agent=build_demo_agent()).runtime.app_name == "assistant"
    with pytest.raises(TargetError, match="--app-name '2 shops'"):
        _app_name("trading_desk", "--app-name", "2 shops")


async def test_two_apps_on_one_store_under_one_name_warn(caplog: pytest.LogCaptureFixture) -> None:
    shared = InMemorySessionService()
    first = AdkApp(agent=build_demo_agent(), session_service=shared, warm_up=False)
    second = AdkApp(agent=build_demo_agent(), session_service=shared, warm_up=False)
    apart = AdkApp(
        agent=build_demo_agent(), session_service=shared, app_name="other", warm_up=False
    )
    own = AdkApp(agent=build_demo_agent(), warm_up=False)  # its own store in memory
    with caplog.at_level(logging.WARNING, "adk_asgi"):
        await first.startup()
        await apart.startup()
        await own.startup()
        assert not [r for r in caplog.records if "one session store" in r.getMessage()]
        await second.startup()
    [warning] = [r.getMessage() for r in caplog.records if "one session store" in r.getMessage()]
    assert "'assistant'" in warning and "app_name=" in warning
    for app in (first, second, apart, own):
        await app.shutdown()


def test_page_info_from_the_agent_or_the_flags(project: Path) -> None:
    def info(*argv: str) -> dict[str, Any]:
        args = parser().parse_args(["serve", *argv])
        shown = page_info(args, resolve_target(args))
        return {k: getattr(shown, k) for k in ("title", "description", "suggestions", "api")}

    assert info("trading_desk", "--mount", "/chat") == {
        "title": "Talk to broker",
        "description": "Quotes stock prices and places orders.",
        "suggestions": ("use get_stock_price", "use place_order"),
        "api": "chat",
    }
    assert info("trading_desk", "--title", "Desk", "--description", "", "--suggestion", "hi") == {
        "title": "Desk",
        "description": "",
        "suggestions": ("hi",),
        "api": "api/chat",
    }
    demo = info()
    assert demo["suggestions"] == DEMO_SUGGESTIONS and "demo" in demo["title"]
    assert info("adk_asgi.demo:root_agent")["suggestions"] == DEMO_SUGGESTIONS
    shop = info("shop_app:app")  # the demo agent in an App of its own is still the demo
    assert shop["suggestions"] == DEMO_SUGGESTIONS


def test_beyond_loopback_without_authenticate_it_warns(project: Path) -> None:
    """``--host 0.0.0.0`` alone: the warning; with ``--authenticate``: none, and the hook
    decides who owns a chat."""
    env = {"PYTHONPATH": str(ROOT)}
    with (
        Serve("--host", "0.0.0.0", token_delay=0, cwd=project, env=env) as open_,
        Serve(
            "--host",
            "0.0.0.0",
            "--authenticate",
            "users:by_header",
            token_delay=0,
            cwd=project,
            env=env,
        ) as guarded,
    ):
        body = chat_body("mine", user_message("hello"))
        assert httpx.post(guarded.url, json=body, timeout=30).status_code == 401
        alice = httpx.post(guarded.url, json=body, headers={"x-user": "alice"}, timeout=30)
        assert 'You said: "hello"' in text_of(parse_sse(alice.text))
        assert httpx.get(f"{guarded.url}/mine", headers={"x-user": "alice"}).status_code == 200
        assert httpx.get(f"{guarded.url}/mine", headers={"x-user": "bob"}).status_code == 404
    warning = "with no --authenticate: every visitor is the same anonymous user"
    assert warning in open_.output()
    assert warning not in guarded.output()
