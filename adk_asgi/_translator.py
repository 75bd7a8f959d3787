"""EventTranslator: ADK events in, UI message chunks out, one translator per stream.

The rules the AI SDK client enforces shape this module:

- text and reasoning come as ``*-start`` / ``*-delta`` / ``*-end`` blocks; in
  SSE mode ADK streams ``partial`` events and then one aggregated final event
  with the same id, whose text must not be sent twice;
- a step (``start-step`` ... ``finish-step``) is one model call plus the tool
  results that answer it; text after server tool results opens a new step,
  otherwise ``lastAssistantMessageIsCompleteWithToolCalls`` re-POSTs forever;
- an approval request must be in the last step: ADK's synthetic
  ``adk_request_confirmation`` event never opens a step;
- every tool chunk refers to a tool part the client already has.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any, Final, Literal

from google.adk.events import Event
from google.genai import types

from ._chunks import (
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

__all__ = ("CONFIRMATION_TOOL", "ConfirmationStyle", "EventTranslator", "frontend_approval_id")

CONFIRMATION_TOOL: Final = "adk_request_confirmation"
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


def frontend_approval_id(call_id: str) -> str:
    """The approval id of a browser tool that needs approval: derived from the
    server-assigned (unguessable) call id, so it needs no state of its own."""
    return f"approval-{call_id}"


class EventTranslator:
    """Turns the ADK events of one run into the chunks of one assistant message."""

    __slots__ = (
        "_approval_tools",
        "_awaiting_client",
        "_block_seq",
        "_confirmation_style",
        "_denied",
        "_finish_reason",
        "_model_call_done",
        "_model_version",
        "_reasoning_id",
        "_sources",
        "_step_open",
        "_streamed_ids",
        "_text_id",
        "_usage",
        "errored",
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
    ) -> None:
        self.message_id = message_id
        self.errored = False
        self._confirmation_style = confirmation_style
        # Calls the client denied in this request: their ADK "rejected" result is
        # shown as `tool-output-denied`, not as an error.
        # (Seed style reports a denial as an error on the call, as seed 000 does.)
        self._denied = frozenset(denied_call_ids) if confirmation_style == "native" \
            else frozenset()
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
        self._sources: set[str] = set()
        self._finish_reason: FinishReason | None = None
        self._usage: dict[str, int] = {}
        self._model_version: str | None = None

    # -- stream edges -----------------------------------------------------

    def start(self) -> list[UIChunk]:
        return [Start(message_id=self.message_id)]

    def finish(self) -> list[UIChunk]:
        """Close what is open and end the message (not after an error: one terminal chunk)."""
        if self.errored:
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
        if self.errored:
            return []
        self.errored = True
        out: list[UIChunk] = []
        self._close_blocks(out)
        out.append(Abort())
        return out

    def fail(self, error_text: str) -> list[UIChunk]:
        """The run failed outside any event (an exception): one `error` chunk, once."""
        if self.errored:
            return []
        self.errored = True
        out: list[UIChunk] = []
        self._close_blocks(out)
        out.append(Error(error_text=error_text))
        return out

    @property
    def awaiting_client(self) -> frozenset[str]:
        """Tool-call ids (or approval ids) the client has to answer before the run goes on."""
        return frozenset(self._awaiting_client)

    # -- events -----------------------------------------------------------

    def translate(self, event: Event, out: list[UIChunk]) -> None:
        """Append the chunks for one ADK event to ``out``."""
        if self.errored:
            return
        if event.error_code:
            if event.error_code != _ABORTED:
                out.extend(self.fail(event.error_message or str(event.error_code)))
            return
        content = event.content
        if content is None or not content.parts or event.author == "user":
            return
        partial = bool(event.partial)
        if content.role == "model" and not _is_synthetic(content.parts):
            self._enter_model_call(out)
            if not partial:
                self._model_call_done = True
        event_id = event.id
        for part in content.parts:
            if part.text is not None and not part.function_call:
                self._text(part, event_id, partial, out)
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
        if not partial:
            self._record_final(event, out)

    # -- parts --------------------------------------------------------------

    def _enter_model_call(self, out: list[UIChunk]) -> None:
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

    def _text(self, part: types.Part, event_id: str, partial: bool, out: list[UIChunk]) -> None:
        text = part.text or ""
        thought = bool(part.thought)
        if partial:
            self._streamed_ids.add(event_id)
        elif event_id in self._streamed_ids:
            return  # the aggregate of partials already sent
        if not text:
            return
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
        if not partial:
            self._close_blocks(out)

    def _function_call(self, call: types.FunctionCall, event: Event, out: list[UIChunk]) -> None:
        self._close_blocks(out)
        call_id = call.id or ""
        name = call.name or ""
        args: dict[str, Any] = dict(call.args) if call.args else {}
        if name == CONFIRMATION_TOOL and self._confirmation_style == "native":
            self._approval_request(call_id, args, out)
            return
        if not self._step_open:
            out.append(StartStep())
            self._step_open = True
        client_side = call_id in (event.long_running_tool_ids or ())
        # Server-run tools are "provider executed" for the AI SDK: the client neither
        # runs them (no onToolCall) nor waits for them (sendAutomaticallyWhen helpers).
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

    def _approval_request(self, approval_id: str, args: dict[str, Any],
                          out: list[UIChunk]) -> None:
        original = args.get("originalFunctionCall") or {}
        confirmation = args.get("toolConfirmation") or {}
        call_id = str(original.get("id", ""))
        name = str(original.get("name", ""))
        adk: dict[str, Any] = {"approvalId": approval_id}
        if confirmation.get("hint"):
            adk["hint"] = confirmation["hint"]
        if confirmation.get("payload") is not None:
            adk["payload"] = confirmation["payload"]
        # Re-stating the call carries the hint and payload to the client, where
        # they land on the tool part as `callProviderMetadata.adk`.
        out.append(ToolInputAvailable(tool_call_id=call_id, tool_name=name,
                                      input=original.get("args") or {},
                                      provider_metadata={"adk": adk}))
        out.append(ToolApprovalRequest(approval_id=approval_id, tool_call_id=call_id))
        self._awaiting_client.add(approval_id)

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

    def _inline_data(self, blob: types.Blob, out: list[UIChunk]) -> None:
        if blob.data is None:
            return
        mime = blob.mime_type or "application/octet-stream"
        self._close_blocks(out)
        data = base64.b64encode(blob.data).decode("ascii")
        out.append(File(url=f"data:{mime};base64,{data}", media_type=mime))

    def _record_final(self, event: Event, out: list[UIChunk]) -> None:
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

    def _close_blocks(self, out: list[UIChunk]) -> None:
        if self._reasoning_id is not None:
            self._end_reasoning(out)
        if self._text_id is not None:
            self._end_text(out)

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
