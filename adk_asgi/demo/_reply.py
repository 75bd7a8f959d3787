"""The demo model's replies: what one model turn holds (``Reply``), how text is cut into
streamed tokens, token usage, and the small text helpers the rules share."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from google.genai import types

MODEL_NAME = "adk-asgi-demo"
ERROR_CODE = "DEMO_ERROR"

_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]")
_WORD = re.compile(r"\s*\S+\s*")
# Japanese has no spaces between words, so long CJK runs are cut into short
# pieces; otherwise a whole Japanese sentence would stream as one "token".
_CJK_PIECE = 3

STORY = (  # exactly 60 tokens
    "Once upon a time, a tiny server lived inside a laptop. Every morning it woke up, "
    "opened a socket, and waited for messages from a browser far away. Some messages "
    "asked about the weather, others wanted to send money, and a few just said hello. "
    "The server answered each one patiently, one token at a time, until everyone fell asleep."
)


def split_tokens(text: str) -> tuple[str, ...]:
    """Split text into stream chunks whose concatenation is exactly ``text``."""
    tokens: list[str] = []
    for word in _WORD.findall(text):
        if len(word) > _CJK_PIECE * 2 and _JAPANESE.search(word):
            tokens.extend(word[i : i + _CJK_PIECE] for i in range(0, len(word), _CJK_PIECE))
        else:
            tokens.append(word)
    if "".join(tokens) != text:  # only whitespace-only text gets here
        return (text,) if text else ()
    return tuple(tokens)


@dataclass(frozen=True)
class Reply:
    """One model turn: optional thoughts, text, then function calls (or an error)."""

    text_tokens: tuple[str, ...] = ()
    thought_tokens: tuple[str, ...] = ()
    calls: tuple[types.FunctionCall, ...] = ()
    error: str | None = None
    # Stream this many tokens, then raise (the "please raise" rule).
    raise_after: int | None = None

    @classmethod
    def of(
        cls,
        text: str,
        *,
        thought: str = "",
        calls: Sequence[types.FunctionCall] = (),
        raise_after: int | None = None,
    ) -> Reply:
        return cls(
            text_tokens=split_tokens(text),
            thought_tokens=split_tokens(thought),
            calls=tuple(calls),
            raise_after=raise_after,
        )

    @property
    def text(self) -> str:
        return "".join(self.text_tokens)

    @property
    def thought(self) -> str:
        return "".join(self.thought_tokens)


class DemoModelError(RuntimeError):
    """Raised by the demo model on purpose (the "please raise" rule)."""


def usage_for(
    contents: Sequence[types.Content], reply: Reply
) -> types.GenerateContentResponseUsageMetadata:
    """Plausible token counts: ~4 characters per prompt token, one per streamed chunk."""
    prompt = max(1, sum(len(content_text(c)) for c in contents) // 4)
    # A function call costs a few tokens even without any text.
    candidates = len(reply.text_tokens) + 5 * len(reply.calls)
    thoughts = len(reply.thought_tokens)
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt,
        candidates_token_count=candidates,
        thoughts_token_count=thoughts or None,
        total_token_count=prompt + candidates + thoughts,
    )


def is_japanese(text: str) -> bool:
    return bool(_JAPANESE.search(text))


def content_text(content: types.Content | None) -> str:
    """The visible (non-thought) text of a content."""
    if content is None:
        return ""
    return "".join(p.text for p in content.parts or () if p.text and not p.thought)


def latest_user_text(contents: Sequence[types.Content]) -> str:
    """Text of the newest user message, skipping function-response-only contents."""
    for content in reversed(contents):
        if content.role == "user":
            text = content_text(content)
            if text:
                return text
    return ""
