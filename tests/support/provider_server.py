"""A third-party service on loopback for the credential tests: a real OAuth2 authorization
server (authlib's ``AuthorizationServer`` with the authorization-code grant and PKCE), a
consent page a user answers in the browser, and the APIs the test agent's tools call with
the user's credentials (an API key, a bearer token, an OAuth2 access token).

It records every credential its APIs received and every token it issued, so tests can
check that the secret reached the tool through ADK's credential flow, and grep for the
tokens everywhere the client, the stream store and the logs could have seen them.
"""

from __future__ import annotations

import html
import json
import os
import secrets
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, ClassVar
from urllib.parse import urlencode

import httpx
from authlib.oauth2.rfc6749 import AuthorizationServer, ClientMixin, grants
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload, JsonRequest, OAuth2Request
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7636 import CodeChallenge
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

__all__ = (
    "CLIENT_ID",
    "CLIENT_SECRET",
    "NOTES_TOKEN",
    "WEATHER_KEY",
    "Provider",
    "ProviderProcess",
)

CLIENT_ID = "adk-asgi-tests"
CLIENT_SECRET = "client-secret-" + "9f2c1e"  # the agent's, never the user's
WEATHER_KEY = "wk-live-" + "5e1f0b7a3c9d2468"
"""The API key a user owns for the weather API (the page types it)."""
NOTES_TOKEN = "nt-" + "b7c1d9e2a4f60853"
"""A personal access token for the notes API (HTTP bearer)."""


@dataclass
class _Client(ClientMixin):
    redirect_uris: list[str]

    def get_client_id(self) -> str:
        return CLIENT_ID

    def get_default_redirect_uri(self) -> str:
        return self.redirect_uris[0]

    def get_allowed_scope(self, scope: str) -> str:
        allowed = {"repo:read", "profile"}
        return " ".join(s for s in (scope or "").split() if s in allowed)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.redirect_uris

    def check_client_secret(self, client_secret: str) -> bool:
        return secrets.compare_digest(client_secret, CLIENT_SECRET)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method in ("client_secret_basic", "client_secret_post")

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        # refresh_token: the token response carries a refresh token (tests look for it)
        return grant_type in ("authorization_code", "refresh_token")


@dataclass
class _Code:
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    user: str
    code_challenge: str | None
    code_challenge_method: str | None
    expires: float

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope

    def is_expired(self) -> bool:
        return time.time() > self.expires


@dataclass
class ProviderState:
    codes: dict[str, _Code] = field(default_factory=dict)
    tokens: dict[str, dict[str, Any]] = field(default_factory=dict)  # access token -> token
    issued: list[dict[str, Any]] = field(default_factory=list)
    seen: list[tuple[str, str]] = field(default_factory=list)  # (api, credential)
    consents: list[str] = field(default_factory=list)  # "allow" / "deny"
    lock: threading.Lock = field(default_factory=threading.Lock)


class _CodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = ["client_secret_basic", "client_secret_post"]

    def save_authorization_code(self, code: str, request: OAuth2Request) -> None:
        data = request.payload.data
        state: ProviderState = self.server.state  # type: ignore[attr-defined]
        state.codes[code] = _Code(
            code,
            CLIENT_ID,
            request.payload.redirect_uri,
            request.payload.scope or "",
            request.user,
            data.get("code_challenge"),
            data.get("code_challenge_method"),
            time.time() + 300,
        )

    def query_authorization_code(self, code: str, client: _Client) -> _Code | None:
        return self.server.state.codes.get(code)  # type: ignore[attr-defined, no-any-return]

    def delete_authorization_code(self, authorization_code: _Code) -> None:
        self.server.state.codes.pop(authorization_code.code, None)  # type: ignore[attr-defined]

    def authenticate_user(self, authorization_code: _Code) -> str:
        return authorization_code.user


class _Request(OAuth2Request):
    def __init__(
        self, method: str, uri: str, headers: Any, args: dict[str, str], form: dict[str, str]
    ) -> None:
        super().__init__(method, uri, headers=headers)
        self._args, self._form = args, form
        self.payload = BasicOAuth2Payload({**args, **form})

    @property
    def args(self) -> dict[str, str]:
        return self._args

    @property
    def form(self) -> dict[str, str]:
        return self._form


class _Server(AuthorizationServer):
    def __init__(self, state: ProviderState, client: _Client) -> None:
        super().__init__(scopes_supported=["repo:read", "profile"])
        self.state = state
        self.client = client
        self.register_token_generator(
            "default",
            BearerTokenGenerator(
                access_token_generator=lambda **_: "at-" + secrets.token_hex(16),
                refresh_token_generator=lambda **_: "rt-" + secrets.token_hex(16),
            ),
        )
        self.register_grant(_CodeGrant, [CodeChallenge(required=False)])

    def query_client(self, client_id: str) -> _Client | None:
        return self.client if client_id == CLIENT_ID else None

    def save_token(self, token: dict[str, Any], request: OAuth2Request) -> None:
        with self.state.lock:
            self.state.tokens[token["access_token"]] = {**token, "user": request.user}
            self.state.issued.append(dict(token))

    def create_oauth2_request(self, request: Any) -> OAuth2Request:
        assert isinstance(request, OAuth2Request)
        return request

    def create_json_request(self, request: Any) -> JsonRequest:
        raise NotImplementedError

    def handle_response(self, status: int, body: Any, headers: list[tuple[str, str]]) -> Response:
        headers_dict = dict(headers)
        if isinstance(body, dict):
            return JSONResponse(body, status, headers=headers_dict)
        return Response(body or b"", status, headers=headers_dict)

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        return None


async def _oauth_request(request: Request) -> _Request:
    form = (
        {k: str(v) for k, v in (await request.form()).items()} if request.method == "POST" else {}
    )
    return _Request(
        request.method, str(request.url), request.headers, dict(request.query_params), form
    )


class Provider:
    """The service's ASGI app and what it saw. ``redirect_uris`` are the registered ones
    (adk-asgi's callback)."""

    def __init__(self, redirect_uris: list[str] | None = None) -> None:
        self.state = ProviderState()
        self.client = _Client(list(redirect_uris or []))
        self.server = _Server(self.state, self.client)
        self.app = Starlette(
            routes=[
                Route("/authorize", self.authorize, methods=["GET", "POST"]),
                Route("/token", self.token, methods=["POST"]),
                Route("/api/repos", self.repos),
                Route("/api/weather", self.weather),
                Route("/api/notes", self.notes),
                Route("/_state", self.dump),
                Route("/_redirect", self.register, methods=["POST"]),
            ]
        )

    @property
    def access_tokens(self) -> list[str]:
        return [t["access_token"] for t in self.state.issued]

    @property
    def refresh_tokens(self) -> list[str]:
        return [t["refresh_token"] for t in self.state.issued if t.get("refresh_token")]

    async def dump(self, request: Request) -> Response:
        """What the service saw (for tests driving it in another process)."""
        with self.state.lock:
            return JSONResponse(
                {
                    "issued": self.state.issued,
                    "seen": [list(s) for s in self.state.seen],
                    "consents": self.state.consents,
                }
            )

    async def register(self, request: Request) -> Response:
        self.client.redirect_uris.append((await request.json())["uri"])
        return JSONResponse({"ok": True})

    async def authorize(self, request: Request) -> Response:
        oauth = await _oauth_request(request)
        if request.method == "GET":
            try:
                grant = self.server.get_consent_grant(oauth)
            except Exception as exc:  # shown to the user, like a real provider
                return HTMLResponse(f"<p id=error>{html.escape(str(exc))}</p>", 400)
            scope = grant.request.payload.scope or ""
            hidden = "".join(
                f'<input type=hidden name="{html.escape(k)}" value="{html.escape(v)}">'
                for k, v in oauth.args.items()
            )
            return HTMLResponse(
                "<!doctype html><title>Demo Repos — authorize</title>"
                f"<h1>Allow adk-asgi tests to read your repositories ({html.escape(scope)})?</h1>"
                f'<form method=post action="/authorize?{urlencode(oauth.args)}">{hidden}'
                "<button name=decision value=allow>Allow</button> "
                "<button name=decision value=deny>Deny</button></form>"
            )
        decision = oauth.form.get("decision")
        with self.state.lock:
            self.state.consents.append(str(decision))
        user = "alice" if decision == "allow" else None
        response = self.server.create_authorization_response(oauth, grant_user=user)
        return response  # type: ignore[no-any-return]

    async def token(self, request: Request) -> Response:
        response = self.server.create_token_response(await _oauth_request(request))
        return response  # type: ignore[no-any-return]

    def _bearer(self, request: Request) -> str | None:
        header = request.headers.get("authorization", "")
        return header[7:] if header.lower().startswith("bearer ") else None

    async def repos(self, request: Request) -> Response:
        token = self._bearer(request)
        with self.state.lock:
            self.state.seen.append(("repos", token or ""))
            owner = self.state.tokens.get(token or "", {}).get("user")
        if owner is None:
            return JSONResponse({"error": "invalid_token"}, 401)
        return JSONResponse({"owner": owner, "repos": ["adk-asgi", "lisbon-trip"]})

    async def weather(self, request: Request) -> Response:
        key = request.headers.get("x-weather-key", "")
        with self.state.lock:
            self.state.seen.append(("weather", key))
        if not secrets.compare_digest(key, WEATHER_KEY):
            return JSONResponse({"error": "invalid_key"}, 401)
        city = request.query_params.get("city", "?")
        return JSONResponse({"city": city, "forecast": "sunny, 24°C"})

    async def notes(self, request: Request) -> Response:
        token = self._bearer(request) or ""
        with self.state.lock:
            self.state.seen.append(("notes", token))
        if not secrets.compare_digest(token, NOTES_TOKEN):
            return JSONResponse({"error": "invalid_token"}, 401)
        return JSONResponse({"notes": ["Pack sunscreen", "Book the tram tour"]})


class ProviderProcess:
    """The service in a process of its own (its logs are not the logs under test)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""

    def __enter__(self) -> ProviderProcess:
        from .ports import free_port

        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(
            [sys.executable, __file__, str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
            env={k: v for k, v in os.environ.items() if not k.startswith("GOOGLE_")},
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{self.url}/_state", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the provider did not start")
            time.sleep(0.1)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)

    def register(self, redirect_uri: str) -> None:
        httpx.post(f"{self.url}/_redirect", json={"uri": redirect_uri}).raise_for_status()

    def state(self) -> dict[str, Any]:
        answer: dict[str, Any] = json.loads(httpx.get(f"{self.url}/_state").text)
        return answer

    def tokens(self) -> list[str]:
        """Every access and refresh token the service issued."""
        return [
            t[k]
            for t in self.state()["issued"]
            for k in ("access_token", "refresh_token")
            if t.get(k)
        ]


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(Provider().app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
