"""A reply cut into the chunks the emulator streams."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass

from adk_asgi.demo._rules import split_tokens

from ..errors import ApiError
from ..script.exchange import Reply, Request, ScriptFn

__all__ = ("Chunk", "ask", "chunks_of")

logger = logging.getLogger("adk_asgi.testing.gemini")


@dataclass(frozen=True, slots=True)
class Chunk:
    text: str
    thought: bool = False


def chunks_of(reply: Reply, tokens_per_chunk: int, *, thoughts: bool) -> Iterator[Chunk]:
    """Thought chunks (when ``thoughts``), then text chunks of ``tokens_per_chunk``
    words each; stops at ``reply.fail_after`` text tokens when the reply fails."""
    if thoughts:
        yield from _group(split_tokens(reply.thought), tokens_per_chunk, thought=True)
    tokens = split_tokens(reply.text)
    if reply.fail_after is not None:
        tokens = tokens[: reply.fail_after]
    yield from _group(tokens, tokens_per_chunk, thought=False)


def _group(tokens: tuple[str, ...], size: int, *, thought: bool) -> Iterator[Chunk]:
    for start in range(0, len(tokens), size):
        yield Chunk("".join(tokens[start : start + size]), thought)


def ask(script: ScriptFn, request: Request) -> Reply:
    """The script's reply; a script that raises answers 500 INTERNAL (and is logged),
    so a broken script shows up as a model error rather than a hung connection."""
    try:
        reply = script(request)
    except ApiError as error:
        return Reply(error=error)
    except Exception:
        logger.exception("the emulator's script raised on %r", request.text)
        return Reply(error=ApiError(500))
    if not isinstance(reply, Reply):
        logger.error("the emulator's script returned %r, not a Reply", reply)
        return Reply(error=ApiError(500))
    undeclared = [c.name for c in reply.calls if c.name not in request.function_names]
    if undeclared:
        # Gemini calls only the functions a request declares; ADK answers any other
        # name with an error the model then sees.
        logger.warning(
            "the emulator's script calls %s, which the request does not declare",
            ", ".join(map(str, undeclared)),
        )
    return reply
