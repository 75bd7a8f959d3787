"""What a live turn does with an ``after_model_callback`` that rewrites the final response
(tests/agents/redact): nothing. ADK 2.13's ``Runner.run_live`` never calls model callbacks
(an agent's or a plugin's ``after_model_callback``), so a guardrail written there does not
run in live mode: the model's words are shown and stored as it said them. docs/live-mode.md
and SECURITY.md say so; when an ADK release calls them, this test fails and those pages
change with it."""

from __future__ import annotations

import pytest
from agents.redact import agent as redact

from adk_asgi import AdkApp

from support import LoopbackServer
from support.ws_client import LiveClient, text, ws_url


@pytest.mark.parametrize("shape", ["callback", "plugin"])
async def test_live_turns_skip_after_model_callbacks(shape: str) -> None:
    if shape == "callback":
        app = AdkApp(agent=redact.build_root_agent(), warm_up=False)
    else:
        app = AdkApp(adk_app=redact.app, warm_up=False)
    with LoopbackServer(app) as server:
        client = await LiveClient.open(ws_url(server.url))
        await client.say("hi", chat_id=f"guard-{shape}")
        said = text(await client.turn())
        await client.close()
    assert redact.SECRET_WORD in said and "[REDACTED]" not in said
