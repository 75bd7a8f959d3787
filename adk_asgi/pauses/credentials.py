"""Credentials a tool asks the user for (``tool_context.request_credential(AuthConfig)``,
ADK's ``adk_request_credential`` call): what the page is told, what it may answer, and how
the answer reaches ADK's credential flow without ever being stored where a client reads.

What the page sees is a client tool call ``adk_request_credential`` whose input says what is
asked and never holds a secret (``CredentialRequest.presented``):

- ``{"scheme": "apiKey", "in": "header", "name": "X-Weather-Key", ...}``: answered with
  ``{"apiKey": "..."}``;
- ``{"scheme": "bearer", ...}`` (HTTP bearer): answered with ``{"token": "..."}``;
- ``{"scheme": "oauth2", "authUri": "...", ...}`` (authorization code, OAuth2 or OpenID
  Connect): the page opens ``authUri`` (its ``redirect_uri`` is adk-asgi's callback) and
  the callback answers (``http/oauth.py``).

The secret travels in this process only: the turn that receives it puts it in the
``CredentialHandoff``, and the bridge plugin (``adk/plugin.py``) hands it to ADK's own
``store_auth_response`` when that turn's run starts — the same function ADK applies to a
client's function response, into the session state's ``temp:`` credential, which ADK
never persists; the tool's ``CredentialManager`` exchanges an OAuth2 code itself and keeps
the result in the ``credential_service``. ADK's function response for the call is
``CREDENTIAL_ANSWER``: the session, the stream and the traces never hold the secret.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Final, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..wire.errors import RequestError

__all__ = (
    "CREDENTIAL_ANSWER",
    "CREDENTIAL_TOOL",
    "CredentialHandoff",
    "CredentialRequest",
    "Secret",
    "accept_credential",
    "credential_request",
    "store_credential",
)

logger = logging.getLogger("adk_asgi")

CREDENTIAL_TOOL: Final = "adk_request_credential"
CREDENTIAL_ANSWER: Final = {"adk_asgi": "credential provided to the server"}
"""ADK's function response for an answered credential request (the secret is handed over
apart): a session event holding only such responses is bookkeeping a history hides."""
MAX_SECRET_CHARS: Final = 8192
_WORKFLOW_AUTH: Final = "wf_auth:"
_HANDOFF_TTL: Final = 120.0  # seconds a secret waits for its run before it is dropped

Scheme = Literal["apiKey", "bearer", "oauth2"]


@dataclass(frozen=True, slots=True)
class CredentialRequest:
    """An ``adk_request_credential`` call the page can answer."""

    call_id: str
    function_call_id: str
    """The tool call that asked (its result follows the answer)."""
    scheme: Scheme
    ask: dict[str, Any]
    """What the page is told, apart from the authorization URI."""
    auth_uri: str | None = None
    state: str | None = None

    def presented(self, redirect_uri: str | None) -> dict[str, Any]:
        """The call's input on the page: what is asked, never a secret. An OAuth2
        ``authUri`` sends the user back to ``redirect_uri`` (adk-asgi's callback)."""
        shown = dict(self.ask)
        if self.auth_uri is not None:
            shown["authUri"] = (
                with_redirect(self.auth_uri, redirect_uri) if redirect_uri else self.auth_uri
            )
        return shown


def credential_request(call_id: str, args: dict[str, Any]) -> CredentialRequest | None:
    """What an ``adk_request_credential`` call asks, or None for the kinds a page cannot
    answer (HTTP basic, service accounts, custom schemes, OAuth2 without an authorization
    step): those stay server calls, completed by the application. So does a workflow tool
    node's own request (``wf_auth:<node path>``): ADK reads that credential from the resume's
    function response itself, where adk-asgi never puts a secret."""
    if call_id.startswith(_WORKFLOW_AUTH):
        return None
    config = (
        args.get("authConfig")
        if isinstance(args.get("authConfig"), dict)
        else args.get("auth_config")
    )
    if not isinstance(config, dict):
        return None
    scheme = config.get("authScheme") or config.get("auth_scheme") or {}
    if not isinstance(scheme, dict):
        return None
    kind = scheme.get("type") or scheme.get("type_")
    for_call = str(args.get("functionCallId") or args.get("function_call_id") or "")
    message = args.get("message") if isinstance(args.get("message"), str) else None
    ask: dict[str, Any] = {"functionCallId": for_call}
    if kind == "apiKey":
        name = str(scheme.get("name") or "")
        where = str(scheme.get("in") or scheme.get("in_") or "header")
        ask |= {
            "scheme": "apiKey",
            "in": where,
            "name": name,
            "message": message or f"Please provide your API key ({name}).",
        }
        return CredentialRequest(call_id, for_call, "apiKey", ask)
    if kind == "http" and str(scheme.get("scheme", "")).lower() == "bearer":
        ask |= {"scheme": "bearer", "message": message or "Please provide your access token."}
        if isinstance(scheme.get("bearerFormat"), str):
            ask["bearerFormat"] = scheme["bearerFormat"]
        return CredentialRequest(call_id, for_call, "bearer", ask)
    if kind in ("oauth2", "openIdConnect"):
        exchanged = (
            config.get("exchangedAuthCredential") or config.get("exchanged_auth_credential") or {}
        )
        oauth2 = exchanged.get("oauth2") if isinstance(exchanged, dict) else None
        if not isinstance(oauth2, dict):
            return None
        auth_uri = oauth2.get("authUri") or oauth2.get("auth_uri")
        state = oauth2.get("state")
        if not isinstance(auth_uri, str) or not isinstance(state, str) or not state:
            return None
        ask |= {"scheme": "oauth2", "message": message or "Connect your account to continue."}
        scopes = _scopes(scheme)
        if scopes:
            ask["scopes"] = scopes
        return CredentialRequest(call_id, for_call, "oauth2", ask, auth_uri, state)
    return None


def _scopes(scheme: dict[str, Any]) -> list[str]:
    if isinstance(scheme.get("scopes"), list):
        return [str(s) for s in scheme["scopes"]]
    flows = scheme.get("flows")
    flow = flows.get("authorizationCode") if isinstance(flows, dict) else None
    scopes = flow.get("scopes") if isinstance(flow, dict) else None
    return [str(s) for s in scopes] if isinstance(scopes, dict | list) else []


def with_redirect(auth_uri: str, redirect_uri: str) -> str:
    """``auth_uri`` with its ``redirect_uri`` parameter set to ``redirect_uri``."""
    parts = urlsplit(auth_uri)
    query = [
        (k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "redirect_uri"
    ]
    query.append(("redirect_uri", redirect_uri))
    return urlunsplit(parts._replace(query=urlencode(query)))


class Secret:
    """A credential the user gave, until it is handed to ADK: never shown by ``repr``."""

    __slots__ = ("kind", "value")

    def __init__(self, kind: Literal["apiKey", "token", "authResponse"], value: str) -> None:
        self.kind = kind
        self.value = value

    def __repr__(self) -> str:
        return f"Secret({self.kind}, <redacted>)"


def accept_credential(request: CredentialRequest, result: Any) -> Secret:
    """The page's answer (``addToolOutput``): ``{"apiKey": ...}`` or ``{"token": ...}``.
    Raises ``RequestError`` 422 ``invalid_credential`` (the value is never quoted), or
    ``wrong_answer_kind`` for an OAuth2 request (the sign-in's callback answers it)."""
    if request.scheme == "oauth2":
        raise RequestError(
            422,
            "wrong_answer_kind",
            f"Call {request.call_id!r} is answered by the sign-in: open its authUri.",
        )
    key = "apiKey" if request.scheme == "apiKey" else "token"
    value = result.get(key) if isinstance(result, dict) else None
    if (
        not isinstance(value, str)
        or not value.strip()
        or len(value) > MAX_SECRET_CHARS
        or set(result) != {key}
    ):
        raise RequestError(
            422,
            "invalid_credential",
            f"Call {request.call_id!r} expects {{{key!r}: <a non-empty "
            f"string of at most {MAX_SECRET_CHARS} characters>}}.",
        )
    return Secret("apiKey" if key == "apiKey" else "token", value.strip())


def auth_response(
    args: dict[str, Any], secret: Secret, redirect_uri: str | None = None
) -> dict[str, Any]:
    """What ADK's ``store_auth_response`` takes for the call: the ``AuthConfig`` it asked
    with, its exchanged credential filled in (an OAuth2 response URI is exchanged for
    tokens by ADK)."""
    from google.adk.auth import AuthCredential, AuthCredentialTypes
    from google.adk.auth.auth_credential import HttpAuth, HttpCredentials
    from google.adk.auth.auth_tool import AuthToolArguments

    config = AuthToolArguments.model_validate(args).auth_config.model_copy(deep=True)
    if secret.kind == "apiKey":
        config.exchanged_auth_credential = AuthCredential(
            auth_type=AuthCredentialTypes.API_KEY, api_key=secret.value
        )
    elif secret.kind == "token":
        config.exchanged_auth_credential = AuthCredential(
            auth_type=AuthCredentialTypes.HTTP,
            http=HttpAuth(scheme="bearer", credentials=HttpCredentials(token=secret.value)),
        )
    else:
        exchanged = config.exchanged_auth_credential
        if exchanged is None or exchanged.oauth2 is None:
            raise ValueError("an OAuth2 request without its exchanged credential")
        exchanged.oauth2.auth_response_uri = secret.value
        if redirect_uri:
            exchanged.oauth2.redirect_uri = redirect_uri
    dumped: dict[str, Any] = config.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


@dataclass(slots=True)
class _Handed:
    call_id: str
    args: dict[str, Any]
    secret: Secret
    redirect_uri: str | None
    expires: float = field(default=0.0)


class CredentialHandoff:
    """Credentials on their way into ADK: put by the turn that received them (HTTP, the
    OAuth2 callback or the live gate), taken by the bridge plugin when that turn's run
    starts, in this process. A run that never starts leaves nothing behind for long."""

    def __init__(self) -> None:
        self._entries: defaultdict[tuple[str, str], list[_Handed]] = defaultdict(list)
        self._lock = threading.Lock()

    def put(
        self,
        user_id: str,
        session_id: str,
        call_id: str,
        args: dict[str, Any],
        secret: Secret,
        redirect_uri: str | None = None,
    ) -> None:
        with self._lock:
            self._entries[(user_id, session_id)].append(
                _Handed(call_id, args, secret, redirect_uri, time.monotonic() + _HANDOFF_TTL)
            )

    def take(self, user_id: str, session_id: str) -> list[_Handed]:
        now = time.monotonic()
        with self._lock:
            entries = self._entries.pop((user_id, session_id), [])
            for key in [k for k, v in self._entries.items() if all(e.expires < now for e in v)]:
                del self._entries[key]
        return [e for e in entries if e.expires >= now]

    def drop(self, user_id: str, session_id: str) -> None:
        with self._lock:
            self._entries.pop((user_id, session_id), None)

    async def apply(self, user_id: str, session_id: str, state: Any) -> None:
        """Store the credentials handed over for this session's run into its state, as
        ADK stores a client's credential response (``temp:``: never persisted)."""
        for entry in self.take(user_id, session_id):
            await store_credential(
                entry.args, entry.secret, entry.redirect_uri, state, entry.call_id
            )


async def store_credential(
    args: dict[str, Any], secret: Secret, redirect_uri: str | None, state: Any, call_id: str
) -> bool:
    """Hand a credential to ADK's own ``store_auth_response`` for the request ``args``
    (into ``state``, the run's session state); False (logged) when ADK refused it."""
    from google.adk.auth._auth_resume import store_auth_response
    from google.adk.auth.auth_tool import AuthToolArguments

    try:
        requested = AuthToolArguments.model_validate(args).auth_config
        stored = await store_auth_response(
            requested=requested,
            response=auth_response(args, secret, redirect_uri),
            state=state,
            interrupt_id=call_id,
        )
    except Exception as exc:  # a malformed request: the tool asks again
        logger.warning(
            "The credential for call %r could not be stored: %s", call_id, type(exc).__name__
        )
        return False
    if stored is None:
        logger.warning("ADK did not accept the credential for call %r", call_id)
        return False
    return True
