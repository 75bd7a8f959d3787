"""The option records of ``AdkApp``: every option is set once, in one of these records, and
every part of the app reads it from there.

    AdkApp(agent,
           streaming=StreamingOptions(resume_grace=30),
           pauses=PauseOptions(confirmation_style="adk-tool"),
           surface=SurfaceOptions(agent_names=True),
           storage=StorageOptions(remember_sessions=True),
           live_options=LiveOptions(model="gemini-2.5-flash-native-audio-latest"),
           chats=ChatListOptions(page_size=30),
           limits=Limits(max_file_bytes=20 * 2**20),
           gc_tuning=GcTuning())

``Settings`` is the app's bundle of them, as every part of the app reads it. The types of
the hooks the records hold (``Authenticate``, ``DescribeError``, ``OnEvent``, ``TitleHook``)
are stated here too. This module is the bottom of the package: it imports only
``adk_asgi.wire``, the AI SDK's side.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from google.adk.agents import RunConfig
from google.adk.events import Event
from google.adk.models import BaseLlm
from google.genai import types

from .wire.errors import DescribeError, describe_error_generic
from .wire.parts import EventParts

__all__ = (
    "DEFAULT_MAX_QUEUED_BYTES",
    "DEFAULT_MAX_TURN_BYTES",
    "DEFAULT_MAX_TURN_SECONDS",
    "ActivityDetection",
    "Authenticate",
    "ChatListOptions",
    "ConfirmationStyle",
    "FileResolver",
    "GcTuning",
    "HoldPartials",
    "Limits",
    "LiveOptions",
    "OnEvent",
    "PauseOptions",
    "Settings",
    "StorageOptions",
    "StreamingOptions",
    "SurfaceOptions",
    "TextModality",
    "TitleHook",
    "anonymous",
)

logger = logging.getLogger("adk_asgi")

ActivityDetection = Literal["manual", "automatic"]
TextModality = Literal["auto", "TEXT", "AUDIO"]
ConfirmationStyle = Literal["native", "adk-tool"]
HoldPartials = Literal["rewritten", "never", "always"]

Authenticate = Callable[[MutableMapping[str, Any]], "str | Awaitable[str]"]
"""``(scope) -> user id`` (or its awaitable): who asks, for an HTTP or WebSocket scope;
raise ``AuthError`` to refuse (``adk_asgi.transport.auth``)."""
OnEvent = Callable[[Event, EventParts], None]
FileResolver = Callable[[types.FileData], "str | None"]
"""``(file) -> URL``: where a browser fetches a file ADK refers to by a URI it cannot open
(``SurfaceOptions.resolve_file``); None: the part is left out."""
"""``(event, parts)``: the application's own data parts and metadata for an ADK event."""
TitleHook = Callable[[str], "str | None"]
"""``(first user text) -> title`` of a chat."""


def anonymous(scope: MutableMapping[str, Any]) -> str:
    """The default: everyone is the same anonymous user (a single-user or demo setup)."""
    return "anonymous"


@dataclass(frozen=True, slots=True)
class StreamingOptions:
    """How a turn's stream meets its client, over SSE and WebSocket."""

    resume_grace: float = 0.0
    """Seconds a turn keeps running after its client disconnected, so a reload can resume
    it (``GET {api}/{chatId}/stream``); 0 aborts the run at once."""
    ping_interval: float | None = 15.0
    """SSE comment pings while the model is silent (proxies drop idle streams)."""
    send_timeout: float | None = 60.0
    """A client that takes nothing for this long while data waits for it (SSE or
    WebSocket) is dropped, its connection reset and its run aborted."""
    shutdown_grace: float = 10.0
    """How long ``drain()`` lets running turns finish at shutdown."""
    hold_partials: HoldPartials = "rewritten"
    """Whether a model response's partial text is streamed as it comes. ``"rewritten"``
    (default): held back for the agents with an ``after_model_callback`` (all of them when
    a plugin implements one), whose final response the callback may rewrite: their text
    arrives whole, as ADK stored it, so a redaction never stays on screen; ``"never"``:
    always streamed (a rewrite then only shows after a reload); ``"always"``: never
    streamed.
    """

    def __post_init__(self) -> None:
        if self.hold_partials not in ("rewritten", "never", "always"):
            raise ValueError("hold_partials must be 'rewritten', 'never' or 'always'")
        if self.resume_grace < 0 or self.shutdown_grace < 0:
            raise ValueError("resume_grace and shutdown_grace must be >= 0")


@dataclass(frozen=True, slots=True)
class PauseOptions:
    """How the calls a run pauses on (tool confirmations, browser tools, long-running
    tools, requests for input and credentials) reach the client and who may answer them."""

    confirmation_style: ConfirmationStyle = "native"
    """``"native"``: ADK tool confirmations are AI SDK approvals (``tool-approval-request``);
    ``"adk-tool"``: ADK's own ``adk_request_confirmation`` call, answered as a tool output.
    Both answer forms are accepted whatever the style."""
    client_completes: Collection[str] = frozenset()
    """Long-running server tools (``LongRunningFunctionTool``) whose pending calls the page
    may complete with ``addToolOutput``; a name that is not one fails at start-up."""
    oauth_redirect_uri: str | None = field(default=None, kw_only=True)
    """The absolute URL of adk-asgi's OAuth2 callback (``GET {api}/oauth2/callback``) as the
    user's browser reaches it, put into every sign-in's ``redirect_uri`` (register it with
    the provider). None: built from each request (its scheme, ``Host`` and mount path);
    set it when a proxy in front changes them."""
    sign_in_timeout: float = field(default=600.0, kw_only=True)
    """Seconds an OAuth2 sign-in may take, from the request to the callback."""

    def __post_init__(self) -> None:
        if self.confirmation_style not in ("native", "adk-tool"):
            raise ValueError("confirmation_style is 'native' or 'adk-tool'")
        if isinstance(self.client_completes, str):
            raise TypeError("client_completes is a collection of tool names, not a string")
        if self.oauth_redirect_uri is not None and not self.oauth_redirect_uri.startswith(
            ("https://", "http://")
        ):
            raise ValueError("oauth_redirect_uri is an absolute http(s) URL")
        if self.sign_in_timeout <= 0:
            raise ValueError("sign_in_timeout must be > 0")
        # Kept as given by value: a frozen record holds no list a caller could change.
        object.__setattr__(self, "client_completes", frozenset(self.client_completes))
        object.__setattr__(self, "sign_in_timeout", float(self.sign_in_timeout))


def state_filter(
    keys: Iterable[str] | Callable[[str], bool] | None,
) -> Callable[[str], bool] | None:
    """``state_keys`` as a predicate: an iterable names the keys the client may see."""
    if keys is None or callable(keys):
        return keys
    allowed = frozenset(keys)
    return allowed.__contains__


@dataclass(frozen=True, slots=True)
class SurfaceOptions:
    """What a message carries besides ADK's content (``AdkApp(surface=...)``)."""

    step_authors: bool = True
    """``messageMetadata.adk``: the agent that wrote each step."""
    agent_names: bool = False
    """A ``data-agent`` part (``{"name": ...}``) wherever the writing agent changes."""
    state_keys: Iterable[str] | Callable[[str], bool] | None = None
    """Which session state keys reach the client as ``data-state``: the keys, or a
    ``(key) -> bool``; None: none (state may hold what users must not see)."""
    on_event: OnEvent | None = None
    """The application's hook: extra ``data-*`` parts and metadata for an event."""
    node_outputs: bool = True
    """Workflow nodes' outputs: a string as text, anything else as a ``data-node`` part
    (``{node, path, output}``)."""
    resolve_file: FileResolver | None = None
    """Where a browser fetches a file a model or tool refers to by a URI it cannot open
    (``gs://``, ``s3://``, the Gemini Files API): ``(types.FileData) -> URL`` (a signed
    URL, say), None to leave the part out. Called as the answer streams and as the
    history is read: it must not block. None (the default): such parts are left out, one
    log line each."""
    shows_state: Callable[[str], bool] | None = field(init=False, repr=False, compare=False)
    """``state_keys`` as a predicate (None: no state is shown)."""

    def __post_init__(self) -> None:
        if isinstance(self.state_keys, str):
            raise TypeError("state_keys is a collection of keys (or a predicate), not a string")
        object.__setattr__(self, "shows_state", state_filter(self.state_keys))

    @property
    def active(self) -> bool:
        """Any of it is on (else translators skip the surface altogether)."""
        return (
            self.step_authors
            or self.agent_names
            or self.shows_state is not None
            or self.on_event is not None
            or not self.node_outputs
        )


@dataclass(frozen=True, slots=True)
class StorageOptions:
    """What adk-asgi keeps of a chat besides its session, in ADK's artifact and memory
    services (``AdkApp(artifact_service=..., memory_service=...)``)."""

    uploads_as_artifacts: bool = False
    """The files of the user's messages are saved as artifacts of the chat (ADK's
    ``SaveFilesAsArtifactsPlugin``) and the session keeps a placeholder naming each, so a
    large file is not sent to the model again with every turn; the agent reads them with
    ADK's ``load_artifacts`` tool. Needs an artifact service. Messages posted over SSE: ADK's
    live runs do not run the plugin."""
    remember_sessions: bool = False
    """When a turn ends, the chat's conversation (its text) is added to the memory service
    in the background, so ``load_memory`` and ``preload_memory`` recall it in the user's
    next chats. Needs a memory service."""


@dataclass(frozen=True, slots=True)
class ChatListOptions:
    """A user's chats (``GET {api}``): titles and pages (``AdkApp(chats=...)``)."""

    title: TitleHook | None = None
    """``(first user text) -> title``, called once per chat, when its first turn is
    written; None (or no text back): the text itself, shortened."""
    title_length: int = 60
    """The longest title made from the first user text (characters, with the ellipsis)."""
    page_size: int = 20
    """Chats per page when the client asks for no ``limit``."""
    max_page_size: int = 100
    """The largest ``limit`` a client may ask for."""

    def __post_init__(self) -> None:
        if self.title_length < 2 or not 0 < self.page_size <= self.max_page_size:
            raise ValueError("title_length >= 2 and 0 < page_size <= max_page_size")


def _sliding_window() -> types.ContextWindowCompressionConfig:
    # The Live API's defaults: compress at 80% of the window, keep the newest half.
    return types.ContextWindowCompressionConfig(sliding_window=types.SlidingWindow())


@dataclass(frozen=True, slots=True)
class LiveOptions:
    """Live mode settings (``AdkApp(live_options=...)``); see docs/live-mode.md. What both
    transports share (``send_timeout``, the confirmation style, ``describe_error``) is set
    in ``StreamingOptions``, ``PauseOptions`` and ``AdkApp`` itself."""

    model: str | BaseLlm | None = None
    """The model of live runs, for every agent (a Live API model name such as
    ``gemini-2.5-flash-native-audio-latest``, or a ``BaseLlm``); None: each agent's own."""
    activity_detection: ActivityDetection = "manual"
    """Who decides when the user speaks: ``manual``, the page (``audio_control``
    start/stop, push-to-talk; ``interrupt`` and protocol B ``abort`` stop the model);
    ``automatic``, the model's voice activity detection (hands-free: the page streams the
    microphone, speech interrupts the model). A connection may ask with ``?activity=``."""
    session_resumption: bool = True
    """Ask the Live API for resumption handles: a connection that reaches its lifetime
    (about 10 min) is renewed without ending the page's WebSocket, and a reload resumes."""
    context_window_compression: types.ContextWindowCompressionConfig | None = field(
        default_factory=_sliding_window
    )
    """The Live API's sliding window, so long sessions outlive the context window
    (without it an audio session ends after about 15 minutes); None turns it off."""
    text_modality: TextModality = "auto"
    """How a text connection's answers are made: ``TEXT``, or ``AUDIO`` with the
    transcript as the text (the audio is not sent); ``auto``: AUDIO for models that only
    speak (native-audio and Gemini 3 Live models refuse TEXT), else TEXT."""
    wait_timeout: float | None = 300.0
    """How long an approval or a browser tool may wait for the client (then: denied)."""
    idle_timeout: float | None = 300.0
    """Close a connection whose client sent nothing for this long while no turn runs."""
    inbox_size: int = 32
    """Items buffered between the run and the socket: a slow socket then holds ADK back."""
    run_config: RunConfig | None = None
    """Live RunConfig; default: the app's, with TEXT (or AUDIO with ``?modality=audio``)."""


_MiB: Final = 1024 * 1024
DEFAULT_MAX_QUEUED_BYTES: Final = _MiB
DEFAULT_MAX_TURN_SECONDS: Final = 600.0
DEFAULT_MAX_TURN_BYTES: Final = 32 * _MiB


@dataclass(frozen=True, slots=True)
class Limits:
    """Request and connection limits, in one place. Every limit answers with a clear 4xx
    (HTTP) or a close code / error frame (WebSocket); none is silent truncation. The
    defaults fit a chat UI with file uploads.

    HTTP (``POST``): ``max_body_bytes`` -> 413; ``max_messages``, ``max_parts_per_message``,
    ``max_file_bytes`` -> 413 with a code naming the limit.

    WebSocket: ``max_frame_bytes`` -> close 1009; more than ``frames_per_second`` (with
    bursts up to ``frame_burst``) -> close 1008; more than ``max_pending_approvals``
    calls waiting for the client on one connection -> the extra call is refused (the
    model is told) and the client gets an error; a camera or screen frame (protocol A
    ``image_frame``) over ``max_image_bytes``, or more than ``images_per_second`` (with
    bursts up to ``image_burst``) -> that frame is refused with an ``error`` frame and
    the connection goes on.

    Both: more than ``max_queued_bytes`` waiting for a client that does not read -> dropped
    (its run aborted), like a client that takes nothing for ``send_timeout``.

    HTTP: a turn that runs ``max_turn_seconds`` or streams ``max_turn_bytes`` -> stopped,
    with an ``error`` chunk (what bounds a client whose kernel keeps accepting bytes its
    application never reads; on WebSockets the server's keepalive pings do).
    """

    max_body_bytes: int = 16 * _MiB
    max_messages: int = 1000
    max_parts_per_message: int = 256
    max_file_bytes: int = 10 * _MiB
    """Decoded size of one ``data:`` URL file part."""
    max_frame_bytes: int = 16 * _MiB
    frames_per_second: float = 100.0
    frame_burst: int = 200
    max_pending_approvals: int = 32
    max_image_bytes: int = 7_000_000
    """Decoded size of one live image frame: the Live API's limit for an inline image
    (7 MB; its recommended frame is 768x768, some 50-150 kB as JPEG)."""
    images_per_second: float = 1.0
    """Live image frames per second and connection: the Live API takes video as image
    frames at 1 frame per second."""
    image_burst: int = 2
    """Image frames a connection may send at once (a page's 1-second timer drifts)."""
    max_queued_bytes: int = DEFAULT_MAX_QUEUED_BYTES
    """What the server queues for one slow client (an SSE stream or a WebSocket) behind a
    full socket; more and the client is dropped (``transport/outbox.py``)."""
    max_turn_seconds: float | None = DEFAULT_MAX_TURN_SECONDS
    """The longest one HTTP turn may run, from its response's start; None: no ceiling."""
    max_turn_bytes: int | None = DEFAULT_MAX_TURN_BYTES
    """The most one HTTP turn may stream to its client (its SSE bytes); None: no ceiling."""

    def __post_init__(self) -> None:
        for name in (
            "max_body_bytes",
            "max_messages",
            "max_parts_per_message",
            "max_file_bytes",
            "max_frame_bytes",
            "frame_burst",
            "max_pending_approvals",
            "max_queued_bytes",
            "max_image_bytes",
            "image_burst",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"Limits.{name} must be >= 1")
        for name in ("frames_per_second", "images_per_second"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Limits.{name} must be > 0")
        if self.max_turn_seconds is not None and self.max_turn_seconds <= 0:
            raise ValueError("Limits.max_turn_seconds must be > 0 (or None)")
        if self.max_turn_bytes is not None and self.max_turn_bytes < 1:
            raise ValueError("Limits.max_turn_bytes must be >= 1 (or None)")


@dataclass(frozen=True, slots=True)
class GcTuning:
    """How ``AdkApp`` sets the process's garbage collector after its start-up
    (``AdkApp(gc_tuning=...)``; on by default in ``adk-asgi serve``).

    ADK allocates many short-lived container objects per streamed event; with Python's
    default generation-0 threshold (700) the collector runs every few events, and each run
    of the older generations walks every object the process has ever imported. So:
    ``freeze``: ``gc.collect()`` then ``gc.freeze()`` once start-up and warm-up are done
    (what is alive then, ADK and the agent, is no longer walked); ``threshold``:
    ``gc.set_threshold(*threshold)`` (``None``: leave the thresholds). Cyclic garbage is
    still collected, a little later. ``GcTuning()`` is what ``adk-asgi serve`` uses;
    figures in ``benchmarks/RESULTS.md``."""

    threshold: tuple[int, int, int] | None = (20_000, 50, 50)
    freeze: bool = True

    def __post_init__(self) -> None:
        if self.threshold is not None and (
            len(self.threshold) != 3 or any(n < 0 for n in self.threshold)
        ):
            raise ValueError("GcTuning.threshold is three numbers >= 0, as gc.set_threshold")

    def apply(self) -> None:
        """Apply to this process (the GC settings are process-wide) and log them."""
        if self.freeze:
            gc.collect()
            gc.freeze()
        if self.threshold is not None:
            gc.set_threshold(*self.threshold)
        logger.info(
            "GC tuned: threshold %s, %d objects frozen", gc.get_threshold(), gc.get_freeze_count()
        )


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything one ``AdkApp`` was configured with, as every part of it reads it
    (internal: ``AdkApp`` builds it from its keywords)."""

    limits: Limits = field(default_factory=Limits)
    streaming: StreamingOptions = field(default_factory=StreamingOptions)
    pauses: PauseOptions = field(default_factory=PauseOptions)
    surface: SurfaceOptions = field(default_factory=SurfaceOptions)
    storage: StorageOptions = field(default_factory=StorageOptions)
    chats: ChatListOptions = field(default_factory=ChatListOptions)
    live: LiveOptions = field(default_factory=LiveOptions)
    authenticate: Authenticate = anonymous
    describe_error: DescribeError = describe_error_generic
    body_fields: Mapping[str, Any] = field(default_factory=dict)
    """Request body fields the application lets into the session state (name -> type)."""
    gc_tuning: GcTuning | None = None
