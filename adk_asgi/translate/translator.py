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

**The hooks.** ``translate(event)`` reads an event in a fixed order and hands each piece to
a hook; a hook returns the chunks it wrote (any iterable: a list, or a generator that
``yield``\\ s). A subclass overrides a hook and calls ``super()`` for what it keeps
(pydantic-ai's ``UIEventStream`` is the model; ``translate/live.py`` is the package's own
subclass). The hooks write through ``self.message`` (``AssistantMessage``), whose methods
return their chunks too. In order:

``on_event(event, lane)``
    Every event, first: the surface's state parts and the application's ``on_event``
    (``surface.py``); live adds its transcriptions.
``on_error(event, lane)``
    An event with ``error_code``: the message ends with ``error``, unless the same agent or
    node goes on (a workflow node retried).
Then the event's content, part by part, in order (a model call opens or joins a step
first); ``replay`` says the part repeats what the lane already streamed as partials (the
final event's aggregate), ``partial`` that the event is one:

``on_text(text, lane, partial=, replay=)``, ``on_reasoning(...)``
    text and thoughts, streamed into the lane's blocks;
``on_function_call(call, event, lane)``
    a model's function call (final events only); ``is_client_call`` is the one rule for
    which calls the page answers (everything else is provider-executed);
``on_function_response(response, event, lane)``
    a tool's result, or an answer the client or the server sent in;
``on_executable_code(code, lane, replay=)``, ``on_code_result(result, lane, replay=)``
    code the model runs and what it printed: a provider-executed ``code_execution`` call;
``on_file(part, lane, partial=)``
    inline bytes or a file reference (live: model audio is ``data-pcm``).
``on_node_output(event, lane)``
    A workflow node's output (``event.output``, unless the node's message is its output):
    a string as text, anything else as a ``data-node`` part ``{node, path, output}``.

A model response's partials are skipped for the agents whose final response an
``after_model_callback`` may rewrite (``StreamingOptions.hold_partials``, default
``"rewritten"``; ``ToolKinds.rewritten``): a callback that edits only the complete response
(``if llm_response.partial: return None``) would otherwise leave the streamed text on
screen while the session holds the edit. Their text arrives whole with the final event.

Whatever streams, the final event's text is what the message ends with (ADK stored it):
when it is not the text the lane's partials streamed (a model whose aggregate differs from
its partials, a plugin that rewrites the aggregate, ``hold_partials="never"``), the final
event corrects the page. Text that only goes on comes as one more delta of the open block;
any other difference ends the streamed block with ``providerMetadata.adk.replaced: true``
(a sent text part cannot be edited) and writes the final text as a new block. The history
holds the final text only, so a page that skips replaced parts shows what a reload shows.

A node's output is shown once. When a workflow resumes after a pause (``RequestInput``, a
confirmation), ADK 2.13 yields again the output events of the nodes that ran before it (new
event ids, the same invocation and node path; the nodes do not run again) and stores them
again. An output event whose invocation and node path the message already showed
(``node_output_key``; earlier requests' in ``MessageContext.outputs_before``) is skipped
whole, before any hook: on the stream, in the history and in live turns alike.

After a final (non-partial) event's content the lane's text or reasoning block ends, and the
response's usage, finish reason, model version and grounding sources are recorded.

One rule a subclass decides: ``final_ends_call()``, whether a final model event ends the
lane's model call, so that its next model content opens a new step (SSE: yes, one final
event per call; live: no, a model turn sends its text and its calls as separate final
events and ends at ``turn_complete``).

How a final event knows what it repeats: each lane keeps the kinds of parts (text,
reasoning, code, code result) it streamed as partials since its last final event; the next
final event of the lane holding such parts is their aggregate, so those kinds are not sent
again (``replay``), whatever the event's id.

Nothing here depends on what only a live stream has: lanes come from the event's author,
branch and node path, tool-call ids from the events (or a counter over the message's
events), and a final event without partials before it is read whole. So a session's stored
events, translated in order without partials, give the same message.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, Final

from google.adk.events import Event
from google.genai import types

from ..pauses.approvals import CONFIRMATION_TOOL
from ..pauses.kinds import LIVE_WORKFLOW_PAUSE, pause_of
from ..pauses.tools import ALL_AGENTS
from ..wire.chunks import UIChunk
from ..wire.errors import ErrorInfo
from .lanes import CODE, REASONING, RESULT, TEXT, Lane, Lanes
from .message import AssistantMessage, MessageContext, MessageSettings
from .pause_parts import PauseParts

__all__ = ("Chunks", "EventTranslator", "node_output_key", "node_outputs")

# ADK's own marker for a run stopped through abort_signal: the client is gone.
_ABORTED: Final = "INVOCATION_ABORTED"
_NONE: Final[tuple[UIChunk, ...]] = ()

Chunks = Iterable[UIChunk]
"""What a hook returns: the chunks it wrote, in order."""

logger = logging.getLogger("adk_asgi")


class EventTranslator:
    """The ADK events of one run in, the chunks of one assistant message out."""

    __slots__ = ("_failed_lane", "_lanes", "_outputs", "message", "pauses")

    def __init__(
        self,
        message_id: str,
        settings: MessageSettings | None = None,
        context: MessageContext | None = None,
    ) -> None:
        self.message = AssistantMessage(message_id, settings, context)
        """The message being written; the hooks write through its methods."""
        message_settings = self.message.settings
        self.pauses = PauseParts(
            style=message_settings.confirmation_style,
            redirect_uri=context.oauth_redirect if context is not None else None,
        )
        """The message's requests for input, credentials and workflow confirmations."""
        self._lanes = Lanes()
        self._failed_lane: Lane | None = None
        self._outputs = set(context.outputs_before) if context is not None else set()

    @property
    def lanes(self) -> Lanes:
        """The message's lanes so far (one per agent or node on a branch)."""
        return self._lanes

    # -- events --------------------------------------------------------------------------

    def translate(self, event: Event) -> list[UIChunk]:
        """The chunks of one ADK event."""
        message = self.message
        if message.ended or _repeats_output(self._outputs, event):
            return []
        lane = self._lanes.of(event)
        if message.failure is not None and not self._recovers(event, lane):
            return []
        out = list(self.on_event(event, lane))
        if event.error_code:
            out.extend(self.on_error(event, lane))
            return out
        content = event.content
        if content is not None and content.parts and event.author != "user":
            self._content(event, content.parts, lane, out)
        if event.output is not None:
            out.extend(self.pauses.settle(event, self.message, lane))
            if not event.node_info.message_as_output:
                out.extend(self.on_node_output(event, lane))
        return out

    def _recovers(self, event: Event, lane: Lane) -> bool:
        """After an error event, the agent or node that failed goes on (ADK retries a
        workflow node with a ``RetryConfig``): the error was not the end."""
        if lane is not self._failed_lane or event.error_code:
            return False
        if event.content is None and event.output is None:
            return False
        self.message.recovered()
        self._failed_lane = None
        return True

    def _content(
        self, event: Event, parts: list[types.Part], lane: Lane, out: list[UIChunk]
    ) -> None:
        """An event's content, part by part, to the part hooks (see the module docstring)."""
        assert event.content is not None
        partial = bool(event.partial)
        if partial and _held(self.message.settings, event):
            return  # its final response, as a callback left it, says it whole
        if event.content.role == "model" and not _is_synthetic(parts):
            out.extend(self.message.open_step(lane))
            if not partial and self.final_ends_call():
                lane.call_done = True
        replay = 0
        if not partial and lane.streamed:
            # A final event aggregates the partials before it: the kinds of parts they
            # streamed are not repeated (whatever the final event's id).
            replay = lane.streamed & _kinds(parts)
            lane.streamed &= ~replay
        if partial and not lane.streamed & TEXT:
            lane.said.clear()  # its last final (or live model turn) ended the text
        elif not partial and replay & TEXT:
            out.extend(_corrected(self.message, lane, parts))
        streamed = 0
        for part in parts:
            if part.text is not None and part.function_call is None:
                if part.thought:
                    streamed |= REASONING
                    written = self.on_reasoning(
                        part.text, lane, partial=partial, replay=bool(replay & REASONING)
                    )
                else:
                    streamed |= TEXT
                    if partial:  # what the final event is checked against
                        lane.said.append(part.text)
                    written = self.on_text(
                        part.text, lane, partial=partial, replay=bool(replay & TEXT)
                    )
            elif part.function_call is not None:
                if partial:
                    continue
                written = self.on_function_call(part.function_call, event, lane)
            elif part.function_response is not None:
                written = self.on_function_response(part.function_response, event, lane)
            elif part.executable_code is not None:
                streamed |= CODE
                written = self.on_executable_code(
                    part.executable_code, lane, replay=bool(replay & CODE)
                )
            elif part.code_execution_result is not None:
                streamed |= RESULT
                written = self.on_code_result(
                    part.code_execution_result, lane, replay=bool(replay & RESULT)
                )
            elif part.inline_data is not None or part.file_data is not None:
                written = self.on_file(part, lane, partial=partial)
            else:
                continue
            out.extend(written)
        if partial:
            lane.streamed |= streamed
            return
        if streamed & (TEXT | REASONING):
            out.extend(self.message.close(lane))  # the model's response is complete
        out.extend(self.message.record_response(event))

    # -- event hooks ---------------------------------------------------------------------

    def on_event(self, event: Event, lane: Lane) -> Chunks:
        """Every event, first: the surface's parts (state, the app's ``on_event``)."""
        surface = self.message.surface
        return surface.event(event) if surface is not None else _NONE

    def on_error(self, event: Event, lane: Lane) -> Chunks:
        """An error event: the message ends with ``error`` (at ``finish``, or at ``fail``
        with the exception ADK raises next), unless the same lane goes on. ADK's marker of
        an aborted run is no error (the client is gone)."""
        if event.error_code == _ABORTED:
            return _NONE
        self._failed_lane = lane
        return self.message.failed(ErrorInfo(str(event.error_code), event.error_message))

    def final_ends_call(self) -> bool:
        """A final model event ends its lane's model call (see the module docstring)."""
        return True

    # -- part hooks ----------------------------------------------------------------------

    def on_text(self, text: str, lane: Lane, *, partial: bool, replay: bool) -> Chunks:
        """Model text: streamed into the lane's text block (nothing when ``replay``)."""
        if text and not replay:
            return self.message.text(lane, text)
        return _NONE

    def on_reasoning(self, text: str, lane: Lane, *, partial: bool, replay: bool) -> Chunks:
        """A thought: streamed into the lane's reasoning block (nothing when ``replay``)."""
        if text and not replay:
            return self.message.text(lane, text, thought=True)
        return _NONE

    def on_function_call(self, call: types.FunctionCall, event: Event, lane: Lane) -> Chunks:
        """A function call: a tool call (provider-executed unless ``is_client_call``), an
        approval request (ADK's confirmation call, native style) or a pause (a request
        for input, a credential request, a workflow confirmation)."""
        message = self.message
        call_id = call.id or ""
        name = call.name or ""
        args: dict[str, Any] = dict(call.args) if call.args else {}
        if name == CONFIRMATION_TOOL and message.settings.confirmation_style == "native":
            original = args.get("originalFunctionCall") or {}
            confirmation = args.get("toolConfirmation") or {}
            return message.tools.approval_request(
                call_id,
                str(original.get("id", "")),
                str(original.get("name", "")),
                original.get("args") or {},
                confirmation.get("hint"),
                confirmation.get("payload"),
            )
        long_running = call_id in (event.long_running_tool_ids or ())
        pause = pause_of(call) if long_running else None
        if pause is not None:
            stated = self.pauses.state(pause, message, lane)
            if stated is None:
                return message.fail(
                    ErrorInfo(
                        LIVE_WORKFLOW_PAUSE,
                        "A workflow asked the user in a live run, which cannot resume it",
                    )
                )
            return stated
        client_side = self.is_client_call(name, long_running)
        out = message.tools.call(call_id, name, args, client_side=client_side, lane=lane)
        if long_running and not client_side:
            message.tools.long_running(call_id)
        return out

    def is_client_call(self, name: str, long_running: bool) -> bool:
        """The one rule for who answers a call: only the page's own tools (and the
        ADK-tool style's confirmation call) wait for it; every other call is
        provider-executed, a long-running server tool included (the server completes it
        later, or the page when the app allows it)."""
        return long_running and (
            name in self.message.settings.tools.browser or name == CONFIRMATION_TOOL
        )

    def on_function_response(
        self, response: types.FunctionResponse, event: Event, lane: Lane
    ) -> Chunks:
        """A function response: the call's outcome (``tool-output-*``)."""
        call_id = response.id or ""
        if response.name == CONFIRMATION_TOOL:
            return _NONE
        requested = event.actions.requested_tool_confirmations if event.actions else None
        if requested and call_id in requested:
            return _NONE  # ADK's placeholder while the call waits for approval
        if self.pauses.interim(response, event):
            self.message.tools.long_running(call_id)  # the tool waits for a credential
        return self.message.tools.outcome(
            call_id,
            response.response,
            lane=lane,
            agent=event.author != "user",
            name=response.name or "",
        )

    def on_executable_code(self, code: types.ExecutableCode, lane: Lane, *, replay: bool) -> Chunks:
        """Code the model runs: a provider-executed ``code_execution`` call."""
        return _NONE if replay else self.message.tools.executable_code(code, lane)

    def on_code_result(
        self, result: types.CodeExecutionResult, lane: Lane, *, replay: bool
    ) -> Chunks:
        """What the code printed: the outcome of its ``code_execution`` call."""
        return _NONE if replay else self.message.tools.code_execution_result(result, lane)

    def on_file(self, part: types.Part, lane: Lane, *, partial: bool) -> Chunks:
        """Inline bytes or a file reference: a ``file`` part (from the final event)."""
        if partial:
            return _NONE  # the final event holds it
        return self.message.file(part, lane)

    def on_node_output(self, event: Event, lane: Lane) -> Chunks:
        """A workflow node's output: a string as text, anything else as ``data-node``
        (none with ``SurfaceOptions(node_outputs=False)``)."""
        surface = self.message.settings.surface
        if surface is not None and not surface.node_outputs:
            return _NONE
        return self.message.node_output(lane, event.node_info.path or "", event.output)


def _repeats_output(shown: set[tuple[str, str]], event: Event) -> bool:
    """A node output the message showed already (a resumed workflow's re-yield)."""
    key = node_output_key(event)
    if key is None:
        return False
    if key in shown:
        return True
    shown.add(key)
    return False


def _corrected(message: AssistantMessage, lane: Lane, parts: list[types.Part]) -> list[UIChunk]:
    """A final event's text that is not the text its partials streamed (a model or a
    plugin that rewrites the aggregate): the rest when it only goes on, else the streamed
    block replaced (see the module docstring)."""
    said = "".join(lane.said)
    lane.said.clear()
    final = "".join(p.text for p in parts if p.text and not p.thought and not p.function_call)
    if final == said:
        return []
    logger.info("The final text of %r is not what it streamed: corrected", lane.author)
    if said and final.startswith(said) and lane.text_id is not None:
        return message.text(lane, final[len(said) :])
    return message.replace_text(lane, final)


def _held(settings: MessageSettings, event: Event) -> bool:
    """The partials of an agent whose final response a callback may rewrite."""
    if settings.hold_partials != "rewritten":
        return settings.hold_partials == "always"
    rewritten = settings.tools.rewritten
    return bool(rewritten) and (ALL_AGENTS in rewritten or event.author in rewritten)


def node_output_key(event: Event) -> tuple[str, str] | None:
    """(invocation, node path) of a workflow node's output event; None for other events."""
    if event.output is None:
        return None
    path = event.node_info.path
    return (event.invocation_id, path) if path else None


def node_outputs(events: Iterable[Event], invocations: Iterable[str]) -> frozenset[tuple[str, str]]:
    """The node outputs ``events`` hold of ``invocations`` (what a resumed run repeats)."""
    wanted = set(invocations)
    keys = (node_output_key(e) for e in events if e.invocation_id in wanted)
    return frozenset(k for k in keys if k is not None)


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
