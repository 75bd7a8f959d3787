"""``adk-asgi``'s entry point: parse the flags (``flags.py``), build what is served
(``build.py``) and run it under uvicorn (``server.py``), one process or ``--workers N``.

On SIGTERM/SIGINT the server first stops accepting, then drains the app (running turns get
``--shutdown-grace`` seconds, then end with an ``error`` chunk; live sockets close with 1012),
and only then lets uvicorn close the connections."""

from __future__ import annotations

import contextlib
import socket
import sys

from .build import build_app, observe, resolve_target, warn_anonymous, warn_per_worker
from .flags import mount_path, parser
from .server import DrainingServer, supervise, uvicorn_config, ws_missing
from .site import WEB_DIR, page_url

__all__ = ("main", "serve_worker")


def serve_worker(argv: list[str], sock: socket.socket, index: int) -> None:
    """Worker ``index`` of ``--workers`` (spawned): build the app and serve on the shared
    socket."""
    args = parser().parse_args(argv)
    observe(args, index)
    server = DrainingServer(uvicorn_config(args, build_app(args)))
    server.shared_socket = True
    server.run(sockets=[sock])


def main(argv: list[str] | None = None) -> int:
    cli = parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = cli.parse_args(argv)
    if args.command == "types":
        from .typegen.command import types_command

        return types_command(args, resolve_target(args))
    if args.command == "export-eval":
        from .export_eval import export_eval_command

        return export_eval_command(args, resolve_target(args) if args.target else None)
    if (package := ws_missing(args.ws)) is not None:
        # One line, before anything starts (uvicorn would fail with a traceback).
        hint = "'adk-asgi[wsproto]'" if package == "wsproto" else package
        print(
            f"adk-asgi: --ws {args.ws} needs the {package} package, which is not "
            f"installed: pip install {hint}",
            file=sys.stderr,
            flush=True,
        )
        return 2
    if args.workers > 1 and (
        not args.redis_url or not args.session_db or args.session_db.startswith("memory")
    ):
        cli.error(
            "--workers > 1 needs --session-db (sessions every worker can read) and "
            "--redis-url (streams, owners and locks every worker can see)"
        )
    if args.workers == 1:
        observe(args)
    else:  # each worker starts its own exporters
        from ..observability.logs import setup_logging

        setup_logging(args.log_level, args.log_format)
        warn_per_worker(args)
    warn_anonymous(args)
    # Find (and build) what is served before claiming to serve it: a bad target is one line.
    target = resolve_target(args)
    app = build_app(args, target) if args.workers == 1 else None
    mount = mount_path(args.mount)
    print(f"adk-asgi: chat endpoint at http://{args.host}:{args.port}{mount}", flush=True)
    if args.metrics_port is not None:
        ports = (
            str(args.metrics_port)
            if args.workers == 1
            else f"{args.metrics_port}-{args.metrics_port + args.workers - 1}"
        )
        print(
            f"adk-asgi: metrics at http://{args.metrics_host or args.host}:{ports}/metrics",
            flush=True,
        )
    if (WEB_DIR / "index.html").is_file():
        print(f"adk-asgi: chat page at {page_url(args.host, args.port, mount)}", flush=True)
    else:
        print("adk-asgi: no chat page in this installation (see README: Chat page)", flush=True)
    if args.workers > 1:
        return supervise(argv, args, serve_worker)
    # Ctrl-C: uvicorn shuts down in order, then asyncio re-raises the interrupt; the
    # shutdown is the answer, not a traceback (uvicorn's own CLI does the same).
    with contextlib.suppress(KeyboardInterrupt):
        DrainingServer(uvicorn_config(args, app)).run()
    return 0
