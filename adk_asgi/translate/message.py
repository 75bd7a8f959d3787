"""AssistantMessage: one assistant message being written as UI chunks — its edges
(``start``, ``finish``, ``abort``, ``error``), steps and text blocks (``blocks.py``), tool parts
(``tool_parts.py``) and response metadata (``response_meta.py``). ``EventTranslator``
(``translator.py``) fills it from ADK events; failures reach the user through
``describe_error`` only, never as an exception's text.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, Final

from google.adk.events import Event

from ..options import ConfirmationStyle, SurfaceOptions
from ..pauses.tools import ToolKinds
from ..wire.chunks import Abort, Error, Finish, FinishReason, Start, UIChunk
from ..wire.errors import DescribeError, ErrorInfo, describe, describe_error_generic
from .blocks import MessageBlocks
from .lanes import Lane
from .pause_parts import PauseParts
from .response_meta import ResponseMeta
from .surface import Surface
from .tool_parts import ToolParts

__all__ = ("AssistantMessage",)

logger = logging.getLogger("adk_asgi")
_NO_TOOLS: Final = ToolKinds()


class AssistantMessage:
    """The chunks of one assistant message; ``EventTranslator`` fills it from ADK events."""

    __slots__ = (
        "_blocks",
        "_browser_tools",
        "_confirmation_style",
        "_describe_error",
        "_meta",
        "_node_outputs",
        "_surface",
        "ended",
        "failure",
        "message_id",
        "pauses",
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
        oauth_redirect: str | None = None,
    ) -> None:
        self.message_id = message_id
        self.ended = False
        self.failure: ErrorInfo | None = None
        """The failure that ends (or ended) the message with ``error``: ADK's error event,
        or the exception ``fail`` was given."""
        self._confirmation_style = confirmation_style
        self._describe_error = describe_error
        self._surface = (
            Surface(message_id, surface, steps=steps_before) if surface is not None else None
        )
        self._node_outputs = surface.node_outputs if surface is not None else True
        self._blocks = MessageBlocks(
            message_id, self._surface.step_author if self._surface is not None else None
        )
        self._meta = ResponseMeta(message_id)
        self.tools = ToolParts(
            native=confirmation_style == "native",
            denied=denied_call_ids,
            approval_tools=tools.approval,
            awaiting=awaiting,
            resumed=resumed,
        )
        """The message's tool parts: which calls wait for the client (``awaiting``), which
        the user denied or approved, final results (``outcome``)."""
        self.pauses = PauseParts(style=confirmation_style, redirect_uri=oauth_redirect)
        """The message's requests for input, credentials and workflow confirmations."""
        self._browser_tools = tools.browser

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

    def restate_call(
        self, call_id: str, name: str, args: dict[str, Any], out: list[UIChunk]
    ) -> None:
        """A server call of an earlier message, stated again (its result follows here)."""
        self._tool_call(call_id, name, args, False, out)

    # -- writer hooks (see translator.py) ----------------------------------------------

    def _open_step(self, lane: Lane, out: list[UIChunk]) -> None:
        self._blocks.open_step(lane, out)

    def _stream_text(self, lane: Lane, text: str, thought: bool, out: list[UIChunk]) -> None:
        self._blocks.stream(lane, text, thought, out)

    def _close_blocks(self, out: list[UIChunk], lane: Lane | None = None) -> None:
        if lane is None:
            self._blocks.close_all(out)
        else:
            self._blocks.close(lane, out)

    def _model_call_finished(self) -> None:
        self._blocks.calls_done()

    def _tool_call(
        self,
        call_id: str,
        name: str,
        args: dict[str, Any],
        client_side: bool,
        out: list[UIChunk],
        lane: Lane | None = None,
    ) -> None:
        if lane is not None:
            self._blocks.close(lane, out)
        else:
            self._blocks.close_all(out)
        self._blocks.ensure_step(out, lane)
        self.tools.call(call_id, name, args, client_side, out)

    def _approval_request(
        self,
        approval_id: str,
        call_id: str,
        name: str,
        args: dict[str, Any],
        hint: str | None,
        payload: Any,
        out: list[UIChunk],
    ) -> None:
        self._blocks.close_all(out)
        self.tools.approval_request(approval_id, call_id, name, args, hint, payload, out)

    def _record_response(self, event: Event, out: list[UIChunk]) -> None:
        self._meta.record(event, out)
