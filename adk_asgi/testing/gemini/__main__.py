"""``python -m adk_asgi.testing.gemini``: run the Gemini API emulator from a shell.

    python -m adk_asgi.testing.gemini --host 127.0.0.1 --port 0 --env-file gemini.env
    python -m adk_asgi.testing.gemini --record chat.jsonl --env-file gemini.env
    python -m adk_asgi.testing.gemini --replay chat.jsonl --env-file gemini.env

Once it listens it writes the ``KEY=VALUE`` lines a process needs to reach it through
google-genai to the env file (``GOOGLE_GEMINI_BASE_URL``, ``GOOGLE_API_KEY``,
``SSL_CERT_FILE``), then serves until SIGINT or SIGTERM. ``--script MODULE:NAME`` imports
MODULE like ``python -m`` does: from the current directory, then the installed packages.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import logging
import os
import signal
import ssl
import sys
import threading
from collections.abc import Sequence
from typing import Any

from .cassettes.cassette import CassetteError
from .cassettes.recorder import DEFAULT_UPSTREAM, Upstream
from .emulator import GeminiEmulator
from .script.exchange import ScriptFn
from .settings import EmulatorSettings

__all__ = ("main",)

_DEFAULTS = EmulatorSettings()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m adk_asgi.testing.gemini",
        description="A Gemini API emulator for offline tests: the Gemini Developer API's "
        "generateContent, streamGenerateContent and Live API (BidiGenerateContent) on "
        "loopback, over TLS with a throwaway CA. It answers from the default script (a "
        "message naming a declared function calls it; the demo agent's phrases), from "
        "--script, or from a cassette recorded from the real API (--record, --replay).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    serve = parser.add_argument_group("serving")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=0, help="port (0 picks a free one)")
    serve.add_argument(
        "--env-file",
        help="write GOOGLE_GEMINI_BASE_URL, GOOGLE_API_KEY and SSL_CERT_FILE here once "
        "listening (KEY=VALUE lines)",
    )
    serve.add_argument(
        "--no-tls",
        action="store_true",
        help="serve plain HTTP (the Live API then cannot be reached: google-genai always "
        "uses wss://)",
    )
    serve.add_argument(
        "--cert-dir", help="keep the CA and certificates here; None: a temporary directory"
    )
    answers = serve.add_mutually_exclusive_group()
    answers.add_argument(
        "--script",
        metavar="MODULE:NAME",
        help="a script: a callable (Request) -> Reply, e.g. a Script, imported from MODULE "
        "(looked up from the current directory first, then the installed packages)",
    )
    answers.add_argument(
        "--record",
        metavar="FILE",
        help="forward every request to --upstream with the real API key (GOOGLE_API_KEY or "
        "GEMINI_API_KEY of this process) and write each exchange to this cassette (JSON "
        "lines, secrets redacted)",
    )
    answers.add_argument(
        "--replay",
        metavar="FILE",
        help="answer from this cassette, offline; a request it has no recording of gets "
        "404 NOT_FOUND (Live API: close 1008), and the log says which recording is nearest",
    )
    serve.add_argument(
        "--upstream",
        metavar="URL",
        help=f"where --record forwards (default: {DEFAULT_UPSTREAM})",
    )
    serve.add_argument(
        "--upstream-ca",
        metavar="FILE",
        help="CA bundle to trust for an https --upstream (default: SSL_CERT_FILE, else "
        "certifi's roots)",
    )
    serve.add_argument(
        "--replay-timing",
        action="store_true",
        help="keep the recorded pauses between chunks and messages when replaying",
    )
    serve.add_argument("--log-level", default="warning", help="logging level")

    model = parser.add_argument_group("model behaviour")
    model.add_argument(
        "--tokens-per-chunk",
        type=int,
        default=_DEFAULTS.tokens_per_chunk,
        help="text tokens (words) per streamed chunk, e.g. 8 for realistic chunking",
    )
    model.add_argument(
        "--chunk-delay", type=float, default=_DEFAULTS.chunk_delay, help="seconds before each chunk"
    )
    model.add_argument(
        "--include-thoughts",
        choices=("auto", "always", "never"),
        default="auto",
        help="send thought parts: as the request asks (auto), always, or never",
    )
    model.add_argument(
        "--heard-text",
        default=_DEFAULTS.heard_text,
        help="the transcript of every voice turn",
    )
    model.add_argument(
        "--live-model-pattern",
        default=_DEFAULTS.live_model_pattern,
        help="regular expression a Live-capable model name matches",
    )
    model.add_argument(
        "--audio-only-model-pattern",
        default=_DEFAULTS.audio_only_model_pattern,
        help="regular expression naming the Live models that refuse TEXT responses",
    )
    model.add_argument("--api-key", help="the only API key accepted; None: any non-empty key")

    limits = parser.add_argument_group("Live API limits and timings")
    limits.add_argument(
        "--connection-lifetime",
        type=float,
        default=_DEFAULTS.connection_lifetime,
        help="seconds a Live API connection lasts",
    )
    limits.add_argument(
        "--go-away-lead",
        type=float,
        default=_DEFAULTS.go_away_lead,
        help="seconds before the end of a connection that goAway is sent",
    )
    limits.add_argument(
        "--context-window",
        type=int,
        default=_DEFAULTS.context_window,
        help="tokens a Live session holds (without contextWindowCompression it ends when full)",
    )
    limits.add_argument(
        "--handle-ttl",
        type=float,
        default=_DEFAULTS.handle_ttl,
        help="seconds a resumption handle stays valid after its connection ends",
    )
    limits.add_argument(
        "--silence-gap",
        type=float,
        default=_DEFAULTS.silence_gap,
        help="seconds of silence that end a voice turn (automatic activity detection)",
    )
    limits.add_argument(
        "--voice-threshold",
        type=int,
        default=_DEFAULTS.voice_threshold,
        help="peak sample amplitude above which input audio is speech",
    )
    limits.add_argument(
        "--audio-seconds-per-chunk",
        type=float,
        default=_DEFAULTS.audio_seconds_per_chunk,
        help="seconds of 24 kHz output audio per streamed chunk",
    )
    limits.add_argument(
        "--audio-tokens-per-second",
        type=int,
        default=_DEFAULTS.audio_tokens_per_second,
        help="context tokens per second of audio",
    )
    limits.add_argument(
        "--allow-concurrent-resume",
        action="store_true",
        help="let a connection resume a session another connection still holds",
    )
    limits.add_argument(
        "--no-unresumable-updates",
        action="store_true",
        help="do not send sessionResumptionUpdate{resumable: false} while generating",
    )
    return parser


def _settings(args: argparse.Namespace) -> EmulatorSettings:
    thoughts = {"auto": None, "always": True, "never": False}[args.include_thoughts]
    knobs: dict[str, Any] = {
        field.name: getattr(args, field.name)
        for field in dataclasses.fields(EmulatorSettings)
        if field.init and hasattr(args, field.name)
    }
    knobs.update(
        include_thoughts=thoughts,
        reject_concurrent_resume=not args.allow_concurrent_resume,
        send_unresumable_updates=not args.no_unresumable_updates,
    )
    return EmulatorSettings(**knobs)


def _load_script(spec: str) -> ScriptFn:
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise SystemExit(f"--script expects MODULE:NAME, got {spec!r}")
    # `python -m` puts the current directory first on sys.path; so does this, for the
    # `adk-asgi-...` entry points and runpy alike.
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise SystemExit(
            f"--script {spec}: cannot import {module_name} from the current "
            f"directory or the installed packages: {error}"
        ) from None
    script = getattr(module, attribute, None)
    if script is None:
        raise SystemExit(f"--script {spec}: {module_name} has no {attribute}")
    if not callable(script):
        raise SystemExit(f"--script {spec}: {attribute} is not callable")
    result: ScriptFn = script
    return result


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    try:
        settings = _settings(args)
    except ValueError as error:
        raise SystemExit(f"invalid setting: {error}") from None
    if (args.upstream or args.upstream_ca) and not args.record:
        raise SystemExit("--upstream and --upstream-ca go with --record")
    if args.replay_timing and not args.replay:
        raise SystemExit("--replay-timing goes with --replay")
    script = _load_script(args.script) if args.script else None
    upstream = None
    if args.record:
        context = ssl.create_default_context(cafile=args.upstream_ca) if args.upstream_ca else None
        upstream = Upstream(args.upstream or DEFAULT_UPSTREAM, ssl_context=context)
    try:
        emulator = GeminiEmulator(
            script,
            settings=settings,
            host=args.host,
            port=args.port,
            tls=not args.no_tls,
            cert_dir=args.cert_dir,
            record=args.record,
            upstream=upstream,
            replay=args.replay,
            replay_timing=args.replay_timing,
        )
    except CassetteError as error:
        raise SystemExit(str(error)) from None
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    try:
        emulator.start()
    except RuntimeError as error:
        raise SystemExit(str(error)) from None
    try:
        if args.env_file:
            emulator.write_env_file(args.env_file)
        doing = (
            f", recording to {args.record}"
            if args.record
            else f", replaying {args.replay}"
            if args.replay
            else ""
        )
        print(
            f"Gemini emulator listening on {emulator.base_url}{doing}", file=sys.stderr, flush=True
        )
        stop.wait()
    finally:
        emulator.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
