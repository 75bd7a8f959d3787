"""What the parts of one Live API connection share: its socket, settings, script, the
session store and, once set up, its setup and session."""

from __future__ import annotations

from dataclasses import dataclass

from google.genai import types

from ..script.exchange import ScriptFn
from ..settings import EmulatorSettings
from ..tokens import content_tokens, text_tokens
from .sessions import LiveSession, SessionStore
from .setup import LiveSetup
from .socket import LiveSocket

__all__ = ("LiveState",)


@dataclass(eq=False, slots=True)
class LiveState:
    socket: LiveSocket
    settings: EmulatorSettings
    script: ScriptFn
    store: SessionStore
    current_setup: LiveSetup | None = None
    current_session: LiveSession | None = None

    @property
    def setup(self) -> LiveSetup:
        assert self.current_setup is not None
        return self.current_setup

    @property
    def session(self) -> LiveSession:
        assert self.current_session is not None
        return self.current_session

    def tokens(self, content: types.Content) -> int:
        return content_tokens([content], self.settings.audio_tokens_per_second)

    def output_tokens(self, chunks: int, text: str) -> int:
        if self.setup.audio_out:
            seconds = chunks * self.settings.audio_seconds_per_chunk
            return round(seconds * self.settings.audio_tokens_per_second)
        return text_tokens(text)
