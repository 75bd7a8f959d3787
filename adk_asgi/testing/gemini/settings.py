"""The emulator's knobs: streaming shape, limits and timings, in one frozen record."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ("DEFAULT_API_KEY", "DEFAULT_HEARD_TEXT", "EmulatorSettings")

DEFAULT_API_KEY = "emulator-api-key"
"""The key written to the env file when the emulator accepts any key."""

DEFAULT_HEARD_TEXT = "What's the weather in Tokyo?"
"""What the emulator "hears" in every voice turn (the demo agent's voice phrase)."""


@dataclass(frozen=True, slots=True)
class EmulatorSettings:
    """How the emulator streams, and the service limits it enforces.

    The defaults are the real service's documented values; tests usually scale the
    timings and the context window down (a 2 s connection lifetime, a 2,000-token
    window) so a rule can be exercised in seconds.
    """

    tokens_per_chunk: int = 1
    """Text tokens (words) per streamed chunk: 1 streams word by word like the demo
    model, 8 is closer to what Gemini sends."""
    chunk_delay: float = 0.0
    """Seconds to wait before each streamed chunk (HTTP and live)."""
    api_key: str | None = None
    """The only API key accepted; None accepts any non-empty key."""
    live_model_pattern: str = r"live|native-audio"
    """A model is Live-capable when this regular expression matches its name
    (searched, case-insensitive). Live-capable models are refused by
    ``generateContent``; other models are refused by ``BidiGenerateContent``."""
    audio_only_model_pattern: str = r"native-audio|gemini-3"
    """Live models that answer only with audio (searched, case-insensitive): a setup
    asking them for TEXT alone is refused, as native-audio and Gemini 3 Live models
    refuse it. Their text is the transcript of what they say."""
    connection_lifetime: float = 600.0
    """Seconds a Live API connection lasts before the server closes it (about 10 min)."""
    go_away_lead: float = 60.0
    """Seconds before the end of a connection's lifetime that ``goAway`` is sent."""
    context_window: int = 128_000
    """Tokens a Live session may hold. Without ``contextWindowCompression`` the session
    ends when it is exceeded; with it the oldest turns are dropped."""
    handle_ttl: float = 2 * 60 * 60.0
    """Seconds a session resumption handle stays valid after its connection ends."""
    heard_text: str = DEFAULT_HEARD_TEXT
    """The transcript of every voice turn (speech recognition is scripted)."""
    silence_gap: float = 0.5
    """Seconds of silence that end a voice turn under automatic activity detection,
    unless the setup sets ``silenceDurationMs``."""
    voice_threshold: int = 500
    """Peak sample amplitude (of 32,767) above which input audio counts as speech."""
    audio_seconds_per_chunk: float = 0.04
    """Seconds of 24 kHz output audio sent per streamed text chunk."""
    audio_tokens_per_second: int = 32
    """Tokens one second of audio (input or output) takes in the context window."""
    include_thoughts: bool | None = None
    """True/False sends/withholds ``thought`` parts whatever the request says; None
    follows ``thinkingConfig.includeThoughts`` like the real API."""
    reject_concurrent_resume: bool = True
    """Refuse to resume a session while another connection still holds it."""
    send_unresumable_updates: bool = True
    """Send ``sessionResumptionUpdate{resumable: false}`` while a turn is generating, as
    the real service does (clients must keep their last non-empty handle)."""
    _live_model_re: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _audio_only_re: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.tokens_per_chunk < 1:
            raise ValueError("tokens_per_chunk must be at least 1")
        for name in ("chunk_delay", "silence_gap", "audio_seconds_per_chunk"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")
        if self.connection_lifetime <= 0 or self.handle_ttl <= 0:
            raise ValueError("connection_lifetime and handle_ttl must be positive")
        if not 0 <= self.go_away_lead <= self.connection_lifetime:
            raise ValueError("go_away_lead must be between 0 and connection_lifetime")
        if self.context_window < 1 or self.audio_tokens_per_second < 0:
            raise ValueError("context_window must be positive")
        if self.api_key == "":
            raise ValueError("api_key must not be empty (use None to accept any key)")
        object.__setattr__(self, "_live_model_re", re.compile(self.live_model_pattern, re.I))
        object.__setattr__(self, "_audio_only_re", re.compile(self.audio_only_model_pattern, re.I))

    def is_live_model(self, model: str) -> bool:
        """Whether ``model`` (with or without ``models/``) is a Live-capable model."""
        return bool(self._live_model_re.search(model.removeprefix("models/")))

    def is_audio_only(self, model: str) -> bool:
        """Whether the Live model ``model`` refuses the TEXT response modality."""
        return bool(self._audio_only_re.search(model.removeprefix("models/")))

    @property
    def client_api_key(self) -> str:
        """The key clients should send."""
        return self.api_key or DEFAULT_API_KEY
