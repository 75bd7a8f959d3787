"""API keys: the Gemini Developer API takes a key in the ``x-goog-api-key`` header or
the ``key`` query parameter (https://ai.google.dev/gemini-api/docs/api-key), and an
ephemeral token as ``Authorization: Token auth_tokens/...`` or ``access_token=`` on the
Live API's ``BidiGenerateContentConstrained`` method
(https://ai.google.dev/gemini-api/docs/ephemeral-tokens)."""

from __future__ import annotations

from collections.abc import Mapping

from .errors import ApiError, invalid_api_key, missing_api_key
from .settings import EmulatorSettings

__all__ = ("check_credentials",)


def check_credentials(
    headers: Mapping[str, str],
    query: Mapping[str, str],
    settings: EmulatorSettings,
    *,
    ephemeral: bool = False,
) -> ApiError | None:
    """None when the request carries an acceptable key, else the error to answer."""
    if ephemeral:
        authorization = headers.get("authorization", "")
        token = authorization[6:].strip() if authorization.startswith("Token ") else ""
        token = token or query.get("access_token", "")
        # Any ephemeral token is accepted: the emulator issues none to check against.
        return None if token.startswith("auth_tokens/") else missing_api_key()
    key = headers.get("x-goog-api-key") or query.get("key", "")
    if not key:
        return missing_api_key()
    if settings.api_key is not None and key != settings.api_key:
        return invalid_api_key()
    return None
