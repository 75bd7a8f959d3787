"""An assistant whose tools call a third-party service with the user's own credentials,
the way ADK 2.13 apps do it: ``AuthenticatedFunctionTool`` with an ``AuthConfig`` (ADK's
``CredentialManager`` asks the user through ``tool_context.request_credential`` when it
has no credential, and keeps the one it gets in the ``credential_service``).

    assistant (LlmAgent, scripted model)
      get_weather   API key in the X-Weather-Key header   ("weather in <city>")
      list_notes    HTTP bearer token                      ("my notes")
      list_repos    OAuth2 authorization code (+ secret)   ("my repos")
      request_input ADK's own tool: the model asks the user ("ask me")

The service is ``tests/support/provider_server.py``, found at ``$ACCOUNTS_PROVIDER_URL``;
``build_app(url)`` builds the app for another one. ``app`` is the ADK ``App``
(``adk-asgi serve tests.agents.accounts.agent:app``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import Any

import httpx
from fastapi.openapi.models import (
    APIKey,
    APIKeyIn,
    HTTPBearer,
    OAuth2,
    OAuthFlowAuthorizationCode,
    OAuthFlows,
)
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.auth import AuthConfig, AuthCredential, AuthCredentialTypes
from google.adk.auth.auth_credential import OAuth2Auth
from google.adk.tools import BaseTool, request_input
from google.adk.tools.authenticated_function_tool import AuthenticatedFunctionTool
from google.genai import types

from ..team.scripted import Reply, ScriptedModel, latest

__all__ = ("app", "build_app", "root_agent")

_CITY = re.compile(r"weather in (\w+)", re.IGNORECASE)


def _tools(provider: str) -> list[BaseTool]:
    async def get_weather(city: str, credential: AuthCredential) -> dict[str, Any]:
        """The weather in a city (the user's weather API key)."""
        async with httpx.AsyncClient() as client:
            answer = await client.get(
                f"{provider}/api/weather",
                params={"city": city},
                headers={"X-Weather-Key": credential.api_key or ""},
            )
        return answer.json() if answer.status_code == 200 else {"error": "weather API refused"}

    async def list_notes(credential: AuthCredential) -> dict[str, Any]:
        """The user's notes (their personal access token)."""
        token = credential.http.credentials.token if credential.http else ""
        async with httpx.AsyncClient() as client:
            answer = await client.get(
                f"{provider}/api/notes", headers={"Authorization": f"Bearer {token}"}
            )
        return answer.json() if answer.status_code == 200 else {"error": "notes API refused"}

    async def list_repos(credential: AuthCredential) -> dict[str, Any]:
        """The user's repositories (they sign in with OAuth2)."""
        token = credential.oauth2.access_token if credential.oauth2 else ""
        async with httpx.AsyncClient() as client:
            answer = await client.get(
                f"{provider}/api/repos", headers={"Authorization": f"Bearer {token}"}
            )
        return answer.json() if answer.status_code == 200 else {"error": "repos API refused"}

    weather_auth = AuthConfig(
        auth_scheme=APIKey(**{"in": APIKeyIn.header, "name": "X-Weather-Key"})
    )
    notes_auth = AuthConfig(auth_scheme=HTTPBearer(bearerFormat="opaque"))
    repos_auth = AuthConfig(
        auth_scheme=OAuth2(
            flows=OAuthFlows(
                authorizationCode=OAuthFlowAuthorizationCode(
                    authorizationUrl=f"{provider}/authorize",
                    tokenUrl=f"{provider}/token",
                    scopes={"repo:read": "Read your repositories"},
                )
            )
        ),
        raw_auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.OAUTH2,
            oauth2=OAuth2Auth(
                client_id=os.environ.get("ACCOUNTS_CLIENT_ID", "adk-asgi-tests"),
                client_secret=os.environ.get("ACCOUNTS_CLIENT_SECRET", "client-secret-9f2c1e"),
            ),
        ),
    )
    return [
        AuthenticatedFunctionTool(
            func=get_weather,
            auth_config=weather_auth,
            response_for_auth_required={"pending": "Waiting for your weather API key."},
        ),
        AuthenticatedFunctionTool(
            func=list_notes,
            auth_config=notes_auth,
            response_for_auth_required={"pending": "Waiting for your notes token."},
        ),
        AuthenticatedFunctionTool(
            func=list_repos,
            auth_config=repos_auth,
            response_for_auth_required={"pending": "Waiting for you to connect your account."},
        ),
        request_input,
    ]


def _plan(contents: Sequence[types.Content]) -> Reply | None:
    said = latest(contents)
    if said is None:
        return None
    if said.responses:
        results = [r.response or {} for r in said.responses]
        if any("pending" in r for r in results):
            return None  # the tool waits for the user's credential
        if said.responses[0].name == "adk_request_input":
            return Reply(text=f"Booked {results[0].get('result')} nights.")
        return Reply(text="Here you go: " + json.dumps(results[0], sort_keys=True))
    text = said.text or ""
    if (city := _CITY.search(text)) is not None:
        return Reply(
            text=f"Let me check the weather in {city.group(1)}.",
            calls=(("get_weather", {"city": city.group(1)}),),
        )
    if "notes" in text.lower():
        return Reply(calls=(("list_notes", {}),))
    if "ask me" in text.lower():
        return Reply(
            calls=(
                (
                    "adk_request_input",
                    {
                        "message": "How many nights?",
                        "response_schema": {"type": "integer", "minimum": 1, "maximum": 14},
                    },
                ),
            )
        )
    if "repos" in text.lower():
        return Reply(text="Let me look at your repositories.", calls=(("list_repos", {}),))
    return Reply(text="Ask me about the weather, your notes or your repos.")


def build_root_agent(provider: str) -> LlmAgent:
    return LlmAgent(
        name="assistant",
        model=ScriptedModel(planner=_plan),
        instruction="Help with the user's accounts.",
        tools=_tools(provider),
    )


def build_app(provider: str) -> App:
    return App(name="accounts", root_agent=build_root_agent(provider))


root_agent = build_root_agent(os.environ.get("ACCOUNTS_PROVIDER_URL", "http://127.0.0.1:9"))
app = App(name="accounts", root_agent=root_agent)
