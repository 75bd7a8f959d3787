"""What a script reads and what it answers: a request to the emulated model (`Request`) and
the model's reply (`Reply`); a script is any callable ``(Request) -> Reply`` (`ScriptFn`).
`Script` (``script.py``) builds one from rules."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from google.genai import types

from ..errors import ApiError

__all__ = ("Reply", "Request", "ScriptFn")


@dataclass(frozen=True, slots=True)
class Request:
    """What a script sees of one model call (an HTTP request or a Live API turn)."""

    model: str
    """The model name, without ``models/``."""
    contents: tuple[types.Content, ...]
    """The conversation so far, newest last (a voice turn appears as its transcript)."""
    system_instruction: str = ""
    function_names: frozenset[str] = frozenset()
    """Names of the functions the request declares as tools."""
    live: bool = False
    """True on a Live API connection."""
    declarations: tuple[types.FunctionDeclaration, ...] = ()
    """The functions the request declares, with their parameters' schemas."""

    def __post_init__(self) -> None:
        declared = frozenset(d.name for d in self.declarations if d.name)
        if declared - self.function_names:
            object.__setattr__(self, "function_names", self.function_names | declared)

    def declaration(self, name: str) -> types.FunctionDeclaration | None:
        """The declaration of the function ``name``, None when the request lacks it."""
        found = next((d for d in self.declarations if d.name == name), None)
        if found is None and name in self.function_names:
            return types.FunctionDeclaration(name=name)
        return found

    @property
    def text(self) -> str:
        """The text of the newest content when it is a user message, else ``""``."""
        if not self.contents or self.contents[-1].role not in (None, "user"):
            return ""
        return "".join(p.text for p in self.contents[-1].parts or () if p.text and not p.thought)

    @property
    def tool_results(self) -> tuple[types.FunctionResponse, ...]:
        """The function responses of the newest content (empty for a text turn)."""
        if not self.contents:
            return ()
        return tuple(
            p.function_response for p in self.contents[-1].parts or () if p.function_response
        )


@dataclass(frozen=True, slots=True)
class Reply:
    """One model turn: thoughts, text and function calls, or an error.

    ``Reply("Hello")`` streams "Hello"; ``Reply.call("get_weather", location="Paris")``
    asks for a function call; ``Reply.fail(429)`` answers with an API error.
    """

    text: str = ""
    thought: str = ""
    """Thought text: sent as ``thought`` parts only when the request asks for thoughts
    (``thinkingConfig.includeThoughts``), otherwise only counted in the usage."""
    calls: tuple[types.FunctionCall, ...] = ()
    error: ApiError | None = None
    """Fail the request with this error instead of answering (see ``fail_after``)."""
    fail_after: int | None = None
    """Stream this many text tokens (words) of ``text`` first, then fail with
    ``error`` (500 INTERNAL if unset): an error in the middle of the stream."""
    finish_reason: str = "STOP"
    """The candidate's ``finishReason``; anything but ``STOP`` without text is what
    ADK reports as an error (``error_code``)."""
    finish_message: str | None = None
    grounding: types.GroundingMetadata | None = None
    """``groundingMetadata`` of the answer (as if a search tool had grounded it)."""
    citations: types.CitationMetadata | None = None
    """``citationMetadata`` of the answer (the sources Gemini says it recites)."""
    parts: tuple[types.Part, ...] = ()
    """Parts sent before ``text``, each in a chunk of its own, as Gemini sends its code
    execution: text, ``executable_code`` and ``code_execution_result`` parts (see
    `code`)."""

    def __post_init__(self) -> None:
        if self.finish_reason not in types.FinishReason.__members__:
            raise ValueError(f"unknown finish reason {self.finish_reason!r}")
        if self.fail_after is not None and self.fail_after < 0:
            raise ValueError("fail_after must not be negative")

    @classmethod
    def call(
        cls,
        name: str,
        args: Mapping[str, Any] | None = None,
        /,
        *,
        text: str = "",
        **arguments: Any,
    ) -> Reply:
        """Ask for one function call, after ``text`` when given (keyword only).

        The call's arguments are a dict, keywords, or both; an argument named ``text``
        goes in the dict:

        >>> Reply.call("get_stock_price", symbol="GOOG").calls[0].args
        {'symbol': 'GOOG'}
        >>> reply = Reply.call("post", {"text": "Hi"}, text="Posting it.")
        >>> reply.text, reply.calls[0].args
        ('Posting it.', {'text': 'Hi'})
        >>> Reply.call("place_order", "I will place the order.")
        Traceback (most recent call last):
        ...
        TypeError: Reply.call("place_order", "I will place the order."): the reply's text is \
keyword-only, Reply.call("place_order", text="I will place the order.", ...); the \
function's arguments are a dict or keywords
        """
        if isinstance(args, str):
            quoted, said = json.dumps(name), json.dumps(args)
            raise TypeError(
                f"Reply.call({quoted}, {said}): the reply's text is keyword-only, "
                f"Reply.call({quoted}, text={said}, ...); the function's arguments are a "
                "dict or keywords"
            )
        if args is not None and not isinstance(args, Mapping):
            raise TypeError(
                f"Reply.call({name!r}, ...): the arguments must be a dict, not "
                f"{type(args).__name__}"
            )
        both = set(args or ()) & set(arguments)
        if both:
            raise TypeError(f"Reply.call({name!r}): {sorted(both)} given twice")
        return cls(
            text=text, calls=(types.FunctionCall(name=name, args={**(args or {}), **arguments}),)
        )

    @classmethod
    def calls_of(cls, *calls: tuple[str, Mapping[str, Any]], text: str = "") -> Reply:
        """Ask for several function calls at once (parallel calls)."""
        return cls(
            text=text,
            calls=tuple(types.FunctionCall(name=name, args=dict(args)) for name, args in calls),
        )

    @classmethod
    def code(
        cls,
        code: str,
        output: str,
        /,
        *,
        text: str = "",
        before: str = "",
        outcome: str = "OUTCOME_OK",
    ) -> Reply:
        """Run ``code`` with Gemini's code execution tool: ``before`` (text), the
        ``executable_code`` part, its ``code_execution_result`` (``outcome``, ``output``),
        then ``text``."""
        parts = [types.Part(text=before)] if before else []
        parts.append(
            types.Part(
                executable_code=types.ExecutableCode(language=types.Language.PYTHON, code=code)
            )
        )
        parts.append(
            types.Part(
                code_execution_result=types.CodeExecutionResult(
                    outcome=types.Outcome(outcome), output=output
                )
            )
        )
        return cls(text=text, parts=tuple(parts))

    @classmethod
    def fail(cls, code: int, message: str = "", *, after: int | None = None) -> Reply:
        """Answer with the API error ``code`` (e.g. 429, 500, 503); with ``after``,
        fail only after that many streamed tokens."""
        return cls(error=ApiError(code, message), fail_after=after)

    @classmethod
    def blocked(cls, message: str, reason: str = "OTHER") -> Reply:
        """A turn that ends with ``finishReason`` ``reason`` and no content."""
        return cls(finish_reason=reason, finish_message=message)


ScriptFn = Callable[[Request], Reply]
"""A script: decides the reply to each request."""
