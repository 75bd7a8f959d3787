"""EventTranslator: ADK events in, UI message chunks out; one translator per assistant message.

The rules the AI SDK client enforces shape this module:

- text and reasoning come as ``*-start`` / ``*-delta`` / ``*-end`` blocks; ADK streams
  ``partial`` events and then one aggregated final event, whose text must not be sent
  twice (whatever id ADK gives it: a code executor's final event has a new one);
- a step (``start-step`` ... ``finish-step``) is one model call plus the tool results that
  answer it; text after server tool results opens a new step, otherwise
  ``lastAssistantMessageIsCompleteWithToolCalls`` re-POSTs forever;
- branches that run side by side (a ``ParallelAgent``'s sub-agents, a workflow's parallel
  nodes) each write their own blocks, and share the steps they meet in (``lanes.py``,
  ``blocks.py``);
- an approval request must be in the last step: ADK's synthetic
  ``adk_request_confirmation`` event never opens a step;
- every tool chunk refers to a tool part the client already has, and every server tool
  call gets an outcome (``tool-output-*``), even when the run fails;
- one terminal chunk per stream: ``finish``, ``abort`` or ``error``; an ``error`` never
  carries an exception's text (``describe_error`` decides what the user reads).

How an event is read, and the hooks a subclass overrides (``translate/live.py`` is the one
subclass in the package; pydantic-ai's ``UIEventStream`` is the model). ``translate`` calls,
in this order:

``_on_event(event, lane, out)`` (override; call the base)
    Every event, first: the ``Surface``'s state parts and the application's ``on_event``
    (``translate/surface.py``); live adds its transcriptions.
``_on_error(event, lane, out)``
    An event with ``error_code``: the message ends with ``error`` (see ``fail``), unless
    the same agent or node goes on (a workflow node retried).
``_on_content(event, lane, out)``
    An event's content, part by part, in order (a model call opens or joins a step first).
    Each part goes to its hook; ``replay`` says the part repeats what the lane already
    streamed as partials (the final event's aggregate), ``partial`` that the event is one:

    ``_on_text(text, lane, partial, replay, out)`` and ``_on_reasoning(...)``
        text and thoughts: streamed into the lane's blocks;
    ``_on_function_call(call, event, lane, out)``
        a model's function call (final events only); ``_is_client_call`` is the one rule
        for which calls the page answers (everything else is provider-executed);
    ``_on_function_response(response, event, lane, out)``
        a tool's result, an answer the client or the server sent in;
    ``_on_executable_code(code, lane, replay, out)`` and ``_on_code_result(...)``
        code the model runs and what it printed: a provider-executed ``code_execution``
        call (``tool_parts.py``);
    ``_on_file(part, lane, partial, out)``
        inline bytes or a file reference (live overrides it: audio is ``data-pcm``).

``_on_node_output(event, lane, out)``
    A workflow node's output (``event.output``, unless the node's message is its output):
    a string as text, anything else as a ``data-node`` part ``{node, path, output}``.

After a final (non-partial) event's content the lane's text or reasoning block ends, and
usage, finish reason, model version and grounding sources are recorded
(``_record_response``).

One rule a subclass decides: ``_final_ends_call()``, whether a final model event ends the
lane's model call, so its next model content opens a new step (SSE: yes, one final event per
call; live: no, a model turn sends its text and its calls as separate final events and ends
at ``turn_complete``, when the turn layer calls ``_model_call_finished()``).

How a final event knows what it repeats: each lane keeps the kinds of parts (text,
reasoning, code, code result) it streamed as partials since its last final event; the next
final event of the lane holding such parts is their aggregate, so those kinds are not sent
again (``replay``), whatever the event's id — ADK's code executor gives the final event a new
one, live events each have their own.

The writer hooks the parts hooks call (``_open_step``, ``_stream_text``, ``_close_blocks``,
``_tool_call``, ``_approval_request``, ``_record_response``, ``_model_call_finished``) are
``AssistantMessage``'s in ``message.py``: the message being written (its edges, steps,
blocks, tool parts and metadata).

Nothing here depends on what only a live stream has: lanes come from the event's author,
branch and node path, tool-call ids from the events (or a counter over the message's
events), and a final event without partials before it is read whole. So a session's stored
events, translated in order without partials, give the same message.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from google.adk.events import Event
from google.genai import types

from ..pauses.approvals import CONFIRMATION_TOOL
from ..pauses.kinds import LIVE_WORKFLOW_PAUSE, node_result, pause_of
from ..wire.chunks import DataChunk, UIChunk
from ..wire.errors import ErrorInfo
from ..wire.jsonable import NotJson, json_value
from .lanes import CODE, REASONING, RESULT, TEXT, Lane, Lanes
from .message import AssistantMessage

__all__ = ("NODE_CHUNK_TYPE", "EventTranslator")

NODE_CHUNK_TYPE: Final = "data-node"
# ADK's own marker for a run stopped through abort_signal: the client is gone.
_ABORTED: Final = "INVOCATION_ABORTED"

logger = logging.getLogger("adk_asgi")


class EventTranslator(AssistantMessage):
    """Turns the ADK events of one run into the chunks of one assistant message."""

    __slots__ = ("_code_calls", "_failed_lane", "_lanes")

    def __init__(self, message_id: str, **options: Any) -> None:
        super().__init__(message_id, **options)
        self._lanes = Lanes()
        self._failed_lane: Lane | None = None
        self._code_calls = 0

    # -- events -----------------------------------------------------------

    def translate(self, event: Event, out: list[UIChunk]) -> None:
        """Append the chunks for one ADK event to ``out``."""
        if self.ended:
            return
        lane = self._lanes.of(event)
        if self.failure is not None and not self._recovers(event, lane):
            return
        self._on_event(event, lane, out)
        if event.error_code:
            self._on_error(event, lane, out)
            return
        content = event.content
        if content is not None and content.parts and event.author != "user":
            self._on_content(event, lane, out)
        if event.output is not None:
            self._settle_node_call(event, lane, out)
            if not event.node_info.message_as_output:
                self._on_node_output(event, lane, out)

    # -- event hooks (see the module docstring) ---------------------------------

    def _on_event(self, event: Event, lane: Lane, out: list[UIChunk]) -> None:
        if self._surface is not None:
            self._surface.event(event, out)

    def _on_error(self, event: Event, lane: Lane, out: list[UIChunk]) -> None:
        if event.error_code == _ABORTED:
            return
        # Ends the message; the `error` chunk waits for `finish`, or for `fail` with the
        # exception ADK raises next (describe_error then sees it).
        self.failure = ErrorInfo(str(event.error_code), event.error_message)
        self._failed_lane = lane
        self._close_blocks(out)

    def _recovers(self, event: Event, lane: Lane) -> bool:
        """After an error event, the agent or node that failed goes on (ADK retries a
        workflow node with a ``RetryConfig``): the error was not the end."""
        if lane is not self._failed_lane or event.error_code:
            return False
        if event.content is None and event.output is None:
            return False
        self.failure = None
        self._failed_lane = None
        return True

    def _on_content(self, event: Event, lane: Lane, out: list[UIChunk]) -> None:
        content = event.content
        assert content is not None and content.parts is not None
        parts = content.parts
        partial = bool(event.partial)
        if content.role == "model" and not _is_synthetic(parts):
            self._open_step(lane, out)
            if not partial and self._final_ends_call():
                lane.call_done = True
        replay = 0
        if not partial and lane.streamed:
            # A final event aggregates the partials before it: the kinds of parts they
            # streamed are not repeated (whatever the final event's id).
            replay = lane.streamed & _kinds(parts)
            lane.streamed &= ~replay
        streamed = 0
        for part in parts:
            if part.text is not None and part.function_call is None:
                if part.thought:
                    streamed |= REASONING
                    self._on_reasoning(part.text, lane, partial, bool(replay & REASONING), out)
                else:
                    streamed |= TEXT
                    self._on_text(part.text, lane, partial, bool(replay & TEXT), out)
            elif part.function_call is not None:
                if not partial:
                    self._on_function_call(part.function_call, event, lane, out)
            elif part.function_response is not None:
                self._on_function_response(part.function_response, event, lane, out)
            elif part.executable_code is not None:
                streamed |= CODE
                self._on_executable_code(part.executable_code, lane, bool(replay & CODE), out)
            elif part.code_execution_result is not None:
                streamed |= RESULT
                self._on_code_result(part.code_execution_result, lane, bool(replay & RESULT), out)
            elif part.inline_data is not None or part.file_data is not None:
                self._on_file(part, lane, partial, out)
        if partial:
            lane.streamed |= streamed
            return
        if streamed & (TEXT | REASONING):
            self._close_blocks(out, lane)  # the model's response is complete
        self._record_response(event, out)

    def _final_ends_call(self) -> bool:
        return True

    # -- part hooks -------------------------------------------------------------

    def _on_text(
        self, text: str, lane: Lane, partial: bool, replay: bool, out: list[UIChunk]
    ) -> None:
        if text and not replay:
            self._stream_text(lane, text, False, out)

    def _on_reasoning(
        self, text: str, lane: Lane, partial: bool, replay: bool, out: list[UIChunk]
    ) -> None:
        if text and not replay:
            self._stream_text(lane, text, True, out)

    def _on_function_call(
        self, call: types.FunctionCall, event: Event, lane: Lane, out: list[UIChunk]
    ) -> None:
        call_id = call.id or ""
        name = call.name or ""
        args: dict[str, Any] = dict(call.args) if call.args else {}
        if name == CONFIRMATION_TOOL and self._confirmation_style == "native":
            original = args.get("originalFunctionCall") or {}
            confirmation = args.get("toolConfirmation") or {}
            self._approval_request(
                call_id,
                str(original.get("id", "")),
                str(original.get("name", "")),
                original.get("args") or {},
                confirmation.get("hint"),
                confirmation.get("payload"),
                out,
            )
            return
        long_running = call_id in (event.long_running_tool_ids or ())
        pause = pause_of(call) if long_running else None
        if pause is not None:  # a request for input, a credential, a workflow confirmation
            if not self.pauses.state(pause, self, out, lane):
                out.extend(
                    self.fail(
                        ErrorInfo(
                            LIVE_WORKFLOW_PAUSE,
                            "A workflow asked the user in a live run, which cannot resume it",
                        )
                    )
                )
            return
        client_side = self._is_client_call(name, long_running)
        self._tool_call(call_id, name, args, client_side, out, lane)
        if long_running and not client_side:
            self.tools.long_running(call_id)

    def _is_client_call(self, name: str, long_running: bool) -> bool:
        """The one rule for who answers a call: only the page's own tools (and the ADK-tool
        style's confirmation call) wait for it; every other call is provider-executed, a
        long-running server tool included (the server completes it later, or the page when
        the app allows it)."""
        return long_running and (name in self._browser_tools or name == CONFIRMATION_TOOL)

    def _on_function_response(
        self, response: types.FunctionResponse, event: Event, lane: Lane, out: list[UIChunk]
    ) -> None:
        call_id = response.id or ""
        if response.name == CONFIRMATION_TOOL:
            return
        requested = event.actions.requested_tool_confirmations if event.actions else None
        if requested and call_id in requested:
            return  # ADK's placeholder while the call waits for approval
        if self.pauses.interim(response, event):
            self.tools.long_running(call_id)  # the tool waits for a credential
        self._close_blocks(out, lane)
        self.tools.outcome(call_id, response.response, out, agent=event.author != "user")

    def _settle_node_call(self, event: Event, lane: Lane, out: list[UIChunk]) -> None:
        """A workflow tool node's output settles the call stated for its confirmation
        (``pauses.py``)."""
        call_id = self.pauses.settled_call(event, self.tools.expects)
        if call_id is not None:
            self._close_blocks(out, lane)
            self.tools.outcome(call_id, node_result(event.output), out)

    def _on_executable_code(
        self, code: types.ExecutableCode, lane: Lane, replay: bool, out: list[UIChunk]
    ) -> None:
        if replay:
            return
        call_id = code.id or self._code_call_id()
        lane.code_call = call_id
        language = code.language.value if code.language is not None else "LANGUAGE_UNSPECIFIED"
        self._close_blocks(out, lane)
        self._blocks.ensure_step(out, lane)
        self.tools.code(call_id, str(language), code.code or "", out)

    def _on_code_result(
        self, result: types.CodeExecutionResult, lane: Lane, replay: bool, out: list[UIChunk]
    ) -> None:
        if replay:
            return
        call_id = result.id or lane.code_call
        self._close_blocks(out, lane)
        if call_id is None:  # a result without its code: the call stated empty
            call_id = self._code_call_id()
            self._blocks.ensure_step(out, lane)
            self.tools.code(call_id, "LANGUAGE_UNSPECIFIED", "", out)
        lane.code_call = None
        outcome = result.outcome.value if result.outcome is not None else "OUTCOME_UNSPECIFIED"
        self.tools.code_result(call_id, str(outcome), result.output or "", out)

    def _code_call_id(self) -> str:
        self._code_calls += 1
        return f"{self.message_id}-code{self._code_calls}"

    def _on_file(self, part: types.Part, lane: Lane, partial: bool, out: list[UIChunk]) -> None:
        if partial:
            return  # the final event holds it
        self._close_blocks(out, lane)
        self._blocks.file(part, out)

    def _on_node_output(self, event: Event, lane: Lane, out: list[UIChunk]) -> None:
        if not self._node_outputs:
            return
        output = event.output
        self._open_step(lane, out)
        lane.call_done = True  # a node's output is whole: what comes next is a new step
        if isinstance(output, str):
            if output:
                self._stream_text(lane, output, False, out)
                self._close_blocks(out, lane)
            return
        try:
            value = json_value(output)
        except NotJson as exc:
            logger.error(
                "The output of workflow node %s cannot be sent: %s", event.node_info.path, exc
            )
            return
        out.append(
            DataChunk(
                type=NODE_CHUNK_TYPE,
                data={"node": lane.author, "path": event.node_info.path, "output": value},
            )
        )


def _is_synthetic(parts: list[types.Part]) -> bool:
    """ADK's confirmation request event is not a model call: it must not open a step."""
    return parts[0].function_call is not None and all(
        p.function_call is not None and p.function_call.name == CONFIRMATION_TOOL for p in parts
    )


def _kinds(parts: list[types.Part]) -> int:
    """The kinds of parts a lane streams (``lanes.py``) among ``parts``."""
    kinds = 0
    for part in parts:
        if part.text is not None and part.function_call is None:
            kinds |= REASONING if part.thought else TEXT
        elif part.executable_code is not None:
            kinds |= CODE
        elif part.code_execution_result is not None:
            kinds |= RESULT
    return kinds
