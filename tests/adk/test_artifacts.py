"""Artifacts: what an agent saves reaches the page as a ``file`` part, and the chat's
artifact route serves it to the chat's owner only (a real ADK Runner and the artifacts test
agent, tests/agents/artifacts; the AI SDK clients and the live transports are in
test_artifacts_clients.py, Chromium in test_browser_artifacts.py)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from agents.artifacts.agent import build_app, chart_png, table_csv
from google.adk.artifacts import FileArtifactService, InMemoryArtifactService
from google.adk.memory import InMemoryMemoryService
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types
from starlette.applications import Starlette

from adk_asgi import AdkApp, AdkMiddleware, StorageOptions, mount
from adk_asgi.adk.artifacts import artifact_url
from adk_asgi.adk.memory_artifacts import BoundedMemoryArtifacts
from adk_asgi.adk.services import artifact_service_from_url, memory_service_from_url
from adk_asgi.chunks import encode_chunk
from adk_asgi.cli.build import build_app as build_cli_app
from adk_asgi.cli.build import warn_per_worker as _warn_per_worker
from adk_asgi.cli.flags import parser
from adk_asgi.cli.targets import Target, TargetError
from adk_asgi.http.artifacts import _disposition, _header_type, _Unsatisfiable, byte_range

from support import LoopbackServer, chat_body, not_found_app, parse_sse, types_of, user_message
from support.ws_client import LiveClient, ws_url

API = "/api/chat"


def by_header(scope: Any) -> str:
    """Who is asking: the ``x-user`` header (a stand-in for a real identity)."""
    for name, value in scope.get("headers", ()):
        if name == b"x-user":
            return str(value.decode())
    return "alice"


def site(chat: AdkApp) -> Starlette:
    host = Starlette()
    mount(host, API, chat)
    return host


@pytest.fixture
async def chat() -> AsyncIterator[AdkApp]:
    app = AdkApp(adk_app=build_app(), authenticate=by_header, warm_up=False)
    yield app
    await app.shutdown()


@pytest.fixture
async def client(chat: AdkApp) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=site(chat))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        yield c


async def turn(
    client: httpx.AsyncClient, chat_id: str, text: str, user: str = "alice"
) -> list[Any]:
    response = await client.post(
        API, json=chat_body(chat_id, user_message(text)), headers={"x-user": user}
    )
    assert response.status_code == 200, response.text
    return parse_sse(response.text)


def files(chunks: list[Any]) -> list[dict[str, Any]]:
    return [c for c in chunks if isinstance(c, dict) and c["type"] == "file"]


# -- services ----------------------------------------------------------------------------


def test_services_come_from_adks_uris(tmp_path: Path) -> None:
    assert isinstance(artifact_service_from_url(None), BoundedMemoryArtifacts)
    assert isinstance(artifact_service_from_url("memory://"), BoundedMemoryArtifacts)
    on_disk = artifact_service_from_url(f"file://{tmp_path}/artifacts")
    assert isinstance(on_disk, FileArtifactService)
    assert on_disk.root_dir == (tmp_path / "artifacts").resolve()
    with pytest.raises(ValueError, match="google-cloud-storage"):
        artifact_service_from_url("gs://bucket")  # not installed here
    with pytest.raises(ValueError, match="memory://, file:///path, gs://bucket"):
        artifact_service_from_url("s3://bucket")
    assert isinstance(memory_service_from_url(None), InMemoryMemoryService)
    assert (
        type(memory_service_from_url(f"sqlite:///{tmp_path}/m.db")).__name__
        == "SqliteMemoryService"
    )
    with pytest.raises(ValueError, match=r"sqlite:///path\.db"):
        memory_service_from_url("redis://memory")


async def test_adk_app_takes_services_or_uris(tmp_path: Path) -> None:
    default = AdkApp(adk_app=build_app(), warm_up=False)
    assert isinstance(default.runtime.runner.artifact_service, InMemoryArtifactService)
    assert isinstance(default.runtime.runner.memory_service, InMemoryMemoryService)
    given = InMemoryArtifactService()
    assert (
        AdkApp(
            adk_app=build_app(), artifact_service=given, warm_up=False
        ).runtime.runner.artifact_service
        is given
    )
    on_disk = AdkApp(
        adk_app=build_app(),
        artifact_service=f"file://{tmp_path}",
        memory_service=f"sqlite:///{tmp_path}/memory.db",
        warm_up=False,
    )
    assert isinstance(on_disk.runtime.runner.artifact_service, FileArtifactService)
    await on_disk.startup()
    await on_disk.shutdown()  # closes the sqlite memory it built
    runner = Runner(app=build_app(), session_service=InMemorySessionService())
    with pytest.raises(TypeError, match="brings its own artifact and memory"):
        AdkApp(runner=runner, artifact_service=given)
    with pytest.raises(ValueError, match="uploads_as_artifacts needs an artifact service"):
        AdkApp(runner=runner, storage=StorageOptions(uploads_as_artifacts=True))
    with pytest.raises(ValueError, match="remember_sessions needs a memory service"):
        AdkApp(runner=runner, storage=StorageOptions(remember_sessions=True))
    with pytest.raises(ValueError, match="artifact service URI"):
        AdkApp(adk_app=build_app(), artifact_service="nope://x")


def test_cli_flags(tmp_path: Path) -> None:
    args = parser().parse_args(
        [
            "serve",
            "--artifact-service",
            f"file://{tmp_path}",
            "--memory-service",
            f"sqlite:///{tmp_path}/m.db",
            "--uploads-as-artifacts",
            "--remember-sessions",
        ]
    )
    app = build_cli_app(args, Target("app", build_app(), "artifacts"))
    runner = app.adk.runtime.runner
    assert isinstance(runner.artifact_service, FileArtifactService)
    assert type(runner.memory_service).__name__ == "SqliteMemoryService"
    assert any(
        type(p).__name__ == "SaveFilesAsArtifactsPlugin" for p in runner.plugin_manager.plugins
    )
    ready = Runner(app=build_app(), session_service=InMemorySessionService())
    with pytest.raises(TargetError, match="--artifact-service and --memory-service cannot"):
        build_cli_app(args, Target("runner", ready, "my:runner"))
    with pytest.raises(TargetError, match="artifact service URI"):
        build_cli_app(
            parser().parse_args(["serve", "--artifact-service", "nope://x"]),
            Target("app", build_app(), "artifacts"),
        )


def test_workers_are_warned_about_services_in_memory(caplog: pytest.LogCaptureFixture) -> None:
    def warnings(*flags: str) -> list[str]:
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="adk_asgi"):
            _warn_per_worker(parser().parse_args(["serve", "--workers", "2", *flags]))
        return [r.getMessage() for r in caplog.records]

    [artifacts] = warnings()
    assert "artifacts in memory" in artifacts and "--artifact-service" in artifacts
    assert len(warnings("--remember-sessions")) == 2
    assert (
        warnings(
            "--artifact-service",
            "file:///srv/a",
            "--remember-sessions",
            "--memory-service",
            "sqlite:///m.db",
        )
        == []
    )


# -- file parts -----------------------------------------------------------------------------


async def test_a_saved_artifact_is_a_file_part_served_at_its_url(
    chat: AdkApp, client: httpx.AsyncClient
) -> None:
    chunks = await turn(client, "c1", "chart sales")
    [part] = files(chunks)
    assert part == {
        "type": "file",
        "mediaType": "image/png",
        "url": f"{API}/c1/artifacts/chart.png?version=0",
        "providerMetadata": {"adk": {"artifact": "chart.png", "version": 0}},
    }
    # The same part from the session alone (what a chat's history shows).
    runtime = chat.runtime
    session = await runtime.session_service.get_session(
        app_name=runtime.app_name, user_id="alice", session_id="c1"
    )
    assert session is not None
    rebuilt = [
        json.loads(encode_chunk(f))
        for e in session.events
        for f in await runtime.artifacts.files(e, user_id="alice", chat_id="c1", api_path=API)
    ]
    assert rebuilt == [part]
    kinds = types_of(chunks)
    # Right after the result of the tool that saved it, in the same step.
    assert kinds.index("file") == kinds.index("tool-output-available") + 1
    assert kinds[kinds.index("file") + 1] == "finish-step"

    got = await client.get(part["url"])
    assert got.status_code == 200
    assert got.content == chart_png("sales")
    headers = got.headers
    assert headers["content-type"] == "image/png"
    assert headers["content-length"] == str(len(chart_png("sales")))
    assert (
        headers["content-disposition"]
        == "inline; filename=\"chart.png\"; filename*=UTF-8''chart.png"
    )
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["cache-control"] == "private, no-cache"
    assert headers["accept-ranges"] == "bytes"
    assert headers["etag"].startswith('"') and headers["last-modified"].endswith("GMT")

    head = await client.head(part["url"])
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == headers["content-length"]
    cached = await client.get(part["url"], headers={"if-none-match": headers["etag"]})
    assert cached.status_code == 304 and cached.content == b""
    assert cached.headers["etag"] == headers["etag"]

    # A second chart is version 1; both versions stay, the latest without ?version.
    [again] = files(await turn(client, "c1", "chart costs"))
    assert again["url"] == f"{API}/c1/artifacts/chart.png?version=1"
    assert (await client.get(part["url"])).content == chart_png("sales")
    latest = await client.get(f"{API}/c1/artifacts/chart.png")
    assert latest.content == chart_png("costs")
    assert latest.headers["etag"] != headers["etag"]
    stale = await client.get(again["url"], headers={"if-none-match": headers["etag"]})
    assert stale.status_code == 200

    listing = (await client.get(f"{API}/c1/artifacts")).json()
    [chart] = listing["artifacts"]
    assert chart["name"] == "chart.png"
    assert [(v["version"], v["mediaType"], v["url"]) for v in chart["versions"]] == [
        (0, "image/png", part["url"]),
        (1, "image/png", again["url"]),
    ]
    assert all(v["createdAt"].endswith("Z") for v in chart["versions"])


async def test_a_callback_saves_artifacts_too(client: httpx.AsyncClient) -> None:
    chunks = await turn(client, "c2", "notes please")
    [part] = files(chunks)
    assert part["mediaType"] == "text/markdown"
    assert part["url"].endswith("/c2/artifacts/notes.md?version=0")
    got = await client.get(part["url"])
    assert got.content == b"# Notes\n\n- saved\n"
    # Not a type a browser shows without running anything: downloaded, never rendered.
    assert got.headers["content-disposition"].startswith("attachment;")


async def test_only_the_owner_gets_artifacts(client: httpx.AsyncClient) -> None:
    [part] = files(await turn(client, "mine", "chart secret"))
    for url in (part["url"], f"{API}/mine/artifacts", f"{API}/mine/artifacts/chart.png"):
        other = await client.get(url, headers={"x-user": "mallory"})
        assert other.status_code == 404, url
        assert other.json() == {"error": {"code": "chat_not_found", "message": "No such chat."}}
    # Mallory's own chat of that name does not exist: her lookups find nothing either.
    assert (
        await client.get(f"{API}/hers/artifacts/chart.png?version=0", headers={"x-user": "mallory"})
    ).status_code == 404


async def test_artifacts_are_keyed_by_user_where_no_owner_is_recorded(chat: AdkApp) -> None:
    """A chat the stream store does not know (e.g. an in-memory store restarted): the
    artifact service itself finds only the asking user's artifacts."""
    service = chat.runtime.runner.artifact_service
    assert service is not None
    await service.save_artifact(
        app_name="artifacts",
        user_id="alice",
        session_id="orphan",
        filename="chart.png",
        artifact=types.Part.from_bytes(data=b"png", mime_type="image/png"),
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=site(chat)), base_url="http://testserver"
    ) as client:
        url = f"{API}/orphan/artifacts/chart.png?version=0"
        assert (await client.get(url)).content == b"png"
        other = await client.get(url, headers={"x-user": "mallory"})
        assert other.status_code == 404 and other.json()["error"]["code"] == "artifact_not_found"
        listing = await client.get(f"{API}/orphan/artifacts", headers={"x-user": "mallory"})
        assert listing.json() == {"artifacts": []}


async def test_errors_are_json_with_stable_codes(client: httpx.AsyncClient) -> None:
    await turn(client, "c3", "chart x")

    async def error(url: str) -> tuple[int, str]:
        response = await client.get(url)
        assert response.headers["content-type"] == "application/json"
        return response.status_code, response.json()["error"]["code"]

    assert await error(f"{API}/c3/artifacts/chart.png?version=one") == (422, "invalid_version")
    assert await error(f"{API}/c3/artifacts/chart.png?version=-1") == (422, "invalid_version")
    assert await error(f"{API}/c3/artifacts/chart.png?version=7") == (404, "artifact_not_found")
    assert await error(f"{API}/c3/artifacts/nothing.png") == (404, "artifact_not_found")
    assert await error(f"{API}/c3/artifacts/..%2F..%2Fetc") == (404, "artifact_not_found")
    assert await error(f"{API}/c3/artifacts/") == (404, "artifact_not_found")
    assert (await client.post(f"{API}/c3/artifacts/chart.png")).status_code == 405
    assert (await client.get(f"{API}/none/artifacts")).json() == {"artifacts": []}


# -- ranges -------------------------------------------------------------------------------


def test_byte_ranges() -> None:
    assert byte_range(None, 100) is None
    assert byte_range("bytes=0-9", 100) == (0, 10)
    assert byte_range("bytes=90-", 100) == (90, 100)
    assert byte_range("bytes=90-500", 100) == (90, 100)
    assert byte_range("bytes=-10", 100) == (90, 100)
    assert byte_range("bytes=-500", 100) == (0, 100)
    assert byte_range(" Bytes = 5-5", 100) == (5, 6)
    for ignored in (
        "items=0-9",
        "bytes=0-9,20-29",
        "bytes=9-0",
        "bytes=a-b",
        "bytes=-",
        "bytes",
        "bytes=1-2-3",
    ):
        assert byte_range(ignored, 100) is None, ignored
    for unsatisfiable in ("bytes=100-", "bytes=100-200", "bytes=-0"):
        with pytest.raises(_Unsatisfiable):
            byte_range(unsatisfiable, 100)
    with pytest.raises(_Unsatisfiable):
        byte_range("bytes=0-", 0)


def test_content_disposition() -> None:
    assert _disposition("chart.png", "image/png").startswith("inline;")
    assert _disposition("talk.ogg", "audio/ogg").startswith("inline;")
    assert _disposition("paper.pdf", "application/pdf").startswith("inline;")
    assert _disposition("notes.txt", "text/plain; charset=utf-8").startswith("inline;")
    for name, kind in (
        ("logo.svg", "image/svg+xml"),
        ("page.html", "text/html"),
        ("data.csv", "text/csv"),
        ("x.bin", "application/octet-stream"),
    ):
        assert _disposition(name, kind).startswith("attachment;"), kind
    assert (
        _disposition("user:reports/Q1 résumé.pdf", "application/pdf")
        == "inline; filename=\"Q1 r_sum_.pdf\"; filename*=UTF-8''Q1%20r%C3%A9sum%C3%A9.pdf"
    )
    assert 'filename="a_b.txt"' in _disposition('a"b.txt', "text/plain")
    assert _header_type("text/plain; charset=utf-8") == "text/plain; charset=utf-8"
    assert _header_type("application/vnd.ms-excel") == "application/vnd.ms-excel"
    for bad in ("image/png\r\nset-cookie: a=b", "png", "", "text/plain; é"):
        assert _header_type(bad) == "application/octet-stream", bad


async def test_range_requests_on_a_large_artifact() -> None:
    """A 3 MB table over a real loopback server: whole, in ranges, and the edge cases."""
    rows = 100_000
    table = table_csv(rows)
    chat = AdkApp(adk_app=build_app(), warm_up=False)
    with LoopbackServer(site(chat)) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            response = await http.post(API, json=chat_body("big", user_message(f"export {rows}")))
            [part] = files(parse_sse(response.text))
            assert part["mediaType"] == "text/csv"
            url = part["url"]
            whole = await http.get(url)
            assert whole.status_code == 200 and whole.content == table
            assert len(table) > 3_000_000
            etag = whole.headers["etag"]

            async def ranged(header: str, **extra: str) -> httpx.Response:
                return await http.get(url, headers={"range": header, **extra})

            middle = await ranged("bytes=1000000-1999999")
            assert middle.status_code == 206
            assert middle.content == table[1_000_000:2_000_000]
            assert middle.headers["content-range"] == f"bytes 1000000-1999999/{len(table)}"
            assert middle.headers["content-length"] == "1000000"
            tail = await ranged("bytes=-100")
            assert tail.status_code == 206 and tail.content == table[-100:]
            rest = await ranged(f"bytes={len(table) - 5}-")
            assert rest.content == table[-5:]
            past = await ranged(f"bytes={len(table)}-")
            assert past.status_code == 416
            assert past.headers["content-range"] == f"bytes */{len(table)}"
            assert past.json()["error"]["code"] == "range_not_satisfiable"
            several = await ranged("bytes=0-9,20-29")
            assert several.status_code == 200 and several.content == table
            assert (await ranged("bytes=0-9", **{"if-range": etag})).status_code == 206
            changed = await ranged("bytes=0-9", **{"if-range": '"another"'})
            assert changed.status_code == 200 and changed.content == table
            head = await http.head(url, headers={"range": "bytes=0-9"})
            assert head.status_code == 206 and head.content == b""
            assert head.headers["content-length"] == "10"


# -- other stores and failures --------------------------------------------------------------


async def test_artifacts_on_disk(tmp_path: Path) -> None:
    chat = AdkApp(adk_app=build_app(), artifact_service=f"file://{tmp_path}", warm_up=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=site(chat)), base_url="http://testserver"
    ) as client:
        [part] = files(await turn(client, "disk", "chart disk"))
        assert part["mediaType"] == "image/png"
        assert (await client.get(part["url"])).content == chart_png("disk")
        assert (
            tmp_path
            / "apps"
            / "artifacts"
            / "users"
            / "anonymous"
            / "sessions"
            / "disk"
            / "artifacts"
            / "chart.png"
        ).is_dir()  # ADK's FileArtifactService wrote it
        # A name with folders (ADK's file store makes them directories).
        service = chat.runtime.runner.artifact_service
        assert service is not None
        await service.save_artifact(
            app_name="artifacts",
            user_id="anonymous",
            session_id="disk",
            filename="reports/q1.txt",
            artifact=types.Part(text="quarter one"),
        )
        url = artifact_url(API, "disk", "reports/q1.txt", 0)
        assert url == f"{API}/disk/artifacts/reports%2Fq1.txt?version=0"
        got = await client.get(url)
        assert got.content == b"quarter one"
        assert got.headers["content-type"] == "text/plain; charset=utf-8"
        assert (await client.get(f"{API}/disk/artifacts/reports/q1.txt")).status_code == 200
        names = [a["name"] for a in (await client.get(f"{API}/disk/artifacts")).json()["artifacts"]]
        assert sorted(names) == ["chart.png", "reports/q1.txt"]
        assert await chat.runtime.artifacts.delete("anonymous", "disk") == 2
        assert (await client.get(f"{API}/disk/artifacts")).json() == {"artifacts": []}
    await chat.shutdown()


class Failing(InMemoryArtifactService):
    """Saves, but fails to describe a version; once ``down``, fails to list too."""

    down: bool = False

    async def get_artifact_version(self, **kwargs: Any) -> Any:
        raise ConnectionError("artifact store down")

    async def list_artifact_keys(self, **kwargs: Any) -> list[str]:
        if self.down:
            raise ConnectionError("artifact store down")
        return await super().list_artifact_keys(**kwargs)


async def test_a_failing_artifact_service_never_breaks_a_turn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    service = Failing()
    chat = AdkApp(adk_app=build_app(), artifact_service=service, warm_up=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=site(chat)), base_url="http://testserver"
    ) as client:
        with caplog.at_level(logging.WARNING, logger="adk_asgi"):
            chunks = await turn(client, "down", "chart outage")
        # The media type comes from the name when the service cannot say.
        [part] = files(chunks)
        assert part["mediaType"] == "image/png"
        assert types_of(chunks)[-2:] == ["finish", "[DONE]"]
        assert "artifact store down" in caplog.text
        service.down = True
        for url in (part["url"], f"{API}/down/artifacts"):
            failed = await client.get(url)
            assert failed.status_code == 503
            assert failed.headers["retry-after"] == "2"
            assert failed.json()["error"]["code"] == "artifact_unavailable"
            assert "down" not in failed.text  # no exception text on the wire


# -- the user's uploads --------------------------------------------------------------------


async def test_uploads_as_artifacts() -> None:
    chat = AdkApp(
        adk_app=build_app(),
        authenticate=by_header,
        warm_up=False,
        storage=StorageOptions(uploads_as_artifacts=True),
    )
    note = {
        "id": "u-1",
        "role": "user",
        "parts": [
            {
                "type": "file",
                "mediaType": "text/plain",
                "filename": "note.txt",
                "url": "data:text/plain;base64,aGVsbG8gZmlsZQ==",
            },
            {"type": "text", "text": "read my note"},
        ],
    }
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=site(chat)), base_url="http://testserver"
    ) as client:
        response = await client.post(API, json=chat_body("up", note))
        chunks = parse_sse(response.text)
        # The model opened the upload with ADK's load_artifacts ...
        said = "".join(
            c["delta"] for c in chunks if isinstance(c, dict) and c["type"] == "text-delta"
        )
        assert said == "I read note.txt: hello file"
        # ... and it is the user's file, not a file of the assistant's message.
        assert files(chunks) == []
        got = await client.get(f"{API}/up/artifacts/note.txt?version=0")
        assert got.status_code == 200 and got.content == b"hello file"
        runtime = chat.runtime
        session = await runtime.session_service.get_session(
            app_name=runtime.app_name, user_id="alice", session_id="up"
        )
        assert session is not None
        # The session keeps ADK's placeholder, not the bytes: the model is not sent them
        # again with every turn.
        [user] = [e for e in session.events if e.author == "user"]
        assert user.content is not None
        assert [p.text for p in user.content.parts or ()] == [
            '[Uploaded Artifact: "note.txt"]',
            "read my note",
        ]
        assert not any(
            p.inline_data for e in session.events if e.content for p in e.content.parts or ()
        )
        uploads = [u for e in session.events for u in runtime.artifacts.uploads(e)]
        assert uploads == [("note.txt", 0)]
        # What a history shows in the user's message, from the session alone.
        shown = [
            f
            for e in session.events
            for f in await runtime.artifacts.files(
                e, user_id="alice", chat_id="up", api_path=API, uploads=True
            )
        ]
        assert [(f.url, f.media_type) for f in shown] == [
            (f"{API}/up/artifacts/note.txt?version=0", "text/plain")
        ]
        assert all(runtime.artifacts.saved(e) == [] for e in session.events)
    await chat.shutdown()


class Counting(InMemoryArtifactService):
    loads: ClassVar[int] = 0

    async def load_artifact(self, **kwargs: Any) -> Any:
        Counting.loads += 1
        return await super().load_artifact(**kwargs)


async def test_what_the_route_serves_besides_saved_bytes() -> None:
    """User-scoped artifacts, references to other URLs, 304s without a load, and the paths
    the stream routes take first."""
    service = Counting()
    chat = AdkApp(adk_app=build_app(), artifact_service=service, warm_up=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=site(chat)), base_url="http://testserver"
    ) as client:
        [part] = files(await turn(client, "refs", "chart refs"))
        etag = (await client.get(part["url"])).headers["etag"]
        loads = Counting.loads
        assert (
            await client.get(part["url"], headers={"if-none-match": f'W/{etag}, "x"'})
        ).status_code == 304
        assert Counting.loads == loads  # answered from the metadata alone
        where = {"app_name": "artifacts", "user_id": "anonymous"}
        await service.save_artifact(
            **where,
            filename="user:avatar.png",
            artifact=types.Part.from_bytes(data=b"me", mime_type="image/png"),
        )
        for chat_id in ("refs", "another"):  # the user's own, in any of their chats
            got = await client.get(f"{API}/{chat_id}/artifacts/user%3Aavatar.png")
            assert got.status_code == 200 and got.content == b"me"
            assert 'filename="avatar.png"' in got.headers["content-disposition"]
        await service.save_artifact(
            **where,
            session_id="refs",
            filename="paper.pdf",
            artifact=types.Part(
                file_data=types.FileData(
                    file_uri="https://papers.example/p.pdf", mime_type="application/pdf"
                )
            ),
        )
        moved = await client.get(f"{API}/refs/artifacts/paper.pdf")
        assert moved.status_code == 303
        assert moved.headers["location"] == "https://papers.example/p.pdf"
        await service.save_artifact(
            **where, session_id="refs", filename="a/stream", artifact=types.Part(text="hidden")
        )
        await service.save_artifact(
            **where,
            session_id="refs",
            filename="odd.bin",
            artifact=types.Part.from_bytes(data=b"x", mime_type="image/png\r\nset-cookie: a=b"),
        )
        odd = await client.get(f"{API}/refs/artifacts/odd.bin")
        assert odd.headers["content-type"] == "application/octet-stream"
        assert "set-cookie" not in odd.headers
        hidden = await client.get(f"{API}/refs/artifacts/a%2Fstream")
        assert hidden.status_code == 204  # the stream route of chat "refs/artifacts/a"
    await chat.shutdown()


async def test_two_apps_on_one_folder_serve_each_others_artifacts(tmp_path: Path) -> None:
    """Workers sharing a file:// artifact service (their stream stores are their own)."""
    first, second = (
        AdkApp(adk_app=build_app(), artifact_service=f"file://{tmp_path}", warm_up=False)
        for _ in range(2)
    )
    async with (
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=site(first)), base_url="http://testserver"
        ) as one,
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=site(second)), base_url="http://testserver"
        ) as other,
    ):
        [part] = files(await turn(one, "shared", "chart shared"))
        got = await other.get(part["url"])
        assert got.status_code == 200 and got.content == chart_png("shared")
    await first.shutdown()
    await second.shutdown()


async def test_artifacts_in_memory_are_bounded() -> None:
    default = artifact_service_from_url(None)
    assert isinstance(default, BoundedMemoryArtifacts) and default.max_bytes == 256 * 2**20
    service = artifact_service_from_url("memory://?max_bytes=2500")
    assert isinstance(service, BoundedMemoryArtifacts) and service.max_bytes == 2500
    for bad in ("memory://?max=5", "memory://?max_bytes=lots", "memory://?max_bytes=0"):
        with pytest.raises(ValueError):
            artifact_service_from_url(bad)
    where = {"app_name": "a", "user_id": "u", "session_id": "s"}

    def kib(fill: bytes) -> types.Part:
        return types.Part.from_bytes(data=fill * 1024, mime_type="application/octet-stream")

    await service.save_artifact(**where, filename="one", artifact=kib(b"1"))
    await service.save_artifact(**where, filename="two", artifact=kib(b"2"))
    assert service.held_bytes == 2048
    await service.save_artifact(**where, filename="one", artifact=kib(b"3"))  # one is newest
    assert await service.list_artifact_keys(**where) == ["one"]  # two went first
    assert await service.list_versions(**where, filename="one") == [0, 1]
    assert service.held_bytes == 2048
    await service.save_artifact(
        **where,
        filename="huge",
        artifact=types.Part.from_bytes(data=b"5" * 9000, mime_type="application/octet-stream"),
    )
    assert await service.list_artifact_keys(**where) == ["huge"]  # alone over the bound
    await service.delete_artifact(**where, filename="huge")
    assert service.held_bytes == 0


def test_the_mount_path_is_known_before_any_request() -> None:
    """Turns no request started (``AdkApp.complete_tool_call``) link artifacts under it."""
    chat = AdkApp(adk_app=build_app(), warm_up=False)
    assert chat.chat.api_path == ""
    site(chat)  # mount(host, "/api/chat", chat)
    assert chat.chat.api_path == API
    assert (
        AdkMiddleware(
            not_found_app, path="/chat/", adk_app=build_app(), warm_up=False
        ).adk.chat.api_path
        == "/chat"
    )
    assert (
        AdkMiddleware(not_found_app, path="/", adk_app=build_app(), warm_up=False).adk.chat.api_path
        == ""
    )


async def test_live_messages_keep_their_files_inline() -> None:
    """ADK's live runs do not run SaveFilesAsArtifactsPlugin (documented): a live message's
    file reaches the model as it is, and the session keeps it."""
    chat = AdkApp(
        adk_app=build_app(), warm_up=False, storage=StorageOptions(uploads_as_artifacts=True)
    )
    with LoopbackServer(chat) as server:
        client = await LiveClient.open(ws_url(server.url, "chatId=live-up"))
        try:
            await client.send(
                "message",
                messages=[
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "file",
                                "mediaType": "text/plain",
                                "filename": "note.txt",
                                "url": "data:text/plain;base64,aGVsbG8gZmlsZQ==",
                            },
                            {"type": "text", "text": "read my note"},
                        ],
                    }
                ],
            )
            chunks = await client.turn(wait=20)
        finally:
            await client.close()
        assert (
            "".join(c["delta"] for c in chunks if isinstance(c, dict) and c["type"] == "text-delta")
            == "You said: read my note"
        )
        runtime = chat.runtime
        assert server.loop is not None
        session = asyncio.run_coroutine_threadsafe(
            runtime.session_service.get_session(
                app_name="artifacts", user_id="anonymous", session_id="live-up"
            ),
            server.loop,
        ).result(10)
    assert session is not None
    [user] = [e for e in session.events if e.author == "user" and e.content]
    assert user.content is not None
    [blob] = [p.inline_data for p in user.content.parts or () if p.inline_data]
    assert blob.data == b"hello file"
