"""API errors as the Gemini API reports them: an HTTP status with a JSON body, or a
WebSocket close code with a reason.

HTTP: ``{"error": {"code": 429, "message": "...", "status": "RESOURCE_EXHAUSTED"}}``
(https://ai.google.dev/gemini-api/docs/troubleshooting, "Gemini API backend service error
codes"). WebSocket: the Live API reports the same canonical statuses as close codes;
the documentation does not list them, so the mapping follows what the service is seen to
send (each observation is cited at ``_CLOSE_CODES``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

__all__ = ("ApiError", "close_reason", "invalid_api_key", "missing_api_key")

# Canonical gRPC status names per HTTP status (google.rpc.Code, as the API's JSON
# errors carry them), with the message the Gemini API sends when it gives no detail.
_STATUS: dict[int, tuple[str, str]] = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    403: ("PERMISSION_DENIED", "The caller does not have permission."),
    404: ("NOT_FOUND", "Requested entity was not found."),
    409: ("ABORTED", "The operation was aborted."),
    429: ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    499: ("CANCELLED", "The operation was cancelled."),
    500: (
        "INTERNAL",
        "An internal error has occurred. Please retry or report in "
        "https://developers.generativeai.google/guide/troubleshooting",
    ),
    501: ("UNIMPLEMENTED", "Operation is not implemented, or supported, or enabled."),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
    504: ("DEADLINE_EXCEEDED", "Deadline expired before operation could complete."),
}

# Live API close codes per canonical status. Observed on the real service:
# - 1007 "Request contains an invalid argument." for a malformed client message
#   (vercel/ai#20695, strands-agents/harness-sdk#1999);
# - 1008 for NOT_FOUND ("models/... is not found for API version v1alpha, or is not
#   supported for bidiGenerateContent", google/adk-samples#23, googleapis/python-genai#362;
#   "Requested entity was not found" after a tool response,
#   google-gemini/deprecated-generative-ai-js#487), UNIMPLEMENTED
#   (googleapis/js-genai#1236) and ABORTED (autonomous-ai/autonomous-os#238);
# - 1011 for INTERNAL and DEADLINE_EXCEEDED ("Deadline expired before operation could
#   complete." at the end of a connection's lifetime, google/adk-python#4140);
# - 1000 "The operation was cancelled." (pipecat-ai/pipecat#3112).
# PERMISSION_DENIED and RESOURCE_EXHAUSTED are not documented or seen: 1008 (a policy
# violation) and 1011 are this emulator's choice.
_CLOSE_CODES: dict[str, int] = {
    "INVALID_ARGUMENT": 1007,
    "NOT_FOUND": 1008,
    "PERMISSION_DENIED": 1008,
    "ABORTED": 1008,
    "UNIMPLEMENTED": 1008,
    "FAILED_PRECONDITION": 1008,
    "CANCELLED": 1000,
}
_MAX_REASON_BYTES = 123  # RFC 6455 §5.5: a control frame's payload is at most 125 bytes


class ApiError(Exception):
    """An error the emulator answers with, as the Gemini API would.

    ``ApiError(429)`` is a quota error with Google's text; pass ``message`` to say
    something else. Over HTTP it becomes the status and the JSON body; on a Live API
    connection it closes the WebSocket with `close_code` and the message.
    """

    def __init__(
        self,
        code: int,
        message: str = "",
        status: str = "",
        details: Sequence[dict[str, Any]] = (),
    ) -> None:
        if not 400 <= code <= 599:
            raise ValueError(f"an API error needs a 4xx or 5xx code, got {code}")
        default_status, default_message = _STATUS.get(
            code, ("INTERNAL" if code >= 500 else "FAILED_PRECONDITION", "")
        )
        self.code = code
        self.status = status or default_status
        self.message = message or default_message or self.status
        self.details = tuple(details)
        super().__init__(str(self))

    def __repr__(self) -> str:
        return f"ApiError({self.code}, {self.message!r}, {self.status!r})"

    def _key(self) -> tuple[int, str, str, str]:
        return (self.code, self.message, self.status, json.dumps(self.details, sort_keys=True))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ApiError) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        return f"{self.code} {self.status}: {self.message}"

    def body(self) -> bytes:
        """The JSON body of the HTTP answer (also one SSE ``data:`` event mid-stream)."""
        error: dict[str, Any] = {"code": self.code, "message": self.message, "status": self.status}
        if self.details:
            error["details"] = list(self.details)
        return json.dumps({"error": error}, ensure_ascii=False).encode()

    @property
    def close_code(self) -> int:
        """The WebSocket close code the Live API uses for this status."""
        return _CLOSE_CODES.get(self.status, 1011)

    @property
    def close_reason(self) -> str:
        """The close frame's reason: the message, cut to fit a close frame."""
        return close_reason(self.message)


def close_reason(message: str) -> str:
    """``message`` cut to the 123 bytes a close frame's reason may hold, as the real
    service cuts its long reasons (googleapis/python-genai#362 shows one cut mid-word)."""
    encoded = message.encode()
    if len(encoded) <= _MAX_REASON_BYTES:
        return message
    return encoded[:_MAX_REASON_BYTES].decode(errors="ignore")


def missing_api_key() -> ApiError:
    """A request without an API key.

    The text the Gemini API answers with (seen in google-gemini/deprecated-generative-ai-js#238
    and googleapis/js-genai#898); 403 PERMISSION_DENIED per
    https://ai.google.dev/gemini-api/docs/troubleshooting.
    """
    return ApiError(
        403,
        "Method doesn't allow unregistered callers (callers without established identity). "
        "Please use API Key or other form of API consumer identity to call this API.",
    )


def invalid_api_key() -> ApiError:
    """A key other than the configured one: the example body of
    https://ai.google.dev/gemini-api/docs/troubleshooting (400 ``API_KEY_INVALID``)."""
    message = "API key not valid. Please pass a valid API key."
    return ApiError(
        400,
        message,
        details=(
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"},
            },
            {
                "@type": "type.googleapis.com/google.rpc.LocalizedMessage",
                "locale": "en-US",
                "message": message,
            },
        ),
    )
