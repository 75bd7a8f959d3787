"""No output without its call: what a turn's *recording* holds so that its replay
(``GET {api}/{chatId}/stream``, the AI SDK's ``resumeStream``) rebuilds a whole message.

A replay starts the client's message afresh (``resumeStreamIsReplay``), so a turn that
continues an assistant message (the answers to its calls, an OAuth2 sign-in, a completed
long-running call) cannot be replayed alone: its outputs name calls stated by an earlier
request. Its recording therefore

1. starts with the earlier recording of the same message when the store still holds it
   (a turn that ends waiting for the page is kept resumable for that, and so a reload
   during the pause shows it again), without that recording's last chunk;
2. states what the page answered (browser results, inputs, that a credential was given)
   right after ``start``, so the replay shows those calls answered, not waiting again;
3. states any call before the first chunk that refers to it when neither did (the earlier
   recording expired): the call as the session holds it.

The live client of a POST continuation gets the turn's own chunks only: it holds the
message already.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from typing import Any, Final

import msgspec
from google.genai import types

from ...pauses.approvals import CONFIRMATION_TOOL
from ...pauses.credentials import CredentialRequest
from ...pauses.kinds import (
    CREDENTIAL_TOOL,
    INPUT_TOOL,
    InputRequest,
    WorkflowConfirmation,
    pause_of,
)
from ...stores import StoreUnavailable, StreamStore, split_frames
from ...wire.chunks import (
    Start,
    ToolApprovalRequest,
    ToolInputAvailable,
    ToolInputStart,
    ToolOutputAvailable,
    ToolOutputDenied,
    ToolOutputError,
    UIChunk,
    sse_frame,
)

__all__ = ("CallLedger", "previous_recording")

_TERMINAL: Final = frozenset({b"finish", b"abort", b"error"})
_READ_TIMEOUT: Final = 2.0


class _Head(msgspec.Struct, rename="camel"):
    type: str
    message_id: str | None = None


async def previous_recording(store: StreamStore, chat_id: str, message_id: str) -> bytes | None:
    """The chat's retained recording when it is of ``message_id`` (a turn that ended
    waiting for the page), as SSE frames without its terminal chunk; else None. Read
    before the new turn's recording replaces it."""
    try:
        follow = await store.follow(chat_id)
    except StoreUnavailable:
        return None
    if follow is None:
        return None
    blobs: list[bytes] = []
    try:
        async with asyncio.timeout(_READ_TIMEOUT):  # it ended: its blobs come at once
            async for blob in follow:
                blobs.append(blob)
    except TimeoutError:
        return None  # still running (not ours to continue)
    finally:
        with contextlib.suppress(Exception):
            await follow.aclose()
    frames = [frame for blob in blobs for frame in split_frames(blob)]
    if not frames:
        return None
    try:
        first = msgspec.json.decode(frames[0], type=_Head)
    except msgspec.DecodeError:
        return None
    if first.type != "start" or first.message_id != message_id:
        return None
    kept = []
    for frame in frames:
        head = msgspec.json.decode(frame, type=_Head)
        if head.type.encode() not in _TERMINAL:
            kept.append(b"data: " + frame + b"\n\n")
    return b"".join(kept)


def _referred(chunk: UIChunk) -> str | None:
    if isinstance(
        chunk, ToolOutputAvailable | ToolOutputError | ToolOutputDenied | ToolApprovalRequest
    ):
        return chunk.tool_call_id
    return None


class CallLedger:
    """The recording of one continuing turn (see the module docstring)."""

    __slots__ = ("_answered", "_browser", "_calls", "_prefix", "_redirect", "_stated")

    def __init__(
        self,
        *,
        previous: bytes | None,
        answered: dict[str, Any],
        calls: dict[str, tuple[str, dict[str, Any]]],
        browser: Iterable[str],
        redirect_uri: str | None,
    ) -> None:
        self._prefix = previous
        self._answered = answered
        self._calls = calls
        self._browser = frozenset(browser)
        self._redirect = redirect_uri
        # With the earlier recording, every call of the message is stated already.
        self._stated: set[str] | None = None if previous is not None else set()

    def record(self, chunks: list[UIChunk], blob: bytes) -> bytes:
        """What the recording gets for the chunks the client gets as ``blob``."""
        prefix, self._prefix = self._prefix or b"", None
        answered, self._answered = self._answered, {}
        stated = self._stated
        if stated is None and not answered:
            return prefix + blob if prefix else blob
        out: list[UIChunk] = []
        for chunk in chunks:
            call_id = _referred(chunk)
            if stated is not None:
                if isinstance(chunk, ToolInputStart | ToolInputAvailable):
                    stated.add(chunk.tool_call_id)
                elif call_id is not None and call_id not in stated:
                    out.extend(self._restated(call_id))
                    stated.add(call_id)
            out.append(chunk)
            if isinstance(chunk, Start) and answered:
                for answered_id, output in answered.items():
                    if stated is not None and answered_id not in stated:
                        out.extend(self._restated(answered_id))
                        stated.add(answered_id)
                    out.append(_output(answered_id, output))
                answered = {}
        return prefix + b"".join(sse_frame(chunk) for chunk in out)

    def _restated(self, call_id: str) -> list[UIChunk]:
        """The call as the session holds it, stated as it was on the page."""
        made = self._calls.get(call_id)
        if made is None and call_id.startswith("wf_tool:"):
            confirmation = self._calls.get("wf_tool_confirmation:" + call_id[len("wf_tool:") :])
            if confirmation is not None:
                pause = pause_of(
                    types.FunctionCall(
                        id="wf_tool_confirmation:" + call_id[len("wf_tool:") :],
                        name=confirmation[0],
                        args=confirmation[1],
                    )
                )
                if isinstance(pause, WorkflowConfirmation):
                    made = (pause.tool_name, pause.args)
        if made is None:
            return []
        name, args = made
        client = name in self._browser or name == CONFIRMATION_TOOL
        shown: Any = args
        pause = (
            pause_of(types.FunctionCall(id=call_id, name=name, args=args))
            if name in (INPUT_TOOL, CREDENTIAL_TOOL)
            else None
        )
        if isinstance(pause, InputRequest):
            client, shown = True, pause.presented()
        elif isinstance(pause, CredentialRequest):
            client, shown = True, pause.presented(self._redirect)
        executed = None if client else True
        return [
            ToolInputStart(tool_call_id=call_id, tool_name=name, provider_executed=executed),
            ToolInputAvailable(
                tool_call_id=call_id, tool_name=name, input=shown, provider_executed=executed
            ),
        ]


def _output(call_id: str, output: Any) -> UIChunk:
    if isinstance(output, dict) and set(output) == {"error"}:
        return ToolOutputError(tool_call_id=call_id, error_text=str(output["error"]))
    return ToolOutputAvailable(tool_call_id=call_id, output=output)
