"""UI messages in: the chat request body as the AI SDK client sends it (msgspec), and the
ADK content of a new user message.

Two body shapes are accepted: the `DefaultChatTransport` default
``{id, messages, trigger, messageId?, ...extra}`` and the trimmed
``{id, message}`` that apps send with ``prepareSendMessagesRequest``. Unknown
keys (the transport's extra ``body``) are ignored, unknown part types are kept
as parts and skipped when building ADK content: the client is free to carry
data the server does not understand. A message may carry ``content`` instead of
``parts`` (see ``UIMessage``).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Final, Literal
from urllib.parse import unquote_to_bytes

import msgspec
from google.genai import types
from msgspec import UNSET, UnsetType

from .depth import check_depth
from .errors import RequestError

__all__ = (
    "Approval",
    "ChatRequest",
    "UIMessage",
    "UIPart",
    "check_storable",
    "decode_chat_request",
    "file_part_to_adk",
    "message_text",
    "user_content",
    "valid_chat_id",
)

MAX_ID_LENGTH: Final = 256


class Approval(msgspec.Struct, rename="camel"):
    id: str
    approved: bool | UnsetType = UNSET
    reason: str | UnsetType = UNSET


class UIPart(msgspec.Struct, rename="camel"):
    """Any UIMessage part. One flat struct: the part ``type`` is open-ended
    (``tool-<name>``, ``data-<name>``), and every known field is type-checked."""

    type: str
    text: str | UnsetType = UNSET
    state: str | UnsetType = UNSET
    id: str | UnsetType = UNSET
    media_type: str | UnsetType = UNSET
    url: str | UnsetType = UNSET
    filename: str | UnsetType = UNSET
    tool_call_id: str | UnsetType = UNSET
    tool_name: str | UnsetType = UNSET
    input: Any | UnsetType = UNSET
    output: Any | UnsetType = UNSET
    error_text: str | UnsetType = UNSET
    approval: Approval | UnsetType = UNSET
    data: Any | UnsetType = UNSET
    provider_executed: bool | UnsetType = UNSET
    call_provider_metadata: Any | UnsetType = UNSET

    @property
    def tool(self) -> str | None:
        """The tool name of a tool part (static or dynamic), else None."""
        if self.type.startswith("tool-"):
            return self.type[5:]
        if self.type == "dynamic-tool" and isinstance(self.tool_name, str):
            return self.tool_name
        return None


class _NoParts(list[UIPart]):
    """The default of ``UIMessage.parts``: tells "no `parts` key" from an empty list."""


class UIMessage(msgspec.Struct):
    """A ``UIMessage``. The older ``content`` shape (a string, or a list of parts, as the
    original design's clients send it) is read as ``parts``, on every transport."""

    role: Literal["system", "user", "assistant"]
    parts: list[UIPart] = msgspec.field(default_factory=_NoParts)
    id: str = ""
    metadata: Any | UnsetType = UNSET
    content: str | list[UIPart] | UnsetType = UNSET

    def __post_init__(self) -> None:
        content = self.content
        if content is UNSET:
            if type(self.parts) is _NoParts:
                raise ValueError("a message needs `parts` (or `content`)")
            return
        if not self.parts:
            self.parts = (
                [UIPart(type="text", text=content)] if isinstance(content, str) else content
            )
        self.content = UNSET


class ChatRequest(msgspec.Struct, rename="camel"):
    id: str
    messages: list[UIMessage] | UnsetType = UNSET
    message: UIMessage | UnsetType = UNSET
    trigger: Literal["submit-message", "regenerate-message"] = "submit-message"
    message_id: str | UnsetType = UNSET

    @property
    def history(self) -> list[UIMessage]:
        if isinstance(self.messages, list):
            return self.messages
        if isinstance(self.message, UIMessage):
            return [self.message]
        return []


_decoder: Final = msgspec.json.Decoder(ChatRequest)


def decode_chat_request(body: bytes) -> ChatRequest:
    """Decode and validate a request body; RequestError (400/422) on bad input (its size
    against the app's ``Limits``: ``transport/limits.py``)."""
    try:
        request = _decoder.decode(body)
    except msgspec.ValidationError as exc:
        raise RequestError(422, "invalid_request", f"Invalid chat request: {exc}") from None
    except msgspec.DecodeError as exc:
        raise RequestError(400, "invalid_json", f"Request body is not valid JSON: {exc}") from None
    except UnicodeDecodeError:  # msgspec reports invalid UTF-8 inside strings this way
        raise RequestError(400, "invalid_json", "Request body is not valid UTF-8.") from None
    except RecursionError:  # deeper than msgspec's nesting limit (~1000 levels)
        raise RequestError(400, "invalid_json", "Request body is nested too deeply.") from None
    check_storable(body)
    for message in request.history:
        check_depth(message.metadata, where="A message's metadata")
        for part in message.parts:
            check_depth(
                part.input, part.output, part.data, part.call_provider_metadata, where="A part"
            )
    if not valid_chat_id(request.id):
        raise RequestError(
            422, "invalid_chat_id", f"Chat `id` must be 1-{MAX_ID_LENGTH} printable characters."
        )
    if not request.history:
        raise RequestError(422, "no_messages", "The request carries no messages.")
    return request


_NUL_ESCAPE: Final = b"\\u0000"
_NUL_ESCAPE_TEXT: Final = "\\u0000"


def check_storable(raw: bytes | str, value: Any = None) -> None:
    """Refuse (``422 invalid_request``, naming where) a JSON body or frame with U+0000 in
    any string: PostgreSQL cannot store it in text or JSON columns (its driver fails the
    turn's first write), so every session store gets the same rule, at the door. Lone
    surrogates, the other characters no store can hold, are already invalid JSON to
    msgspec (400). ``value``: the decoded JSON, when the caller has it."""
    if (_NUL_ESCAPE_TEXT not in raw) if isinstance(raw, str) else (_NUL_ESCAPE not in raw):
        return  # JSON can only carry U+0000 as this escape: the common case ends here
    if value is None:
        try:
            value = msgspec.json.decode(raw)
        except (msgspec.DecodeError, UnicodeError, RecursionError):
            return  # the caller's decoder reports it
    where = _nul_path(value, "")
    if where is not None:
        raise RequestError(
            422,
            "invalid_request",
            f"`{where or 'the body'}` contains U+0000 (NUL), which the chat cannot store.",
        )


def _nul_path(value: Any, path: str) -> str | None:
    if isinstance(value, str):
        return path if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            name = key.replace("\x00", "\\u0000")
            here = f"{path}.{name}" if path else name
            if name != key:
                return here
            if (found := _nul_path(item, here)) is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if (found := _nul_path(item, f"{path}[{index}]")) is not None:
                return found
    return None


def valid_chat_id(chat_id: str) -> bool:
    """1-256 printable characters (it becomes an ADK session id and a URL segment)."""
    return 0 < len(chat_id) <= MAX_ID_LENGTH and chat_id.isprintable()


def message_text(message: UIMessage) -> str:
    """The message's text parts joined, for seeding history and matching turns."""
    return "".join(p.text for p in message.parts if p.type == "text" and isinstance(p.text, str))


def file_part_to_adk(part: UIPart, max_bytes: int | None = None) -> types.Part:
    """A `file` part: ``data:`` URLs become inline bytes, http(s) URLs file references."""
    url = part.url if isinstance(part.url, str) else ""
    media_type = part.media_type if isinstance(part.media_type, str) else None
    if url.startswith("data:"):
        header, sep, payload = url[5:].partition(",")
        if not sep:
            raise RequestError(422, "invalid_file", "Malformed data: URL in a file part.")
        params = header.split(";")
        mime = params[0] or media_type or "application/octet-stream"
        try:
            if "base64" in params[1:]:
                data = base64.b64decode(payload, validate=True)
            else:
                data = unquote_to_bytes(payload)
        except (binascii.Error, ValueError):
            raise RequestError(422, "invalid_file", "Invalid base64 in a file part.") from None
        if max_bytes is not None and len(data) > max_bytes:
            raise RequestError(413, "file_too_large", f"A file part exceeds {max_bytes} bytes.")
        name = part.filename if isinstance(part.filename, str) else None
        return types.Part(
            inline_data=types.Blob(mime_type=media_type or mime, data=data, display_name=name)
        )
    if url.startswith(("https://", "http://")):
        return types.Part(file_data=types.FileData(file_uri=url, mime_type=media_type))
    raise RequestError(422, "invalid_file", "File parts must use a data: or http(s): URL.")


def user_content(message: UIMessage, max_file_bytes: int | None = None) -> types.Content:
    """The ADK content of a new user message: its text and file parts, in order."""
    parts: list[types.Part] = []
    for part in message.parts:
        if part.type == "text" and isinstance(part.text, str):
            if part.text:
                parts.append(types.Part(text=part.text))
        elif part.type == "file":
            parts.append(file_part_to_adk(part, max_file_bytes))
        # reasoning, step-start, data-*, source-* and unknown parts carry nothing
        # the model should see as new user input.
    if not parts:
        raise RequestError(422, "empty_message", "The new user message has no text or file part.")
    return types.Content(role="user", parts=parts)
