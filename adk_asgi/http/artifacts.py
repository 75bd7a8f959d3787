"""A chat's artifacts over HTTP, for the URLs of its ``file`` parts (``adk/artifacts.py``).

    GET {api}/{chatId}/artifacts                   {"artifacts": [{name, versions: [...]}]}
    GET {api}/{chatId}/artifacts/{name}?version=N  the artifact's bytes (latest: no version)

Only the chat's owner gets anything: anyone else gets ``404 chat_not_found``, the answer
for a chat that does not exist (and artifacts are stored under their user anyway, so
another user's lookup finds nothing). An artifact's answer carries its ``content-type``,
``content-length``, ``content-disposition`` (``inline`` for what a browser shows without
running anything: images but SVG, audio, video, PDF, plain text; ``attachment`` for the
rest, and ``x-content-type-options: nosniff`` always: an agent's HTML never runs in the
page's origin), a strong ``etag`` and ``last-modified`` from the version's metadata (so
``If-None-Match`` is answered ``304`` without loading the artifact), ``cache-control:
private, no-cache`` and ``accept-ranges: bytes``. A ``Range`` of one byte range is answered
``206`` with ``content-range``; one that starts past the end ``416`` with ``content-range:
bytes */SIZE``; several ranges, or an ``If-Range`` that no longer matches, the whole
artifact (``200``, as RFC 9110 allows).

A version ADK's file service keeps is read from its file a slice at a time (a range reads
only what it sends); the other services load an artifact whole and it is sent in slices of
that one copy. Either way a client that takes nothing for ``send_timeout`` is dropped
(``http/downloads.py``).

Errors are JSON with stable codes: ``chat_not_found`` and ``artifact_not_found`` (404),
``invalid_version`` (422), ``range_not_satisfiable`` (416), ``artifact_unavailable`` (503
with ``Retry-After``: the artifact service failed).
"""

from __future__ import annotations

import errno
import hashlib
import re
from datetime import UTC, datetime
from email.utils import formatdate
from typing import Final
from urllib.parse import quote

import msgspec
from google.adk.artifacts.base_artifact_service import ArtifactVersion
from google.adk.errors.input_validation_error import InputValidationError
from google.genai import types

from ..adk.artifacts import artifact_url, fetchable_name, guess_media_type
from ..transport.asgi import Receive, Scope, Send, send_json
from ..transport.params import header, query, whole_number
from ..wire.errors import RequestError, error_body
from .downloads import InMemoryPayload, Payload, file_payload, send_payload
from .endpoint import ChatEndpoint
from .errors import failing

__all__ = ("ArtifactRoutes", "byte_range")

_MAX_VERSION_DIGITS: Final = 9
"""Versions count from 0 one save at a time: nine digits are more than any store holds."""
_TEXT: Final = "text/plain; charset=utf-8"
_NAME_ERRORS: Final = frozenset({errno.ENAMETOOLONG, errno.EINVAL, errno.EILSEQ})
"""A file store's answers for a name no file can have: nothing by that name."""
_INLINE: Final = frozenset({"application/pdf", "text/plain"})
_NOT_INLINE: Final = frozenset({"image/svg+xml"})  # an SVG opened as a page runs scripts
_MEDIA_TYPE: Final = re.compile(r"[\w!#$&^.+-]+/[\w!#$&^.+-]+(;[ -~]*)?")


class _Unsatisfiable(Exception):
    pass


def byte_range(header: str | None, size: int) -> tuple[int, int] | None:
    """The ``(start, end)`` (end exclusive) of a ``Range`` of one byte range; None to send
    everything (no header, another unit, several ranges, a malformed one: RFC 9110 lets a
    server ignore them). Raises ``_Unsatisfiable`` for a range past the end. Its numbers
    are read as every number a request carries is (``transport/params.py``)."""
    if header is None:
        return None
    unit, _, spec = header.partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return None
    first_text, dash, last_text = spec.strip().partition("-")
    first, last = whole_number(first_text), whole_number(last_text)
    if (
        not dash
        or (first is None and last is None)
        or (first_text and first is None)
        or (last_text and last is None)
    ):
        return None
    if first is None:  # the last N bytes
        assert last is not None
        if last == 0 or size == 0:
            raise _Unsatisfiable
        return max(size - last, 0), size
    if last is not None and last < first:
        return None
    if first >= size:
        raise _Unsatisfiable
    return first, min(last + 1, size) if last is not None else size


def _etag(found: ArtifactVersion) -> str:
    seed = f"{found.canonical_uri}\n{found.version}\n{found.create_time!r}"
    return '"' + hashlib.sha256(seed.encode()).hexdigest()[:32] + '"'


def _matches(if_none_match: str, etag: str) -> bool:
    tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
    return "*" in tags or etag in tags


def _disposition(name: str, media_type: str) -> str:
    base = name.removeprefix("user:").rsplit("/", 1)[-1] or "artifact"
    kind = media_type.split(";", 1)[0].strip().lower()
    inline = kind in _INLINE or (
        kind.startswith(("image/", "audio/", "video/")) and kind not in _NOT_INLINE
    )
    ascii_name = "".join(
        c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in base
    )
    return (
        f'{"inline" if inline else "attachment"}; filename="{ascii_name}"; '
        f"filename*=UTF-8''{quote(base, safe='')}"
    )


def _header_type(media_type: str) -> str:
    """The media type as a header value; a malformed one (an agent may save anything) is
    ``application/octet-stream``."""
    return media_type if _MEDIA_TYPE.fullmatch(media_type) else "application/octet-stream"


def _content(part: types.Part) -> tuple[bytes, str] | None:
    if part.inline_data is not None and part.inline_data.data is not None:
        return part.inline_data.data, part.inline_data.mime_type or ""
    if part.text is not None:
        return part.text.encode(), _TEXT
    return None


def _iso(seconds: float) -> str:
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ArtifactVersionInfo(msgspec.Struct, rename="camel"):
    version: int
    media_type: str
    created_at: str
    url: str


class ArtifactInfo(msgspec.Struct):
    name: str
    versions: list[ArtifactVersionInfo]


class ArtifactList(msgspec.Struct):
    artifacts: list[ArtifactInfo]


def _not_found() -> RequestError:
    return RequestError(404, "artifact_not_found", "No such artifact in this chat.")


class ArtifactRoutes:
    """The handlers of the artifact routes (``AdkApp`` routes them)."""

    __slots__ = ("_chat",)

    def __init__(self, chat: ChatEndpoint) -> None:
        self._chat = chat

    async def _owner(self, scope: Scope, chat_id: str) -> str:
        """The user asking, if the chat may be theirs (raises as ``chat_reader``)."""
        chat = self._chat
        user_id, _ = await chat.chat_reader(scope, chat_id, "artifacts")
        await chat.runtime.startup()
        return user_id

    async def listing(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``GET {api}/{chatId}/artifacts``: every artifact of the chat, each version."""
        chat_id = scope["path_params"]["chat_id"]
        user_id = await self._owner(scope, chat_id)
        runtime = self._chat.runtime
        service = runtime.artifacts.service
        listed: list[ArtifactInfo] = []
        if service is not None:
            app, api = runtime.app_name, scope.get("root_path", "")
            with failing(None, chat_id, "artifacts"):
                try:
                    names = await service.list_artifact_keys(
                        app_name=app, user_id=user_id, session_id=chat_id
                    )
                except InputValidationError:
                    # An id the service refuses as a session (" ", ".." for the file
                    # service): nothing was ever saved under it; not an outage.
                    names = []
                for name in names:
                    versions = await self._versions(name, user_id, chat_id)
                    if versions is None:
                        continue
                    name, found = versions
                    listed.append(
                        ArtifactInfo(
                            name=name,
                            versions=[
                                ArtifactVersionInfo(
                                    version=v.version,
                                    media_type=v.mime_type or guess_media_type(name),
                                    created_at=_iso(v.create_time),
                                    url=artifact_url(api, chat_id, name, v.version),
                                )
                                for v in found
                            ],
                        )
                    )
        await send_json(send, 200, msgspec.json.encode(ArtifactList(artifacts=listed)))

    async def _versions(
        self, name: str, user_id: str, chat_id: str
    ) -> tuple[str, list[ArtifactVersion]] | None:
        runtime = self._chat.runtime
        service = runtime.artifacts.service
        assert service is not None
        # A service may list a user-scoped artifact under its bare name (ADK's contract):
        # it loads with its "user:" prefix.
        for candidate in (name, f"user:{name}"):
            found = await service.list_artifact_versions(
                app_name=runtime.app_name, user_id=user_id, filename=candidate, session_id=chat_id
            )
            if found:
                return candidate, found
        return None

    async def content(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``GET {api}/{chatId}/artifacts/{name}?version=N``: one artifact version."""
        params = scope["path_params"]
        chat_id, name = params["chat_id"], params["name"]
        user_id = await self._owner(scope, chat_id)
        version: int | None = None
        asked = query(scope).get("version")
        if asked:
            version = whole_number(asked[0], _MAX_VERSION_DIGITS)
            if version is None:
                raise RequestError(
                    422, "invalid_version", "`version` is a whole number (0 is the first)."
                )
        runtime = self._chat.runtime
        service = runtime.artifacts.service
        if service is None or not fetchable_name(name):
            raise _not_found()
        where = {
            "app_name": runtime.app_name,
            "user_id": user_id,
            "filename": name,
            "session_id": chat_id,
        }
        with failing(None, chat_id, "artifacts"):
            try:
                found = await service.get_artifact_version(**where, version=version)
                if found is None:
                    raise _not_found()
                etag = _etag(found)
                headers = [
                    (b"etag", etag.encode()),
                    (b"last-modified", formatdate(found.create_time, usegmt=True).encode()),
                    (b"cache-control", b"private, no-cache"),
                    (b"x-content-type-options", b"nosniff"),
                ]
                if_none_match = header(scope, b"if-none-match")
                if if_none_match is not None and _matches(if_none_match, etag):
                    await send({"type": "http.response.start", "status": 304, "headers": headers})
                    await send({"type": "http.response.body", "body": b""})
                    return
                payload: Payload | None = file_payload(service, found)
                part = None
                if payload is None:
                    part = await service.load_artifact(**where, version=found.version)
                    if part is None:
                        raise _not_found()
            except (InputValidationError, ValueError):  # a name a store refuses: not there
                raise _not_found() from None
            except OSError as exc:
                if exc.errno not in _NAME_ERRORS:  # the disk failed: an outage
                    raise
                raise _not_found() from None
        # The file service keeps no media type for a text artifact.
        media_type = found.mime_type or _TEXT
        if part is not None:
            loaded = await self._loaded(send, part, headers)
            if loaded is None:
                return
            payload, media_type = loaded[0], loaded[1] or found.mime_type or ""
        assert payload is not None
        await self._send(scope, send, name, payload, media_type, headers)

    async def _loaded(
        self, send: Send, part: types.Part, headers: list[tuple[bytes, bytes]]
    ) -> tuple[Payload, str] | None:
        """The bytes of a loaded ``part`` and their media type; None when it was answered
        already (a reference to a file stored elsewhere)."""
        content = _content(part)
        if content is None:
            uri = part.file_data.file_uri if part.file_data is not None else None
            if uri and uri.startswith(("https://", "http://")):
                # A reference to a file stored elsewhere: send the browser there.
                await send(
                    {
                        "type": "http.response.start",
                        "status": 303,
                        "headers": [(b"location", uri.encode()), *headers],
                    }
                )
                await send({"type": "http.response.body", "body": b""})
                return None
            raise _not_found()
        return InMemoryPayload(content[0]), content[1]

    async def _send(
        self,
        scope: Scope,
        send: Send,
        name: str,
        payload: Payload,
        media_type: str,
        headers: list[tuple[bytes, bytes]],
    ) -> None:
        media_type = _header_type(media_type or guess_media_type(name))
        size = payload.size
        etag = dict(headers)[b"etag"].decode()
        if_range = header(scope, b"if-range")
        try:
            span = (
                byte_range(header(scope, b"range"), size)
                if if_range is None or if_range == etag
                else None
            )
        except _Unsatisfiable:
            body = error_body("range_not_satisfiable", f"The artifact has {size} bytes.")
            await send_json(
                send, 416, body, [(b"content-range", f"bytes */{size}".encode()), *headers]
            )
            return
        start, end = span if span is not None else (0, size)
        headers = [
            (b"content-type", media_type.encode()),
            (b"content-length", str(end - start).encode()),
            (b"content-disposition", _disposition(name, media_type).encode()),
            (b"accept-ranges", b"bytes"),
            *headers,
        ]
        if span is not None:
            headers.append((b"content-range", f"bytes {start}-{end - 1}/{size}".encode()))
        await send(
            {"type": "http.response.start", "status": 206 if span else 200, "headers": headers}
        )
        if scope["method"] == "HEAD" or start == end:
            await send({"type": "http.response.body", "body": b""})
            return
        settings = self._chat.settings
        await send_payload(
            send,
            payload,
            start,
            end,
            send_timeout=settings.streaming.send_timeout,
            max_queued=settings.limits.max_queued_bytes,
        )
