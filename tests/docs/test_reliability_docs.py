"""The numbers and texts the reliability docs state are the code's (issue 24): every
``error`` text has its row in the HTTP API page's table, and the defaults in limits.md and
SECURITY.md are the defaults the code has, worked out the way the docs work them out."""

from __future__ import annotations

import inspect

import uvicorn

from adk_asgi import Limits, StreamingOptions
from adk_asgi.stores.redis import DEFAULT_TIMEOUT, RedisStreamStore
from adk_asgi.transport.outbox import PROGRESS_TICK
from adk_asgi.wire import errors

from support import ROOT

HTTP_API = (ROOT / "docs/reference/http-api.md").read_text()
LIMITS = (ROOT / "docs/reference/limits.md").read_text()
SECURITY = (ROOT / "SECURITY.md").read_text()


def test_every_error_text_is_in_the_table() -> None:
    texts = {name: getattr(errors, name) for name in errors.__all__ if name.endswith("_ERROR")}
    assert len(texts) >= 7, texts
    table = HTTP_API.split("| `errorText` | when |")[1].split("## ")[0]
    for name, text in texts.items():
        row = f'"{text} (`code`)"' if name == "GENERIC_ERROR" else f'"{text}"'
        assert row in table, f"{name} has no row in docs/reference/http-api.md"


def test_the_documented_defaults_are_the_code_s() -> None:
    send_timeout = StreamingOptions().send_timeout
    assert send_timeout is not None
    limits = Limits()
    assert (send_timeout, PROGRESS_TICK) == (60.0, 0.25)
    worst = f"{send_timeout + PROGRESS_TICK:g} s"  # 60.25 s
    assert worst in LIMITS and worst in SECURITY
    assert f"{limits.max_turn_seconds:g} s" == "600 s"
    assert limits.max_turn_bytes == 32 * 1024 * 1024
    for page in (LIMITS, SECURITY):
        assert (
            "| `max_turn_seconds` | 600 s |" in page
            or "| 600 s (`Limits.max_turn_seconds`) |" in page
        )
        assert (
            "| `max_turn_bytes` | 32 MiB |" in page
            or "| 32 MiB (`Limits.max_turn_bytes`) |" in page
        )
    redis_default = inspect.signature(RedisStreamStore).parameters["timeout"].default
    assert redis_default == DEFAULT_TIMEOUT == 2.0
    assert "| 2 s (`RedisStreamStore(timeout=)`), not retried |" in SECURITY
    # uvicorn's keepalive, which adk-asgi serve keeps: a ping every 20 s, 20 s to answer.
    config = uvicorn.Config(app=None)
    assert (config.ws_ping_interval, config.ws_ping_timeout) == (20.0, 20.0)
    assert "a ping every 20 s, 20 s to answer" in SECURITY
