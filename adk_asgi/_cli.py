"""``adk-asgi serve [module:attr]``: run an agent (or the offline demo) under uvicorn.

The chat endpoint is mounted at ``--mount`` (``/api/chat``); everything else is the
chat page (``adk_asgi/_web``, built from ``examples/web``) at ``/``, and JSON 404s.

On SIGTERM/SIGINT the server first stops accepting, then drains the app
(``AdkApp.drain``: running turns get ``--shutdown-grace`` seconds, then end with
an ``error`` chunk; live sockets close with 1012), and only then lets uvicorn
close the connections. ``--workers N`` runs N such servers on one listening
socket (our own small supervisor: uvicorn's builds plain servers that would
skip the drain).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import multiprocessing
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any, Final

import uvicorn

__all__ = ("WEB_DIR", "DrainingServer", "SiteApp", "build_app", "load_target", "main",
           "page_url")

WEB_DIR: Final = Path(__file__).resolve().parent / "_web"
"""The built chat page shipped with the package (``npm --prefix examples/web run build``)."""

DEFAULT_MOUNT: Final = "/api/chat"

_NO_PAGE: Final = b"""<!doctype html><meta charset="utf-8"><title>adk-asgi</title>
<body style="font-family: system-ui, sans-serif; max-width: 40em; margin: 3em auto">
<h1>adk-asgi</h1><p>The chat endpoint is running, but this installation has no chat page
(<code>adk_asgi/_web</code> is missing). Build it from a clone of the repository with
<code>npm ci --prefix examples/web &amp;&amp; npm --prefix examples/web run build</code>,
or talk to the endpoint with your own <code>useChat</code> page.</p></body>
"""

logger = logging.getLogger("adk_asgi")
# The AdkApps this process serves: drained before uvicorn closes connections.
_SERVED: list[Any] = []


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
    options: dict[str, Any] = {
        "session_db": args.session_db,
        "resume_grace": args.resume_grace,
        "shutdown_grace": args.shutdown_grace,
        "allowed_origins": args.allowed_origin,
    }
    if args.redis_url:
        from ._redis_store import RedisStreamStore

        options["stream_store"] = RedisStreamStore(args.redis_url)
    if isinstance(target, Runner):
        del options["session_db"]
        options["runner"] = target
    elif isinstance(target, App):
        options["app"] = target
    elif isinstance(target, BaseAgent):
        options["agent"] = target
    else:
        raise SystemExit(f"adk-asgi: {args.target!r} is not an ADK agent, App or Runner")
    app = AdkMiddleware(SiteApp(WEB_DIR), path=_mount(args.mount), **options)
    _SERVED.append(app.adk)
    return app


def _mount(path: str) -> str:
    return path if path.startswith("/") else "/" + path


class DrainingServer(uvicorn.Server):
    """uvicorn's server, draining the served AdkApps before it closes connections."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()  # stop accepting first
        if _SERVED:
            await asyncio.gather(*(app.drain() for app in _SERVED), return_exceptions=True)
        await super().shutdown(sockets)


class SiteApp:
    """What the CLI answers outside the chat endpoint: the chat page (``GET /`` and its
    assets) when ``directory`` holds a built page, a short HTML note at ``/`` when it
    does not, and JSON errors for every other path, method and WebSocket."""

    def __init__(self, directory: Path) -> None:
        from starlette.staticfiles import StaticFiles

        self.static = (StaticFiles(directory=directory, html=True)
                       if (directory / "index.html").is_file() else None)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from starlette.exceptions import HTTPException

        from ._http import send_json_error

        if scope["type"] == "lifespan":
            await _plain_lifespan(receive, send)
        elif scope["type"] == "http":
            if self.static is None:
                if scope["path"] in ("/", "/index.html") and scope["method"] in ("GET", "HEAD"):
                    await send({"type": "http.response.start", "status": 404, "headers": [
                        (b"content-type", b"text/html; charset=utf-8"),
                        (b"content-length", str(len(_NO_PAGE)).encode())]})
                    await send({"type": "http.response.body", "body": _NO_PAGE})
                else:
                    await send_json_error(send, 404, "not_found", "Not found.")
                return
            try:
                response = await self.static.get_response(self.static.get_path(scope), scope)
            except HTTPException as exc:
                if exc.status_code == 405:
                    await send_json_error(send, 405, "method_not_allowed",
                                          "Only GET and HEAD are served here.",
                                          [(b"allow", b"GET, HEAD")])
                else:
                    await send_json_error(send, 404, "not_found", "Not found.")
                return
            await response(scope, receive, send)
        else:
            await send({"type": "websocket.close", "code": 1000})


async def _plain_lifespan(receive: Any, send: Any) -> None:
    """The lifespan of an app with nothing to start (AdkMiddleware starts the agent)."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _not_found(scope: Any, receive: Any, send: Any) -> None:
    """A bare app: JSON 404 for every request (tests wrap the chat endpoint around it)."""
    if scope["type"] == "lifespan":
        await _plain_lifespan(receive, send)
    elif scope["type"] == "http":
        from ._http import send_json_error

        await send_json_error(send, 404, "not_found", "Not found.")
    else:
        await send({"type": "websocket.close", "code": 1000})


def page_url(host: str, port: int, mount: str) -> str:
    """The URL to open the chat page at (it finds a non-default endpoint via ``?api=``)."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    if ":" in shown:
        shown = f"[{shown}]"
    url = f"http://{shown}:{port}/"
    return url if mount == DEFAULT_MOUNT else f"{url}?api={mount}"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="adk-asgi", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve an ADK agent (default: the offline demo agent)")
    serve.add_argument("target", nargs="?", help="module:attr of an agent, App or Runner")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--mount", default=DEFAULT_MOUNT, help="path of the chat endpoint")
    serve.add_argument("--session-db", default=None,
                       help="sqlite:///path.db or postgresql+asyncpg://... (default: memory)")
    serve.add_argument("--model", default=None,
                       help="demo only: a Gemini model name (needs GOOGLE_API_KEY)")
    serve.add_argument("--token-delay", type=float, default=0.03,
                       help="demo only: seconds per streamed token of the scripted model")
    serve.add_argument("--redis-url", default=None,
                       help="redis://... : share resumable streams, chat owners and turn locks "
                            "between workers and replicas (needs adk-asgi[redis])")
    serve.add_argument("--resume-grace", type=float, default=0.0, metavar="SECONDS",
                       help="keep a turn running this long after its client disconnects, so a "
                            "reload can resume it (default 0: abort at once)")
    serve.add_argument("--shutdown-grace", type=float, default=10.0, metavar="SECONDS",
                       help="on SIGTERM, let running turns finish this long (default 10)")
    serve.add_argument("--allowed-origin", action="append", default=None, metavar="ORIGIN",
                       help="a browser origin allowed to open WebSockets besides the page's "
                            "own (repeatable; '*' for any)")
    serve.add_argument("--workers", type=int, default=1,
                       help="worker processes on one socket; needs --session-db and "
                            "--redis-url so every worker sees every chat")
    serve.add_argument("--ws-compression", action=argparse.BooleanOptionalAction,
                       default=False,
                       help="permessage-deflate on WebSockets (default off: token frames are "
                            "tiny, and it costs ~9%% CPU and ~32 KiB per idle connection)")
    serve.add_argument("--log-level", default="info")
    return parser


def _config(args: argparse.Namespace, app: Any) -> uvicorn.Config:
    return uvicorn.Config(app, host=args.host, port=args.port, log_level=args.log_level,
                          ws_per_message_deflate=args.ws_compression,
                          # What drain leaves (a stuck client) is cut after this.
                          timeout_graceful_shutdown=5)


def _serve_worker(argv: list[str], sock: socket.socket) -> None:
    """One worker process (spawned): build the app and serve on the shared socket."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    DrainingServer(_config(args, build_app(args))).run(sockets=[sock])


def _supervise(argv: list[str], args: argparse.Namespace) -> int:
    sock = _config(args, None).bind_socket()
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_serve_worker, args=(argv, sock), daemon=False)
               for _ in range(args.workers)]
    stopping = False

    def forward(signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True
        for worker in workers:
            if worker.pid is not None and worker.is_alive():
                os.kill(worker.pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    for worker in workers:
        worker.start()
    while True:
        for i, worker in enumerate(workers):
            worker.join(0.5)
            if not worker.is_alive() and not stopping:
                logger.warning("Worker %s exited with %s; starting a new one", worker.pid,
                               worker.exitcode)
                workers[i] = context.Process(target=_serve_worker, args=(argv, sock))
                workers[i].start()
        if stopping and not any(w.is_alive() for w in workers):
            sock.close()
            return 0


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    if args.workers > 1 and (not args.redis_url or not args.session_db
                             or args.session_db.startswith("memory")):
        parser.error("--workers > 1 needs --session-db (sessions every worker can read) and "
                     "--redis-url (streams, owners and locks every worker can see)")
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    mount = _mount(args.mount)
    print(f"adk-asgi: chat endpoint at http://{args.host}:{args.port}{mount}", flush=True)
    if (WEB_DIR / "index.html").is_file():
        print(f"adk-asgi: chat page at {page_url(args.host, args.port, mount)}", flush=True)
    else:
        print("adk-asgi: no chat page in this installation (see README: Chat page)", flush=True)
    if args.workers > 1:
        return _supervise(argv, args)
    DrainingServer(_config(args, build_app(args))).run()
    return 0
