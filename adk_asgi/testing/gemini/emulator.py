"""``GeminiEmulator``: the emulator as a real server on loopback, run in a thread."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import ssl
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .app import Mode, Recording, Replaying, build_app
from .cassettes.cassette import Cassette
from .cassettes.recorder import Upstream
from .journal import Journal
from .script.exchange import ScriptFn
from .server import EmulatorServer
from .settings import EmulatorSettings
from .tls import TlsMaterial

if TYPE_CHECKING:
    from google import genai
    from google.adk.models import Gemini
    from google.genai import types

__all__ = ("GeminiEmulator",)


class GeminiEmulator:
    """A Gemini API emulator listening on loopback (HTTPS and WSS on one port).

    Use it as a context manager; `env` is the environment a process needs to reach it
    through google-genai (and so through ADK's `Gemini` model):

    >>> with GeminiEmulator(tokens_per_chunk=8) as emulator:
    ...     sorted(emulator.env)   # for os.environ, or a subprocess running your agent
    ...     client = emulator.client()   # google-genai, connected to it
    ...     client.models.generate_content(model="gemini-2.5-flash", contents="story").text[:16]
    ['GOOGLE_API_KEY', 'GOOGLE_GEMINI_BASE_URL', 'SSL_CERT_FILE']
    'Once upon a time'

    Record once, replay forever: ``GeminiEmulator(record="chat.jsonl")`` forwards every
    request to the real Gemini API (the key from ``GOOGLE_API_KEY``) and writes the
    exchanges to a cassette; ``GeminiEmulator(replay="chat.jsonl")`` answers from it,
    offline.

    Args:
        script: Decides every reply: a `Script` or any callable `(Request) -> Reply`.
            The default, `default_reply`, calls the declared functions a message names
            and answers like the adk-asgi demo agent's scripted model.
        settings: The knobs (`EmulatorSettings`); keyword arguments named after its
            fields override single knobs, e.g.
            `GeminiEmulator(connection_lifetime=2.0, go_away_lead=0.5)`.
        host: The address to listen on.
        port: The port; 0 picks a free one (see `port` once started).
        tls: Serve HTTPS/WSS with a throwaway CA (needed for the Live API, which
            google-genai always reaches over `wss://`). False serves plain HTTP.
        cert_dir: Where to write the CA, certificate and CA bundle; by default a
            temporary directory removed by `stop()`.
        record: Record instead of scripting: forward every request (HTTP and Live API)
            to ``upstream`` and write each exchange to this cassette file (JSON lines,
            secrets redacted; an existing file is replaced).
        upstream: Where recording forwards: a base URL (default: the Gemini API) or an
            `Upstream` (URL, real API key, SSL context).
        replay: Answer from this cassette instead of a script, offline; a request it
            has no recording of gets 404 NOT_FOUND (Live API: close 1008) and the
            explanation in the log and `replay_misses`.
        replay_timing: Keep the recorded pauses between chunks and messages.
        **knobs: Single `EmulatorSettings` fields, overriding `settings`.
    """

    def __init__(
        self,
        script: ScriptFn | None = None,
        *,
        settings: EmulatorSettings | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        tls: bool = True,
        cert_dir: str | os.PathLike[str] | None = None,
        record: str | os.PathLike[str] | None = None,
        upstream: str | Upstream | None = None,
        replay: str | os.PathLike[str] | None = None,
        replay_timing: bool = False,
        **knobs: Any,
    ) -> None:
        settings = settings or EmulatorSettings()
        if knobs:
            settings = dataclasses.replace(settings, **knobs)
        self.settings = settings
        """The knobs in force."""
        self.journal = Journal()
        """What the emulator received (see `adk_asgi.testing.gemini.Journal`)."""
        self._mode = _mode(script, record, upstream, replay, replay_timing)
        self._host = host
        self._requested_port = port
        self._tls_enabled = tls
        self._cert_dir = Path(cert_dir) if cert_dir is not None else None
        self._server: EmulatorServer | None = None
        self._port = 0

    # ---- lifecycle -------------------------------------------------------------------

    def start(self) -> GeminiEmulator:
        """Start serving; returns once the server listens."""
        if self._server is not None:
            raise RuntimeError("the emulator is already running")
        mode = self._mode
        if isinstance(mode, Recording):
            mode = Recording(mode.path, mode.upstream.with_key())
        app = build_app(self.settings, mode, self.journal)
        server = EmulatorServer(
            app, self._host, self._requested_port, tls=self._tls_enabled, cert_dir=self._cert_dir
        )
        server.start()
        self._server = server
        self._port = server.port
        return self

    def stop(self) -> None:
        """Stop serving (closing open connections) and remove temporary files."""
        if self._server is not None:
            self._server.stop()
        self._server = None

    def __enter__(self) -> GeminiEmulator:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> GeminiEmulator:
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.stop)

    @property
    def replay_misses(self) -> list[str]:
        """Why each request a replay had no recording of was refused (the nearest
        recording and where it differs), oldest first."""
        return [str(r.data["explanation"]) for r in self.journal.records("miss")]

    # ---- how to reach it -------------------------------------------------------------

    @property
    def port(self) -> int:
        """The port it listens on (once started)."""
        if not self._port:
            raise RuntimeError("the emulator is not running")
        return self._port

    @property
    def base_url(self) -> str:
        """``https://127.0.0.1:<port>``: the value for ``GOOGLE_GEMINI_BASE_URL``."""
        host = "127.0.0.1" if self._host in ("0.0.0.0", "") else self._host
        host = "[::1]" if host == "::" else (f"[{host}]" if ":" in host else host)
        scheme = "https" if self._tls_enabled else "http"
        return f"{scheme}://{host}:{self.port}"

    @property
    def _tls(self) -> TlsMaterial | None:
        return self._server.tls if self._server is not None else None

    @property
    def api_key(self) -> str:
        """An API key the emulator accepts."""
        return self.settings.client_api_key

    @property
    def ca_file(self) -> Path | None:
        """The throwaway CA's certificate (None without TLS)."""
        return self._tls.ca_file if self._tls else None

    @property
    def ca_bundle(self) -> Path | None:
        """certifi's roots plus the throwaway CA: the value for ``SSL_CERT_FILE``."""
        return self._tls.bundle_file if self._tls else None

    @property
    def env(self) -> dict[str, str]:
        """The environment a process needs to reach the emulator through google-genai:
        ``GOOGLE_GEMINI_BASE_URL``, ``GOOGLE_API_KEY`` and (with TLS) ``SSL_CERT_FILE``."""
        env = {"GOOGLE_GEMINI_BASE_URL": self.base_url, "GOOGLE_API_KEY": self.api_key}
        if self.ca_bundle is not None:
            env["SSL_CERT_FILE"] = str(self.ca_bundle)
        return env

    def write_env_file(self, path: str | os.PathLike[str]) -> None:
        """Write `env` as ``KEY=VALUE`` lines, atomically (readers never see half)."""
        target = Path(path)
        partial = target.with_name(target.name + ".partial")
        partial.write_text("".join(f"{key}={value}\n" for key, value in self.env.items()))
        partial.replace(target)

    def ssl_context(self) -> ssl.SSLContext:
        """A client SSL context that trusts the emulator."""
        if self._tls is None:
            raise RuntimeError("the emulator serves plain HTTP (tls=False) or is not running")
        return self._tls.client_context()

    def http_options(self, api_version: str | None = None) -> types.HttpOptions:
        """google-genai ``HttpOptions`` that reach the emulator without any environment:
        the base URL and an SSL context for httpx, aiohttp and websockets."""
        from google.genai import types

        args: dict[str, Any] = {}
        if self._tls is not None:
            context = self.ssl_context()
            args = {"verify": context, "ssl": context}
        return types.HttpOptions(
            base_url=self.base_url,
            api_version=api_version,
            client_args=args or None,
            async_client_args=args or None,
        )

    def client(self, api_version: str | None = None) -> genai.Client:
        """A ``google.genai.Client`` connected to the emulator."""
        from google import genai

        return genai.Client(api_key=self.api_key, http_options=self.http_options(api_version))

    def gemini(self, model: str = "gemini-2.5-flash", **fields: Any) -> Gemini:
        """ADK's real ``Gemini`` model, connected to the emulator without environment
        variables (for ``LlmAgent(model=emulator.gemini("gemini-2.5-flash"))``)."""
        from google.adk.models import Gemini

        client_kwargs = {"api_key": self.api_key, "http_options": self.http_options()}
        return Gemini(model=model, client_kwargs=client_kwargs, **fields)


def _mode(
    script: ScriptFn | None,
    record: str | os.PathLike[str] | None,
    upstream: str | Upstream | None,
    replay: str | os.PathLike[str] | None,
    timing: bool,
) -> Mode:
    if record is not None and replay is not None:
        raise ValueError("an emulator records or replays, not both")
    if script is not None and (record is not None or replay is not None):
        raise ValueError("a script answers only when the emulator neither records nor replays")
    if upstream is not None and record is None:
        raise ValueError("upstream is where recording forwards: pass record= too")
    if record is not None:
        if not isinstance(upstream, Upstream):
            upstream = Upstream(upstream) if upstream else Upstream()
        return Recording(Path(record), upstream)
    if replay is not None:
        return Replaying(Cassette(Path(replay)), timing)
    if script is None:
        from .script.script import Script

        script = Script()
    return script
