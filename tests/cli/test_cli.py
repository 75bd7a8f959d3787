from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from adk_asgi.cli.targets import load_target

from support import ROOT, Serve, chat_body, parse_sse, types_of, user_message


def test_load_target() -> None:
    agent = load_target("adk_asgi.demo:root_agent").value
    assert agent.name == "assistant"
    assert load_target("adk_asgi.demo").value is agent
    with pytest.raises(SystemExit):
        load_target("adk_asgi.demo:nope")


@pytest.mark.parametrize(
    "args",
    [
        [],
        [
            "adk_asgi.demo:root_agent",
            "--mount",
            "/chat",
            "--gc-threshold",
            "python",
            "--no-gc-freeze",
        ],
    ],
)
def test_serve_subprocess(args: list[str], tmp_path: Path) -> None:
    """A real ``adk-asgi serve``: a chat turn, a JSON 404 elsewhere, sqlite sessions, and
    the collector tuned after warm-up by default (its log line), or left alone."""
    db = tmp_path / "sessions.db"
    with Serve(*args, "--session-db", f"sqlite:///{db}", token_delay=0) as server:
        response = httpx.post(server.url, json=chat_body("cli", user_message("hello")), timeout=30)
        assert response.status_code == 200
        assert types_of(parse_sse(response.text))[-2:] == ["finish", "[DONE]"]
        assert httpx.get(f"{server.base}/elsewhere").status_code == 404
        assert db.exists()  # --session-db sqlite:///… persisted the session
    output = server.output()
    if "--no-gc-freeze" in args:
        assert "GC tuned" not in output
    else:
        assert "GC tuned: threshold (20000, 50, 50)" in output, output
        assert int(output.split("GC tuned: threshold (20000, 50, 50), ")[1].split()[0]) > 1000


def test_websocket_compression_is_off_unless_asked() -> None:
    from adk_asgi.cli.flags import parser
    from adk_asgi.cli.server import uvicorn_config

    off = parser().parse_args(["serve"])
    on = parser().parse_args(["serve", "--ws-compression"])
    assert uvicorn_config(off, None).ws_per_message_deflate is False
    assert uvicorn_config(on, None).ws_per_message_deflate is True


def test_serve_runs_uvicorns_sans_io_websocket_implementation() -> None:
    """docs/serving/index.md: `adk-asgi serve` picks uvicorn's `websockets-sansio` (the
    live tests' servers run it too, tests/conftest.py)."""
    import uvicorn.protocols.websockets.websockets_sansio_impl as sansio

    from adk_asgi.cli.flags import parser
    from adk_asgi.cli.server import uvicorn_config

    config = uvicorn_config(parser().parse_args(["serve"]), None)
    assert config.ws == "websockets-sansio"
    config.load()  # resolves the implementation, as uvicorn does when it starts
    assert config.ws_protocol_class is sansio.WebSocketsSansIOProtocol
    assert (
        uvicorn_config(parser().parse_args(["serve", "--ws", "websockets"]), None).ws
        == "websockets"
    )


WORKFLOW = """\
from google.adk.workflow import Workflow

def greet(node_input: str) -> dict:
    return {"name": str(node_input).split()[-1]}

def shout(node_input: dict) -> str:
    return f"HELLO {node_input['name'].upper()}!"

workflow = Workflow(name="greeter", edges=[("START", greet, shout)])
"""


def test_serve_a_workflow(tmp_path: Path) -> None:
    """``adk-asgi serve wf:workflow`` serves an ADK 2 Workflow (sessions in sqlite): each
    node's output reaches the client, named as its step's author."""
    (tmp_path / "wf.py").write_text(WORKFLOW)
    db = f"sqlite:///{tmp_path / 'sessions.db'}"
    with Serve("wf:workflow", "--session-db", db, cwd=tmp_path, env={"PYTHONPATH": str(ROOT)}) as s:
        response = httpx.post(s.url, json=chat_body("wf", user_message("hi there Ada")), timeout=30)
    output = s.output()
    assert response.status_code == 200, output
    chunks = [c for c in parse_sse(response.text) if isinstance(c, dict)]
    [node] = [c["data"] for c in chunks if c["type"] == "data-node"]
    assert node == {"node": "greet", "path": "greeter@1/greet@1", "output": {"name": "Ada"}}
    assert "".join(c["delta"] for c in chunks if c["type"] == "text-delta") == "HELLO ADA!"
    assert chunks[-1]["messageMetadata"]["adk"]["authors"] == {"0": "greet", "1": "shout"}


def test_credential_service_and_oauth_redirect_flags() -> None:
    from google.adk.auth.credential_service.in_memory_credential_service import (
        InMemoryCredentialService,
    )

    from adk_asgi.cli.build import build_app
    from adk_asgi.cli.flags import parser
    from adk_asgi.cli.targets import TargetError

    args = parser().parse_args(
        [
            "serve",
            "tests.agents.accounts.agent:app",
            "--credential-service",
            "google.adk.auth.credential_service."
            "in_memory_credential_service:InMemoryCredentialService",
            "--oauth-redirect-uri",
            "https://chat.example.com/api/chat/oauth2/callback",
        ]
    )
    app = build_app(args)
    assert isinstance(app.adk.runtime.runner.credential_service, InMemoryCredentialService)
    assert (
        app.adk.settings.pauses.oauth_redirect_uri
        == "https://chat.example.com/api/chat/oauth2/callback"
    )
    default = build_app(parser().parse_args(["serve", "tests.agents.accounts.agent:app"]))
    assert isinstance(default.adk.runtime.runner.credential_service, InMemoryCredentialService)
    for wrong in ("nowhere", "json:dumps", "adk_asgi:missing"):
        with pytest.raises(TargetError):
            build_app(parser().parse_args(["serve", "--credential-service", wrong]))
