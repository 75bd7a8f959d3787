"""``adk-asgi serve [module:attr]``: run an agent (or the offline demo) under uvicorn."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from typing import Any

__all__ = ("build_app", "load_target", "main")


def load_target(spec: str) -> Any:
    """``pkg.module:attr`` (``attr`` defaults to ``root_agent``) -> the object."""
    module_name, _, attr = spec.partition(":")
    if not module_name:
        raise SystemExit(f"adk-asgi: invalid target {spec!r}; expected module:attr")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    module = importlib.import_module(module_name)
    try:
        return getattr(module, attr or "root_agent")
    except AttributeError:
        raise SystemExit(
            f"adk-asgi: {module_name!r} has no attribute {attr or 'root_agent'!r}"
        ) from None


def build_app(args: argparse.Namespace) -> Any:
    from google.adk.agents import BaseAgent
    from google.adk.apps import App
    from google.adk.runners import Runner

    from ._middleware import AdkMiddleware

    if args.target:
        target = load_target(args.target)
    else:
        from .demo import build_demo_agent

        model = args.model
        if model is None and (os.environ.get("GOOGLE_API_KEY")
                              or os.environ.get("GOOGLE_GENAI_USE_VERTEXAI")):
            model = os.environ.get("ADK_ASGI_MODEL", "gemini-2.5-flash")
        target = build_demo_agent(model=model, token_delay=args.token_delay)
    options: dict[str, Any] = {"session_db": args.session_db}
    if isinstance(target, Runner):
        options = {"runner": target}
    elif isinstance(target, App):
        options["app"] = target
    elif isinstance(target, BaseAgent):
        options["agent"] = target
    else:
        raise SystemExit(f"adk-asgi: {args.target!r} is not an ADK agent, App or Runner")
    mount = args.mount if args.mount.startswith("/") else "/" + args.mount
    return AdkMiddleware(_not_found, path=mount, **options)


async def _not_found(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    elif scope["type"] == "http":
        from ._http import send_json_error

        await send_json_error(send, 404, "not_found", "Not found.")
    else:
        await send({"type": "websocket.close", "code": 1000})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="adk-asgi", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve an ADK agent (default: the offline demo agent)")
    serve.add_argument("target", nargs="?", help="module:attr of an agent, App or Runner")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--mount", default="/api/chat", help="path of the chat endpoint")
    serve.add_argument("--session-db", default=None,
                       help="sqlite:///path.db or postgresql+asyncpg://... (default: memory)")
    serve.add_argument("--model", default=None,
                       help="demo only: a Gemini model name (needs GOOGLE_API_KEY)")
    serve.add_argument("--token-delay", type=float, default=0.03,
                       help="demo only: seconds per streamed token of the scripted model")
    serve.add_argument("--log-level", default="info")
    args = parser.parse_args(argv)

    import uvicorn

    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    app = build_app(args)
    print(f"adk-asgi: chat endpoint at http://{args.host}:{args.port}{args.mount}", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0
