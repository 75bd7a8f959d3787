"""``GET {api}/openapi.json``: the HTTP routes as an OpenAPI 3.1 document.

Built from the code's own truth so it cannot drift: the paths and methods from the app's
route table (``app.py``, ``http/routes.py``), the request bodies from their msgspec types
(``msgspec.json.schema``); the error codes are listed here once, by status, and a test
(``tests/http/test_openapi.py``) fails when the package raises a code this list lacks or a
route exists that the document does not describe (or the other way round). Public, like
the probes: it describes the API, no user's data. The server URL is the mount path the
request came through, so a client generated from it calls the right place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

import msgspec

from ..transport.asgi import Receive, Scope, Send, send_json
from ..wire.request import MAX_ID_LENGTH, ChatRequest
from .completion import ToolOutput

__all__ = ("ERROR_CODES", "OpenApi", "openapi_document", "openapi_path")

ERROR_CODES: Final[Mapping[int, tuple[str, ...]]] = {
    400: ("invalid_json", "invalid_content_length"),
    401: ("unauthorized",),
    403: ("forbidden",),
    404: ("not_found", "chat_not_found", "artifact_not_found"),
    405: ("method_not_allowed",),
    409: ("unknown_tool_call", "approval_required", "server_tool_call", "wrong_message_id"),
    413: (
        "body_too_large",
        "too_many_messages",
        "too_many_parts",
        "file_too_large",
        "payload_too_large",
        "output_too_large",
        "input_too_large",
    ),
    416: ("range_not_satisfiable",),
    422: (
        "invalid_request",
        "invalid_chat_id",
        "invalid_body_field",
        "no_messages",
        "empty_message",
        "invalid_file",
        "invalid_last_message",
        "nothing_to_continue",
        "wrong_answer_kind",
        "mixed_invocations",
        "invalid_payload",
        "invalid_tool_output",
        "invalid_version",
        "invalid_input",
        "invalid_credential",
        "invalid_limit",
        "invalid_cursor",
        "json_too_deep",
    ),
    500: ("history_unavailable", "evalset_unavailable"),
    503: (
        "session_unavailable",
        "store_unavailable",
        "artifact_unavailable",
        "shutting_down",
        "at_capacity",
        "not_ready",
    ),
}
"""Every stable ``code`` of a JSON error body, by HTTP status (the HTTP API page's list)."""

_PARAM: Final = re.compile(r"\{(\w+)(?::\w+)?\}")
_REF = "#/components/schemas/"
_JSON = "application/json"


def openapi_path(path: str) -> str:
    """A route's path as OpenAPI writes it: ``/{chat_id:path}/stream`` → ``/{chatId}/stream``."""

    def camel(match: re.Match[str]) -> str:
        head, *rest = match.group(1).split("_")
        return "{" + head + "".join(word.title() for word in rest) + "}"

    return _PARAM.sub(camel, path)


def _error(status: int, description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {_JSON: {"schema": {"$ref": f"{_REF}Error{status}"}}},
    }


def _json(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {_JSON: {"schema": schema}}}


def _obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "required": list(properties), "properties": properties}


def _query(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "query", "description": description, "schema": schema}


def _header(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "in": "header", "description": description, "schema": {"type": "string"}}


_STR: Final = {"type": "string"}
_CHAT_ID: Final = {
    "name": "chatId",
    "in": "path",
    "required": True,
    "description": "The chat's id (percent-encoded; it may hold a slash).",
    "schema": {"type": "string", "minLength": 1, "maxLength": MAX_ID_LENGTH},
}
_NAME: Final = {
    "name": "name",
    "in": "path",
    "required": True,
    "description": "The artifact's name, percent-encoded (`user:` names too).",
    "schema": {"type": "string", "minLength": 1},
}
_SSE: Final = {
    "description": "The turn as a UI message stream v1 (Server-Sent Events, ends with [DONE]).",
    "headers": {"x-vercel-ai-ui-message-stream": {"schema": {"const": "v1"}}},
    "content": {"text/event-stream": {"schema": _STR}},
}
_HTML: Final = {"text/html": {"schema": _STR}}
_PROBE: Final = {
    "type": "object",
    "required": ["status"],
    "properties": {"status": _STR, "checks": {"type": "object"}},
}
_MESSAGES = {"type": "array", "items": {"type": "object"}}

# (path, method) → operation: what each route takes and answers beyond the errors every
# route may answer (401/403 from `authenticate`, 404 for a chat that is not the user's,
# 503 when a store is down).
_OPERATIONS: Final[dict[tuple[str, str], dict[str, Any]]] = {
    ("/", "post"): {
        "summary": "Send a message: the useChat body; the answer streams back",
        "requestBody": {
            "required": True,
            "content": {_JSON: {"schema": {"$ref": f"{_REF}ChatRequest"}}},
        },
        "responses": {"200": _SSE},
        "errors": (400, 409, 413, 422),
    },
    ("/", "get"): {
        "summary": "The user's chats, the most recently updated first",
        "parameters": [
            _query("limit", "1 to max_page_size (ASCII digits)", _STR),
            _query("cursor", "The `next` of the previous page", _STR),
        ],
        "responses": {
            "200": _json(
                "A page of chats",
                _obj(
                    chats={"type": "array", "items": {"type": "object"}},
                    next={"type": ["string", "null"]},
                ),
            )
        },
        "errors": (422,),
    },
    ("/openapi.json", "get"): {
        "summary": "This document",
        "security": [{}],
        "responses": {"200": _json("The OpenAPI 3.1 document", {"type": "object"})},
    },
    ("/healthz", "get"): {
        "summary": "Liveness probe (no identity needed)",
        "security": [{}],
        "responses": {"200": _json("Alive", _PROBE)},
    },
    ("/readyz", "get"): {
        "summary": "Readiness probe (no identity needed): 503 not_ready names the failing part",
        "security": [{}],
        "responses": {"200": _json("Ready", _PROBE)},
        "errors": (503,),
    },
    ("/oauth2/callback", "get"): {
        "summary": "Where an OAuth2 sign-in returns: an HTML page for the popup, also on failure",
        "security": [{}],
        "parameters": [
            _query("state", "The sign-in ticket", _STR),
            _query("code", "The authorization code", _STR),
            _query("error", "The provider's error (a cancel)", _STR),
        ],
        "responses": {
            "200": {"description": "The sign-in went on", "content": _HTML},
            "400": {"description": "No or an unknown state", "content": _HTML},
            "414": {"description": "A query over 8 KiB", "content": _HTML},
            "503": {"description": "The stream store is down", "content": _HTML},
        },
        "html_errors": True,
    },
    ("/{chat_id:path}/stream", "get"): {
        "summary": "The chat's active stream, replayed from its start and followed",
        "parameters": [_CHAT_ID],
        "responses": {"200": _SSE, "204": {"description": "No active stream"}},
    },
    ("/{chat_id:path}/stream", "delete"): {
        "summary": "Stop the chat's running turn",
        "parameters": [_CHAT_ID],
        "responses": {"200": _json("Stopped or not", _obj(stopped={"type": "boolean"}))},
    },
    ("/{chat_id:path}/tool-output", "post"): {
        "summary": "Complete a pending long-running server call",
        "parameters": [_CHAT_ID],
        "requestBody": {
            "required": True,
            "content": {_JSON: {"schema": {"$ref": f"{_REF}ToolOutput"}}},
        },
        "responses": {"202": _json("The turn started", _obj(messageId=_STR))},
        "errors": (400, 409, 413, 422),
    },
    ("/{chat_id:path}/artifacts", "get"): {
        "summary": "The chat's artifacts and their versions",
        "parameters": [_CHAT_ID],
        "responses": {
            "200": _json(
                "The artifacts", _obj(artifacts={"type": "array", "items": {"type": "object"}})
            )
        },
    },
    ("/{chat_id:path}/artifacts/{name:path}", "get"): {
        "summary": "One artifact version (the latest without `version`), with ranges",
        "parameters": [
            _CHAT_ID,
            _NAME,
            _query("version", "The version (ASCII digits)", _STR),
            _header("Range", "bytes=first-last (one range; anything else is ignored)"),
            _header("If-Range", "An ETag: the range applies only if it matches"),
            _header("If-None-Match", "An ETag: 304 when it matches"),
        ],
        "responses": {
            "200": {"description": "The artifact", "content": {"*/*": {"schema": _STR}}},
            "206": {"description": "The range", "content": {"*/*": {"schema": _STR}}},
            "304": {"description": "Not modified"},
        },
        "errors": (416, 422),
    },
    ("/{chat_id:path}/evalset", "get"): {
        "summary": "The chat as an ADK EvalSet with one eval case (a download)",
        "parameters": [_CHAT_ID],
        "responses": {"200": _json("The eval set", {"type": "object"})},
        "errors": (500,),
    },
    ("/{chat_id:path}", "get"): {
        "summary": "The chat's history, for useChat({id, messages})",
        "parameters": [_CHAT_ID],
        "responses": {"200": _json("The chat", _obj(id=_STR, messages=_MESSAGES))},
        "errors": (500,),
    },
    ("/{chat_id:path}", "delete"): {
        "summary": "Delete the chat: its turn, artifacts, session and recorded stream",
        "parameters": [_CHAT_ID],
        "responses": {"204": {"description": "Deleted"}},
    },
}
_EVERY_ROUTE: Final = (401, 403, 404, 405, 503)


def _operation(path: str, method: str) -> dict[str, Any]:
    spec = dict(_OPERATIONS[(path, method)])
    html = spec.pop("html_errors", False)
    statuses = sorted({*spec.pop("errors", ()), *_EVERY_ROUTE})
    responses = dict(spec["responses"])
    if not html:
        for status in statuses:
            responses.setdefault(str(status), _error(status, ", ".join(ERROR_CODES[status])))
        # Whatever else: still a JSON error with a stable code.
        responses["default"] = _error(0, "Any other error")
    spec["responses"] = responses
    spec["operationId"] = f"{method}_{openapi_path(path)}"
    return spec


def _error_schemas() -> dict[str, Any]:
    def schema(codes: Iterable[str]) -> dict[str, Any]:
        return _obj(
            error=_obj(code={"enum": list(codes)}, message=_STR),
        )

    every = [code for codes in ERROR_CODES.values() for code in codes]
    made = {f"Error{status}": schema(codes) for status, codes in ERROR_CODES.items()}
    made["Error0"] = schema(every)
    return made


def openapi_document(routes: Mapping[str, Iterable[str]], server: str = "/") -> dict[str, Any]:
    """The document of ``routes`` (a route's path → its methods; ``HEAD`` where ``GET``),
    served at ``server``. ``KeyError`` for a route this module does not describe."""
    (chat, tool_output), components = msgspec.json.schema_components(
        (ChatRequest, ToolOutput), ref_template=_REF + "{name}"
    )
    schemas = {**components, **_error_schemas()}
    schemas.setdefault("ChatRequest", chat)
    schemas.setdefault("ToolOutput", tool_output)
    paths: dict[str, dict[str, Any]] = {}
    for path, methods in routes.items():
        item = paths.setdefault(openapi_path(path), {})
        for method in sorted(m.lower() for m in methods):
            if method == "head":
                continue
            item[method] = _operation(path, method)
            if method == "get":
                head = dict(item[method], operationId=f"head_{openapi_path(path)}")
                head["summary"] = "Headers of: " + head["summary"]
                item["head"] = head
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "adk-asgi chat API",
            "version": "1",
            "description": "A Google ADK agent served to Vercel AI SDK chat UIs.",
        },
        "servers": [{"url": server}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        # What `authenticate` reads is the app's choice (a bearer token, a cookie): none
        # is also valid with the default anonymous identity.
        "security": [{}, {"bearer": []}],
    }


class OpenApi:
    """The handler of ``GET {api}/openapi.json``; the document is built once per mount."""

    __slots__ = ("_bodies", "_routes")

    def __init__(self, routes: Mapping[str, Iterable[str]]) -> None:
        self._routes = {path: tuple(methods) for path, methods in routes.items()}
        self._bodies: dict[str, bytes] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The path stays full under a mount (``root_path`` holds the prefix): the mount.
        server = str(scope.get("path", "")).removesuffix("/openapi.json") or "/"
        body = self._bodies.get(server)
        if body is None:
            body = msgspec.json.encode(openapi_document(self._routes, server))
            if len(self._bodies) < 16:  # one per mount; a handful at most
                self._bodies[server] = body
        await send_json(send, 200, b"" if scope["method"] == "HEAD" else body)
