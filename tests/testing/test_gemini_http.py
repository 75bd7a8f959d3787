"""The emulator's HTTP methods, driven by google-genai's own client over loopback TLS."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from google.genai import errors, types

from adk_asgi.testing.gemini import GeminiEmulator, Reply, Rule, Script

from .helpers import DEMO_TOOLS, LIVE_MODEL, TEXT_MODEL


async def stream(
    emulator: GeminiEmulator, contents: Any, config: types.GenerateContentConfig | None = None
) -> list[types.GenerateContentResponse]:
    client = emulator.client()
    chunks = await client.aio.models.generate_content_stream(
        model=TEXT_MODEL, contents=contents, config=config
    )
    return [chunk async for chunk in chunks]


def post(
    emulator: GeminiEmulator,
    body: dict[str, Any],
    *,
    model: str = TEXT_MODEL,
    method: str = "streamGenerateContent?alt=sse",
    headers: dict[str, str] | None = None,
    version: str = "v1beta",
) -> httpx.Response:
    return httpx.post(
        f"{emulator.base_url}/{version}/models/{model}:{method}",
        json=body,
        headers={"x-goog-api-key": "k"} if headers is None else headers,
        verify=emulator.ssl_context(),
    )


USER_HELLO = {"contents": [{"role": "user", "parts": [{"text": "hello"}]}]}


async def test_stream_word_by_word_by_default(emulator: GeminiEmulator) -> None:
    chunks = await stream(
        emulator, "What's the weather in Paris?", types.GenerateContentConfig(tools=DEMO_TOOLS)
    )
    texts = [c.text for c in chunks if c.candidates and c.candidates[0].content]
    assert texts[:7] == ["Let ", "me ", "check ", "the ", "weather ", "in ", "Paris."]
    last = chunks[-1]
    assert last.candidates is not None
    assert last.candidates[0].finish_reason == types.FinishReason.STOP
    assert last.function_calls is not None
    call = last.function_calls[0]
    assert (call.name, call.args, call.id) == ("get_weather", {"location": "Paris"}, None)
    assert last.usage_metadata is not None
    assert last.usage_metadata.prompt_token_count == 7  # 28 characters / 4
    assert last.model_version == TEXT_MODEL
    assert all(c.response_id == last.response_id for c in chunks)


async def test_tokens_per_chunk(make_emulator: Callable[..., GeminiEmulator]) -> None:
    emulator = make_emulator(tokens_per_chunk=8)
    chunks = await stream(emulator, "story")
    texts = [c.text for c in chunks]
    assert len(texts) == 8  # the 60-word story in chunks of 8 words
    assert all(len(t.split()) == 8 for t in texts[:-1])
    assert "".join(texts).startswith("Once upon a time, a tiny server")


async def test_generate_content_answers_the_whole_turn(emulator: GeminiEmulator) -> None:
    client = emulator.client()
    response = await client.aio.models.generate_content(model=TEXT_MODEL, contents="hello there")
    assert response.text is not None
    # No tools declared: the echo says how the default script calls one, not the demo's.
    assert response.text.startswith('You said: "hello there". This is the Gemini API emulator')
    assert "demo" not in response.text
    assert response.candidates is not None
    assert response.candidates[0].finish_reason == types.FinishReason.STOP


@pytest.mark.parametrize("version", ["v1beta", "v1alpha", "v1"])
async def test_api_versions(emulator: GeminiEmulator, version: str) -> None:
    client = emulator.client(api_version=version)
    response = await client.aio.models.generate_content(model=TEXT_MODEL, contents="hi")
    assert response.text


async def test_thoughts_only_when_asked(emulator: GeminiEmulator) -> None:
    prompt = "think about life"
    plain = await stream(emulator, prompt)
    assert not any(p.thought for c in plain for p in c.candidates[0].content.parts or ())  # type: ignore[index, union-attr]
    assert plain[-1].usage_metadata.thoughts_token_count  # type: ignore[union-attr]
    config = types.GenerateContentConfig(
        thinking_config=types.ThinkingConfig(include_thoughts=True)
    )
    thinking = await stream(emulator, prompt, config)
    parts = [p for c in thinking for p in c.candidates[0].content.parts or ()]  # type: ignore[index, union-attr]
    thought = "".join(p.text or "" for p in parts if p.thought)
    answer = "".join(p.text or "" for p in parts if not p.thought)
    assert thought.startswith("The user wants me to think about life.")
    assert answer.startswith("After thinking it over: life deserves")
    assert parts.index(next(p for p in parts if not p.thought)) > 0  # thoughts first


async def test_scripted_reply_with_grounding_and_parallel_calls(
    make_emulator: Callable[..., GeminiEmulator],
) -> None:
    grounding = types.GroundingMetadata(
        web_search_queries=["adk asgi"],
        grounding_chunks=[
            types.GroundingChunk(web=types.GroundingChunkWeb(uri="https://e.test", title="E"))
        ],
    )
    script = Script(
        Rule("search", Reply("Found it.", grounding=grounding)),
        Rule("both", Reply.calls_of(("a", {"x": 1}), ("b", {}))),
    )
    emulator = make_emulator(script)
    found = await stream(emulator, "please search")
    assert found[-1].candidates[0].grounding_metadata == grounding  # type: ignore[index]
    both = await stream(emulator, "do both")
    calls = both[-1].function_calls or []
    assert [(c.name, c.args) for c in calls] == [("a", {"x": 1}), ("b", {})]


@pytest.mark.parametrize(
    ("code", "status", "error_type"),
    [
        (429, "RESOURCE_EXHAUSTED", errors.ClientError),
        (500, "INTERNAL", errors.ServerError),
        (503, "UNAVAILABLE", errors.ServerError),
    ],
)
async def test_scripted_api_errors(
    emulator: GeminiEmulator, code: int, status: str, error_type: type[errors.APIError]
) -> None:
    with pytest.raises(error_type) as raised:
        await stream(emulator, f"please fail with {code}")
    assert (raised.value.code, raised.value.status) == (code, status)
    assert raised.value.message
    # The same as the raw body: status code plus {"error": {code, message, status}}.
    response = post(
        emulator, {"contents": [{"role": "user", "parts": [{"text": f"please fail with {code}"}]}]}
    )
    assert response.status_code == code
    assert response.json() == {
        "error": {"code": code, "message": raised.value.message, "status": status}
    }


async def test_error_in_the_middle_of_the_stream(emulator: GeminiEmulator) -> None:
    client = emulator.client()
    received: list[str] = []
    with pytest.raises(errors.ServerError) as raised:
        async for chunk in await client.aio.models.generate_content_stream(
            model=TEXT_MODEL, contents="please raise"
        ):
            received.append(chunk.text or "")
    assert received == ["I ", "am "]
    assert raised.value.code == 500


async def test_finish_reason_error(emulator: GeminiEmulator) -> None:
    chunks = await stream(emulator, "please fail")
    candidate = chunks[-1].candidates[0]  # type: ignore[index]
    assert candidate.finish_reason == types.FinishReason.OTHER
    assert candidate.content is None
    raw = post(emulator, {"contents": [{"role": "user", "parts": [{"text": "please fail"}]}]})
    event = json.loads(raw.text.removeprefix("data: "))
    assert event["candidates"][0]["finishMessage"] == (
        'The demo model failed on purpose ("please fail").'
    )


def test_sse_framing_and_json_array_mode(emulator: GeminiEmulator) -> None:
    sse = post(emulator, USER_HELLO)
    assert sse.headers["content-type"].startswith("text/event-stream")
    events = sse.text.split("\r\n\r\n")
    assert events[-1] == ""
    assert all(e.startswith("data: {") for e in events[:-1])
    array = post(emulator, USER_HELLO, method="streamGenerateContent")
    assert [r["candidates"][0]["content"] for r in array.json()] == [
        json.loads(e.removeprefix("data: "))["candidates"][0]["content"] for e in events[:-1]
    ]


def test_missing_api_key_is_refused(emulator: GeminiEmulator) -> None:
    refused = post(emulator, USER_HELLO, headers={})
    assert refused.status_code == 403
    assert refused.json()["error"]["status"] == "PERMISSION_DENIED"
    assert refused.json()["error"]["message"].startswith(
        "Method doesn't allow unregistered callers"
    )
    assert post(emulator, USER_HELLO, headers={"x-goog-api-key": "any"}).status_code == 200
    query = httpx.post(
        f"{emulator.base_url}/v1beta/models/{TEXT_MODEL}:generateContent?key=any",
        json=USER_HELLO,
        verify=emulator.ssl_context(),
    )
    assert query.status_code == 200


async def test_configured_api_key(make_emulator: Callable[..., GeminiEmulator]) -> None:
    emulator = make_emulator(api_key="s3cret")
    wrong = post(emulator, USER_HELLO, headers={"x-goog-api-key": "other"})
    assert wrong.status_code == 400
    assert wrong.json()["error"]["message"] == "API key not valid. Please pass a valid API key."
    assert wrong.json()["error"]["details"][0]["reason"] == "API_KEY_INVALID"
    assert post(emulator, USER_HELLO, headers={"x-goog-api-key": "s3cret"}).status_code == 200
    with pytest.raises(errors.ClientError):
        await stream(GeminiEmulatorView(emulator, "other"), "hi")  # type: ignore[arg-type]
    assert (await stream(emulator, "hi"))[-1].text


class GeminiEmulatorView:
    """An emulator seen through a client with another API key."""

    def __init__(self, emulator: GeminiEmulator, key: str) -> None:
        self._emulator = emulator
        self._key = key

    def client(self) -> Any:
        from google import genai

        return genai.Client(api_key=self._key, http_options=self._emulator.http_options())


def test_live_models_are_refused_by_generate_content(emulator: GeminiEmulator) -> None:
    refused = post(emulator, USER_HELLO, model=LIVE_MODEL, method="generateContent")
    assert refused.status_code == 404
    assert refused.json()["error"] == {
        "code": 404,
        "message": f"models/{LIVE_MODEL} is not found for API version v1beta, or is not "
        "supported for generateContent. Call ListModels to see the list of available models "
        "and their supported methods.",
        "status": "NOT_FOUND",
    }
    assert post(emulator, USER_HELLO, method="generateContent").status_code == 200


def test_bad_requests(emulator: GeminiEmulator) -> None:
    unknown = post(emulator, {**USER_HELLO, "temperature": 1})
    assert unknown.status_code == 400
    assert unknown.json()["error"]["message"] == (
        'Invalid JSON payload received. Unknown name "temperature": Cannot find field.'
    )
    empty = post(emulator, {"contents": []})
    assert empty.status_code == 400
    assert "contents is not specified" in empty.json()["error"]["message"]
    bad_part = post(emulator, {"contents": [{"role": "user", "parts": [{"txt": "x"}]}]})
    assert bad_part.status_code == 400
    not_json = httpx.post(
        f"{emulator.base_url}/v1beta/models/{TEXT_MODEL}:generateContent",
        content=b"{",
        headers={"x-goog-api-key": "k"},
        verify=emulator.ssl_context(),
    )
    assert not_json.status_code == 400
    assert post(emulator, USER_HELLO, method="countTokens").status_code == 404
    # snake_case field names are proto JSON too
    snake = post(emulator, {**USER_HELLO, "generation_config": {"temperature": 0}})
    assert snake.status_code == 200


def call_turn(responses: int) -> dict[str, Any]:
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "weather in Paris and Rome"}]},
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "get_weather", "args": {"location": "Paris"}}},
                    {"functionCall": {"name": "get_weather", "args": {"location": "Rome"}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "get_weather", "response": {"forecast": "sun"}}}
                ]
                * responses,
            },
        ]
    }


def test_function_responses_must_match_the_calls(emulator: GeminiEmulator) -> None:
    answered = post(emulator, call_turn(2), method="generateContent")
    assert answered.status_code == 200
    short = post(emulator, call_turn(1), method="generateContent")
    assert short.status_code == 400
    assert short.json()["error"]["message"] == (
        "Please ensure that the number of function response parts is equal to the number of "
        "function call parts of the function call turn."
    )


def test_a_script_that_raises_answers_500(make_emulator: Callable[..., GeminiEmulator]) -> None:
    def broken(request: Any) -> Reply:
        raise RuntimeError("bug in the test's script")

    emulator = make_emulator(broken)
    response = post(emulator, USER_HELLO)
    assert response.status_code == 500
    assert response.json()["error"]["status"] == "INTERNAL"
    assert "bug in the test" not in response.text


def test_journal_records_requests(make_emulator: Callable[..., GeminiEmulator]) -> None:
    emulator = make_emulator()
    post(emulator, USER_HELLO)
    (record,) = emulator.journal.records("streamGenerateContent")
    assert record.transport == "http"
    assert record.data["model"] == TEXT_MODEL
    assert record.data["body"] == USER_HELLO


@pytest.mark.parametrize(
    "body",
    [
        {"contents": "hello"},
        {"contents": [1]},
        {"contents": [{"role": "user", "parts": "x"}]},
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": "x"},
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "tools": 5},
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "systemInstruction": 5},
        {"contents": [{"role": "user", "parts": [{"inlineData": {"data": "%%%"}}]}]},
        [],
    ],
)
def test_odd_bodies_get_json_errors_never_a_500(emulator: GeminiEmulator, body: Any) -> None:
    response = post(emulator, body, method="generateContent")  # type: ignore[arg-type]
    assert response.status_code in (200, 400), response.text
    if response.status_code == 400:
        assert response.json()["error"]["status"] == "INVALID_ARGUMENT"
