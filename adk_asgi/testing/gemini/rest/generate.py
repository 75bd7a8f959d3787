"""``generateContent`` and ``streamGenerateContent``: the Gemini API's HTTP methods.

``POST /{version}/models/{model}:generateContent`` answers one
``GenerateContentResponse``; ``:streamGenerateContent?alt=sse`` answers one per SSE
event (``data: {json}`` and a blank line), the last with ``finishReason`` and the usage
(https://ai.google.dev/api/generate-content). google-genai uses ``v1beta`` unless told
otherwise; ``v1alpha`` and ``v1`` are served too.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import secrets
from collections.abc import AsyncIterator, Iterator
from typing import Any

from google.genai import types
from starlette.requests import Request as HttpRequest
from starlette.responses import Response, StreamingResponse

from .. import wire
from ..api import API_VERSIONS, function_declarations, instruction_text, not_supported
from ..auth import check_credentials
from ..errors import ApiError
from ..journal import Journal, Record
from ..script.exchange import Reply, Request, ScriptFn
from ..settings import EmulatorSettings
from ..tokens import content_tokens, text_tokens
from .chunks import ask, chunks_of

__all__ = ("RestEndpoint",)

logger = logging.getLogger("adk_asgi.testing.gemini")

_METHODS = frozenset({"generateContent", "streamGenerateContent"})
# GenerateContentRequest's fields (https://ai.google.dev/api/generate-content#request-body);
# the API refuses unknown ones ("Invalid JSON payload received. Unknown name ...").
_REQUEST_FIELDS = frozenset(
    {
        "model",
        "contents",
        "tools",
        "tool_config",
        "safety_settings",
        "system_instruction",
        "generation_config",
        "cached_content",
        "labels",
        "service_tier",
        "store",
    }
)


def _check_function_turns(contents: list[types.Content]) -> None:
    # A function call turn must be followed by as many function responses: the API's
    # 400 "Please ensure that the number of function response parts is equal to the
    # number of function call parts of the function call turn." (seen in
    # google-gemini/gemini-cli#3063 and microsoft/vscode#299295).
    for turn, following in itertools.pairwise(contents):
        calls = sum(1 for p in turn.parts or () if p.function_call)
        if not calls:
            continue
        responses = sum(1 for p in following.parts or () if p.function_response)
        if responses != calls:
            raise ApiError(
                400,
                "Please ensure that the number of function response parts is equal to the "
                "number of function call parts of the function call turn.",
            )


class RestEndpoint:
    """Answers the HTTP methods from the script."""

    def __init__(self, settings: EmulatorSettings, script: ScriptFn, journal: Journal) -> None:
        self._settings = settings
        self._script = script
        self._journal = journal

    async def handle(self, request: HttpRequest) -> Response:
        try:
            return await self._answer(request)
        except ApiError as error:
            return _error_response(error)
        except wire.WireError as error:
            return _error_response(ApiError(400, f"Invalid JSON payload received. {error}"))
        except Exception:
            logger.exception("the emulated HTTP method failed")
            return _error_response(ApiError(500))

    async def _answer(self, http: HttpRequest) -> Response:
        version = http.path_params["version"]
        model, _, method = http.path_params["target"].partition(":")
        if version not in API_VERSIONS or method not in _METHODS:
            raise ApiError(404, f"Method not found: {version}/models/{model}:{method}")
        if error := check_credentials(http.headers, http.query_params, self._settings):
            raise error
        if self._settings.is_live_model(model):
            raise not_supported(model, version, method)
        body = await self._body(http)
        self._journal.add(Record("http", method, {"model": model, "body": body}))
        contents = wire.content_list(wire.get(body, "contents"), "contents")
        if not contents:
            raise ApiError(400, "* GenerateContentRequest.contents: contents is not specified\n")
        _check_function_turns(contents)
        config = wire.get(body, "generation_config") or {}
        thinking = wire.get(config, "thinking_config") or {}
        thoughts = self._settings.include_thoughts
        if thoughts is None:
            thoughts = bool(wire.get(thinking, "include_thoughts"))
        instruction = instruction_text(wire.get(body, "system_instruction"))
        request = Request(
            model=model,
            contents=tuple(contents),
            system_instruction=instruction,
            declarations=function_declarations(wire.get(body, "tools")),
        )
        reply = ask(self._script, request)
        if reply.error is not None and reply.fail_after is None:
            raise reply.error
        prompt = content_tokens(contents, self._settings.audio_tokens_per_second)
        stream = _Stream(reply, model, prompt + text_tokens(instruction), self._settings, thoughts)
        if method == "generateContent":
            return _json_response(stream.aggregate())
        if http.query_params.get("alt") != "sse":
            return _json_response([wire.dump(r) for r in stream.responses()])
        return StreamingResponse(
            stream.sse(self._settings.chunk_delay),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache"},
        )

    async def _body(self, http: HttpRequest) -> dict[str, Any]:
        raw = await http.body()
        try:
            body = json.loads(raw or b"{}")
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise ApiError(400, "Invalid JSON payload received. Unexpected token.") from None
        if not isinstance(body, dict):
            raise ApiError(400, "Invalid JSON payload received. Expected an object.")
        for name in body:
            if wire.snake(name) not in _REQUEST_FIELDS:
                raise ApiError(
                    400, f'Invalid JSON payload received. Unknown name "{name}": Cannot find field.'
                )
        return body


class _Stream:
    """One reply as the sequence of ``GenerateContentResponse`` s that carry it."""

    def __init__(
        self,
        reply: Reply,
        model: str,
        prompt_tokens: int,
        settings: EmulatorSettings,
        thoughts: bool,
    ) -> None:
        self._reply = reply
        self._model = model
        self._prompt = prompt_tokens
        self._settings = settings
        self._thoughts = thoughts
        self._id = secrets.token_urlsafe(16)

    def _usage(self, text: str) -> types.GenerateContentResponseUsageMetadata:
        calls = sum(
            text_tokens(json.dumps({"name": c.name, "args": c.args or {}}))
            for c in self._reply.calls
        )
        candidates = text_tokens(text) + calls
        # Thinking is paid for whether or not the thoughts are sent.
        thinking = text_tokens(self._reply.thought)
        return types.GenerateContentResponseUsageMetadata(
            prompt_token_count=self._prompt,
            candidates_token_count=candidates or None,
            thoughts_token_count=thinking or None,
            total_token_count=self._prompt + candidates + thinking,
        )

    def _response(
        self, parts: list[types.Part], *, last: bool, text: str
    ) -> types.GenerateContentResponse:
        reply = self._reply
        candidate = types.Candidate(
            content=types.Content(role="model", parts=parts) if parts else None,
            index=0,
        )
        if last:
            candidate.finish_reason = types.FinishReason(reply.finish_reason)
            candidate.finish_message = reply.finish_message
            candidate.grounding_metadata = reply.grounding
            candidate.citation_metadata = reply.citations
        return types.GenerateContentResponse(
            candidates=[candidate],
            usage_metadata=self._usage(text),
            model_version=self._model,
            response_id=self._id,
        )

    def responses(self) -> Iterator[types.GenerateContentResponse]:
        """The streamed responses (all but a mid-stream error)."""
        reply = self._reply
        chunks = list(chunks_of(reply, self._settings.tokens_per_chunk, thoughts=self._thoughts))
        thoughts = [types.Part(text=c.text, thought=True) for c in chunks if c.thought]
        said = [types.Part(text=c.text) for c in chunks if not c.thought]
        # Thoughts, then the reply's own parts (code execution), then the text.
        sequence = [*thoughts, *reply.parts, *said]
        failing = reply.fail_after is not None
        text = ""
        for index, part in enumerate(sequence):
            if index >= len(thoughts) + len(reply.parts):
                text += part.text or ""
            last = not failing and not reply.calls and index == len(sequence) - 1
            yield self._response([part], last=last, text=text)
        if failing:
            return
        if reply.calls or not sequence:
            parts = [types.Part(function_call=call) for call in reply.calls]
            yield self._response(parts, last=True, text=text)

    def aggregate(self) -> dict[str, Any]:
        """The ``generateContent`` answer: the whole turn in one response."""
        reply = self._reply
        if reply.fail_after is not None:
            raise reply.error or ApiError(500)
        parts: list[types.Part] = []
        if self._thoughts and reply.thought:
            parts.append(types.Part(text=reply.thought, thought=True))
        parts += reply.parts
        if reply.text:
            parts.append(types.Part(text=reply.text))
        parts += [types.Part(function_call=call) for call in reply.calls]
        return wire.dump(self._response(parts, last=True, text=reply.text))

    async def sse(self, delay: float) -> AsyncIterator[bytes]:
        for response in self.responses():
            await asyncio.sleep(delay)
            yield b"data: " + wire.encode(response).encode() + b"\r\n\r\n"
        if self._reply.fail_after is not None:
            # The API reports an error after the stream started as one more event
            # holding the error object; google-genai raises it (request_streamed).
            await asyncio.sleep(delay)
            yield b"data: " + (self._reply.error or ApiError(500)).body() + b"\r\n\r\n"


def _json_response(data: Any) -> Response:
    return Response(json.dumps(data, ensure_ascii=False), media_type="application/json")


def _error_response(error: ApiError) -> Response:
    return Response(error.body(), status_code=error.code, media_type="application/json")
