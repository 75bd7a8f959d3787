"""What the live gate tells its connection (``gate.py``): a call waits for an approval, a
question, or the browser's result; a call settled on the server; a wait ended."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

from .approvals import CallKind

__all__ = (
    "ANSWER_TIMEOUT",
    "APPROVAL_TIMEOUT",
    "GATE_TEXTS",
    "REFUSED",
    "RESULT_TIMEOUT",
    "ApprovalNotice",
    "AskNotice",
    "GateNotice",
    "Notify",
    "ResolvedNotice",
    "SettledNotice",
    "WaitNotice",
)

Kind = CallKind

# What the gate answers the model for a call it did not run: the server's own texts, written
# for the user too (a tool error shows them, translate/tool_errors.py).
REFUSED: Final = (
    "Too many tool calls are already waiting for the user on this "
    "connection; this call was not run."
)
APPROVAL_TIMEOUT: Final = (
    "The user did not answer the confirmation request in time; the tool call was not run."
)
RESULT_TIMEOUT: Final = "The browser did not return a result in time."
ANSWER_TIMEOUT: Final = "The user did not answer in time."
GATE_TEXTS: Final = frozenset({REFUSED, APPROVAL_TIMEOUT, RESULT_TIMEOUT, ANSWER_TIMEOUT})


@dataclass(frozen=True, slots=True)
class ApprovalNotice:
    """A call waits for the user's approval (``key`` is the id the client answers)."""

    key: str
    call_id: str
    name: str
    args: dict[str, Any]
    hint: str
    payload: Any = None


@dataclass(frozen=True, slots=True)
class AskNotice:
    """A call asks the user (a credential): the client call ``key`` is stated on the page,
    for the tool call ``call_id``."""

    key: str
    call_id: str
    name: str
    shown: dict[str, Any]


@dataclass(frozen=True, slots=True)
class WaitNotice:
    """A browser-executed call waits for its result."""

    call_id: str


@dataclass(frozen=True, slots=True)
class SettledNotice:
    """A call finished on the server without waiting for the client (``running``: a
    streaming tool's task, which goes on yielding results after its first response)."""

    call_id: str
    running: Awaitable[Any] | None = None


@dataclass(frozen=True, slots=True)
class ResolvedNotice:
    """A wait ended: answered, denied or timed out."""

    key: str
    call_id: str
    kind: Kind
    confirmed: bool
    timed_out: bool = False
    output: Any = None
    """What the page is shown as the answered call's output (a request for input or a
    credential)."""


GateNotice = ApprovalNotice | AskNotice | WaitNotice | SettledNotice | ResolvedNotice
Notify = Callable[[GateNotice], Awaitable[None]]
