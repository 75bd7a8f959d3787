"""Files a model answers with, as a browser can use them (tests/agents/files): a ``gs://``
file goes through ``SurfaceOptions.resolve_file`` (a signed URL) or, without a URL for it,
is left out with one log line; a web file is sent as it is, its ``display_name`` as
``providerMetadata.adk.filename`` (ai 6 and 7 keep it on the part, ai 5 drops it); raw PCM
audio arrives as a WAV file an ``<audio>`` plays.
The history route returns the same parts.

The app with a resolver through ai 5, 6.0.230 (the strict schemas) and 7; the default app
(no resolver) through ai 6.
"""

from __future__ import annotations

import base64
import io
import logging
import wave
from collections.abc import Iterator
from typing import Any, Final

import httpx
import pytest
from agents.files import agent as files

from adk_asgi import AdkApp, SurfaceOptions

from support import LoopbackServer
from support.aisdk_client import run_chat_versions
from support.logs import kept_records

pytestmark = pytest.mark.node

RESOLVED: Final = ("ai5", "ai6strict", "ai7")


@pytest.fixture(scope="module")
def logged() -> Iterator[list[logging.LogRecord]]:
    with kept_records() as records:
        yield records


@pytest.fixture(scope="module")
def chats(logged: list[logging.LogRecord]) -> dict[str, list[dict[str, Any]]]:
    """The file parts of each client's answer, and of each app's history."""
    resolving = AdkApp(
        agent=files.build_root_agent(),
        app_name=files.APP_NAME,
        surface=SurfaceOptions(resolve_file=files.sign),
        warm_up=False,
    )
    default = AdkApp(agent=files.build_root_agent(), app_name=files.APP_NAME, warm_up=False)
    steps = [{"action": "send", "text": "the files please"}]
    out: dict[str, list[dict[str, Any]]] = {}
    with LoopbackServer(resolving) as one, LoopbackServer(default) as other:
        for server, versions, name in ((one, RESOLVED, "signed"), (other, ("ai6",), "default")):
            reports = run_chat_versions(server.url, steps, versions=versions, chat_id=name)
            for version, report in reports.items():
                assert not any(r["invalid"] for r in report["requests"]), report["problems"]
                assert report["stepResults"][0]["status"] == "ready", report["problems"]
                out[f"{name}-{version}"] = report["messages"][-1]["parts"]
            chat_id = f"{name}-{versions[-1]}"
            history = httpx.get(f"{server.url}/{chat_id}", timeout=10).json()["messages"]
            out[f"{name}-history"] = history[-1]["parts"]
    return {name: [p for p in parts if p["type"] == "file"] for name, parts in out.items()}


SIGNED_SEEN: Final = [f"signed-{v}" for v in RESOLVED] + ["signed-history"]
ALL_SEEN: Final = [*SIGNED_SEEN, "default-ai6", "default-history"]


@pytest.mark.parametrize("seen", SIGNED_SEEN)
def test_a_gs_file_goes_through_the_resolver(
    chats: dict[str, list[dict[str, Any]]], seen: str
) -> None:
    assert chats[seen][0] == {
        "type": "file",
        "url": files.SIGNED,
        "mediaType": "application/pdf",
        **named("report.pdf", seen),
    }


def named(filename: str, seen: str) -> dict[str, Any]:
    """The name of a file part: ai 5 keeps no metadata on a file part."""
    return {} if seen.endswith("ai5") else {"providerMetadata": {"adk": {"filename": filename}}}


@pytest.mark.parametrize("seen", ALL_SEEN)
def test_no_url_a_browser_cannot_open_is_sent(
    chats: dict[str, list[dict[str, Any]]], seen: str
) -> None:
    urls = [p["url"].split(":", 1)[0] for p in chats[seen]]
    assert "gs" not in urls
    assert len(urls) == (3 if seen.startswith("signed") else 2)  # the private file left out


@pytest.mark.parametrize("seen", ALL_SEEN)
def test_a_web_file_keeps_its_name(chats: dict[str, list[dict[str, Any]]], seen: str) -> None:
    [web] = [p for p in chats[seen] if p["url"] == files.WEB]
    assert {k: v for k, v in web.items() if k == "providerMetadata"} == named("chart.png", seen)


@pytest.mark.parametrize("seen", ALL_SEEN)
def test_pcm_audio_arrives_as_wav(chats: dict[str, list[dict[str, Any]]], seen: str) -> None:
    audio = chats[seen][-1]
    assert audio["mediaType"] == "audio/wav"
    head, data = audio["url"].split(",", 1)
    assert head == "data:audio/wav;base64"
    with wave.open(io.BytesIO(base64.b64decode(data))) as played:
        assert (played.getframerate(), played.getnchannels(), played.getsampwidth()) == (
            16000,
            1,
            2,
        )
        assert played.readframes(played.getnframes()) == files.PCM


def test_one_log_line_per_file_left_out(
    chats: dict[str, list[dict[str, Any]]], logged: list[logging.LogRecord]
) -> None:
    lines = [r.getMessage() for r in logged if "was left out" in r.getMessage()]
    # each streamed answer leaves the private file out (and both default gs:// files)
    assert len(lines) >= len(RESOLVED) + 2, lines
    assert all("gs URI" in line and "archive-bucket" not in line for line in lines)
