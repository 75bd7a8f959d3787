from __future__ import annotations

import base64
import json

import pytest

from adk_asgi import RequestError
from adk_asgi.wire.request import decode_chat_request, user_content


def body(**kw: object) -> bytes:
    return json.dumps(kw).encode()


def test_default_transport_body_with_extras() -> None:
    req = decode_chat_request(
        body(
            id="chat1",
            trigger="submit-message",
            customKey={"x": 1},
            messages=[
                {
                    "id": "u1",
                    "role": "user",
                    "metadata": {"lang": "en"},
                    "parts": [{"type": "text", "text": "hi"}],
                }
            ],
        )
    )
    assert req.id == "chat1" and req.trigger == "submit-message"
    assert len(req.history) == 1 and req.history[0].parts[0].text == "hi"
    assert isinstance(req.message_id, type(req.message_id))


def test_single_message_shape() -> None:
    req = decode_chat_request(
        body(id="c", message={"id": "u", "role": "user", "parts": [{"type": "text", "text": "x"}]})
    )
    assert [m.id for m in req.history] == ["u"]


def test_all_part_kinds_are_accepted() -> None:
    parts = [
        {"type": "step-start"},
        {"type": "text", "text": "t", "state": "done", "providerMetadata": {"a": {}}},
        {"type": "reasoning", "text": "r", "state": "done"},
        {"type": "file", "mediaType": "image/png", "url": "https://x/y.png", "filename": "y"},
        {"type": "source-url", "sourceId": "s", "url": "https://x"},
        {"type": "data-weather", "id": "d1", "data": {"t": 1}},
        {
            "type": "tool-get_weather",
            "toolCallId": "c1",
            "state": "output-available",
            "input": {"location": "Tokyo"},
            "output": {"ok": True},
        },
        {
            "type": "tool-x",
            "toolCallId": "c2",
            "state": "approval-responded",
            "input": {},
            "approval": {"id": "a1", "approved": False, "reason": "no"},
        },
        {
            "type": "dynamic-tool",
            "toolName": "mcp",
            "toolCallId": "c3",
            "state": "output-error",
            "input": None,
            "errorText": "boom",
        },
        {"type": "something-new", "whatever": [1, 2]},
    ]
    req = decode_chat_request(
        body(
            id="c",
            messages=[
                {"id": "a", "role": "assistant", "parts": parts},
                {"id": "u", "role": "user", "parts": [{"type": "text", "text": "go"}]},
            ],
        )
    )
    assistant = req.history[0]
    assert [p.tool for p in assistant.parts][6:9] == ["get_weather", "x", "mcp"]
    approval = assistant.parts[7].approval
    assert not isinstance(approval, type(None)) and getattr(approval, "approved", None) is False


@pytest.mark.parametrize(
    ("raw", "status", "code"),
    [
        (b"{not json", 400, "invalid_json"),
        (b"", 400, "invalid_json"),
        (b"[]", 422, "invalid_request"),
        (body(messages=[]), 422, "invalid_request"),  # no id
        (body(id="c", messages="nope"), 422, "invalid_request"),
        (body(id="c", messages=[{"role": "robot", "parts": []}]), 422, "invalid_request"),
        (
            body(id="c", messages=[{"role": "user", "parts": [{"text": "no type"}]}]),
            422,
            "invalid_request",
        ),
        (
            body(id="c", messages=[{"role": "user", "parts": [{"type": "text", "text": 5}]}]),
            422,
            "invalid_request",
        ),
        (body(id="c", trigger="explode", messages=[]), 422, "invalid_request"),
        (body(id="", messages=[{"role": "user", "parts": []}]), 422, "invalid_chat_id"),
        (body(id="x" * 300, messages=[{"role": "user", "parts": []}]), 422, "invalid_chat_id"),
        (body(id="c", messages=[]), 422, "no_messages"),
    ],
)
def test_bad_bodies(raw: bytes, status: int, code: str) -> None:
    with pytest.raises(RequestError) as info:
        decode_chat_request(raw)
    assert (info.value.status, info.value.code) == (status, code)


def _msg(*parts: dict[str, object]) -> bytes:
    return body(id="c", messages=[{"id": "u", "role": "user", "parts": list(parts)}])


def test_files_become_inline_bytes_or_references() -> None:
    data = base64.b64encode(b"hello file").decode()
    req = decode_chat_request(
        _msg(
            {
                "type": "file",
                "mediaType": "text/plain",
                "filename": "n.txt",
                "url": f"data:text/plain;base64,{data}",
            },
            {"type": "file", "mediaType": "image/png", "url": "https://example.com/a.png"},
            {"type": "text", "text": "see file"},
            {"type": "data-ignored", "data": 1},
        )
    )
    content = user_content(req.history[-1])
    assert content.role == "user" and content.parts is not None
    inline, ref, text = content.parts
    assert inline.inline_data is not None and inline.inline_data.data == b"hello file"
    assert inline.inline_data.mime_type == "text/plain"
    assert ref.file_data is not None and ref.file_data.file_uri == "https://example.com/a.png"
    assert text.text == "see file"


@pytest.mark.parametrize(
    "url",
    ["javascript:alert(1)", "file:///etc/passwd", "data:text/plain;base64,@@@", "data:nocomma"],
)
def test_bad_file_urls_are_422(url: str) -> None:
    req = decode_chat_request(_msg({"type": "file", "mediaType": "text/plain", "url": url}))
    with pytest.raises(RequestError) as info:
        user_content(req.history[-1])
    assert info.value.status == 422


def test_message_without_content_is_422() -> None:
    req = decode_chat_request(_msg({"type": "step-start"}, {"type": "text", "text": ""}))
    with pytest.raises(RequestError) as info:
        user_content(req.history[-1])
    assert info.value.code == "empty_message"
