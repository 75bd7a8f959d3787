"""Artifacts as ``file`` parts: what the page sees of the files an agent saves.

Each artifact an agent saves during a turn (``tool_context.save_artifact``, a callback's
``callback_context.save_artifact``: ADK records it in the event's
``actions.artifact_delta``, ``{name: version}``) becomes one ``file`` part, right after the
event's other parts:

    {"type": "file", "mediaType": "image/png",
     "url": "/api/chat/CHAT/artifacts/chart.png?version=0",
     "providerMetadata": {"adk": {"artifact": "chart.png", "version": 0}}}

The URL is the artifact route of the chat (``http/artifacts.py``) under the path the app is
mounted at (the request's ``root_path``), so the page loads it from the same origin with
the user's cookies. The stream's ``file`` chunk has no ``filename`` field (the strict
clients refuse unknown keys), so the artifact's name travels in ``providerMetadata``.

Everything here is read from the session's events, plus the artifact service for the media
type, so a chat's history rebuilds the same parts from the session alone. Which events are
followed by file parts is decided once, by ``ChatFiles.after``, for the HTTP stream
(``http/turn/stream.py``), the live turns (``live/turns/conversation.py``) and the history
(``history/messages.py``).
Artifacts the user uploaded (``SaveFilesAsArtifactsPlugin``, ``StorageOptions
.uploads_as_artifacts``) are the user's files, not the agent's: ``saved`` leaves them out
and ``uploads`` names them.
"""

from __future__ import annotations

import asyncio
import logging
import mimetypes
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

from google.adk.artifacts import BaseArtifactService
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.events import Event
from google.adk.plugins import BasePlugin
from google.adk.plugins.save_files_as_artifacts_plugin import SaveFilesAsArtifactsPlugin

from ..wire.chunks import File
from .sessions import failure

__all__ = (
    "ARTIFACTS_PATH",
    "ChatArtifacts",
    "ChatFiles",
    "artifact_url",
    "fetchable_name",
    "guess_media_type",
    "upload_marks",
)

logger = logging.getLogger("adk_asgi")

ARTIFACTS_PATH: Final = "artifacts"
"""The chat's artifact route: ``{api}/{chatId}/artifacts[/{name}]``."""
_OCTET: Final = "application/octet-stream"
DESCRIBE_TIMEOUT: Final = 5.0
"""Seconds a turn waits for the artifact service to say an artifact's media type."""


def artifact_url(api_path: str, chat_id: str, name: str, version: int) -> str:
    """The URL of one artifact version under the app's mount path (``root_path``)."""
    return (
        f"{api_path}/{quote(chat_id, safe='')}/{ARTIFACTS_PATH}/"
        f"{quote(name, safe='')}?version={version}"
    )


MAX_NAME_LENGTH: Final = 1024
"""The longest artifact name the artifact route looks up (characters)."""


def fetchable_name(name: str) -> bool:
    """Whether the artifact route asks the artifact service for ``name``: 1 to
    ``MAX_NAME_LENGTH`` characters, no U+0000 (no file system, and so ADK's file service,
    can store either; the route answers them ``404`` before any store is asked). Any
    other character is served: the route matches every character, newlines too."""
    return 0 < len(name) <= MAX_NAME_LENGTH and "\x00" not in name


def guess_media_type(name: str) -> str:
    """The media type an artifact's name suggests (when its service does not say)."""
    base = name.removeprefix("user:")
    return mimetypes.guess_type(base, strict=False)[0] or _OCTET


def upload_marks(plugins: Iterable[BasePlugin]) -> frozenset[str]:
    """The state keys by which the events of ``SaveFilesAsArtifactsPlugin`` are known: it
    records the user's uploads in the ``artifact_delta`` of an agent's event, clearing its
    ``{name}:pending_delta`` state key in the same event."""
    return frozenset(
        f"{plugin.name}:pending_delta"
        for plugin in plugins
        if isinstance(plugin, SaveFilesAsArtifactsPlugin)
    )


class ChatArtifacts:
    """A chat's artifacts as the page sees them: the ``file`` parts of the ones its events
    saved, and their removal with the chat (one instance per app)."""

    __slots__ = ("_app_name", "_service", "_upload_marks")

    def __init__(
        self,
        service: BaseArtifactService | None,
        app_name: str,
        upload_marks: frozenset[str] = frozenset(),
    ) -> None:
        self._service = service
        self._app_name = app_name
        self._upload_marks = upload_marks

    @property
    def service(self) -> BaseArtifactService | None:
        return self._service

    def of_chat(self, user_id: str, chat_id: str, api_path: str) -> ChatFiles:
        """The ``file`` parts of one chat's artifacts, their URLs under ``api_path``."""
        return ChatFiles(self, user_id, chat_id, api_path)

    def _delta(self, event: Event) -> dict[str, int]:
        # Partial events are not stored; the user's own events (and ADK's rewinds, which
        # are the user's) never show the agent's files.
        if event.partial or event.author == "user" or event.actions is None:
            return {}
        return event.actions.artifact_delta or {}

    def _is_upload(self, event: Event) -> bool:
        state = event.actions.state_delta if event.actions is not None else None
        return bool(state) and any(mark in state for mark in self._upload_marks)

    def saved(self, event: Event) -> list[tuple[str, int]]:
        """The artifacts an agent saved in ``event``: ``(name, version)``, in ADK's order."""
        delta = self._delta(event)
        if not delta or self._is_upload(event):
            return []
        return [(name, version) for name, version in delta.items()]

    def uploads(self, event: Event) -> list[tuple[str, int]]:
        """The user's files ``SaveFilesAsArtifactsPlugin`` saved, recorded in ``event``
        (they belong to the user message of the event's invocation)."""
        delta = self._delta(event)
        return list(delta.items()) if delta and self._is_upload(event) else []

    async def media_type(self, user_id: str, chat_id: str, name: str, version: int) -> str:
        """The media type the artifact service recorded, else the name's, else
        ``application/octet-stream``; a failing or slow service is logged, never raised."""
        if self._service is not None:
            try:
                found = await asyncio.wait_for(
                    self._service.get_artifact_version(
                        app_name=self._app_name,
                        user_id=user_id,
                        session_id=chat_id,
                        filename=name,
                        version=version,
                    ),
                    DESCRIBE_TIMEOUT,
                )
            except Exception as exc:
                logger.warning(
                    "Artifact service failed to describe %r of chat %r: %s",
                    name,
                    chat_id,
                    failure(exc),
                )
                found = None
            if found is not None and found.mime_type:
                return found.mime_type
        return guess_media_type(name)

    async def delete(self, user_id: str, chat_id: str) -> int:
        """Delete the chat's own artifacts (every version; the user's ``user:`` artifacts
        stay): for a deleted chat. Returns how many; the service's failures propagate."""
        service = self._service
        if service is None:
            return 0
        try:
            names = await service.list_artifact_keys(
                app_name=self._app_name, user_id=user_id, session_id=chat_id
            )
        except InputValidationError:
            return 0  # an id the service refuses as a session: nothing was saved under it
        deleted = 0
        for name in names:
            if name.startswith("user:"):
                continue
            await service.delete_artifact(
                app_name=self._app_name, user_id=user_id, filename=name, session_id=chat_id
            )
            deleted += 1
        return deleted

    async def files(
        self, event: Event, *, user_id: str, chat_id: str, api_path: str, uploads: bool = False
    ) -> list[File]:
        """The ``file`` chunks of the artifacts an agent saved in ``event`` ([] for most
        events); ``uploads``: of the user's uploads it records instead (a history shows them
        in the user's message of the event's invocation)."""
        saved = self.uploads(event) if uploads else self.saved(event)
        if not saved:
            return []
        return [
            File(
                url=artifact_url(api_path, chat_id, name, version),
                media_type=await self.media_type(user_id, chat_id, name, version),
                provider_metadata={"adk": {"artifact": name, "version": version}},
            )
            for name, version in saved
        ]


@dataclass(frozen=True, slots=True)
class ChatFiles:
    """One chat's artifacts as ``file`` chunks, their URLs under the app's mount path: what
    a turn's stream (HTTP and live) and the chat's history show after an event."""

    artifacts: ChatArtifacts
    user_id: str
    chat_id: str
    api_path: str

    @staticmethod
    def saved_in(event: Event) -> bool:
        """``event`` saved artifacts (the agent's, or the user's uploads): a final event
        with an ``actions.artifact_delta``. Streamed tokens (partial events) never do."""
        return (
            not event.partial and event.actions is not None and bool(event.actions.artifact_delta)
        )

    def after(self, event: Event, *, done: bool) -> Awaitable[list[File]] | None:
        """The ``file`` chunks that follow ``event``'s own in its message, to await: the
        artifacts the agent saved in it, unless the message is over (``done``: it finished
        or failed). None, with nothing to await, when there are none to look up (every
        partial event: the stream's hot path)."""
        if done or not self.saved_in(event):
            return None
        return self.artifacts.files(
            event, user_id=self.user_id, chat_id=self.chat_id, api_path=self.api_path
        )

    async def uploads(self, event: Event) -> list[File]:
        """The user's files ``SaveFilesAsArtifactsPlugin`` saved, recorded in ``event``
        (a history shows them in the user's message of the event's invocation)."""
        return await self.artifacts.files(
            event, user_id=self.user_id, chat_id=self.chat_id, api_path=self.api_path, uploads=True
        )
