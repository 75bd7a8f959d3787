from __future__ import annotations

import json

import msgspec
import pytest

from adk_asgi import chunks as c


def test_frame_is_one_data_line_and_blank_line() -> None:
    frame = c.sse_frame(c.TextDelta(id="t1", delta='line\nbreak "quoted" 日本'))
    assert frame.startswith(b"data: ") and frame.endswith(b"\n\n")
    assert frame.count(b"\n") == 2  # JSON escapes newlines: one line per event
    assert json.loads(frame[6:]) == {
        "type": "text-delta",
        "id": "t1",
        "delta": 'line\nbreak "quoted" 日本',
    }
    assert c.DONE_FRAME == b"data: [DONE]\n\n"


@pytest.mark.parametrize(
    ("chunk", "expected"),
    [
        (c.Start(), {"type": "start"}),
        (c.Start(message_id="m"), {"type": "start", "messageId": "m"}),
        (c.Finish(), {"type": "finish"}),
        (
            c.Finish(finish_reason="tool-calls", message_metadata={"a": 1}),
            {"type": "finish", "finishReason": "tool-calls", "messageMetadata": {"a": 1}},
        ),
        (c.Finish(message_metadata=None), {"type": "finish"}),
        (c.Error(error_text="x"), {"type": "error", "errorText": "x"}),
        (
            c.ToolInputStart(tool_call_id="c", tool_name="t"),
            {"type": "tool-input-start", "toolCallId": "c", "toolName": "t"},
        ),
        # input/output/data/messageMetadata are required keys: present even when null
        (
            c.ToolInputAvailable(tool_call_id="c", tool_name="t", input=None),
            {"type": "tool-input-available", "toolCallId": "c", "toolName": "t", "input": None},
        ),
        (
            c.ToolOutputAvailable(tool_call_id="c", output=None),
            {"type": "tool-output-available", "toolCallId": "c", "output": None},
        ),
        (
            c.MessageMetadata(message_metadata=None),
            {"type": "message-metadata", "messageMetadata": None},
        ),
        (c.DataChunk(type="data-x", data=None), {"type": "data-x", "data": None}),
        (
            c.ToolApprovalRequest(approval_id="a", tool_call_id="c"),
            {"type": "tool-approval-request", "approvalId": "a", "toolCallId": "c"},
        ),
        (c.ToolOutputDenied(tool_call_id="c"), {"type": "tool-output-denied", "toolCallId": "c"}),
        (
            c.SourceUrl(source_id="s", url="https://x"),
            {"type": "source-url", "sourceId": "s", "url": "https://x"},
        ),
        (
            c.File(url="data:image/png;base64,AA==", media_type="image/png"),
            {"type": "file", "url": "data:image/png;base64,AA==", "mediaType": "image/png"},
        ),
        (
            c.TextStart(id="t", provider_metadata={"adk": {"k": 1}}),
            {"type": "text-start", "id": "t", "providerMetadata": {"adk": {"k": 1}}},
        ),
    ],
)
def test_exact_keys(chunk: c.UIChunk, expected: dict[str, object]) -> None:
    assert json.loads(c.encode_chunk(chunk)) == expected


def _all_chunk_classes() -> list[type[msgspec.Struct]]:
    return [
        getattr(c, name)
        for name in c.__all__
        if isinstance(getattr(c, name), type) and issubclass(getattr(c, name), msgspec.Struct)
    ]


def test_optional_fields_never_encode_null() -> None:
    required_nullable = {"input", "output", "data", "message_metadata"}
    for cls in _all_chunk_classes():
        info = msgspec.structs.fields(cls)
        kwargs = {}
        for f in info:
            if f.required:
                kwargs[f.name] = None if f.name in required_nullable else "x"
        if cls is c.DataChunk:
            kwargs["type"] = "data-x"
        if cls in (c.Finish, c.MessageMetadata) or "finish_reason" in kwargs:
            pass
        chunk = cls(**kwargs)
        encoded = json.loads(msgspec.json.encode(chunk))
        for key, value in encoded.items():
            if value is None:
                assert key in ("input", "output", "data", "messageMetadata"), (cls, key)


def test_chunk_type_tags_are_the_protocol_names() -> None:
    tags = {cls.__struct_config__.tag for cls in _all_chunk_classes() if cls is not c.DataChunk}
    v6_and_v7 = {
        "start",
        "start-step",
        "finish-step",
        "finish",
        "abort",
        "message-metadata",
        "error",
        "text-start",
        "text-delta",
        "text-end",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-available",
        "tool-input-error",
        "tool-approval-request",
        "tool-output-available",
        "tool-output-error",
        "tool-output-denied",
        "source-url",
        "source-document",
        "file",
    }
    assert tags == v6_and_v7  # no v7-only chunk that would break v6 clients


def test_public_api_is_explicit_and_sorted() -> None:
    import adk_asgi

    assert adk_asgi.__all__ == sorted(adk_asgi.__all__)
    for name in adk_asgi.__all__:
        assert hasattr(adk_asgi, name)
