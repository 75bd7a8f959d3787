"""PauseParts: how the page sees the pauses of one assistant message (``pauses/kinds.py``
says which calls they are): a request for input and a credential request as client calls,
a workflow tool node's confirmation as an approval of the call stated for the node; which
OAuth2 sign-ins the message asked for, and the outcomes of workflow confirmations.
"""

from __future__ import annotations

from typing import Any, Literal

from google.adk.events import Event
from google.genai import types

from ..pauses.approvals import CONFIRMATION_TOOL
from ..pauses.credentials import CREDENTIAL_TOOL, CredentialRequest
from ..pauses.kinds import (
    INPUT_TOOL,
    InputRequest,
    Pause,
    WorkflowConfirmation,
    node_result,
    workflow_call_id,
)
from ..wire.chunks import UIChunk
from .lanes import Lane
from .message import AssistantMessage

__all__ = ("PauseParts",)


Style = Literal["native", "adk-tool"]


class PauseParts:
    """The pauses of one assistant message: how each is stated, which OAuth2 sign-ins it
    asked for (the stream registers their ``state``), and the outcomes of workflow
    confirmations (their tool node's output)."""

    __slots__ = ("_stated", "_style", "live", "oauth", "redirect_uri")

    def __init__(self, *, style: Style, redirect_uri: str | None) -> None:
        self._style = style
        self.live = False
        """A live run: a workflow's own pause cannot be answered there (ADK's ``run_live``
        ends the workflow at its interrupt and cannot resume it)."""
        self.redirect_uri = redirect_uri
        """Where an OAuth2 sign-in returns (adk-asgi's callback), or None: as ADK built it."""
        self.oauth: list[CredentialRequest] = []
        """OAuth2 sign-ins this message asked for and the stream has not registered yet."""
        self._stated: dict[str, str] = {}  # workflow node path -> stated call id

    def state(
        self, pause: Pause, message: AssistantMessage, lane: Lane | None = None
    ) -> list[UIChunk] | None:
        """The chunks that state the pause's call(s) on the page; None: it cannot be
        answered here (a workflow's own pause in a live run)."""
        if self.live and (
            isinstance(pause, WorkflowConfirmation)
            or (isinstance(pause, InputRequest) and pause.workflow)
        ):
            return None
        if isinstance(pause, InputRequest):
            return message.tools.call(
                pause.call_id, INPUT_TOOL, pause.presented(), client_side=True, lane=lane
            )
        if isinstance(pause, CredentialRequest):
            if pause.state is not None:
                self.oauth.append(pause)
            return message.tools.call(
                pause.call_id,
                CREDENTIAL_TOOL,
                pause.presented(self.redirect_uri),
                client_side=True,
                lane=lane,
            )
        call_id = pause.call_id
        self._stated[pause.path] = call_id
        out = message.tools.call(call_id, pause.tool_name, pause.args, client_side=False, lane=lane)
        if self._style == "native":
            out.extend(
                message.tools.approval_request(
                    pause.interrupt_id,
                    call_id,
                    pause.tool_name,
                    pause.args,
                    pause.hint,
                    pause.payload,
                )
            )
            return out
        confirmation: dict[str, Any] = {"hint": pause.hint or "", "confirmed": False}
        if pause.payload is not None:
            confirmation["payload"] = pause.payload
        original = {"id": call_id, "name": pause.tool_name, "args": pause.args}
        out.extend(
            message.tools.call(
                pause.interrupt_id,
                CONFIRMATION_TOOL,
                {"originalFunctionCall": original, "toolConfirmation": confirmation},
                client_side=True,
                lane=lane,
            )
        )
        return out

    @staticmethod
    def interim(response: types.FunctionResponse, event: Event) -> bool:
        """The tool's result while it waits for a credential (ADK's placeholder): an
        interim result, the real one follows the answer."""
        requested = event.actions.requested_auth_configs if event.actions else None
        return requested is not None and (response.id or "") in requested

    def settle(self, event: Event, message: AssistantMessage, lane: Lane) -> list[UIChunk]:
        """A workflow node's output that settles the call stated for its confirmation
        (answered in this or an earlier request of the message): that call's outcome."""
        path = event.node_info.path if event.node_info is not None else None
        if not path:
            return []
        call_id = self._stated.get(path) or workflow_call_id(path)
        if not message.tools.expects(call_id):
            return []
        return message.tools.outcome(call_id, node_result(event.output), lane=lane)
