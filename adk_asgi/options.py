"""The option records of ``AdkApp``: each option is set once, in one of these records (or
``Limits``, ``SurfaceOptions``), and every part of the app reads it from there.

    AdkApp(agent,
           streaming=StreamingOptions(resume_grace=30),
           pauses=PauseOptions(confirmation_style="adk-tool"),
           surface=SurfaceOptions(agent_names=True),
           storage=StorageOptions(remember_sessions=True),
           live_options=LiveOptions(model="gemini-2.5-flash-native-audio-latest"),
           chats=ChatListOptions(page_size=30),
           limits=Limits(max_file_bytes=20 * 2**20))

``Settings`` is the app's bundle of them, as both endpoints (HTTP and live) read it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from google.adk.agents import RunConfig
from google.adk.models import BaseLlm
from google.genai import types

from .core.auth import Authenticate, anonymous
from .core.chats import ChatListOptions
from .core.limits import Limits
from .core.message import ConfirmationStyle, DescribeError, describe_error_generic

__all__ = (
    "ActivityDetection",
    "ChatListOptions",
    "LiveOptions",
    "PauseOptions",
    "Settings",
    "StorageOptions",
    "StreamingOptions",
    "TextModality",
)

ActivityDetection = Literal["manual", "automatic"]
TextModality = Literal["auto", "TEXT", "AUDIO"]


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

    def __post_init__(self) -> None:
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
    client_completes: frozenset[str] = frozenset()
    """Long-running server tools (``LongRunningFunctionTool``) whose pending calls the page
    may complete with ``addToolOutput``; a name that is not one fails at start-up."""
    oauth_redirect_uri: str | None = None
    """The absolute URL of adk-asgi's OAuth2 callback (``GET {api}/oauth2/callback``) as the
    user's browser reaches it, put into every sign-in's ``redirect_uri`` (register it with
    the provider). None: built from each request (its scheme, ``Host`` and mount path);
    set it when a proxy in front changes them."""
    sign_in_timeout: float = 600.0
    """Seconds an OAuth2 sign-in may take, from the request to the callback."""

    def __init__(self, confirmation_style: ConfirmationStyle = "native",
                 client_completes: Iterable[str] = (), *,
                 oauth_redirect_uri: str | None = None, sign_in_timeout: float = 600.0) -> None:
        if confirmation_style not in ("native", "adk-tool"):
            raise ValueError("confirmation_style is 'native' or 'adk-tool'")
        if isinstance(client_completes, str):
            raise TypeError("client_completes is a collection of tool names, not a string")
        if oauth_redirect_uri is not None and not oauth_redirect_uri.startswith(
                ("https://", "http://")):
            raise ValueError("oauth_redirect_uri is an absolute http(s) URL")
        if sign_in_timeout <= 0:
            raise ValueError("sign_in_timeout must be > 0")
        object.__setattr__(self, "confirmation_style", confirmation_style)
        object.__setattr__(self, "client_completes", frozenset(client_completes))
        object.__setattr__(self, "oauth_redirect_uri", oauth_redirect_uri)
        object.__setattr__(self, "sign_in_timeout", float(sign_in_timeout))


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
        default_factory=_sliding_window)
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


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything one ``AdkApp`` was configured with that its endpoints read (internal)."""

    limits: Limits = field(default_factory=Limits)
    streaming: StreamingOptions = field(default_factory=StreamingOptions)
    pauses: PauseOptions = field(default_factory=PauseOptions)
    authenticate: Authenticate = anonymous
    describe_error: DescribeError = describe_error_generic
    chats: ChatListOptions = field(default_factory=ChatListOptions)
