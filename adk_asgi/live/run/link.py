"""The model link of a live run: its connections to the model, one after another, kept as
one conversation.

The Live API ends every connection after about ten minutes, sending ``goAway`` first, and
carries a session across connections with resumption handles
(https://ai.google.dev/gemini-api/docs/live-api/session-management). ADK 2.13 reconnects on
``goAway`` and on a dropped connection, with the last handle it saw. Two things go wrong:

- the service sends ``resumable: false`` updates without a handle while the model
  generates or calls tools, and ADK overwrites its handle with their empty one: a goAway
  in the middle of a turn reconnects without a handle and replays the history the run
  started with;
- ADK reconnects the moment ``goAway`` arrives, dropping the turn being generated;
- ADK cancels the task that sends the run's input to the model when it reconnects: a
  request it took from the queue and had not sent yet (a push-to-talk activity start) is
  lost, and the model never hears the turn the page waits on.

``LinkedConnection`` wraps each model connection (``models.LiveModel.connect``) and fixes
all three: ADK sees only resumable handles; ``goAway`` is held until the session is
resumable again (the turn is over, a fresh handle arrived and no answer is owed), so ADK
reconnects between turns; what was said since the last handle is kept, so a connection
that drops anyway (its deadline passed mid-turn) is resumed and told what it missed; and
a request the cancelled sender held is given back to the run's queue (``Taken``,
``input.py``) when the next connection starts, so its sender sends it first. The ``Link``
(one per run, found through a context variable the run sets) outlives the connections.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol

from google.adk.models import LlmResponse
from google.adk.models.base_llm_connection import BaseLlmConnection, RealtimeInput
from google.genai import errors, types
from websockets.exceptions import ConnectionClosed

__all__ = ("CURRENT_LINK", "Link", "LinkedConnection", "LiveModelError", "Taken")

logger = logging.getLogger("adk_asgi")

# Parts one run keeps of what was said since its last handle (beyond: no replay). The
# history a new connection starts with counts too; ADK holds all of it in memory anyway.
_MAX_KEPT: Final = 5000
# Close codes of a connection that ended without failing: 1000 after goAway, 1006 a
# network drop, 1011 "Deadline expired" (the end of its lifetime) once goAway was seen.
_DROPS: Final = frozenset({1000, 1006})


class LiveModelError(RuntimeError):
    """The model ended the connection with an error: the run fails (an ``error`` chunk)
    instead of ADK reconnecting and asking again."""


class Taken(Protocol):
    """The run's queue as ADK's sender reads it (``input._Queue``): it keeps the request
    the sender took until a connection has it."""

    def handed(self) -> None:
        """The connection has the request the sender took."""

    def give_back(self) -> None:
        """The sender was cancelled holding one: the next sender gets it first."""


@dataclass(frozen=True, slots=True)
class _Said:
    role: Literal["user", "model"]
    part: types.Part


@dataclass(eq=False)
class Link:
    """One run's model link, across its connections."""

    queue: Taken | None = None
    """The run's queue, which ADK's sender reads (None: nothing to give back)."""
    connections: int = 0
    """Connections opened (a reconnect adds one)."""
    resuming: bool = False
    """The connections ask for resumption handles (what is said is kept for a replay)."""
    handle: str | None = None
    """The last resumable handle the service sent."""
    resumable: bool = False
    """The session can be resumed now: the service's last update said so, and nothing was
    sent to it since (the last handle would not hold what was sent after it)."""
    held: LlmResponse | None = None
    """A ``goAway`` waiting for the session to become resumable."""
    owed: bool = False
    """The model owes an answer: content that asks for one (a message, a tool's result)
    went to it after its last turn ended. A handle offered before that answer would not
    hold it: ADK does not reconnect then."""
    said: list[_Said] = field(default_factory=list)
    """What was said since the state the last handle names (``boundary``: up to the last
    finished turn, which the next handle covers)."""
    boundary: int = 0
    overflow: bool = False
    partial: list[str] = field(default_factory=list)
    """The model's streamed text of the turn in progress (kept if the connection drops)."""
    dropped: bool = False
    """The last connection dropped: the next one resumes and replays ``said``."""
    replays: int = 0
    """Replays since the last handle (a second drop without progress is a failure)."""
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once ADK reads from a connection: it has sent the history it connects with."""

    # -- what was said --------------------------------------------------------------

    def keep(self, role: Literal["user", "model"], part: types.Part) -> None:
        if not self.resuming or self.overflow:
            return  # without resumption nothing is replayed
        if len(self.said) >= _MAX_KEPT:
            self.overflow = True
            return
        self.said.append(_Said(role, part))

    def fresh(self) -> None:
        """A new Live API session (no handle): nothing of the last one applies."""
        self.said.clear()
        self.boundary = 0
        self.overflow = False
        self.partial.clear()
        self.handle = None
        self.resumable = False
        self.held = None
        self.owed = False
        self.dropped = False
        self.replays = 0

    def movable(self) -> bool:
        """Whether ADK may reconnect now: the session can be resumed with everything
        said and owes no answer, or there is no handle to resume it with at all."""
        return (self.resumable and not self.owed) or self.handle is None

    def issued(self, handle: str) -> None:
        """A resumable handle: the session now holds everything up to the boundary."""
        del self.said[: self.boundary]
        self.boundary = 0
        self.overflow = False
        self.replays = 0
        self.handle = handle
        self.resumable = True

    def turn_over(self) -> None:
        self.owed = False
        self._flush_partial()
        self.boundary = len(self.said)

    def _flush_partial(self) -> None:
        if self.partial:
            self.keep("model", types.Part(text="".join(self.partial)))
            self.partial.clear()

    # -- the replay ----------------------------------------------------------------------

    def replay(self) -> tuple[list[types.Content], set[str], bool]:
        """After a drop: what the resumed session missed (as client content), the calls it
        knows only from that history, and whether the model's answer was cut off."""
        self._flush_partial()
        contents: list[types.Content] = []
        for said in self.said:
            if contents and contents[-1].role == said.role:
                assert contents[-1].parts is not None
                contents[-1].parts.append(said.part)
            else:
                contents.append(types.Content(role=said.role, parts=[said.part]))
        calls = {
            s.part.function_call.id
            for s in self.said
            if s.part.function_call is not None and s.part.function_call.id
        }
        answered = {
            s.part.function_response.id for s in self.said if s.part.function_response is not None
        }
        pending = calls - answered
        cut = not pending and bool(contents) and contents[-1].role == "model"
        return contents, pending, cut


CURRENT_LINK: Final[contextvars.ContextVar[Link | None]] = contextvars.ContextVar(
    "adk_asgi_live_link", default=None
)
"""The link of the live run in this context (``run.py`` sets it; ADK's tasks inherit it)."""


def _dropped(error: BaseException, saw_go_away: bool) -> bool:
    """A connection that ended without the model failing (ADK may resume it)."""
    if isinstance(error, ConnectionClosed):
        return True
    if isinstance(error, errors.APIError):
        return error.code in _DROPS or (error.code == 1011 and saw_go_away)
    return False


class LinkedConnection(BaseLlmConnection):
    """A model connection as one step of its run's ``Link`` (see the module docstring)."""

    def __init__(self, inner: BaseLlmConnection, link: Link) -> None:
        self._inner = inner
        self._link = link
        self._history_calls: set[str] = set()
        self._cut = False
        self._saw_go_away = False
        self._moved = False  # its goAway went to ADK, which reconnects

    async def resume(self, handle: str | None) -> None:
        """Right after connecting (with ``handle``, or a new session without one): tell a
        resumed session what the dropped connection missed. The last connection's sender
        is gone: what it took and did not send goes first to this one's."""
        link = self._link
        link.connections += 1
        if link.queue is not None:
            link.queue.give_back()
        if handle is None:
            link.fresh()  # ADK sends the history next (``send_history``)
            return
        if not link.dropped:
            return
        link.dropped = False
        contents, pending, cut = link.replay()
        if not contents:
            return
        link.replays += 1
        self._history_calls = pending
        self._cut = cut
        logger.info("Live model connection resumed; replaying %d contents", len(contents))
        await self._inner.send_history(contents)

    # -- to the model ------------------------------------------------------------------

    async def send_history(self, history: list[types.Content]) -> None:
        # The handle the service sends after its setup names the session before this
        # history: it must be replayed if the connection drops before a newer handle.
        for content in history:
            role: Literal["user", "model"] = "user" if content.role == "user" else "model"
            for part in content.parts or ():
                self._link.keep(role, part)
        self._link.resumable = False
        await self._inner.send_history(history)

    async def send_content(self, content: types.Content) -> None:
        await self._send_content(content)

    async def _send_content(self, content: types.Content, *, partial: bool = False) -> None:
        await self._take()
        parts = content.parts or []
        for part in parts:
            self._link.keep("user", part)
        self._link.resumable = False
        if _asks_answer(parts, partial):
            self._link.owed = True
        answers = {p.function_response.id for p in parts if p.function_response is not None}
        if answers and len(answers) == len(parts) and answers & self._history_calls:
            # The calls were replayed as history: their answers are client content, which
            # the model answers like any user turn.
            self._history_calls -= answers
            await self._inner.send_history([content.model_copy(update={"role": "user"})])
            return
        await self._inner._send_content(content, partial=partial)

    async def send_realtime(self, blob: RealtimeInput) -> None:
        await self._take()
        # ADK sends activity signals and stream ends here too (its annotation says Blob).
        if not isinstance(blob, types.Blob):
            # The user speaks (or stopped): renewing the connection now would split the
            # utterance between two connections; wait for the answer's handle.
            self._link.resumable = False
        await self._inner.send_realtime(blob)  # type: ignore[arg-type]

    async def close(self) -> None:
        await self._inner.close()

    async def _take(self) -> None:
        """ADK's sender hands this connection the request it took from the queue."""
        if self._moved:
            # ADK reconnects on the goAway it was handed and cancels its sender now: the
            # session left behind would lose this; the next connection gets it (``resume``).
            await asyncio.get_running_loop().create_future()
        if self._link.queue is not None:
            self._link.queue.handed()

    # -- from the model ----------------------------------------------------------------

    async def receive(self) -> AsyncGenerator[LlmResponse, None]:
        link = self._link
        link.connected.set()
        if self._cut:
            # The model's answer was cut off by the drop: end its turn, as an interruption.
            self._cut = False
            yield LlmResponse(turn_complete=True, interrupted=True)
        try:
            async for response in self._inner.receive():
                update = response.live_session_resumption_update
                if update is not None:
                    if update.new_handle and update.resumable is not False:
                        link.issued(update.new_handle)
                        yield response
                        # (input may have gone out while ADK handled the update)
                        if link.held is not None and link.movable():
                            held, link.held = link.held, None
                            self._moved = True
                            yield held  # now ADK reconnects, between turns
                            return
                        continue
                    # "resumable: false" (the model is busy): ADK would take its empty
                    # handle for the session's; keep the last good one instead.
                    link.resumable = False
                    response = response.model_copy(update={"live_session_resumption_update": None})
                    if _empty(response):
                        continue
                if response.go_away is not None:
                    self._saw_go_away = True
                    if link.movable():
                        self._moved = True
                        yield response
                        return
                    link.held = response
                    continue
                self._observe(response)
                yield response
        except Exception as error:
            if isinstance(error, errors.APIError) and not _dropped(error, self._saw_go_away):
                # The model failed (e.g. 1011 "Internal error"): ADK would reconnect and
                # ask again; the run fails instead, and the page reads an error.
                raise LiveModelError(f"the model ended the connection: {error}") from error
            if link.handle is not None:
                if link.replays >= 1:
                    raise LiveModelError(
                        "the model connection dropped twice in one turn"
                    ) from error
                link.dropped = True
                link.held = None
            raise

    def _observe(self, response: LlmResponse) -> None:
        """Keep what the model said (and where its turns end) for a replay."""
        link = self._link
        content = response.content
        if content is not None and content.role != "user" and content.parts:
            for part in content.parts:
                if part.function_call is not None:
                    link.keep("model", types.Part(function_call=part.function_call))
                elif part.text and not part.thought:
                    if response.partial:
                        link.partial.append(part.text)
                    else:
                        link.partial.clear()
                        link.keep("model", types.Part(text=part.text))
        spoken = response.output_transcription
        if spoken is not None and spoken.text:
            if spoken.finished:
                link.partial.clear()
                link.keep("model", types.Part(text=spoken.text))
            else:
                link.partial.append(spoken.text)
        heard = response.input_transcription
        if heard is not None and heard.finished and heard.text:
            link.keep("user", types.Part(text=heard.text))
        if response.turn_complete or response.interrupted:
            link.turn_over()


def _asks_answer(parts: list[types.Part], partial: bool) -> bool:
    """Content the model answers: not a partial turn (a streaming tool's value, a
    preloaded memory), nor only results it takes in silently."""
    if partial:
        return False
    return not parts or not all(
        p.function_response is not None
        and p.function_response.scheduling == types.FunctionResponseScheduling.SILENT
        for p in parts
    )


def _empty(response: LlmResponse) -> bool:
    return response.model_dump(exclude_none=True, exclude_defaults=True) == {}
