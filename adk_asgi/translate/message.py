"""AssistantMessage: one assistant message being written as UI chunks — its edges
(``start``, ``finish``, ``abort``, ``error``), its steps and text blocks (``blocks.py``), its
tool parts (``tool_parts.py``) and what the model's responses say of it
(``response_meta.py``). ``EventTranslator`` (``translator.py``) reads ADK events and writes
through this class's public methods and its tool parts (``message.tools``), and so does a
translator's subclass: each method returns the chunks it wrote, in order. Failures reach
the user through ``describe_error`` only, never as an exception's text.

``MessageSettings`` is what every message of an app is written with; ``MessageContext``
what one request's part of a message starts from (a continuation carries over the calls
the page answered or still owes, and the steps the message already has).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Final

from google.adk.events import Event
from google.genai import types

from ..options import ConfirmationStyle, FileResolver, HoldPartials, SurfaceOptions
from ..pauses.tools import ToolKinds
from ..wire.chunks import Abort, DataChunk, Error, Finish, FinishReason, Start, UIChunk
from ..wire.errors import DescribeError, ErrorInfo, describe, describe_error_generic
from ..wire.jsonable import NotJson, json_value
from .blocks import MessageBlocks
from .files import file_chunk
from .lanes import Lane
from .response_meta import ResponseMeta
from .surface import Surface
from .tool_errors import ToolFailures
from .tool_parts import ToolParts

__all__ = ("NODE_CHUNK_TYPE", "AssistantMessage", "MessageContext", "MessageSettings")

NODE_CHUNK_TYPE: Final = "data-node"
"""The type of a workflow node's output that is not text."""

logger = logging.getLogger("adk_asgi")


@dataclass(frozen=True, slots=True)
class MessageSettings:
    """What every message of an app is written with (``Translators`` builds it from the
    app's options)."""

    confirmation_style: ConfirmationStyle = "native"
    """How ADK's tool confirmations reach the page (``PauseOptions``)."""
    describe_error: DescribeError = describe_error_generic
    """What the user reads for a failure."""
    tools: ToolKinds = field(default_factory=ToolKinds)
    """The agent's browser, approval and long-running tools."""
    surface: SurfaceOptions | None = None
    """What a message carries besides ADK's content; None: nothing."""
    resolve_file: FileResolver | None = None
    """Where a browser fetches a file by a URI it cannot open (``files.py``)."""
    hold_partials: HoldPartials = "rewritten"
    """Which agents' partial text waits for their final response
    (``StreamingOptions.hold_partials``; ``tools.rewritten`` names them)."""


@dataclass(frozen=True, slots=True)
class MessageContext:
    """What one request's part of a message starts from. A new message starts from
    nothing; a continuation (the page's answers) from the calls they answered."""

    denied: frozenset[str] = frozenset()
    """Calls the user denied in this request."""
    resumed: frozenset[str] = frozenset()
    """Server calls the user approved in this request: they run now."""
    awaiting: frozenset[str] = frozenset()
    """Calls (or approvals) that still wait for the page after this request's answers."""
    steps_before: int = 0
    """Steps the message already has (its earlier requests')."""
    oauth_redirect: str | None = None
    """Where an OAuth2 sign-in of this request returns (adk-asgi's callback)."""
    replay: bool = False
    """The request is replayed from the session (a chat's history): what its stream
    logged is not logged again."""
    outputs_before: frozenset[tuple[str, str]] = frozenset()
    """The workflow node outputs (invocation, node path) the message already showed: ADK
    2.13 yields them again when a workflow resumes after a pause (``translator.py``)."""


class AssistantMessage:
    """The chunks of one assistant message. Every writing method returns what it wrote."""

    __slots__ = (
        "_blocks",
        "_describe_error",
        "_meta",
        "ended",
        "failure",
        "message_id",
        "settings",
        "surface",
        "tools",
    )

    def __init__(
        self,
        message_id: str,
        settings: MessageSettings | None = None,
        context: MessageContext | None = None,
    ) -> None:
        settings = settings or MessageSettings()
        context = context or MessageContext()
        self.message_id = message_id
        self.settings = settings
        self.ended = False
        """A terminal chunk (``finish``, ``abort``, ``error``) was written."""
        self.failure: ErrorInfo | None = None
        """The failure that ends (or ended) the message with ``error``: ADK's error event,
        or the exception ``fail`` was given."""
        self._describe_error = settings.describe_error
        self.surface = (
            Surface(message_id, settings.surface, steps=context.steps_before)
            if settings.surface is not None
            else None
        )
        """The message's extras besides ADK's content (``surface.py``); None: none."""
        self._blocks = MessageBlocks(
            message_id, self.surface.step_author if self.surface is not None else None
        )
        self._meta = ResponseMeta(message_id)
        self.tools = ToolParts(
            self._blocks,
            native=settings.confirmation_style == "native",
            denied=context.denied,
            approval_tools=settings.tools.approval,
            awaiting=context.awaiting,
            resumed=context.resumed,
            failures=ToolFailures(
                settings.describe_error,
                settings.tools.errors,
                browser=settings.tools.browser,
                quiet=context.replay,
            ),
        )
        """The message's tool parts (``tool_parts.py``): calls, approval requests and
        outcomes, which calls wait for the client (``awaiting``)."""

    # -- edges ---------------------------------------------------------------------------

    def start(self) -> list[UIChunk]:
        """The ``start`` chunk (every request's stream of the message begins with it)."""
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
        authors = self.surface.metadata() if self.surface is not None else None
        if authors is not None:
            metadata = {**(metadata or {}), "adk": authors}
        out.append(
            Finish(finish_reason=reason, message_metadata=metadata)
            if metadata
            else Finish(finish_reason=reason)
        )
        return out

    def abort(self) -> list[UIChunk]:
        """The run was stopped on purpose: close what is open, then ``abort`` (terminal)."""
        if self.ended:
            return []
        self.ended = True
        out: list[UIChunk] = []
        self._blocks.close_all(out)
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
        self._blocks.close_all(out)
        out.extend(self.tools.fail_open())
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

    def failed(self, error: ErrorInfo) -> list[UIChunk]:
        """ADK reported ``error`` (an error event): the message ends with ``error`` at its
        ``finish``, or at ``fail`` with the exception ADK raises next (``describe_error``
        then sees both); what is open closes now."""
        self.failure = error
        return self.close()

    def recovered(self) -> None:
        """The agent or node that failed went on (a workflow node retried): not the end."""
        self.failure = None

    def continue_turn(self) -> list[UIChunk]:
        """The same assistant message continues in a new request (the answers to the calls
        it waited for): ``start`` again, same ``messageId``, the calls and denials kept."""
        self.ended = False
        self._blocks.reset_step()
        self.tools.awaiting.clear()
        return self.start()

    # -- state ---------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        """Nothing more is written: the message ended, or ADK reported an error."""
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

    # -- steps and blocks ----------------------------------------------------------------

    def open_step(self, lane: Lane) -> list[UIChunk]:
        """``lane``'s model writes: open a step, or a new one after its finished call (when
        no other lane of the step still writes), or join the open one."""
        out: list[UIChunk] = []
        self._blocks.open_step(lane, out)
        return out

    def ensure_step(self, lane: Lane | None = None) -> list[UIChunk]:
        """A step for chunks that are not a model call's (a tool call out of one)."""
        out: list[UIChunk] = []
        self._blocks.ensure_step(out, lane)
        return out

    def text(self, lane: Lane, text: str, *, thought: bool = False) -> list[UIChunk]:
        """Stream ``text`` into the lane's text block (``thought``: its reasoning block),
        opening the block (and closing the other kind) as needed."""
        out: list[UIChunk] = []
        self._blocks.stream(lane, text, thought, out)
        return out

    def replace_text(self, lane: Lane, text: str) -> list[UIChunk]:
        """The lane's final text replaces what it streamed (``MessageBlocks.replace_text``)."""
        out: list[UIChunk] = []
        self._blocks.replace_text(lane, text, out)
        return out

    def close(self, lane: Lane | None = None) -> list[UIChunk]:
        """End ``lane``'s open text or reasoning block (None: every open block)."""
        out: list[UIChunk] = []
        if lane is None:
            self._blocks.close_all(out)
        else:
            self._blocks.close(lane, out)
        return out

    def model_call_finished(self) -> None:
        """Every lane's model call ended (a live model turn ended): what comes next is a
        new call, in a new step."""
        self._blocks.calls_done()

    def file(self, part: types.Part, lane: Lane) -> list[UIChunk]:
        """A ``file`` part for inline bytes (a ``data:`` URL) or a file reference, as a
        browser can use it (``files.py``); none for a file it could not."""
        chunk = file_chunk(part, self.settings.resolve_file)
        if chunk is None:
            return []
        out = self.close(lane)
        out.append(chunk)
        return out

    def node_output(self, lane: Lane, path: str, output: Any) -> list[UIChunk]:
        """A workflow node's output, whole (its lane's next content is a new step): a
        string as text, anything else as a ``data-node`` part ``{node, path, output}``."""
        out = self.open_step(lane)
        lane.call_done = True
        if isinstance(output, str):
            if output:
                self._blocks.stream(lane, output, False, out)
                self._blocks.close(lane, out)
            return out
        try:
            value = json_value(output)
        except NotJson as exc:
            logger.error("The output of workflow node %s cannot be sent: %s", path, exc)
            return out
        data = {"node": lane.author, "path": path, "output": value}
        out.append(DataChunk(type=NODE_CHUNK_TYPE, data=data))
        return out

    # -- the model's responses -----------------------------------------------------------

    def record_response(self, event: Event) -> list[UIChunk]:
        """Usage, finish reason and model version of a final model response (for the
        ``finish`` chunk's metadata), and its grounding sources (``source-url``, each once)."""
        out: list[UIChunk] = []
        self._meta.record(event, out)
        return out
