"""Benchmark rows: which process each row starts, which client drives it, with which knobs.

A row is ``BASE`` or ``BASE@KNOBS`` (``adk-asgi@gc=20000,50,50+freeze``, see
``benchmarks.knobs``): the same process with process-level knobs, so levers can be
A/B-tested side by side in one interleaved run without editing code.

Every row is a process of its own started through ``python -m benchmarks.knobs``:

* ``adk-asgi`` / ``adk-asgi-live`` / ``adk-asgi-live-b`` — ``python -m adk_asgi serve
  --port P --token-delay 0``: the CLI users run (its page app, drain, uvicorn config and
  whatever process defaults it sets), driven over SSE, WebSocket protocol A or B;
* ``adk-asgi-live-ws-legacy`` — the CLI on uvicorn's legacy ``websockets`` WebSocket
  implementation (``--ws websockets``; the CLI's default is ``websockets-sansio``);
* ``adk-asgi-gc-off`` — the same CLI with its garbage-collector tuning off
  (``--gc-threshold python --no-gc-freeze``): what the tuning buys;
* ``adk-asgi-bare`` (SSE) / ``adk-asgi-live-bare`` (WebSocket) — ``AdkMiddleware``
  around a bare 404 app under plain ``uvicorn.Config`` (``python -m benchmarks.serve``):
  what the CLI adds on top of the middleware shows up as the difference;
* ``adk-asgi-sse-starlette`` — ``adk-asgi-bare`` with its turns written through
  sse-starlette (``benchmarks/starlette_sse.py``): the SSE channel decision;
* ``adk-naive`` — the naive bridge (``benchmarks/naive.py``), the floor;
* ``adk-naive-live`` — the naive bridge over WebSocket (live protocol A, one ``run_live``
  per connection), the live rows' floor: on the CLI's WebSocket implementation
  (``websockets-sansio``) and event loop (uvloop), so what it costs above the live ceiling
  is what any bridge sending one frame per chunk pays on that server;
* ``adk-api-server`` / ``adk-api-server-live`` / ``ag-ui-adk`` — the peers;
* ``adk-asgi-voice`` / ``adk-api-server-voice`` — the voice phase's rows
  (``benchmarks.voice``): the CLI over protocol A, and ADK's api_server over
  ``/run_live``, on ADK's ``Gemini`` with a native-audio Live model against the voice
  emulator (``benchmarks.emulator``), pinned to core 0 (``cpu=0``); measured in the
  voice phase only;
* ``ceiling`` / ``ceiling-plain`` / ``ceiling-live`` — ``Runner.run_async`` /
  ``run_live`` with no transport (``python -m benchmarks.ceiling --worker``): the
  resumable ``App`` on uvloop as adk-asgi runs ADK, and a plain ``Runner`` with Python's
  default settings (asyncio loop, default GC).

``BASE@gemini`` (``--emulator`` adds one for every row) is the same contender on ADK's
real ``Gemini`` model against the Gemini API emulator (``benchmarks.emulator``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from . import emulator
from .knobs import Knobs

Kind = Literal["sse", "ws", "ceiling", "voice"]


@dataclass(frozen=True)
class Base:
    name: str
    kind: Kind
    module: tuple[str, ...]  # after "-m"; port and token delay are appended
    client: str | None  # key of benchmarks.client.CONTENDERS (None: a ceiling)
    peer_module: str  # must be importable, else the row is "skipped: not installed"
    label: str
    knobs: Knobs = field(default_factory=Knobs)
    live: bool = False  # ceilings: run_live turns
    cprofile: bool = False  # started by benchmarks.serve: --profile works

    def command(
        self, port: int, token_delay: float, models: tuple[str, str] | None = None
    ) -> list[str]:
        """The command after ``-m``; ``models``: the Gemini text and Live models of the CLI
        rows (the others read ``BENCH_MODEL``, see ``benchmarks.emulator``)."""
        if self.kind == "ceiling":
            return list(self.module)
        if self.kind == "voice":
            models = emulator.VOICE_MODELS
        extra = (
            ["--model", models[0], "--live-model", models[1]]
            if models is not None and self.module[:2] == _CLI
            else []
        )
        return [*self.module, "--port", str(port), "--token-delay", str(token_delay), *extra]


_CLI = ("adk_asgi", "serve")


def _serve(name: str) -> tuple[str, ...]:
    return ("benchmarks.serve", name)


BASES: dict[str, Base] = {
    b.name: b
    for b in (
        Base(
            "adk-asgi",
            "sse",
            _CLI,
            "adk-asgi",
            "adk_asgi",
            "adk-asgi serve (CLI), SSE `POST /api/chat`",
        ),
        Base(
            "adk-asgi-gc-off",
            "sse",
            (*_CLI, "--gc-threshold", "python", "--no-gc-freeze"),
            "adk-asgi",
            "adk_asgi",
            "adk-asgi serve --gc-threshold python --no-gc-freeze (Python's collector settings)",
        ),
        Base(
            "adk-asgi-bare",
            "sse",
            _serve("adk-asgi"),
            "adk-asgi",
            "adk_asgi",
            "AdkMiddleware under plain uvicorn, SSE",
            cprofile=True,
        ),
        Base(
            "adk-asgi-sse-starlette",
            "sse",
            _serve("adk-asgi-sse-starlette"),
            "adk-asgi",
            "sse_starlette",
            "AdkMiddleware under plain uvicorn, SSE through sse-starlette's `EventSourceResponse`",
        ),
        Base(
            "adk-naive",
            "sse",
            _serve("adk-naive"),
            "adk-naive",
            "starlette",
            "naive bridge (`run_async` → `json.dumps` → `StreamingResponse`)",
        ),
        Base(
            "adk-api-server",
            "sse",
            _serve("adk-api-server"),
            "adk-api-server",
            "google.adk.cli.fast_api",
            "ADK api_server (`POST /run_sse`, streaming)",
        ),
        Base(
            "ag-ui-adk",
            "sse",
            _serve("ag-ui-adk"),
            "ag-ui-adk",
            "ag_ui_adk",
            "ag-ui-adk (FastAPI endpoint, SSE)",
        ),
        Base(
            "ceiling",
            "ceiling",
            ("benchmarks.ceiling", "--worker", "--runner", "resumable"),
            None,
            "google.adk",
            "ceiling: resumable App, uvloop (as adk-asgi runs ADK)",
            knobs=Knobs(loop="uvloop"),
        ),
        Base(
            "ceiling-plain",
            "ceiling",
            ("benchmarks.ceiling", "--worker", "--runner", "plain"),
            None,
            "google.adk",
            "plain ceiling: `Runner(agent=…)`, Python defaults",
        ),
        Base(
            "adk-asgi-live",
            "ws",
            _CLI,
            "adk-asgi-live",
            "adk_asgi",
            "adk-asgi serve (CLI), WebSocket protocol A",
        ),
        Base(
            "adk-asgi-live-ws-legacy",
            "ws",
            (*_CLI, "--ws", "websockets"),
            "adk-asgi-live",
            "adk_asgi",
            "adk-asgi serve --ws websockets (uvicorn's legacy WebSocket "
            "implementation), WebSocket protocol A",
        ),
        Base(
            "adk-asgi-live-b",
            "ws",
            _CLI,
            "adk-asgi-live-b",
            "adk_asgi",
            "adk-asgi serve (CLI), WebSocket protocol B (AI SDK v7)",
        ),
        Base(
            "adk-asgi-live-bare",
            "ws",
            _serve("adk-asgi-live"),
            "adk-asgi-live",
            "adk_asgi",
            "AdkMiddleware under plain uvicorn (deflate on), WebSocket protocol A",
            cprofile=True,
        ),
        Base(
            "adk-naive-live",
            "ws",
            (*_serve("adk-naive-live"), "--ws", "websockets-sansio"),
            "adk-naive-live",
            "starlette",
            "naive live bridge (`run_live` → `json.dumps` → one text frame per chunk), "
            "websockets-sansio",
        ),
        Base(
            "adk-api-server-live",
            "ws",
            _serve("adk-api-server-live"),
            "adk-api-server-live",
            "google.adk.cli.fast_api",
            "ADK api_server `/run_live` (WebSocket)",
        ),
        Base(
            "ceiling-live",
            "ceiling",
            ("benchmarks.ceiling", "--worker", "--runner", "resumable", "--live"),
            None,
            "google.adk",
            "live ceiling: `Runner.run_live`, resumable App, uvloop",
            knobs=Knobs(loop="uvloop"),
            live=True,
        ),
        Base(
            "adk-asgi-voice",
            "voice",
            _CLI,
            "adk-asgi-voice",
            "adk_asgi",
            "adk-asgi serve (CLI), voice over WebSocket protocol A (binary microphone frames)",
            knobs=Knobs(cpus=(0,)),
        ),
        Base(
            "adk-api-server-voice",
            "voice",
            _serve("adk-api-server-live"),
            "adk-api-server-voice",
            "google.adk.cli.fast_api",
            "ADK api_server `/run_live` (WebSocket), voice",
            knobs=Knobs(cpus=(0,)),
        ),
    )
}
# The voice phase's rows (``--voice-only`` runs these alone).
VOICE_ROWS = ("adk-asgi-voice", "adk-api-server-voice")

# The default run: the floor rows, the GC and SSE-channel A/B rows, ADK's api_server and
# the WebSocket rows, both live protocols side by side (ag-ui-adk on request:
# `--contenders ag-ui-adk ... --sweep ...`).
DEFAULT_ROWS = (
    "adk-asgi",
    "adk-asgi-gc-off",
    "adk-asgi-bare",
    "adk-asgi-sse-starlette",
    "adk-naive",
    "ceiling",
    "ceiling-plain",
    "adk-api-server",
    "adk-asgi-live",
    "adk-asgi-live-b",
    "adk-naive-live",
    "adk-api-server-live",
    "ceiling-live",
    *VOICE_ROWS,
)
# The quick run's one @gemini row: a smoke test of the emulator mode (cheap: one process).
QUICK_ROWS = (
    "adk-asgi",
    "adk-naive",
    "ceiling",
    "ceiling-plain",
    "adk-api-server",
    "ag-ui-adk",
    "adk-asgi-live",
    "adk-naive-live",
    "adk-api-server-live",
    "ceiling-live",
    "adk-asgi@gemini",
    *VOICE_ROWS,
)


@dataclass(frozen=True)
class Row:
    name: str
    base: Base
    knobs: Knobs

    @property
    def kind(self) -> Kind:
        return self.base.kind

    @property
    def live(self) -> bool:
        """Driven over WebSocket or run_live (the live tables)."""
        return self.base.kind == "ws" or self.base.live


def parse_row(text: str, extra: Knobs | None = None) -> Row:
    """``BASE`` or ``BASE@KNOBS``; ``extra`` (the harness's global knob flags) applies
    first, then the base's own defaults (a ceiling's loop), then the row's knobs."""
    name, _, spec = text.partition("@")
    if name not in BASES:
        raise ValueError(f"unknown row {name!r}; one of {', '.join(BASES)}")
    base = BASES[name]
    knobs = base.knobs
    if extra is not None:
        knobs = Knobs(
            gc_threshold=extra.gc_threshold or knobs.gc_threshold,
            gc_freeze=extra.gc_freeze or knobs.gc_freeze,
            loop=extra.loop or knobs.loop,
            gc_time=extra.gc_time and knobs.gc_time,
            env=(*knobs.env, *extra.env),
            gemini=extra.gemini or knobs.gemini,
            cpus=extra.cpus or knobs.cpus,
        )
    return Row(text, base, Knobs.parse(spec, knobs))
