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
import importlib
import logging
import os
import socket
import sys
from typing import Any

from ..options import GcTuning, LiveOptions, PauseOptions, StorageOptions, StreamingOptions
from .server import (
    SERVED,
    WS_CHOICES,
    WS_PROTOCOL,
    DrainingServer,
    supervise,
    uvicorn_config,
    ws_missing,
)
from .site import DEFAULT_MOUNT, WEB_DIR, SiteApp, page_url
from .targets import Target, TargetError, load_target

__all__ = ("build_app", "live_model", "main", "observe", "parser", "resolve_target")

logger = logging.getLogger("adk_asgi")


def resolve_target(args: argparse.Namespace) -> Target:
    """What to serve: the named target, or the demo agent (TargetError says why not)."""
    if args.target:
        return load_target(args.target, args.agent)
    if args.agent:
        raise TargetError("--agent needs a folder of agents as the target")
    from ..demo import build_demo_agent

    model = _demo_model(args)
    return Target("agent", build_demo_agent(model=model, token_delay=args.token_delay), "demo")


def _demo_model(args: argparse.Namespace) -> str | None:
    """The demo's model name: ``--model``, else Gemini when credentials are set, else
    None (the offline scripted model)."""
    if args.model is not None:
        return str(args.model)
    if os.environ.get("GOOGLE_API_KEY") or os.environ.get("GOOGLE_GENAI_USE_VERTEXAI"):
        return os.environ.get("ADK_ASGI_MODEL", "gemini-2.5-flash")
    return None


def live_model(args: argparse.Namespace) -> str | None:
    """The model of live runs: ``--live-model``; for the demo on Gemini a Live API model
    (text models are refused on the Live API); else each agent's own."""
    if args.live_model:
        return str(args.live_model)
    demo = None if args.target else _demo_model(args)
    if demo is not None and demo.startswith("gemini"):
        from ..live.run.models import DEFAULT_GEMINI_LIVE_MODEL

        return os.environ.get("ADK_ASGI_LIVE_MODEL", DEFAULT_GEMINI_LIVE_MODEL)
    return None


def build_app(args: argparse.Namespace, target: Target | None = None) -> Any:
    from ..middleware import AdkMiddleware

    target = target or resolve_target(args)
    options: dict[str, Any] = {
        "session_db": args.session_db,
        "streaming": StreamingOptions(
            resume_grace=args.resume_grace, shutdown_grace=args.shutdown_grace
        ),
        "allowed_origins": args.allowed_origin,
        "gc_tuning": gc_tuning(args),
        "artifact_service": args.artifact_service,
        "memory_service": args.memory_service,
        "storage": StorageOptions(
            uploads_as_artifacts=args.uploads_as_artifacts, remember_sessions=args.remember_sessions
        ),
    }
    if (live := live_model(args)) is not None:
        options["live_options"] = LiveOptions(model=live)
    if args.oauth_redirect_uri:
        options["pauses"] = PauseOptions(oauth_redirect_uri=args.oauth_redirect_uri)
    if args.redis_url:
        from ..stores.redis import RedisStreamStore

        options["stream_store"] = RedisStreamStore(args.redis_url)
    if args.credential_service not in (None, "memory"):
        options["credential_service"] = credential_service(args.credential_service)
    if target.kind == "runner":
        given = [
            flag
            for flag, value in (
                ("--session-db", args.session_db),
                ("--artifact-service", args.artifact_service),
                ("--memory-service", args.memory_service),
                ("--credential-service", "credential_service" in options),
            )
            if value
        ]
        if given:
            raise TargetError(
                f"{target.where} is a Runner: it brings its own services, so "
                f"{' and '.join(given)} cannot apply"
            )
        for key in ("session_db", "artifact_service", "memory_service"):
            del options[key]
    options[{"agent": "agent", "app": "adk_app", "runner": "runner"}[target.kind]] = target.value
    try:
        site = SiteApp(WEB_DIR)
        app = AdkMiddleware(site, path=_mount(args.mount), **options)
    except (TypeError, ValueError) as exc:  # e.g. a Runner that cannot pause for approvals
        raise TargetError(f"{target.where}: {exc}") from None
    site.health = app.adk.health
    SERVED.append(app.adk)
    return app


def credential_service(spec: str) -> Any:
    """``--credential-service module:attr``: an ADK ``BaseCredentialService`` (or a callable
    that makes one), e.g. one that keeps credentials where every worker finds them."""
    from google.adk.auth.credential_service.base_credential_service import (
        BaseCredentialService,
    )

    module_name, _, attr = spec.partition(":")
    if not attr or not all(p.isidentifier() for p in [*module_name.split("."), attr]):
        raise TargetError(f"--credential-service {spec!r}: expected 'memory' or module:attr")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        value = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise TargetError(f"--credential-service {spec!r}: {exc}") from None
    if not isinstance(value, BaseCredentialService) and callable(value):
        try:
            value = value()
        except Exception as exc:
            raise TargetError(
                f"--credential-service {spec!r}: calling it failed: {type(exc).__name__}: {exc}"
            ) from None
    if not isinstance(value, BaseCredentialService):
        raise TargetError(
            f"--credential-service {spec!r} is a {type(value).__name__}, not an "
            "ADK BaseCredentialService"
        )
    return value


def _warn_per_worker(args: argparse.Namespace) -> None:
    """Services in memory are per worker: say what that breaks (not an error: an agent may
    never save an artifact)."""

    def in_memory(uri: str | None) -> bool:
        return not uri or uri.startswith("memory:")

    if in_memory(args.artifact_service):
        logger.warning(
            "--workers %d with artifacts in memory: an artifact one worker saved is "
            "not found by the others; give --artifact-service file:///shared/path "
            "or gs://bucket",
            args.workers,
        )
    if args.remember_sessions and in_memory(args.memory_service):
        logger.warning(
            "--workers %d with memory in memory: each worker remembers only its "
            "own turns; give --memory-service",
            args.workers,
        )


def gc_tuning(args: argparse.Namespace) -> GcTuning | None:
    """The collector settings of ``--gc-threshold`` and ``--gc-freeze`` (None: Python's)."""
    if args.gc_threshold is None and not args.gc_freeze:
        return None
    return GcTuning(threshold=args.gc_threshold, freeze=args.gc_freeze)


def _threshold(text: str) -> tuple[int, int, int] | None:
    if text == "python":
        return None
    try:
        numbers = tuple(int(n) for n in text.split(","))
        if len(numbers) == 3 and min(numbers) >= 0:
            return numbers[0], numbers[1], numbers[2]
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(
        f"expected A,B,C (three numbers >= 0) or 'python', not {text!r}"
    )


def _mount(path: str) -> str:
    return path if path.startswith("/") else "/" + path


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="adk-asgi", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = top.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve an ADK agent (default: the offline demo agent)")
    serve.add_argument(
        "target",
        nargs="?",
        help="what to serve: module:attr (an agent, App or Runner), a module "
        "(its root_agent or app), or a folder in ADK's agents layout "
        "(default: the offline demo agent)",
    )
    serve.add_argument(
        "--agent",
        default=None,
        metavar="NAME",
        help="the agent to serve from a folder holding several (ADK's agents directory)",
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--mount", default=DEFAULT_MOUNT, help="path of the chat endpoint")
    serve.add_argument(
        "--session-db",
        default=None,
        help="sqlite:///path.db or postgresql+asyncpg://... (default: memory)",
    )
    serve.add_argument(
        "--credential-service",
        default="memory",
        metavar="SERVICE",
        help="where the credentials users give tools are kept (ADK's "
        "credential_service): 'memory' (default, per worker) or "
        "module:attr naming a BaseCredentialService",
    )
    serve.add_argument(
        "--oauth-redirect-uri",
        default=None,
        metavar="URL",
        help="the absolute URL of {mount}/oauth2/callback as browsers reach "
        "it (behind a proxy); default: from each request",
    )
    serve.add_argument(
        "--artifact-service",
        default=None,
        metavar="URI",
        help="where agents' artifacts are kept, as ADK's CLI takes it: "
        "memory:// (default), file:///path (a folder), gs://bucket "
        "(needs google-cloud-storage)",
    )
    serve.add_argument(
        "--memory-service",
        default=None,
        metavar="URI",
        help="the memory load_memory and preload_memory search, as ADK's CLI "
        "takes it: memory:// (default), sqlite:///path.db, rag://CORPUS, "
        "agentengine://ID",
    )
    serve.add_argument(
        "--uploads-as-artifacts",
        action="store_true",
        help="save the files of users' messages as artifacts of the chat "
        "(ADK's SaveFilesAsArtifactsPlugin): the model is not sent them "
        "again with every turn",
    )
    serve.add_argument(
        "--remember-sessions",
        action="store_true",
        help="add a chat's conversation to the memory service when a turn ends",
    )
    serve.add_argument(
        "--model", default=None, help="demo only: a Gemini model name (needs GOOGLE_API_KEY)"
    )
    serve.add_argument(
        "--live-model",
        default=None,
        metavar="MODEL",
        help="the model of live (WebSocket) runs, for every agent: a Live API "
        "model (default: each agent's own; for the demo on Gemini "
        "gemini-2.5-flash-native-audio-latest, or $ADK_ASGI_LIVE_MODEL)",
    )
    serve.add_argument(
        "--token-delay",
        type=float,
        default=0.03,
        help="demo only: seconds per streamed token of the scripted model",
    )
    serve.add_argument(
        "--redis-url",
        default=None,
        help="redis://... : share resumable streams, chat owners and turn locks "
        "between workers and replicas (needs adk-asgi[redis])",
    )
    serve.add_argument(
        "--resume-grace",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="keep a turn running this long after its client disconnects, so a "
        "reload can resume it (default 0: abort at once)",
    )
    serve.add_argument(
        "--shutdown-grace",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="on SIGTERM, let running turns finish this long (default 10)",
    )
    serve.add_argument(
        "--allowed-origin",
        action="append",
        default=None,
        metavar="ORIGIN",
        help="a browser origin allowed to open WebSockets besides the page's "
        "own (repeatable; '*' for any)",
    )
    serve.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes on one socket; needs --session-db and "
        "--redis-url so every worker sees every chat",
    )
    serve.add_argument(
        "--ws-compression",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="permessage-deflate on WebSockets (default off: token frames are "
        "tiny, and it costs ~9%% CPU and ~32 KiB per idle connection)",
    )
    serve.add_argument(
        "--ws",
        choices=tuple(WS_CHOICES),
        default=WS_PROTOCOL,
        help="uvicorn's WebSocket implementation (default %(default)s: ~10%% "
        "less CPU per live token than the legacy websockets one; "
        "wsproto needs adk-asgi[wsproto])",
    )
    serve.add_argument(
        "--gc-threshold",
        type=_threshold,
        default="20000,50,50",
        metavar="A,B,C",
        help="the garbage collector's thresholds once the agent is warmed up "
        "(default %(default)s: ADK allocates many short-lived objects per "
        "token, and Python's 700 runs the collector every few tokens); "
        "'python' keeps Python's",
    )
    serve.add_argument(
        "--gc-freeze",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="gc.freeze() once the agent is warmed up, so collections skip "
        "what start-up loaded (default on)",
    )
    serve.add_argument("--log-level", default="info")
    serve.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="json: one JSON object per line (time, level, logger, message, "
        "chat_id, user_id, trace ids), uvicorn's lines included",
    )
    serve.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        metavar="PORT",
        help="serve Prometheus metrics (adk_asgi_*) at :PORT/metrics, apart "
        "from the app; worker i of --workers uses PORT+i (needs "
        "adk-asgi[otel])",
    )
    serve.add_argument(
        "--metrics-host",
        default=None,
        metavar="HOST",
        help="address of the metrics endpoint (default: --host)",
    )
    return top


def observe(args: argparse.Namespace, worker: int = 0) -> None:
    """What this process reports: its logs, its metrics endpoint (``--metrics-port``; a
    port per worker), and OTLP traces when the OTEL_EXPORTER_OTLP_* variables ask."""
    from ..observability.exporters import export_traces_from_env, serve_prometheus
    from ..observability.logs import setup_logging

    setup_logging(args.log_level, args.log_format)
    if args.metrics_port is not None:
        serve_prometheus(args.metrics_port + worker, args.metrics_host or args.host)
    export_traces_from_env()


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
        _warn_per_worker(args)
    # Find (and build) what is served before claiming to serve it: a bad target is one line.
    target = resolve_target(args)
    app = build_app(args, target) if args.workers == 1 else None
    mount = _mount(args.mount)
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
    DrainingServer(uvicorn_config(args, app)).run()
    return 0
