"""ScriptedModel: an offline ``BaseLlm`` whose replies a plain function decides, for
``run_async`` (streamed like Gemini: partial chunks, then the aggregate) and for
``run_live`` (a scripted live connection: partial text, the final text, the calls, then
``turn_complete``).

A planner sees the request's contents and returns a ``Reply`` (or None: say nothing).
The test agents (``team/``) give every agent its own planner.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.adk.models import BaseLlm, LlmCapabilities, LlmRequest, LlmResponse
from google.adk.models.base_llm_connection import BaseLlmConnection, RealtimeInput
from google.genai import types
from pydantic import ConfigDict

OTHER_AGENT = "For context:"
"""How ADK relays another agent's turn to this one (a user-role text)."""


class ScriptedModelError(RuntimeError):
    """What a reply with ``raise_after`` raises (its text is a secret tests look for)."""


@dataclass(frozen=True)
class Reply:
    """One model turn: thoughts, ``parts``, text, then calls; or an error response; or a
    raise after ``raise_after`` streamed tokens. ``parts`` are sent as Gemini sends them,
    each in a chunk of its own before the text: text, ``executable_code`` and
    ``code_execution_result`` parts of its code execution tool."""

    text: str = ""
    thought: str = ""
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    parts: tuple[types.Part, ...] = ()
    error: tuple[str, str] | None = None  # (error_code, error_message)
    raise_after: int | None = None
    raise_text: str = "the model raised"
    tokens: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        words = self.text.split(" ")
        object.__setattr__(
            self,
            "tokens",
            tuple(
                w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words) if w or i == 0
            )
            if self.text
            else (),
        )

    def function_calls(self) -> list[types.FunctionCall]:
        return [types.FunctionCall(name=name, args=args) for name, args in self.calls]


Planner = Callable[[Sequence[types.Content]], Reply | None]


@dataclass(frozen=True)
class Latest:
    """The newest thing a planner answers: a user's text, or function responses."""

    text: str | None = None
    responses: tuple[types.FunctionResponse, ...] = ()


def latest(contents: Sequence[types.Content]) -> Latest | None:
    """The newest user text or function responses, skipping what other agents did; None
    when the model spoke last."""
    for content in reversed(contents):
        parts = content.parts or []
        responses = tuple(p.function_response for p in parts if p.function_response)
        if responses:
            return Latest(responses=responses)
        if content.role == "model":
            return None
        text = "".join(p.text or "" for p in parts if not p.thought)
        if text and not text.startswith(OTHER_AGENT):
            return Latest(text=text)
    return None


def summary(responses: Sequence[types.FunctionResponse]) -> str:
    """A deterministic text about tool results (tests read what the model was told)."""
    return " ".join(
        f"{r.name} returned {json.dumps(r.response, sort_keys=True)}." for r in responses
    )


class ScriptedModel(BaseLlm):
    """``LlmAgent(model=ScriptedModel(planner=...))``; needs no network."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    model: str = "scripted"
    planner: Planner
    delay: float = 0.0

    @property
    def capabilities(self) -> LlmCapabilities:
        return LlmCapabilities(output_schema_and_tools=True)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        reply = self.planner(llm_request.contents) or Reply()
        if reply.error is not None:
            yield LlmResponse(
                error_code=reply.error[0], error_message=reply.error[1], model_version=self.model
            )
            return
        if stream:
            if reply.thought:  # Gemini streams thoughts first, as partial thought parts
                yield LlmResponse(
                    content=types.Content(
                        role="model", parts=[types.Part(text=reply.thought, thought=True)]
                    ),
                    partial=True,
                    model_version=self.model,
                )
            for part in reply.parts:
                await asyncio.sleep(self.delay)
                yield LlmResponse(
                    content=types.Content(role="model", parts=[part]),
                    partial=True,
                    model_version=self.model,
                )
            for index, token in enumerate(reply.tokens):
                if reply.raise_after is not None and index >= reply.raise_after:
                    break
                await asyncio.sleep(self.delay)
                yield LlmResponse(
                    content=types.Content(role="model", parts=[types.Part(text=token)]),
                    partial=True,
                    model_version=self.model,
                )
        if reply.raise_after is not None:
            raise ScriptedModelError(reply.raise_text)
        parts = [types.Part(text=reply.thought, thought=True)] if reply.thought else []
        parts += list(reply.parts)
        parts += [types.Part(text=reply.text)] if reply.text else []
        parts += [types.Part(function_call=call) for call in reply.function_calls()]
        yield LlmResponse(
            content=types.Content(role="model", parts=parts),
            partial=False,
            finish_reason=types.FinishReason.STOP,
            model_version=self.model,
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=10,
                candidates_token_count=len(reply.tokens),
                total_token_count=10 + len(reply.tokens),
            ),
        )

    @contextlib.asynccontextmanager
    async def connect(self, llm_request: LlmRequest) -> AsyncIterator[ScriptedConnection]:
        connection = ScriptedConnection(self)
        try:
            yield connection
        finally:
            await connection.close()


class ScriptedConnection(BaseLlmConnection):
    """A live connection that answers each user content or function response with the
    planner's reply, one turn at a time."""

    def __init__(self, model: ScriptedModel) -> None:
        self._model = model
        self.history: list[types.Content] = []
        self._out: asyncio.Queue[LlmResponse | BaseException | None] = asyncio.Queue()
        self._turns: asyncio.Queue[None] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._calls: list[types.FunctionCall] = []
        self._closed = False

    async def send_history(self, history: list[types.Content]) -> None:
        self.history = list(history)
        self._calls = [p.function_call for c in history for p in c.parts or () if p.function_call]
        if history and history[-1].role == "user":
            self._schedule()

    async def send_content(self, content: types.Content) -> None:
        responses = [p.function_response for p in content.parts or () if p.function_response]
        made = {call.id for call in self._calls}
        if responses and not all(r.id in made for r in responses):
            # ADK queues a transfer's function response before it hands the queue to the
            # next agent's connection, which never made that call: ignore it, as Gemini
            # answers nothing for it.
            return
        self.history.append(content)
        self._schedule()

    async def _send_content(self, content: types.Content, *, partial: bool = False) -> None:
        if partial:  # part of the next user turn (turnComplete false): no answer yet
            self.history.append(content)
            return
        await self.send_content(content)

    async def send_realtime(self, blob: RealtimeInput) -> None:
        return None  # text only

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
        while not self._out.empty():  # a closed connection delivers nothing more
            self._out.get_nowait()
        self._out.put_nowait(None)

    async def receive(self) -> AsyncGenerator[LlmResponse, None]:
        while True:
            item = await self._out.get()
            if item is None:
                self._out.put_nowait(None)
                return
            if isinstance(item, BaseException):
                raise item
            yield item
            if item.turn_complete:
                return

    def _schedule(self) -> None:
        if self._closed:
            return
        self._turns.put_nowait(None)
        if self._worker is None:
            self._worker = asyncio.create_task(self._work(), name="scripted-live-turns")

    async def _work(self) -> None:
        while True:
            await self._turns.get()
            try:
                await self._turn()
            except BaseException as exc:  # delivered to receive(), like a model failure
                if isinstance(exc, asyncio.CancelledError):
                    raise
                self._out.put_nowait(exc)

    async def _turn(self) -> None:
        model = self._model.model
        reply = self._model.planner(self.history)
        if reply is None:
            return
        if reply.error is not None:
            self._out.put_nowait(
                LlmResponse(
                    error_code=reply.error[0], error_message=reply.error[1], model_version=model
                )
            )
            self._out.put_nowait(LlmResponse(turn_complete=True, model_version=model))
            return
        for part in reply.parts:  # the Live API sends each in a message of its own
            self._out.put_nowait(
                LlmResponse(content=types.Content(role="model", parts=[part]), model_version=model)
            )
        for index, token in enumerate(reply.tokens):
            if reply.raise_after is not None and index >= reply.raise_after:
                raise ScriptedModelError(reply.raise_text)
            await asyncio.sleep(self._model.delay)
            self._out.put_nowait(
                LlmResponse(
                    content=types.Content(role="model", parts=[types.Part(text=token)]),
                    partial=True,
                    model_version=model,
                )
            )
        if reply.raise_after is not None:
            raise ScriptedModelError(reply.raise_text)
        said: list[types.Part] = list(reply.parts)
        if reply.text:
            said.append(types.Part(text=reply.text))
            self._out.put_nowait(
                LlmResponse(
                    content=types.Content(role="model", parts=[types.Part(text=reply.text)]),
                    partial=False,
                    model_version=model,
                )
            )
        calls = [types.Part(function_call=call) for call in reply.function_calls()]
        # ADK gives the calls their ids when it receives them (these objects).
        self._calls += [call.function_call for call in calls if call.function_call]
        if calls:
            said += calls
            self._out.put_nowait(
                LlmResponse(content=types.Content(role="model", parts=calls), model_version=model)
            )
        self._out.put_nowait(LlmResponse(turn_complete=True, model_version=model))
        if said:
            self.history.append(types.Content(role="model", parts=said))
