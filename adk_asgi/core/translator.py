"""EventTranslator: ADK events in, UI message chunks out; one translator per assistant message.

The rules the AI SDK client enforces shape this module:

- text and reasoning come as ``*-start`` / ``*-delta`` / ``*-end`` blocks; ADK streams
  ``partial`` events and then one aggregated final event, whose text must not be sent
  twice;
- a step (``start-step`` ... ``finish-step``) is one model call plus the tool results that
  answer it; text after server tool results opens a new step, otherwise
  ``lastAssistantMessageIsCompleteWithToolCalls`` re-POSTs forever;
- an approval request must be in the last step: ADK's synthetic
  ``adk_request_confirmation`` event never opens a step;
- every tool chunk refers to a tool part the client already has, and every server tool
  call gets an outcome (``tool-output-*``), even when the run fails;
- one terminal chunk per stream: ``finish``, ``abort`` or ``error``; an ``error`` never
  carries an exception's text (``describe_error`` decides what the user reads).

Subclass contract (``live/translator.py`` is the one subclass in the package). Besides the
public methods, subclasses may call or override these protected hooks, and nothing else:

``_open_step(out)``
    Make sure a step is open for a model call; a model call after a finished one opens a
    new step.
``_close_blocks(out)``
    End the open text or reasoning block.
``_stream_text(text, thought, out)``
    Append a delta to the open text (or reasoning) block, opening it.
``_already_streamed(event)`` (override)
    Whether a final event's text was already sent as partials. SSE: partials share the
    final event's id; live events each get a fresh id.
``_tool_call(call_id, name, args, client_side, out)``
    A model's function call; ``client_side`` calls wait for the page.
``_approval_request(approval_id, call_id, name, args, hint, payload, out)``
    Ask the user to approve ``call_id`` (the call is re-stated with the hint and payload).
``_record_response(event, out)``
    Usage, finish reason, model version and grounding sources of a final response.
``_on_event(event, out)`` (override; default nothing)
    Extra chunks for an event (called first for every event).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

from google.adk.events import Event
from google.genai import types

from ..chunks import (
    Abort,
    Error,
    File,
    Finish,
    FinishReason,
    FinishStep,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    SourceUrl,
    Start,
    StartStep,
    TextDelta,
    TextEnd,
    TextStart,
    ToolApprovalRequest,
    ToolInputAvailable,
    ToolInputStart,
    ToolOutputAvailable,
    ToolOutputDenied,
    ToolOutputError,
    UIChunk,
)
from .approvals import CONFIRMATION_TOOL, frontend_approval_id
from .errors import GENERIC_ERROR

__all__ = ("ConfirmationStyle", "ErrorInfo", "EventTranslator", "describe_error_generic")

ConfirmationStyle = Literal["native", "adk-tool"]

_FINISH_REASONS: Final[dict[str, FinishReason]] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content-filter",
    "RECITATION": "content-filter",
    "BLOCKLIST": "content-filter",
    "PROHIBITED_CONTENT": "content-filter",
    "SPII": "content-filter",
    "IMAGE_SAFETY": "content-filter",
}
# ADK's own marker for a run stopped through abort_signal: the client is gone.
_ABORTED: Final = "INVOCATION_ABORTED"
TOOL_FAILED: Final = "The tool failed."


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """A failure, as ``describe_error`` sees it: ``code`` is ADK's error code or the
    exception's class name; ``message`` and ``exception`` are for logs and mapping,
    never sent as they are."""

    code: str
    message: str | None = None
    exception: BaseException | None = None


def describe_error_generic(error: ErrorInfo) -> str:
    """The default text a user reads for a failure: generic, with the error's code."""
    return f"{GENERIC_ERROR} ({error.code})"


DescribeError = Callable[[ErrorInfo], str]


class EventTranslator:
    """Turns the ADK events of one run into the chunks of one assistant message."""

    __slots__ = (
        "_approval_tools",
        "_awaiting_client",
        "_block_seq",
        "_confirmation_style",
        "_denied",
        "_describe_error",
        "_finish_reason",
        "_model_call_done",
        "_model_version",
        "_open_calls",
        "_reasoning_id",
        "_sources",
        "_step_open",
        "_streamed_ids",
        "_text_id",
        "_usage",
        "ended",
        "message_id",
    )

    def __init__(
        self,
        message_id: str,
        *,
        confirmation_style: ConfirmationStyle = "native",
        denied_call_ids: Iterable[str] = (),
        approval_tools: frozenset[str] = frozenset(),
        awaiting: Iterable[str] = (),
        describe_error: DescribeError = describe_error_generic,
    ) -> None:
        self.message_id = message_id
        self.ended = False
        self._confirmation_style = confirmation_style
        self._describe_error = describe_error
        # Calls the client denied: their ADK "rejected" result is shown as
        # `tool-output-denied`, not as an error. (The ADK-tool style reports a denial
        # as an error on the call.)
        self._denied: set[str] = set(denied_call_ids) if confirmation_style == "native" \
            else set()
        # Browser tools the user approves before the page runs them.
        self._approval_tools = approval_tools
        self._step_open = False
        self._model_call_done = False
        self._text_id: str | None = None
        self._reasoning_id: str | None = None
        self._block_seq = 0
        self._streamed_ids: set[str] = set()
        # Tool calls the client must answer (approvals, browser tools) at the end.
        self._awaiting_client: set[str] = set(awaiting)
        # Server tool calls sent without an outcome yet.
        self._open_calls: dict[str, None] = {}
        self._sources: set[str] = set()
        self._finish_reason: FinishReason | None = None
        self._usage: dict[str, int] = {}
        self._model_version: str | None = None

    # -- stream edges -----------------------------------------------------

    def start(self) -> list[UIChunk]:
        return [Start(message_id=self.message_id)]

    def finish(self) -> list[UIChunk]:
        """Close what is open and end the message (nothing after a terminal chunk)."""
        if self.ended:
            return []
        out: list[UIChunk] = []
        self._close_blocks(out)
        if self._step_open:
            out.append(FinishStep())
            self._step_open = False
        reason: FinishReason = (
            "tool-calls" if self._awaiting_client else (self._finish_reason or "stop")
        )
        metadata = self._metadata()
        out.append(Finish(finish_reason=reason, message_metadata=metadata) if metadata
                   else Finish(finish_reason=reason))
        return out

    def abort(self) -> list[UIChunk]:
        """The run was stopped on purpose: close what is open, then ``abort`` (terminal)."""
        if self.ended:
            return []
        self.ended = True
        out: list[UIChunk] = []
        self._close_blocks(out)
        out.append(Abort())
        return out

    def fail(self, error: ErrorInfo | str) -> list[UIChunk]:
        """The run failed: every server tool call still open ends as ``tool-output-error``,
        then one ``error`` chunk (terminal). A ``str`` is sent as it is (the server's own
        texts); an ``ErrorInfo`` goes through ``describe_error``."""
        if self.ended:
            return []
        self.ended = True
        out: list[UIChunk] = []
        self._close_blocks(out)
        for call_id in self._open_calls:
            out.append(ToolOutputError(tool_call_id=call_id, error_text=TOOL_FAILED))
        self._open_calls.clear()
        text = error if isinstance(error, str) else self._describe_error(error)
        out.append(Error(error_text=text))
        return out

    def continue_turn(self) -> list[UIChunk]:
        """The same assistant message continues in a new request (the answers to the calls
        it waited for): ``start`` again, same ``messageId``, the calls and denials kept."""
        self.ended = False
        self._step_open = False
        self._model_call_done = False
        self._awaiting_client.clear()
        return self.start()

    @property
    def awaiting_client(self) -> frozenset[str]:
        """Tool-call ids (or approval ids) the client has to answer before the run goes on."""
        return frozenset(self._awaiting_client)

    def expect_client(self, ids: Iterable[str]) -> None:
        """These calls wait for the client (the stream then ends with ``tool-calls``)."""
        self._awaiting_client.update(ids)

    def client_answered(self, answer_id: str) -> None:
        self._awaiting_client.discard(answer_id)

    def mark_denied(self, call_id: str) -> None:
        """The user denied ``call_id``: its error result is shown as ``tool-output-denied``."""
        if self._confirmation_style == "native":
            self._denied.add(call_id)

    # -- events -----------------------------------------------------------

    def translate(self, event: Event, out: list[UIChunk]) -> None:
        """Append the chunks for one ADK event to ``out``."""
        if self.ended:
            return
        self._on_event(event, out)
        if event.error_code:
            if event.error_code != _ABORTED:
                out.extend(self.fail(ErrorInfo(str(event.error_code), event.error_message)))
            return
        content = event.content
        if content is None or not content.parts or event.author == "user":
            return
        partial = bool(event.partial)
        if content.role == "model" and not _is_synthetic(content.parts):
            self._open_step(out)
            if not partial:
                self._model_call_done = True
        streamed = not partial and self._already_streamed(event)
        for part in content.parts:
            if part.text is not None and not part.function_call:
                if part.text and not streamed:
                    self._stream_text(part.text, bool(part.thought), out)
                    if not partial:
                        self._close_blocks(out)
            elif part.function_call is not None:
                if not partial:
                    self._function_call(part.function_call, event, out)
            elif part.function_response is not None:
                self._function_response(part.function_response, event, out)
            elif part.inline_data is not None and not partial:
                self._inline_data(part.inline_data, out)
            elif part.file_data is not None and part.file_data.file_uri and not partial:
                self._close_blocks(out)
                out.append(File(url=part.file_data.file_uri,
                                media_type=part.file_data.mime_type or "application/octet-stream"))
        if partial:
            self._streamed_ids.add(event.id)
        else:
            self._close_blocks(out)
            self._record_response(event, out)

    # -- protected hooks (see the module docstring) -------------------------------

    def _on_event(self, event: Event, out: list[UIChunk]) -> None:
        return None

    def _already_streamed(self, event: Event) -> bool:
        return event.id in self._streamed_ids

    def _open_step(self, out: list[UIChunk]) -> None:
        if not self._step_open:
            out.append(StartStep())
            self._step_open = True
            self._model_call_done = False
        elif self._model_call_done:
            # A new model call after a finished one (e.g. after tool results).
            self._close_blocks(out)
            out.append(FinishStep())
            out.append(StartStep())
            self._model_call_done = False

    def _stream_text(self, text: str, thought: bool, out: list[UIChunk]) -> None:
        if thought:
            if self._text_id is not None:
                self._end_text(out)
            if self._reasoning_id is None:
                self._reasoning_id = self._new_block_id("r")
                out.append(ReasoningStart(id=self._reasoning_id))
            out.append(ReasoningDelta(id=self._reasoning_id, delta=text))
        else:
            if self._reasoning_id is not None:
                self._end_reasoning(out)
            if self._text_id is None:
                self._text_id = self._new_block_id("t")
                out.append(TextStart(id=self._text_id))
            out.append(TextDelta(id=self._text_id, delta=text))

    def _close_blocks(self, out: list[UIChunk]) -> None:
        if self._reasoning_id is not None:
            self._end_reasoning(out)
        if self._text_id is not None:
            self._end_text(out)

    def _tool_call(self, call_id: str, name: str, args: dict[str, Any], client_side: bool,
                   out: list[UIChunk]) -> None:
        self._close_blocks(out)
        if not self._step_open:
            out.append(StartStep())
            self._step_open = True
        # Server-run tools are "provider executed" for the AI SDK: the client neither runs
        # them (no onToolCall) nor waits for them (sendAutomaticallyWhen helpers).
        executed = None if client_side else True
        out.append(ToolInputStart(tool_call_id=call_id, tool_name=name,
                                  provider_executed=executed))
        out.append(ToolInputAvailable(tool_call_id=call_id, tool_name=name, input=args,
                                      provider_executed=executed))
        if client_side:
            self._awaiting_client.add(call_id)
            if name in self._approval_tools:
                out.append(ToolApprovalRequest(approval_id=frontend_approval_id(call_id),
                                               tool_call_id=call_id))
        else:
            self._open_calls[call_id] = None

    def _approval_request(self, approval_id: str, call_id: str, name: str,
                          args: dict[str, Any], hint: str | None, payload: Any,
                          out: list[UIChunk]) -> None:
        self._close_blocks(out)
        adk: dict[str, Any] = {"approvalId": approval_id}
        if hint:
            adk["hint"] = hint
        if payload is not None:
            adk["payload"] = payload
        # Re-stating the call carries the hint and payload to the client, where they land
        # on the tool part as `callProviderMetadata.adk`.
        out.append(ToolInputAvailable(tool_call_id=call_id, tool_name=name, input=args,
                                      provider_metadata={"adk": adk}))
        out.append(ToolApprovalRequest(approval_id=approval_id, tool_call_id=call_id))
        self._awaiting_client.add(approval_id)
        self._open_calls.pop(call_id, None)  # its outcome comes with the answer

    def _record_response(self, event: Event, out: list[UIChunk]) -> None:
        if event.finish_reason is not None:
            name = getattr(event.finish_reason, "name", str(event.finish_reason))
            self._finish_reason = _FINISH_REASONS.get(name, "other")
        if event.model_version:
            self._model_version = event.model_version
        usage = event.usage_metadata
        if usage is not None:
            for key, value in (
                ("inputTokens", usage.prompt_token_count),
                ("outputTokens", usage.candidates_token_count),
                ("totalTokens", usage.total_token_count),
                ("reasoningTokens", usage.thoughts_token_count),
                ("cachedInputTokens", usage.cached_content_token_count),
            ):
                if value:
                    self._usage[key] = self._usage.get(key, 0) + value
        grounding = event.grounding_metadata
        if grounding is not None and grounding.grounding_chunks:
            for chunk in grounding.grounding_chunks:
                web = chunk.web
                if web is None or not web.uri or web.uri in self._sources:
                    continue
                self._sources.add(web.uri)
                source_id = f"{self.message_id}-s{len(self._sources)}"
                out.append(SourceUrl(source_id=source_id, url=web.uri, title=web.title)
                           if web.title else SourceUrl(source_id=source_id, url=web.uri))

    # -- parts --------------------------------------------------------------

    def _function_call(self, call: types.FunctionCall, event: Event, out: list[UIChunk]) -> None:
        call_id = call.id or ""
        name = call.name or ""
        args: dict[str, Any] = dict(call.args) if call.args else {}
        if name == CONFIRMATION_TOOL and self._confirmation_style == "native":
            original = args.get("originalFunctionCall") or {}
            confirmation = args.get("toolConfirmation") or {}
            self._approval_request(call_id, str(original.get("id", "")),
                                   str(original.get("name", "")), original.get("args") or {},
                                   confirmation.get("hint"), confirmation.get("payload"), out)
            return
        self._tool_call(call_id, name, args, call_id in (event.long_running_tool_ids or ()), out)

    def _function_response(self, response: types.FunctionResponse, event: Event,
                           out: list[UIChunk]) -> None:
        call_id = response.id or ""
        if response.name == CONFIRMATION_TOOL:
            return
        requested = event.actions.requested_tool_confirmations if event.actions else None
        if requested and call_id in requested:
            return  # ADK's placeholder while the call waits for approval
        self._close_blocks(out)
        result = response.response
        if call_id in self._denied and _is_error(result):
            out.append(ToolOutputDenied(tool_call_id=call_id))
        elif _is_error(result):
            assert result is not None
            out.append(ToolOutputError(tool_call_id=call_id, error_text=str(result["error"])))
        else:
            out.append(ToolOutputAvailable(tool_call_id=call_id, output=result))
        self._awaiting_client.discard(call_id)
        self._open_calls.pop(call_id, None)

    def _inline_data(self, blob: types.Blob, out: list[UIChunk]) -> None:
        if blob.data is None:
            return
        mime = blob.mime_type or "application/octet-stream"
        self._close_blocks(out)
        data = base64.b64encode(blob.data).decode("ascii")
        out.append(File(url=f"data:{mime};base64,{data}", media_type=mime))

    # -- helpers ------------------------------------------------------------

    def _new_block_id(self, kind: str) -> str:
        self._block_seq += 1
        return f"{self.message_id}-{kind}{self._block_seq}"

    def _end_text(self, out: list[UIChunk]) -> None:
        assert self._text_id is not None
        out.append(TextEnd(id=self._text_id))
        self._text_id = None

    def _end_reasoning(self, out: list[UIChunk]) -> None:
        assert self._reasoning_id is not None
        out.append(ReasoningEnd(id=self._reasoning_id))
        self._reasoning_id = None

    def _metadata(self) -> dict[str, Any] | None:
        metadata: dict[str, Any] = {}
        if self._usage:
            metadata["usage"] = dict(self._usage)
        if self._model_version:
            metadata["model"] = self._model_version
        return metadata or None


def _is_synthetic(parts: list[types.Part]) -> bool:
    """ADK's confirmation request event is not a model call: it must not open a step."""
    return all(
        p.function_call is not None and p.function_call.name == CONFIRMATION_TOOL for p in parts
    )


def _is_error(result: dict[str, Any] | None) -> bool:
    """ADK reports tool failures (and rejections) as ``{"error": "..."}``."""
    return isinstance(result, dict) and "error" in result and "result" not in result and (
        len(result) == 1 or result.get("status") in ("error", None)
    )
