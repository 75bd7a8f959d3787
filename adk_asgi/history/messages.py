"""A chat's history: the ``UIMessage[]`` a page held when its last stream ended, rebuilt
from the ADK session's events by the translation the stream uses.

The session is the source of truth. Every event of an HTTP turn carries the bridge's tags
(``custom_metadata.adk_asgi``, ``adk/sessions.py``): the assistant message it belongs to
(``messageId``), the user message that started it (``userMessageId``) and the reasons of
denials (``denialReasons``). The events are read in order, rewinds applied as ADK applies
them, and each request a message took is replayed as the stream played it:

- a user event with text or files is the user's message (its files as ``data:`` URLs);
- a user event of function responses with the message's own id is a continuation (the
  page's answers): the page's own changes are applied first (``addToolApprovalResponse``,
  ``addToolOutput``, an edited approval payload), then what the stream itself sent for
  them (denied browser tools, completed long-running calls); under another id it is a
  long-running call the server completed, a new message that states the call again;
- the agent's events of each request go through a fresh ``EventTranslator`` built as the
  stream built its own (denials, approved calls, the steps the message had), and its
  chunks are folded into the message as the client folds them (``wire/ui_message.py``).

How a request ended comes from the session too: ADK stores an error event for a failed
run (the translator turns it into ``output-error`` parts and a terminal error, never the
error's text) and seals an aborted one (``INVOCATION_ABORTED``: the parts stay as the
stream left them). A turn still running shows as far as the session has it (a page that
resumes its stream drops that message first: the stream replays it); a turn lost to a crash
ends with a ``data-interrupted`` part (``lost.py``).

What the session does not keep is not shown: the text a model streamed before it failed
(ADK keeps final events only), transient data parts, an approval of a browser tool whose
result the page has not sent yet.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from google.adk.events import Event
from google.adk.events._rewind_events import _apply_rewinds
from google.adk.sessions import Session
from google.genai import types

from ..adk.artifacts import ChatFiles
from ..adk.plugin import LANE_ORDER
from ..adk.sessions import LIVE_MESSAGE_KEY, event_meta
from ..pauses.approvals import CONFIRMATION_TOOL
from ..translate.factory import Translators
from ..translate.live import LiveTranslator
from ..translate.message import MessageContext
from ..translate.translator import EventTranslator, node_output_key
from ..wire.chunks import ToolOutputDenied, UIChunk
from ..wire.ui_message import UIMessageState
from .answers import PageAnswers, page_output
from .lost import lost_turns, mark_lost

__all__ = ("HistoryOptions", "rebuild_messages")

_ABORTED: Final = "INVOCATION_ABORTED"


@dataclass(frozen=True, slots=True)
class HistoryOptions:
    """How the history is read: the app's translators (those its streams used), and the
    files of the chat's artifacts."""

    translators: Translators
    live_turns: bool = True
    """Show the session's live turns (each through a live translator)."""
    files: ChatFiles | None = None
    """The chat's artifacts as ``file`` chunks, as the stream shows them
    (``adk/artifacts.py``); None: none."""
    idle: bool = False
    """Nothing streams the chat now: a last turn that never ended was lost too
    (``lost.py``; earlier ones are, whatever streams)."""


async def rebuild_messages(session: Session, options: HistoryOptions) -> list[dict[str, Any]]:
    """The chat's ``UIMessage[]`` (a turn still running: as far as the session has it; a
    turn lost to a crash: marked interrupted, ``lost.py``)."""
    builder = _History(options)
    files = options.files
    events = _apply_rewinds(list(session.events))
    for event in _side_by_side(events):
        builder.event(event)
        if files is not None and files.saved_in(event):
            await builder.artifacts(event, files)
    messages = builder.end()
    mark_lost(messages, lost_turns(events, idle=options.idle))
    return messages


def _side_by_side(events: list[Event]) -> list[Event]:
    """Branches that ran side by side (a ``ParallelAgent``'s sub-agents) streamed at the
    same time, so the stream gave them one step; the session keeps only their final
    events, one after the other. Each such branch's first model text is stated again as a
    partial event at the start of the run of their events, so the translator sees them
    write at once, as the stream did (the finals then repeat what was streamed)."""
    out: list[Event] = []
    index = 0
    while index < len(events):
        parent = _parallel_parent(events[index])
        end = index
        while (
            end < len(events)
            and parent is not None
            and (_parallel_parent(events[end]) == parent or _bookkeeping(events[end]))
        ):
            end += 1
        run = events[index : max(end, index + 1)]
        if len({event.branch for event in run}) > 1:
            started: dict[str | None, Event] = {}
            for event in run:
                said = _model_text(event)
                if said is not None and event.branch not in started:
                    started[event.branch] = event.model_copy(
                        update={"partial": True, "content": said}
                    )
            # In the order the branches began to write, as the stream showed them (the
            # bridge's plugin tagged it, adk/plugin.py); in sessions from before that tag,
            # the time each call started (a model response's event keeps it).
            out.extend(sorted(started.values(), key=_began))
        out.extend(run)
        index += len(run)
    return out


def _began(event: Event) -> tuple[int, float]:
    order = event_meta(event).get(LANE_ORDER)
    return (order, 0.0) if isinstance(order, int) else (1 << 30, event.timestamp)


def _parallel_parent(event: Event) -> str | None:
    """What a branch runs side by side under: a ``ParallelAgent`` (``parent.sub``
    branches), or a workflow node whose parallel nodes each have a branch of their own."""
    branch = event.branch
    if event.author == "user" or not branch:
        return None
    if "." in branch:
        return branch.rsplit(".", 1)[0]
    path = event.node_info.path if event.node_info is not None else ""
    return f"node:{path.rsplit('/', 1)[0]}" if "/" in (path or "") else None


def _bookkeeping(event: Event) -> bool:
    """An event of the run's own that writes nothing (a workflow's between its nodes'):
    branches running side by side go on across it."""
    return (
        event.author != "user"
        and not event.branch
        and (event.content is None or not event.content.parts)
    )


def _model_text(event: Event) -> types.Content | None:
    content = event.content
    if event.partial or content is None or content.role != "model" or not content.parts:
        return None
    parts = [p for p in content.parts if p.text]
    return types.Content(role="model", parts=parts) if parts else None


def _response_parts(event: Event) -> list[types.FunctionResponse]:
    content = event.content
    if content is None or not content.parts:
        return []
    return [p.function_response for p in content.parts if p.function_response is not None]


def user_parts(content: types.Content | None) -> list[dict[str, Any]]:
    """A user message's parts from its ADK content: text and files, in order."""
    parts: list[dict[str, Any]] = []
    for part in content.parts or () if content is not None else ():
        if part.text is not None and not part.thought:
            parts.append({"type": "text", "text": part.text})
        elif part.inline_data is not None and part.inline_data.data is not None:
            blob = part.inline_data
            data = part.inline_data.data
            mime = blob.mime_type or "application/octet-stream"
            file: dict[str, Any] = {"type": "file", "mediaType": mime}
            if blob.display_name:
                file["filename"] = blob.display_name
            file["url"] = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
            parts.append(file)
        elif part.file_data is not None and part.file_data.file_uri:
            ref = part.file_data
            file = {"type": "file", "mediaType": ref.mime_type or "application/octet-stream"}
            if ref.display_name:
                file["filename"] = ref.display_name
            file["url"] = ref.file_uri
            parts.append(file)
    return parts


class _History:
    """Reads a session's events in order into messages (see the module docstring)."""

    def __init__(self, options: HistoryOptions) -> None:
        self.options = options
        self.messages: list[dict[str, Any]] = []
        self._message: UIMessageState | None = None
        self._translator: EventTranslator | None = None
        self._aborted = False
        self._live_message = False  # the open message is a live turn's
        self._users: dict[str, dict[str, Any]] = {}  # invocation id -> its user message
        self._outputs: set[tuple[str, str]] = set()  # node outputs shown (translator.py)
        # Every call seen: its name and arguments; and approval id -> the gated call.
        self._calls: dict[str, tuple[str, dict[str, Any]]] = {}
        self._approvals: dict[str, tuple[str, Any]] = {}

    # -- events --------------------------------------------------------------------------

    def event(self, event: Event) -> None:
        if event.actions is not None and event.actions.compaction is not None:
            return
        meta = event_meta(event)
        self._note_calls(event)
        if meta.get("seeded"):
            self._end_message()
            self._seeded(event, meta)
            return
        message_id = meta.get("messageId")
        if not isinstance(message_id, str):
            self._live(event, meta)
            return
        if event.author == "user":
            responses = _response_parts(event)
            if not responses:
                self._end_message()
                self._user(event, meta)
            elif self._message is not None and self._message.message["id"] == message_id:
                self._continuation(responses, meta)
            else:
                self._completion(message_id, responses)
            return
        if self._message is None or self._message.message["id"] != message_id:
            self._end_message()
            opened = self._open(message_id)
            assert self._message is not None
            self._message.apply_all(opened)
        assert self._translator is not None and self._message is not None
        if event.error_code == _ABORTED:
            self._aborted = True
        self._message.apply_all(self._translator.translate(event))
        if (key := node_output_key(event)) is not None:
            self._outputs.add(key)

    def end(self) -> list[dict[str, Any]]:
        self._end_message()
        return self.messages

    def _live(self, event: Event, meta: dict[str, Any]) -> None:
        """A live turn's event: the connection's run carries no message ids, so each user
        message (untagged, as ``LiveRequestQueue`` writes it) starts a new pair of
        messages, named after their first event."""
        if not self.options.live_turns:
            return
        message = self._message
        live = message is not None and self._live_message
        if event.author == "user":
            responses = _response_parts(event)
            if not responses:
                self._end_message()
                self._user(event, meta)
            elif live and message is not None:
                for response in responses:  # the page's results of browser tools
                    if message.tools.has_call(response.id or ""):
                        page_output(message, response.id or "", response.response or {})
            return
        if not meta.get("live") and not meta.get("liveError"):
            return
        named = meta.get(LIVE_MESSAGE_KEY)  # the page's id (older sessions: none)
        if live and isinstance(named, str) and message and message.message["id"] != named:
            live = False  # the next turn's first event
        if not live:
            self._end_message()
            self._message = UIMessageState(named if isinstance(named, str) else f"msg-{event.id}")
            self._live_message = True
            self.messages.append(self._message.message)
            self._translator = self.options.translators.live_history(self._message.message["id"])
            self._aborted = False
            self._message.apply_all(self._translator.message.start())
        translator = self._translator
        assert translator is not None and self._message is not None
        self._message.apply_all(translator.translate(event))
        if event.turn_complete and isinstance(translator, LiveTranslator):
            translator.end_model_turn()

    async def artifacts(self, event: Event, files: ChatFiles) -> None:
        """The artifacts an agent saved in ``event``, as the stream shows them: ``file``
        parts after the event's own; and the user's files saved as artifacts, in place of
        ADK's placeholders in the user's message (the session keeps no bytes of them)."""
        message, translator = self._message, self._translator
        if message is not None and translator is not None:
            saved = files.after(event, done=translator.message.done)
            if saved is not None:
                message.apply_all([*await saved])
        user = self._users.get(event.invocation_id)
        if user is None:
            return
        for chunk in await files.uploads(event):
            assert chunk.provider_metadata is not None  # the artifact's name and version
            name = str(chunk.provider_metadata["adk"]["artifact"])
            part = {
                "type": "file",
                "mediaType": chunk.media_type,
                "filename": name,
                "url": chunk.url,
                "providerMetadata": chunk.provider_metadata,
            }
            placeholder = {"type": "text", "text": f'[Uploaded Artifact: "{name}"]'}
            parts = user["parts"]
            at = next((i for i, p in enumerate(parts) if p == placeholder), None)
            if at is None:
                parts.append(part)
            else:
                parts[at] = part

    def _note_calls(self, event: Event) -> None:
        for call in event.get_function_calls():
            if not call.id:
                continue
            args = dict(call.args or {})
            self._calls[call.id] = (call.name or "", args)
            if call.name == CONFIRMATION_TOOL:
                original = args.get("originalFunctionCall") or {}
                asked = (args.get("toolConfirmation") or {}).get("payload")
                self._approvals[call.id] = (str(original.get("id", "")), asked)

    # -- messages ------------------------------------------------------------------------

    def _seeded(self, event: Event, meta: dict[str, Any]) -> None:
        text = (
            "".join(p.text or "" for p in (event.content.parts or ()))
            if event.content is not None
            else ""
        )
        user = event.author == "user"
        part: dict[str, Any] = {"type": "text", "text": text}
        if not user:
            part["state"] = "done"
        self.messages.append(
            {
                "id": str(meta.get("messageId") or event.id),
                "role": "user" if user else "assistant",
                "parts": [part],
            }
        )

    def _user(self, event: Event, meta: dict[str, Any]) -> None:
        parts = user_parts(event.content)
        if parts:
            user_id = meta.get("userMessageId")
            message: dict[str, Any] = {
                "id": user_id if isinstance(user_id, str) and user_id else f"user-{event.id}",
                "role": "user",
            }
            if meta.get("userMetadata") is not None:
                message["metadata"] = meta["userMetadata"]
            message["parts"] = parts
            self.messages.append(message)
            self._users[event.invocation_id] = message

    def _open(
        self,
        message_id: str,
        denied: frozenset[str] = frozenset(),
        resumed: frozenset[str] = frozenset(),
    ) -> list[UIChunk]:
        """A new assistant message, or a new request of the open one: a fresh translator,
        as the stream builds one per request."""
        if self._message is None:
            self._message = UIMessageState(message_id)
            self.messages.append(self._message.message)
        context = MessageContext(
            denied=denied,
            resumed=resumed,
            steps_before=self._message.steps,
            outputs_before=frozenset(self._outputs),
            replay=True,
        )
        self._translator = self.options.translators.turn(message_id, context)
        self._aborted = False
        return self._translator.message.start()

    def _end_request(self) -> None:
        translator, message = self._translator, self._message
        if translator is None or message is None:
            return
        written = translator.message
        message.apply_all(written.abort() if self._aborted else written.finish())
        self._translator = None

    def _end_message(self) -> None:
        self._end_request()
        shown = self._message.message if self._message is not None else None
        if self._live_message and shown is not None and not shown["parts"]:
            # Nothing the page was shown (a live run's control events).
            self.messages[:] = [m for m in self.messages if m is not shown]
        self._message = None
        self._live_message = False

    # -- answers -------------------------------------------------------------------------

    def _continuation(
        self, responses: Iterable[types.FunctionResponse], meta: dict[str, Any]
    ) -> None:
        """The page's answers to the calls its message waits for, then the request they
        started (``http/turn/plan.py``'s plan, read back)."""
        message = self._message
        assert message is not None
        self._end_request()
        tools = self.options.translators.settings.tools
        answers = PageAnswers(message, tools, meta.get("denialReasons") or {})
        for response in responses:
            answers.read(response, self._calls, self._approvals)
        out = self._open(
            message.message["id"], frozenset(answers.denied), frozenset(answers.resumed)
        )
        assert self._translator is not None
        out.extend(ToolOutputDenied(tool_call_id=call_id) for call_id in answers.denied_browser)
        for call_id, result in answers.completed.items():
            out.extend(self._translator.message.tools.outcome(call_id, result))
        message.apply_all(out)

    def _completion(self, message_id: str, responses: Iterable[types.FunctionResponse]) -> None:
        """A long-running call the server completed: a new message that states the call
        again, then its result (``plan_completion``)."""
        self._end_message()
        out = self._open(message_id)
        translator = self._translator
        assert translator is not None and self._message is not None
        for response in responses:
            call_id = response.id or ""
            name, args = self._calls.get(call_id, (response.name or "", {}))
            if name not in self.options.translators.settings.tools.long_running:
                continue
            out.extend(translator.message.tools.restate(call_id, name, args))
            out.extend(translator.message.tools.outcome(call_id, response.response))
        self._message.apply_all(out)
