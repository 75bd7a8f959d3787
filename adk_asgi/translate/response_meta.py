"""ResponseMeta: what the model's final responses say about the message as a whole —
usage, finish reason and model version (the ``finish`` chunk's metadata) and what it is
grounded on (``grounding.py``: source parts, each once, and ``data-grounding``)."""

from __future__ import annotations

from typing import Any, Final

from google.adk.events import Event

from ..wire.chunks import FinishReason, UIChunk
from .grounding import Grounding

__all__ = ("ResponseMeta",)

_FINISH_REASONS: Final[dict[str, FinishReason]] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content-filter",
    "RECITATION": "content-filter",
    "BLOCKLIST": "content-filter",
    "PROHIBITED_CONTENT": "content-filter",
    "SPII": "content-filter",
    "IMAGE_SAFETY": "content-filter",
}


class ResponseMeta:
    __slots__ = ("_grounding", "_model_version", "_usage", "finish_reason")

    def __init__(self, message_id: str) -> None:
        self._usage: dict[str, int] = {}
        self._model_version: str | None = None
        self._grounding = Grounding(message_id)
        self.finish_reason: FinishReason | None = None

    def record(self, event: Event, out: list[UIChunk]) -> None:
        if event.finish_reason is not None:
            name = getattr(event.finish_reason, "name", str(event.finish_reason))
            self.finish_reason = _FINISH_REASONS.get(name, "other")
        if event.model_version:
            self._model_version = event.model_version
        usage = event.usage_metadata
        if usage is not None:
            for key, value in (
                ("inputTokens", usage.prompt_token_count),
                ("outputTokens", usage.candidates_token_count),
                ("totalTokens", usage.total_token_count),
                ("reasoningTokens", usage.thoughts_token_count),
                ("cachedInputTokens", usage.cached_content_token_count),
            ):
                if value:
                    self._usage[key] = self._usage.get(key, 0) + value
        self._grounding.record(event, out)

    @property
    def output_tokens(self) -> int:
        usage = self._usage
        return usage.get("outputTokens", 0) + usage.get("reasoningTokens", 0)

    def metadata(self) -> dict[str, Any] | None:
        """The ``finish`` chunk's ``messageMetadata``."""
        metadata: dict[str, Any] = {}
        if self._usage:
            metadata["usage"] = dict(self._usage)
        if self._model_version:
            metadata["model"] = self._model_version
        return metadata or None
