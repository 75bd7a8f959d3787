"""The OpenAPI document cannot drift from the code: every route of the app's table is in it
and nothing else, every stable error code the package answers is in it (and on the HTTP
API page), the copy the docs site serves is the document, and ``GET {api}/openapi.json``
serves it publicly with the mount as its server, even when ``authenticate`` refuses.

The fuzzer that runs the document against a live server: ``test_openapi_fuzz.py``."""

from __future__ import annotations

import ast
import json

import httpx
import pytest
from agents.artifacts.agent import build_app
from starlette.applications import Starlette
from starlette.routing import Mount

from adk_asgi import AdkApp
from adk_asgi.http.openapi import ERROR_CODES, openapi_document, openapi_path
from adk_asgi.http.routes import route_methods
from adk_asgi.transport.auth import AuthError

from support import ROOT

PACKAGE = ROOT / "adk_asgi"
PUBLISHED = ROOT / "docs" / "reference" / "openapi.json"
_RAISERS = {"RequestError": 0, "send_json_error": 1, "error_body": 0}


def _refuse(scope: object) -> str:
    raise AuthError(401, "Sign in first.")


@pytest.fixture(scope="module")
def app() -> AdkApp:
    return AdkApp(adk_app=build_app(), authenticate=_refuse)


def _raised_codes() -> set[tuple[int | None, str]]:
    """Every (status, code) the package's source passes to a JSON error as literals."""
    found: set[tuple[int | None, str]] = set()
    for path in PACKAGE.rglob("*.py"):
        if "live" in path.relative_to(PACKAGE).parts:
            continue  # WebSocket frames' errors (live mode), never an HTTP answer
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if name not in _RAISERS:
                continue
            literals = [a.value for a in node.args if isinstance(a, ast.Constant)]
            status = next((v for v in literals if isinstance(v, int)), None)
            codes = [v for v in literals if isinstance(v, str) and v.replace("_", "").isalpha()]
            if codes and codes[0].islower():
                found.add((status, codes[0]))
            # A dict literal {"code": ...} (the probes build theirs).
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if (
                        isinstance(key, ast.Constant)
                        and key.value == "code"
                        and isinstance(value, ast.Constant)
                        and isinstance(value.value, str)
                    ):
                        found.add((None, value.value))
    return found


def test_every_route_is_described_and_nothing_else(app: AdkApp) -> None:
    routes = route_methods(app._router)
    document = openapi_document(routes)
    expected = {
        (openapi_path(path), method.lower())
        for path, methods in routes.items()
        for method in methods
    }
    described = {
        (path, method)
        for path, item in document["paths"].items()
        for method in item
        if method in ("get", "head", "post", "put", "patch", "delete")
    }
    assert described == expected
    assert ("/openapi.json", "get") in described
    # Every operation the module knows is a route of the app (none left over).
    from adk_asgi.http import openapi

    assert set(openapi._OPERATIONS) == {
        (path, method.lower()) for path, methods in routes.items() for method in methods
    } - {(path, "head") for path in routes}


def test_every_error_code_is_documented() -> None:
    listed = {(status, code) for status, codes in ERROR_CODES.items() for code in codes}
    listed_codes = {code for _, code in listed}
    raised = _raised_codes()
    missing = {(s, c) for s, c in raised if c not in listed_codes}
    assert not missing, f"codes the package answers that the document lacks: {missing}"
    wrong = {(s, c) for s, c in raised if s is not None and (s, c) not in listed}
    assert not wrong, f"codes under another status in the document: {wrong}"
    raised_codes = {c for _, c in raised} | {"unauthorized", "forbidden"}  # http/errors.py
    assert listed_codes <= raised_codes, listed_codes - raised_codes
    page = (ROOT / "docs" / "reference" / "http-api.md").read_text()
    assert not {c for c in listed_codes if f"{c}" not in page}


def test_the_docs_site_serves_the_document(app: AdkApp) -> None:
    document = openapi_document(route_methods(app._router), "/api/chat")
    published = json.loads(PUBLISHED.read_text())
    assert published == json.loads(json.dumps(document)), (
        "docs/reference/openapi.json is stale: regenerate it with "
        "`PYTHONPATH=tests python tests/http/test_openapi.py`"
    )


async def test_served_publicly_at_the_mount(app: AdkApp) -> None:
    host = Starlette(routes=[Mount("/api/chat", app=app)])
    transport = httpx.ASGITransport(host)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        answer = await client.get("/api/chat/openapi.json")
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "application/json"
        document = answer.json()
        assert document["openapi"] == "3.1.0"
        assert document["servers"] == [{"url": "/api/chat"}]
        assert "/{chatId}/artifacts/{name}" in document["paths"]
        head = await client.head("/api/chat/openapi.json")
        assert head.status_code == 200 and head.content == b""
        # Every other route stays behind `authenticate`.
        refused = await client.get("/api/chat/some-chat")
        assert refused.json()["error"]["code"] == "unauthorized"


if __name__ == "__main__":  # regenerates the docs site's copy
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    routes = route_methods(AdkApp(adk_app=build_app())._router)
    PUBLISHED.write_text(json.dumps(openapi_document(routes, "/api/chat"), indent=2) + "\n")
