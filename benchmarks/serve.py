"""Serve the demo agent with one contender: ``python -m benchmarks.serve NAME --port P``.

Contenders (all: the same ``build_demo_agent(token_delay=...)``, in-memory sessions,
uvicorn with its defaults — uvloop and httptools when installed — and no access log):

* ``adk-asgi``       — ``AdkMiddleware(path="/api/chat")`` around a bare 404 app (the
  ``adk-asgi-bare`` row; the ``adk-asgi`` row runs the CLI itself);
* ``adk-asgi-sse-starlette`` — the same, its turns written through sse-starlette's
  ``EventSourceResponse`` (``benchmarks/starlette_sse.py``, issue 16 item 3);
* ``adk-naive``      — the naive bridge (``benchmarks/naive.py``);
* ``adk-naive-live`` — the naive bridge over WebSocket (live protocol A, ``run_live``);
* ``adk-api-server`` — ``google.adk.cli.fast_api.get_fast_api_app`` (``/run_sse``,
  ``auto_create_session=True``) over ``benchmarks/_agents`` (app ``bench_agent``);
* ``ag-ui-adk``      — ``ag_ui_adk.ADKAgent`` + ``add_adk_fastapi_endpoint`` at ``/agui``;
* ``adk-asgi-live``  — the same app as ``adk-asgi``, driven over its WebSocket
  (``/api/chat``, ``Runner.run_live``);
* ``adk-asgi-live-b``  — the same again, for protocol B (AI SDK v7 frames);
* ``adk-api-server-live`` — the same app as ``adk-api-server``, driven over ADK's
  ``/run_live`` WebSocket.

The ``-live`` names exist so each WebSocket contender gets a process of its own (its
CPU time and RSS are not mixed with the SSE measurements).

``--profile FILE`` adds two control paths: ``GET /__profile/start`` enables cProfile and
``GET /__profile/stop`` disables it and writes the stats to FILE (so start-up, imports and
warm-up stay out of the profile).
"""

from __future__ import annotations

import argparse
import cProfile
import logging
import os
import resource
import sys
from pathlib import Path
from typing import Any

from .emulator import bench_model
from .knobs import die_with_parent

CONTENDERS = (
    "adk-asgi",
    "adk-asgi-sse-starlette",
    "adk-naive",
    "adk-naive-live",
    "adk-api-server",
    "ag-ui-adk",
    "adk-asgi-live",
    "adk-asgi-live-b",
    "adk-api-server-live",
)
AGENTS_DIR = Path(__file__).parent / "_agents"


def raise_fd_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else 65536
    target = min(target, 65536)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def build_app(name: str, token_delay: float) -> Any:
    if name == "adk-naive-live":
        from .naive import build_naive_live_app

        return build_naive_live_app(token_delay)
    name = name.split("-live")[0]
    if name == "adk-asgi-sse-starlette":
        from .starlette_sse import install

        install()
        name = "adk-asgi"
    if name == "adk-asgi":
        from adk_asgi import AdkMiddleware
        from adk_asgi.cli.site import WEB_DIR, SiteApp  # what adk-asgi serve wraps
        from adk_asgi.demo import build_demo_agent

        return AdkMiddleware(
            SiteApp(WEB_DIR),
            path="/api/chat",
            agent=build_demo_agent(model=bench_model(), token_delay=token_delay),
        )
    if name == "adk-naive":
        from .naive import build_naive_app

        return build_naive_app(token_delay)
    if name == "adk-api-server":
        from google.adk.cli.fast_api import get_fast_api_app

        os.environ["BENCH_TOKEN_DELAY"] = str(token_delay)
        return get_fast_api_app(
            agents_dir=str(AGENTS_DIR),
            session_service_uri="memory://",
            artifact_service_uri="memory://",
            memory_service_uri="memory://",
            use_local_storage=False,
            web=False,
            auto_create_session=True,
        )
    if name == "ag-ui-adk":
        from ag_ui_adk import ADKAgent, add_adk_fastapi_endpoint
        from fastapi import FastAPI

        from adk_asgi.demo import build_demo_agent

        agent = ADKAgent(
            adk_agent=build_demo_agent(model=bench_model(), token_delay=token_delay),
            app_name="bench_agent",
            user_id="bench",
            use_in_memory_services=True,
            # The default (10) refuses the 11th simultaneous run; the sweep needs 1000.
            max_concurrent_executions=100_000,
        )
        app = FastAPI()
        add_adk_fastapi_endpoint(app, agent, path="/agui")
        return app
    raise SystemExit(f"unknown contender {name!r}; one of {', '.join(CONTENDERS)}")


class ProfileControl:
    """ASGI wrapper: ``/__profile/start`` and ``/__profile/stop`` drive a cProfile."""

    def __init__(self, app: Any, path: Path) -> None:
        self.app = app
        self.path = path
        self.profiler = cProfile.Profile()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/__profile/"):
            if scope["path"] == "/__profile/start":
                self.profiler.enable()
            else:
                self.profiler.disable()
                self.profiler.dump_stats(str(self.path))
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await self.app(scope, receive, send)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.serve")
    parser.add_argument("contender", choices=CONTENDERS)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument(
        "--token-delay",
        type=float,
        default=0.0,
        help="seconds the demo model waits before each token",
    )
    parser.add_argument(
        "--ws",
        default="auto",
        help="uvicorn's WebSocket implementation (default: uvicorn's own choice)",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="enable /__profile/start|stop (cProfile, pstats written here)",
    )
    args = parser.parse_args(argv)
    die_with_parent()
    raise_fd_limit()
    logging.basicConfig(level=logging.WARNING)

    import uvicorn

    app = build_app(args.contender, args.token_delay)
    if args.profile is not None:
        app = ProfileControl(app, args.profile)
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        access_log=False,
        backlog=4096,
        timeout_graceful_shutdown=1,
        ws=args.ws,
    )
    uvicorn.Server(config).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
