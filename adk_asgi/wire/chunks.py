"""UI message stream chunks: the wire types the AI SDK client validates (public API).

One `Struct` per chunk type, tagged on ``type``, keys in camelCase. Optional
fields default to ``None`` and, with ``omit_defaults``, a ``None`` is never
written (the client rejects ``null`` for optional fields). Required-but-nullable
fields (``input``, ``output``, ``data``, ``messageMetadata`` of
``message-metadata``) have no default, so they are always written, even as ``null``.
No struct carries a key the strict clients (ai 6.0.0–6.0.230) do not know: adding
one is a protocol change, not a tweak.

Only the chunk types v6 *and* v7 clients accept are defined here; v7-only types
(``tool-approval-response``, ``reset-step``, ``custom``, ``reasoning-file``)
would break v6 clients and are deliberately absent.
"""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec

__all__ = (
    "DONE_FRAME",
    "Abort",
    "DataChunk",
    "Error",
    "File",
    "Finish",
    "FinishReason",
    "FinishStep",
    "MessageMetadata",
    "ProviderMetadata",
    "ReasoningDelta",
    "ReasoningEnd",
    "ReasoningStart",
    "SourceDocument",
    "SourceUrl",
    "Start",
    "StartStep",
    "TextDelta",
    "TextEnd",
    "TextStart",
    "ToolApprovalRequest",
    "ToolInputAvailable",
    "ToolInputDelta",
    "ToolInputError",
    "ToolInputStart",
    "ToolOutputAvailable",
    "ToolOutputDenied",
    "ToolOutputError",
    "UIChunk",
    "encode_chunk",
    "sse_event",
    "sse_frame",
)

# Nested by provider: {"adk": {...}}. A flat mapping is rejected by the client.
ProviderMetadata = dict[str, dict[str, Any]]
FinishReason = Literal["stop", "length", "content-filter", "tool-calls", "error", "other"]


class _Chunk(
    msgspec.Struct,
    tag_field="type",
    rename="camel",
    omit_defaults=True,
    kw_only=True,
):
    """Base of every chunk; subclasses set ``tag`` to their ``type`` value."""


class Start(_Chunk, tag="start"):
    message_id: str | None = None
    message_metadata: Any | None = None


class StartStep(_Chunk, tag="start-step"):
    pass


class FinishStep(_Chunk, tag="finish-step"):
    pass


class Finish(_Chunk, tag="finish"):
    finish_reason: FinishReason | None = None
    message_metadata: Any | None = None


class Abort(_Chunk, tag="abort"):
    reason: str | None = None


class MessageMetadata(_Chunk, tag="message-metadata"):
    message_metadata: Any


class Error(_Chunk, tag="error"):
    error_text: str


class TextStart(_Chunk, tag="text-start"):
    id: str
    provider_metadata: ProviderMetadata | None = None


class TextDelta(_Chunk, tag="text-delta"):
    id: str
    delta: str
    provider_metadata: ProviderMetadata | None = None


class TextEnd(_Chunk, tag="text-end"):
    id: str
    provider_metadata: ProviderMetadata | None = None


class ReasoningStart(_Chunk, tag="reasoning-start"):
    id: str
    provider_metadata: ProviderMetadata | None = None


class ReasoningDelta(_Chunk, tag="reasoning-delta"):
    id: str
    delta: str
    provider_metadata: ProviderMetadata | None = None


class ReasoningEnd(_Chunk, tag="reasoning-end"):
    id: str
    provider_metadata: ProviderMetadata | None = None


class ToolInputStart(_Chunk, tag="tool-input-start"):
    tool_call_id: str
    tool_name: str
    provider_executed: bool | None = None
    provider_metadata: ProviderMetadata | None = None
    dynamic: bool | None = None


class ToolInputDelta(_Chunk, tag="tool-input-delta"):
    tool_call_id: str
    input_text_delta: str


class ToolInputAvailable(_Chunk, tag="tool-input-available"):
    tool_call_id: str
    tool_name: str
    input: Any
    provider_executed: bool | None = None
    provider_metadata: ProviderMetadata | None = None
    dynamic: bool | None = None


class ToolInputError(_Chunk, tag="tool-input-error"):
    tool_call_id: str
    tool_name: str
    input: Any
    error_text: str
    provider_executed: bool | None = None
    provider_metadata: ProviderMetadata | None = None
    dynamic: bool | None = None


class ToolApprovalRequest(_Chunk, tag="tool-approval-request"):
    approval_id: str
    tool_call_id: str


class ToolOutputAvailable(_Chunk, tag="tool-output-available"):
    tool_call_id: str
    output: Any
    provider_executed: bool | None = None
    provider_metadata: ProviderMetadata | None = None
    dynamic: bool | None = None
    preliminary: bool | None = None


class ToolOutputError(_Chunk, tag="tool-output-error"):
    tool_call_id: str
    error_text: str
    provider_executed: bool | None = None
    provider_metadata: ProviderMetadata | None = None
    dynamic: bool | None = None


class ToolOutputDenied(_Chunk, tag="tool-output-denied"):
    tool_call_id: str


class SourceUrl(_Chunk, tag="source-url"):
    source_id: str
    url: str
    title: str | None = None
    provider_metadata: ProviderMetadata | None = None


class SourceDocument(_Chunk, tag="source-document"):
    source_id: str
    media_type: str
    title: str
    filename: str | None = None
    provider_metadata: ProviderMetadata | None = None


class File(_Chunk, tag="file"):
    url: str
    media_type: str
    provider_metadata: ProviderMetadata | None = None


class DataChunk(msgspec.Struct, omit_defaults=True, kw_only=True):
    """``data-<name>``: the type is open-ended, so it is a plain field, not a tag."""

    type: str
    data: Any
    id: str | None = None
    transient: bool | None = None


UIChunk = (
    Start
    | StartStep
    | FinishStep
    | Finish
    | Abort
    | MessageMetadata
    | Error
    | TextStart
    | TextDelta
    | TextEnd
    | ReasoningStart
    | ReasoningDelta
    | ReasoningEnd
    | ToolInputStart
    | ToolInputDelta
    | ToolInputAvailable
    | ToolInputError
    | ToolApprovalRequest
    | ToolOutputAvailable
    | ToolOutputError
    | ToolOutputDenied
    | SourceUrl
    | SourceDocument
    | File
    | DataChunk
)

# One encoder for the process: msgspec encoders are reusable and thread-safe.
_encoder: Final = msgspec.json.Encoder()
_PREFIX: Final = b"data: "
_SUFFIX: Final = b"\n\n"
DONE_FRAME: Final = b"data: [DONE]\n\n"


def encode_chunk(chunk: UIChunk) -> bytes:
    """The chunk as compact JSON bytes."""
    return _encoder.encode(chunk)


def sse_event(data: bytes) -> bytes:
    """One SSE event around encoded JSON, ``data: {json}\\n\\n``. JSON never holds a raw
    newline, so one line."""
    return _PREFIX + data + _SUFFIX


def sse_frame(chunk: UIChunk) -> bytes:
    """One chunk as one SSE event."""
    return _PREFIX + _encoder.encode(chunk) + _SUFFIX
