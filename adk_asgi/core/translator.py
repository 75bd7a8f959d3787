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
``_model_call_finished()``
    The open step's model call has finished (a final response without a final event).
``_stream_text(text, thought, out)``
    Append a delta to the open text (or reasoning) block, opening it.
``_final_ends_call()`` (override)
    Whether a final (non-partial) model event ends the model call, so the next model
    content opens a new step. SSE: yes, one final event per call; live: no, a model turn
    sends its text and its calls as separate final events and ends at ``turn_complete``.
``_already_streamed(event)``, ``_partial_streamed(event)`` (override both)
    Whether a final event's text was already sent as partials, and noting that a partial
    was. SSE: partials share the final event's id (the ids of responses still streaming
    are kept, each until its final event); live events each get a fresh id.
``_tool_call(call_id, name, args, client_side, out)``
    A model's function call; ``client_side`` calls wait for the page.
``_approval_request(approval_id, call_id, name, args, hint, payload, out)``
    Ask the user to approve ``call_id`` (the call is re-stated with the hint and payload).
``_record_response(event, out)``
    Usage, finish reason, model version and grounding sources of a final response.

The steps and blocks live in ``blocks.py``, the tool parts in ``tool_parts.py``, the
response metadata in ``response_meta.py``.
``_on_event(event, out)`` (override; call the base)
    Extra chunks for an event (called first for every event): the ``Surface``'s state
    parts and the application's ``on_event`` (``core/surface.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

from google.adk.events import Event
from google.genai import types

from ..chunks import Abort, Error, Finish, FinishReason, Start, UIChunk
from .approvals import CONFIRMATION_TOOL
from .blocks import MessageBlocks
from .errors import GENERIC_ERROR
from .response_meta import ResponseMeta
from .surface import Surface, SurfaceOptions
from .tool_parts import ToolParts
from .tools import ToolKinds

__all__ = ("ConfirmationStyle", "ErrorInfo", "EventTranslator", "describe_error_generic")

ConfirmationStyle = Literal["native", "adk-tool"]

logger = logging.getLogger("adk_asgi")
_NO_TOOLS: Final = ToolKinds()

# ADK's own marker for a run stopped through abort_signal: the client is gone.
_ABORTED: Final = "INVOCATION_ABORTED"


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


def describe(error: ErrorInfo, describe_error: DescribeError) -> str:
    """What the user reads: the application's ``describe_error``, or the generic text when
    it fails or returns no text (it must never break the stream's last chunk)."""
    try:
        text = describe_error(error)
    except Exception:
        logger.exception("describe_error raised for %s", error.code)
        return describe_error_generic(error)
    return text if isinstance(text, str) and text else describe_error_generic(error)


class EventTranslator:
    """Turns the ADK events of one run into the chunks of one assistant message."""

    __slots__ = (
        "_blocks",
        "_browser_tools",
        "_confirmation_style",
        "_describe_error",
        "_meta",
        "_streamed_ids",
        "_surface",
        "ended",
        "failure",
        "message_id",
        "tools",
    )

    def __init__(
        self,
        message_id: str,
        *,
        confirmation_style: ConfirmationStyle = "native",
        denied_call_ids: Iterable[str] = (),
        tools: ToolKinds = _NO_TOOLS,
        awaiting: Iterable[str] = (),
        resumed: Iterable[str] = (),
        describe_error: DescribeError = describe_error_generic,
        surface: SurfaceOptions | None = None,
        steps_before: int = 0,
    ) -> None:
        self.message_id = message_id
        self.ended = False
        self.failure: ErrorInfo | None = None
        """The failure that ends (or ended) the message with ``error``: ADK's error event,
        or the exception ``fail`` was given."""
        self._confirmation_style = confirmation_style
        self._describe_error = describe_error
        self._blocks = MessageBlocks(message_id)
        self._meta = ResponseMeta(message_id)
        self.tools = ToolParts(native=confirmation_style == "native", denied=denied_call_ids,
                               approval_tools=tools.approval, awaiting=awaiting,
                               resumed=resumed)
        """The message's tool parts: which calls wait for the client (``awaiting``), which
        the user denied or approved, final results (``outcome``)."""
        self._browser_tools = tools.browser
        self._surface = Surface(message_id, surface, steps=steps_before) \
            if surface is not None else None
        self._streamed_ids: set[str] = set()

    # -- stream edges -----------------------------------------------------

    def start(self) -> list[UIChunk]:
        return [Start(message_id=self.message_id)]

    def finish(self) -> list[UIChunk]:
        """Close what is open and end the message (nothing after a terminal chunk)."""
        if self.ended:
            return []
        if self.failure is not None:
            return self.fail(self.failure)
        out: list[UIChunk] = []
        self._blocks.finish_step(out)
        reason: FinishReason = (
            "tool-calls" if self.tools.awaiting else (self._meta.finish_reason or "stop")
        )
        metadata = self._meta.metadata()
        authors = self._surface.metadata() if self._surface is not None else None
        if authors is not None:
            metadata = {**(metadata or {}), "adk": authors}
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
        self.tools.fail_open(out)
        if isinstance(error, str):
            text = error
        else:
            reported = self.failure
            if reported is not None and error.exception is not None:
                # ADK reported the error as an event before raising it: its code (an API
                # status) with the exception, for describe_error to map.
                error = ErrorInfo(reported.code, error.message, error.exception)
            self.failure = error
            text = describe(error, self._describe_error)
        out.append(Error(error_text=text))
        return out

    def continue_turn(self) -> list[UIChunk]:
        """The same assistant message continues in a new request (the answers to the calls
        it waited for): ``start`` again, same ``messageId``, the calls and denials kept."""
        self.ended = False
        self._blocks.reset_step()
        self.tools.awaiting.clear()
        return self.start()

    @property
    def done(self) -> bool:
        """Nothing more is translated: the message ended, or ADK reported an error."""
        return self.ended or self.failure is not None

    @property
    def output_tokens(self) -> int:
        """The model's output tokens (answer and reasoning) so far, as its usage reports."""
        return self._meta.output_tokens

    @property
    def approvals_requested(self) -> int:
        """Approval requests this message sent to the client."""
        return self.tools.approvals_requested

    @property
    def awaiting_client(self) -> frozenset[str]:
        """Tool-call ids (or approval ids) the client has to answer before the run goes on."""
        return frozenset(self.tools.awaiting)

    def restate_call(self, call_id: str, name: str, args: dict[str, Any],
                     out: list[UIChunk]) -> None:
        """A server call of an earlier message, stated again (its result follows here)."""
        self._tool_call(call_id, name, args, False, out)

    # -- events -----------------------------------------------------------

    def translate(self, event: Event, out: list[UIChunk]) -> None:
        """Append the chunks for one ADK event to ``out``."""
        if self.done:
            return
        self._on_event(event, out)
        if event.error_code:
            if event.error_code != _ABORTED:
                # Ends the message; the `error` chunk waits for `finish`, or for `fail` with
                # the exception ADK raises next (describe_error then sees it).
                self.failure = ErrorInfo(str(event.error_code), event.error_message)
                self._close_blocks(out)
            return
        content = event.content
        if content is None or not content.parts or event.author == "user":
            return
        partial = bool(event.partial)
        if content.role == "model" and not _is_synthetic(content.parts):
            self._open_step(out)
            if not partial and self._final_ends_call():
                self._blocks.call_done = True
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
            elif (part.inline_data is not None or part.file_data is not None) and not partial:
                self._close_blocks(out)
                self._blocks.file(part, out)
        if partial:
            self._partial_streamed(event)
        else:
            self._streamed_ids.discard(event.id)  # its response is complete
            self._close_blocks(out)
            self._record_response(event, out)
        if self._surface is not None:
            self._surface.steps_to(self._blocks.opened, event.author, out)

    # -- protected hooks (see the module docstring) -------------------------------

    def _on_event(self, event: Event, out: list[UIChunk]) -> None:
        if self._surface is not None:
            self._surface.event(event, out)

    def _already_streamed(self, event: Event) -> bool:
        return event.id in self._streamed_ids

    def _final_ends_call(self) -> bool:
        return True

    def _partial_streamed(self, event: Event) -> None:
        self._streamed_ids.add(event.id)

    def _open_step(self, out: list[UIChunk]) -> None:
        self._blocks.open_step(out)

    def _stream_text(self, text: str, thought: bool, out: list[UIChunk]) -> None:
        self._blocks.stream(text, thought, out)

    def _close_blocks(self, out: list[UIChunk]) -> None:
        self._blocks.close(out)

    def _model_call_finished(self) -> None:
        self._blocks.call_done = True

    def _tool_call(self, call_id: str, name: str, args: dict[str, Any], client_side: bool,
                   out: list[UIChunk]) -> None:
        self._close_blocks(out)
        self._blocks.ensure_step(out)
        self.tools.call(call_id, name, args, client_side, out)

    def _approval_request(self, approval_id: str, call_id: str, name: str,
                          args: dict[str, Any], hint: str | None, payload: Any,
                          out: list[UIChunk]) -> None:
        self._close_blocks(out)
        self.tools.approval_request(approval_id, call_id, name, args, hint, payload, out)

    def _record_response(self, event: Event, out: list[UIChunk]) -> None:
        self._meta.record(event, out)

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
        long_running = call_id in (event.long_running_tool_ids or ())
        # Only the page's own tools wait for it; a long-running server tool is completed
        # later by the server (or the page, when the app allows it): provider-executed.
        client_side = long_running and (name in self._browser_tools
                                        or name == CONFIRMATION_TOOL)  # the ADK-tool style
        self._tool_call(call_id, name, args, client_side, out)
        if long_running and not client_side:
            self.tools.long_running(call_id)

    def _function_response(self, response: types.FunctionResponse, event: Event,
                           out: list[UIChunk]) -> None:
        call_id = response.id or ""
        if response.name == CONFIRMATION_TOOL:
            return
        requested = event.actions.requested_tool_confirmations if event.actions else None
        if requested and call_id in requested:
            return  # ADK's placeholder while the call waits for approval
        self._close_blocks(out)
        self.tools.outcome(call_id, response.response, out, agent=event.author != "user")


def _is_synthetic(parts: list[types.Part]) -> bool:
    """ADK's confirmation request event is not a model call: it must not open a step."""
    return all(
        p.function_call is not None and p.function_call.name == CONFIRMATION_TOOL for p in parts
    )

