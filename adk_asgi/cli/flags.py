"""The flags of ``adk-asgi``: its commands and their options (``parser``)."""

from __future__ import annotations

import argparse
from typing import Any

from .server import WS_CHOICES, WS_PROTOCOL
from .site import DEFAULT_MOUNT

__all__ = ("mount_path", "parser")

_DESCRIPTION = """\
``adk-asgi serve [module:attr]``: run an agent (or the offline demo) under uvicorn.

The chat endpoint is mounted at ``--mount`` (``/api/chat``); everything else is the
chat page (``adk_asgi/_web``, built from ``examples/web``) at ``/``, and JSON 404s.

On SIGTERM/SIGINT the server first stops accepting, then drains the app
(``AdkApp.drain``: running turns get ``--shutdown-grace`` seconds, then end with
an ``error`` chunk; live sockets close with 1012), and only then lets uvicorn
close the connections. ``--workers N`` runs N such servers on one listening
socket (our own small supervisor: uvicorn's builds plain servers that would
skip the drain).
"""


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


def mount_path(path: str) -> str:
    return path if path.startswith("/") else "/" + path


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="adk-asgi",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
    serve.add_argument(
        "--app-name",
        default=None,
        metavar="NAME",
        help="the ADK app name chats and artifacts are kept under (default: the "
        "App's name, the agent folder's, else the root agent's)",
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1; beyond loopback every "
        "visitor is the same anonymous user)",
    )
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--mount", default=DEFAULT_MOUNT, help="path of the chat endpoint")
    serve.add_argument(
        "--authenticate",
        default=None,
        metavar="MODULE:ATTR",
        help="who asks: a function (scope) -> user id, as AdkApp(authenticate=...) "
        "takes it (default: everyone is the same anonymous user)",
    )
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
        "--title",
        default=None,
        help="the chat page's title (default: 'Talk to' and the agent's name)",
    )
    serve.add_argument(
        "--description",
        default=None,
        help="the chat page's description (default: the agent's description)",
    )
    serve.add_argument(
        "--suggestion",
        action="append",
        default=None,
        metavar="TEXT",
        help="a suggestion the chat page offers (repeatable; default: one per tool "
        "of the agent, 'use TOOL')",
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
    _types(sub)
    _export_eval(sub)
    return top


def _types(sub: Any) -> None:
    types = sub.add_parser(
        "types",
        help="write a TypeScript module of the agent's tools, data parts and UIMessage",
        description="Write the TypeScript types of what the server sends for the agent: "
        "each tool's input and output, the answers its requests for input take, its data "
        "parts, and one UIMessage type for useChat<...>(). The schemas are compiled with "
        "json-schema-to-typescript, which must be installed (npm install --save-dev "
        "json-schema-to-typescript) in the project of --out or of the current folder.",
    )
    types.add_argument("target", nargs="?", help="as for serve (default: the demo agent)")
    types.add_argument("--agent", default=None, metavar="NAME", help="as for serve")
    types.add_argument("--out", default=None, metavar="FILE", help="the module (default: stdout)")
    types.add_argument(
        "--name",
        default=None,
        metavar="PREFIX",
        help="prefix of the module's types (default: the root agent's name, e.g. AssistantMessage)",
    )
    types.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when --out is not what the command would write",
    )
    types.set_defaults(model=None, token_delay=0.0)


def _export_eval(sub: Any) -> None:
    export = sub.add_parser(
        "export-eval",
        help="write a chat as an ADK EvalSet with one eval case",
        description="Read a chat's ADK session from --session-db and write it as an ADK "
        "EvalSet (adk eval, AgentEvaluator) with one eval case.",
    )
    export.add_argument(
        "target",
        nargs="?",
        help="the agent served, as for serve: its App's name and its initial state "
        "(default: the app name adk-asgi serve gives an agent)",
    )
    export.add_argument("--agent", default=None, metavar="NAME", help="as for serve")
    export.add_argument("--session-db", required=True, metavar="URL", help="as for serve")
    export.add_argument("--chat", required=True, metavar="ID", help="the chat's id")
    export.add_argument(
        "--user", default=None, metavar="ID", help="its owner (default: found by the chat's id)"
    )
    export.add_argument("--app", default=None, metavar="NAME", help="the sessions' app name")
    export.add_argument(
        "--out", default=None, metavar="FILE", help="the eval set (default: stdout)"
    )
    export.add_argument(
        "--cassette",
        default=None,
        metavar="FILE",
        help="the Gemini emulator cassette the chat was recorded in (default: "
        "$ADK_ASGI_CASSETTE, which a recording emulator's env file sets)",
    )
    export.set_defaults(model=None, token_delay=0.0)
