"""Artifacts through the real clients: a tool of the artifacts test agent saves a PNG, and
the AI SDK's own Chat (ai 5, strict 6, 6 and 7 over SSE; ai 7's WebSocketChatTransport,
protocol B) and the protocol A client end with a ``file`` part whose URL serves that PNG.
The final messages pass each version's own ``validateUIMessages`` (a path as the URL is
accepted)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any, Final

import httpx
import pytest
from agents.artifacts.agent import build_app, chart_png
from starlette.applications import Starlette

from adk_asgi import AdkApp, mount

from support import LoopbackServer
from support.aisdk_client import AI_VERSIONS, JS_DIR, run_chat_versions, run_ws_chat
from support.ws_client import LiveClient

pytestmark = pytest.mark.node

API: Final = "/api/chat"
VALIDATE: Final = """
const versions = process.argv.slice(1);
let input = '';
for await (const chunk of process.stdin) input += chunk;
const messages = JSON.parse(input);
const problems = {};
for (const version of versions) {
  const { validateUIMessages } = await import(version);
  try {
    await validateUIMessages({ messages });
  } catch (error) {
    problems[version] = String(error);
  }
}
process.stdout.write(JSON.stringify(problems));
"""


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    site = Starlette()
    mount(site, API, AdkApp(adk_app=build_app(), warm_up=False))
    with LoopbackServer(site) as running:
        yield running


def validate(
    messages: list[dict[str, Any]], versions: tuple[str, ...] = AI_VERSIONS
) -> dict[str, str]:
    done = subprocess.run(
        ["node", "--input-type=module", "-e", VALIDATE, *versions],
        input=json.dumps(messages),
        cwd=JS_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    problems: dict[str, str] = json.loads(done.stdout)
    return problems


def check_chart(
    server: LoopbackServer, message: dict[str, Any], chat_id: str, version: str = "ai7"
) -> None:
    """The assistant message ends its tool step with the chart's file part, which loads."""
    kinds = [p["type"] for p in message["parts"]]
    [file] = [p for p in message["parts"] if p["type"] == "file"]
    assert kinds.index("file") == kinds.index("tool-draw_chart") + 1
    expected: dict[str, Any] = {
        "type": "file",
        "mediaType": "image/png",
        "url": f"{API}/{chat_id}/artifacts/chart.png?version=0",
    }
    if version != "ai5":  # ai 5 drops a file chunk's providerMetadata
        expected["providerMetadata"] = {"adk": {"artifact": "chart.png", "version": 0}}
    assert file == expected
    got = httpx.get(server.url + file["url"], timeout=10)
    assert got.status_code == 200 and got.content == chart_png("sales")
    assert got.headers["content-type"] == "image/png"


def test_sse_clients_get_the_file_part(server: LoopbackServer) -> None:
    reports = run_chat_versions(
        server.url + API,
        [{"action": "send", "text": "chart sales"}],
        chat_id="sse-chart",
        timeout=60,
    )
    for version, report in reports.items():
        assert report["ok"], (version, report["problems"])
        assert not any(r["invalid"] for r in report["requests"]), version
        [_, assistant] = report["messages"]
        check_chart(server, assistant, f"sse-chart-{version}", version)
        assert validate(report["messages"], (version,)) == {}, version


def test_websocket_chat_transport_gets_the_file_part(server: LoopbackServer) -> None:
    report = run_ws_chat(
        server.url.replace("http://", "ws://") + API,
        [{"action": "send", "text": "chart sales"}],
        chat_id="ws-chart",
        node_timeout_ms=30000,
        timeout=60,
    )
    assert report["ok"] and report["invalid"] == [] and report["nullPaths"] == [], report[
        "problems"
    ]
    [_, assistant] = report["messages"]
    check_chart(server, assistant, "ws-chart")
    assert validate(report["messages"]) == {}
    # The validators do check file parts: one without its media type fails everywhere.
    broken = [{"id": "m", "role": "assistant", "parts": [{"type": "file", "url": "/x"}]}]
    assert sorted(validate(broken)) == sorted(AI_VERSIONS)


async def test_protocol_a_gets_the_file_chunk(server: LoopbackServer) -> None:
    url = server.url.replace("http://", "ws://") + f"{API}?chatId=a-chart"
    client = await LiveClient.open(url)
    try:
        await client.say("chart sales")
        chunks = await client.turn(wait=20)
    finally:
        await client.close()
    [file] = [c for c in chunks if isinstance(c, dict) and c["type"] == "file"]
    assert file["url"] == f"{API}/a-chart/artifacts/chart.png?version=0"
    assert file["mediaType"] == "image/png"
    async with httpx.AsyncClient(base_url=server.url) as http:
        assert (await http.get(file["url"])).content == chart_png("sales")
