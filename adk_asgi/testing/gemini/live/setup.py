"""The Live API's ``setup`` message: the session's configuration, read once.

Fields per ``BidiGenerateContentSetup`` (https://ai.google.dev/api/live): ``model``,
``generationConfig`` (``responseModalities``, ``thinkingConfig``), ``systemInstruction``,
``tools``, ``realtimeInputConfig``, ``sessionResumption``,
``contextWindowCompression``, ``inputAudioTranscription``, ``outputAudioTranscription``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.genai import types

from .. import wire
from ..api import function_declarations, instruction_text
from ..errors import ApiError
from ..settings import EmulatorSettings
from ..tokens import text_tokens

__all__ = ("LiveSetup", "parse_setup")

_SETUP_FIELDS = frozenset(
    {
        "model",
        "generation_config",
        "system_instruction",
        "tools",
        "tool_config",
        "realtime_input_config",
        "session_resumption",
        "context_window_compression",
        "input_audio_transcription",
        "output_audio_transcription",
        "proactivity",
        "explicit_vad_signal",
        "history_config",
        "avatar_config",
        "safety_settings",
        "labels",
    }
)


@dataclass(frozen=True, slots=True)
class LiveSetup:
    model: str
    """Without ``models/``."""
    audio_out: bool
    """AUDIO response modality (the default) rather than TEXT."""
    text_only: bool
    """The setup asks for TEXT alone."""
    thoughts: bool
    system_instruction: str
    declarations: tuple[types.FunctionDeclaration, ...]
    manual_activity: bool
    """``realtimeInputConfig.automaticActivityDetection.disabled``."""
    interrupts: bool
    """Speech interrupts the model (``activityHandling`` is not NO_INTERRUPTION)."""
    silence_gap: float
    resumption: bool
    """``sessionResumption`` is set: the server sends resumption handles."""
    handle: str | None
    compression: bool
    trigger_tokens: int
    target_tokens: int
    transcribe_input: bool
    transcribe_output: bool

    @property
    def function_names(self) -> frozenset[str]:
        return frozenset(d.name for d in self.declarations if d.name)

    @property
    def instruction_tokens(self) -> int:
        return text_tokens(self.system_instruction)


def _invalid(detail: str) -> ApiError:
    return ApiError(400, f"Invalid JSON payload received. {detail}")


def parse_setup(raw: Any, settings: EmulatorSettings) -> LiveSetup:
    """Read a ``setup`` message (ApiError 400 when it is malformed)."""
    try:
        return _parse(raw, settings)
    except (TypeError, ValueError) as error:
        raise _invalid(f"Invalid value at 'setup': {error}") from None


def _parse(raw: Any, settings: EmulatorSettings) -> LiveSetup:
    if not isinstance(raw, dict):
        raise _invalid("Expected an object at 'setup'.")
    for name in raw:
        if wire.snake(name) not in _SETUP_FIELDS:
            raise _invalid(f"Unknown name \"{name}\" at 'setup': Cannot find field.")
    model = wire.get(raw, "model")
    if not isinstance(model, str) or not model:
        raise ApiError(400, "setup.model is required.")
    config: dict[str, Any] = wire.get(raw, "generation_config") or {}
    modalities = [str(m).upper() for m in wire.get(config, "response_modalities") or ()]
    thinking = wire.get(config, "thinking_config") or {}
    thoughts = settings.include_thoughts
    if thoughts is None:
        thoughts = bool(wire.get(thinking, "include_thoughts"))
    realtime = wire.get(raw, "realtime_input_config") or {}
    detection = wire.get(realtime, "automatic_activity_detection") or {}
    silence_ms = wire.get(detection, "silence_duration_ms")
    resumption = wire.get(raw, "session_resumption")
    compression = wire.get(raw, "context_window_compression")
    # "If not set, the default is 80% of the model's context window limit" and the
    # sliding window's target defaults to half the trigger (ContextWindowCompressionConfig
    # in the API reference, https://ai.google.dev/api/live).
    trigger = int(wire.get(compression, "trigger_tokens") or settings.context_window * 0.8)
    window = wire.get(compression, "sliding_window") or {}
    target = int(wire.get(window, "target_tokens") or trigger // 2)
    handle = wire.get(resumption, "handle") if isinstance(resumption, dict) else None
    return LiveSetup(
        model=model.removeprefix("models/"),
        # Native audio models answer with audio; TEXT only when asked for alone.
        audio_out=modalities != ["TEXT"],
        text_only=modalities == ["TEXT"],
        thoughts=thoughts,
        system_instruction=instruction_text(wire.get(raw, "system_instruction")),
        declarations=function_declarations(wire.get(raw, "tools")),
        manual_activity=bool(wire.get(detection, "disabled")),
        interrupts=str(wire.get(realtime, "activity_handling") or "") != "NO_INTERRUPTION",
        silence_gap=silence_ms / 1000 if isinstance(silence_ms, int) else settings.silence_gap,
        resumption=resumption is not None,
        handle=str(handle) if handle else None,
        compression=compression is not None,
        trigger_tokens=trigger,
        target_tokens=min(target, trigger),
        transcribe_input=wire.get(raw, "input_audio_transcription") is not None,
        transcribe_output=wire.get(raw, "output_audio_transcription") is not None,
    )
