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

The message being written (its edges, steps, blocks, tool parts and metadata, and the
writer hooks above) is ``AssistantMessage`` in ``message.py``; this module reads ADK events
into it.
``_on_event(event, out)`` (override; call the base)
    Extra chunks for an event (called first for every event): the ``Surface``'s state
    parts and the application's ``on_event`` (``core/surface.py``).
"""

from __future__ import annotations

from typing import Any, Final

from google.adk.events import Event
from google.genai import types

from ..chunks import UIChunk
from .approvals import CONFIRMATION_TOOL
from .message import AssistantMessage, ErrorInfo
from .pauses import LIVE_WORKFLOW_PAUSE, node_result, pause_of

__all__ = ("EventTranslator",)

# ADK's own marker for a run stopped through abort_signal: the client is gone.
_ABORTED: Final = "INVOCATION_ABORTED"


class EventTranslator(AssistantMessage):
    """Turns the ADK events of one run into the chunks of one assistant message."""

    __slots__ = ("_streamed_ids",)

    def __init__(self, message_id: str, **options: Any) -> None:
        super().__init__(message_id, **options)
        self._streamed_ids: set[str] = set()

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
        if event.output is not None:
            self._node_output(event, out)
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
        pause = pause_of(call) if long_running else None
        if pause is not None:  # a request for input, a credential, a workflow confirmation
            if not self.pauses.state(pause, self, out):
                out.extend(self.fail(ErrorInfo(LIVE_WORKFLOW_PAUSE, "A workflow asked the user "
                                               "in a live run, which cannot resume it")))
            return
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
        if self.pauses.interim(response, event):
            self.tools.long_running(call_id)  # the tool waits for a credential
        self._close_blocks(out)
        self.tools.outcome(call_id, response.response, out, agent=event.author != "user")


    def _node_output(self, event: Event, out: list[UIChunk]) -> None:
        """A workflow tool node's output settles the call stated for its confirmation."""
        call_id = self.pauses.settled_call(event, self.tools.expects)
        if call_id is not None:
            self._close_blocks(out)
            self.tools.outcome(call_id, node_result(event.output), out)


def _is_synthetic(parts: list[types.Part]) -> bool:
    """ADK's confirmation request event is not a model call: it must not open a step."""
    return all(
        p.function_call is not None and p.function_call.name == CONFIRMATION_TOOL for p in parts
    )

