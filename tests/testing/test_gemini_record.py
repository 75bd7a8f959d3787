"""Record and replay: ``python -m adk_asgi.testing.gemini --record FILE --upstream URL``
forwards HTTP and Live API requests with the real key of its environment and writes a
cassette without secrets; ``--replay FILE`` answers the same client the same way with the
upstream gone, and a request it has no recording of gets a 4xx naming the nearest
recording; the recorded timing is kept on request; the ``gemini_cassette`` pytest fixture
replays and records a test's cassette. The upstream stands in for Google: another
emulator that accepts only the "real" key."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import httpx
import pytest
from google import genai
from google.genai import errors, types

from adk_asgi.testing.gemini import CassetteError, GeminiEmulator, Upstream

from .helpers import LIVE_MODEL, TEXT_MODEL
from .test_gemini_cli import wait_for_file

pytest_plugins = ["pytester"]

REAL_KEY: Final = "AIza-the-real-key-0123456789abcdef"
QUOTE: Final = {
    "name": "get_stock_price",
    "parameters_json_schema": {
        "type": "object",
        "required": ["symbol"],
        "properties": {"symbol": {"type": "string"}},
    },
}

# A client with nothing but the environment: one streamed HTTP call, one Live API session
# with a tool call (answered), then the texts it got, as JSON.
CLIENT: Final = textwrap.dedent(
    """
    import asyncio, json, sys
    from google import genai
    from google.genai import types

    QUOTE = types.Tool(function_declarations=[types.FunctionDeclaration.model_validate(
        json.loads(sys.argv[2]))])

    async def main(question):
        client = genai.Client()
        config = types.GenerateContentConfig(tools=[QUOTE])
        chunks = await client.aio.models.generate_content_stream(
            model="gemini-2.5-flash", contents=question, config=config)
        http = [c.model_dump(mode="json", exclude_none=True, exclude={"sdk_http_response"})
                async for c in chunks]
        live = genai.Client(http_options=types.HttpOptions(api_version="v1alpha"))
        config = types.LiveConnectConfig(response_modalities=["TEXT"], tools=[QUOTE])
        frames = []
        async with live.aio.live.connect(model="gemini-live-2.5-flash-preview",
                                         config=config) as session:
            await session.send_client_content(turns=types.Content(
                role="user", parts=[types.Part(text=question)]))
            for _ in range(2):
                async for message in session.receive():
                    frames.append(message.model_dump(mode="json", exclude_none=True))
                    if message.tool_call:
                        call = message.tool_call.function_calls[0]
                        await session.send_tool_response(function_responses=[
                            types.FunctionResponse(id=call.id, name=call.name,
                                                   response={"price": 42.5})])
        print(json.dumps({"http": http, "live": frames}))

    asyncio.run(main(sys.argv[1]))
    """
)


def run_client(env: dict[str, str], question: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CLIENT, question, json.dumps(QUOTE)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


@pytest.fixture
def google() -> Iterator[GeminiEmulator]:
    """The stand-in for the Gemini API: plain HTTP on loopback, only the real key."""
    with GeminiEmulator(tls=False, api_key=REAL_KEY, tokens_per_chunk=4) as upstream:
        yield upstream


def start_cli(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None, name: str = "gemini.env"
) -> tuple[subprocess.Popen[str], dict[str, str]]:
    env_file = tmp_path / name
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "adk_asgi.testing.gemini",
            "--port",
            "0",
            "--env-file",
            str(env_file),
            *args,
        ],
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    text = wait_for_file(env_file, process)
    return process, dict(line.split("=", 1) for line in text.splitlines())


def stop_cli(process: subprocess.Popen[str]) -> str:
    process.terminate()
    _, stderr = process.communicate(timeout=30)
    return stderr


def test_cli_records_then_replays_without_the_upstream(tmp_path: Path) -> None:
    cassette = tmp_path / "chat.jsonl"
    # Google's stand-in over https with its own CA, which --upstream-ca trusts.
    google = GeminiEmulator(api_key=REAL_KEY, tokens_per_chunk=4).start()
    recorder, env = start_cli(
        tmp_path,
        "--record",
        str(cassette),
        "--upstream",
        google.base_url,
        "--upstream-ca",
        str(google.ca_file),
        env={"GOOGLE_API_KEY": REAL_KEY},
    )
    try:
        assert env["GOOGLE_API_KEY"] != REAL_KEY  # the real key stays in the recorder
        recorded = run_client(env, "use get_stock_price symbol=GOOG", tmp_path)
        assert recorded.returncode == 0, recorded.stderr
    finally:
        log = stop_cli(recorder)
        google.stop()  # Google is gone: the replay is offline
    assert f"recording to {cassette}" in log
    # What the upstream received: the real key only (it refuses any other).
    kinds = [r.kind for r in google.journal]
    assert kinds[:4] == ["streamGenerateContent", "setup", "clientContent", "toolResponse"]
    text = cassette.read_text()
    assert REAL_KEY not in text and env["GOOGLE_API_KEY"] not in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert [line.get("type") for line in lines] == [None, "http", "live"]
    assert lines[1]["model"] == TEXT_MODEL and lines[1]["events"]
    assert [f["from"] for f in lines[2]["frames"]][:3] == ["client", "server", "client"]

    replayer, env = start_cli(
        tmp_path, "--replay", str(cassette), "--replay-timing", name="replay.env"
    )
    try:
        replayed = run_client(env, "use get_stock_price symbol=GOOG", tmp_path)
        assert replayed.returncode == 0, replayed.stderr
        assert json.loads(replayed.stdout) == json.loads(recorded.stdout)
        answer = "".join(
            f["server_content"]["model_turn"]["parts"][0]["text"]
            for f in json.loads(replayed.stdout)["live"]
            if f.get("server_content", {}).get("model_turn")
        )
        assert answer == 'get_stock_price returned {"price": 42.5}.'
        # A request the cassette does not hold: a 404 naming the nearest recording.
        other = run_client(env, "use get_stock_price symbol=MSFT", tmp_path)
        assert other.returncode != 0
        assert "404 NOT_FOUND" in other.stderr
        assert (
            "No recorded exchange in chat.jsonl matches this streamGenerateContent "
            "request for gemini-2.5-flash"
        ) in other.stderr
        assert (
            'it differs at contents[0].parts[0].text: recorded "use get_stock_price '
            'symbol=GOOG", sent "use get_stock_price symbol=MSFT"'
        ) in other.stderr
    finally:
        log = stop_cli(replayer)
    assert "replay: No recorded exchange" in log  # the emulator's log says it too


async def test_live_misses_close_with_1008_and_say_why(
    google: GeminiEmulator, tmp_path: Path
) -> None:
    cassette = tmp_path / "live.jsonl"
    config = types.LiveConnectConfig(response_modalities=[types.Modality.TEXT])
    upstream = Upstream(google.base_url, api_key=REAL_KEY)
    with GeminiEmulator(record=cassette, upstream=upstream) as recorder:
        await live_turns(recorder, config, "hello", "story")
    with GeminiEmulator(replay=cassette) as replayer:
        assert await live_turns(replayer, config, "hello", "story") == [
            'You said: "hello".',
            "Once upon a time",
        ]
        with pytest.raises(errors.APIError) as refused:
            await live_turns(replayer, config, "hello", "something else")
        assert refused.value.code == 1008
        with pytest.raises(errors.APIError):
            await live_turns(
                replayer,
                config.model_copy(update={"response_modalities": ["TEXT"]}),
                "x",
                model="gemini-2.0-flash-live-001",
            )
        first, second = replayer.replay_misses
    assert "client message #2" in first
    assert (
        'it differs at client_content.turns[0].parts[0].text: recorded "story", sent '
        '"something else"'
    ) in first
    assert second.startswith(
        "No recorded Live API session in live.jsonl matches a setup for gemini-2.0-flash-live-001"
    )


async def live_turns(
    emulator: GeminiEmulator, config: types.LiveConnectConfig, *texts: str, model: str = LIVE_MODEL
) -> list[str]:
    client = emulator.client(api_version="v1alpha")
    said = []
    async with client.aio.live.connect(model=model, config=config) as session:
        for text in texts:
            await session.send_client_content(
                turns=types.Content(role="user", parts=[types.Part(text=text)])
            )
            answer = "".join([m.text or "" async for m in session.receive()])
            said.append(answer[:16] if answer.startswith("Once") else answer[:18])
    return said


def test_identical_requests_replay_in_order_and_timing_is_kept(
    google: GeminiEmulator, tmp_path: Path
) -> None:
    cassette = tmp_path / "twice.jsonl"
    body = {"contents": [{"role": "user", "parts": [{"text": "story"}]}]}
    path = f"/v1beta/models/{TEXT_MODEL}:streamGenerateContent?alt=sse"
    slow = GeminiEmulator(tls=False, api_key=REAL_KEY, chunk_delay=0.02).start()
    try:
        with GeminiEmulator(record=cassette, upstream=Upstream(slow.base_url, REAL_KEY)) as rec:
            first = post(rec, path, body)
            body_b = {**body, "generationConfig": {"temperature": 0.1}}  # not compared
            second = post(rec, path, body_b)
    finally:
        slow.stop()
    assert first.status_code == second.status_code == 200
    recorded = [json.loads(line) for line in cassette.read_text().splitlines()[1:]]
    gaps = [e["t"] for e in recorded[0]["events"]]
    assert gaps == sorted(gaps) and gaps[-1] >= 0.02 * 15  # 16 chunks, 20 ms apart
    with GeminiEmulator(replay=cassette) as fast:
        assert events(post(fast, path, body)) == events(first)
        assert events(post(fast, path, body)) == events(second)
        assert events(post(fast, path, body)) == events(second)  # then the last one again
        # The instruction, the tools and the settings are not compared.
        other = {
            **body,
            "systemInstruction": {"parts": [{"text": "Be brief."}]},
            "tools": [{"functionDeclarations": [QUOTE]}],
            "generationConfig": {"temperature": 0.9},
        }
        assert events(post(fast, path, other)) == events(second)
    assert events(first) != events(second)  # each has its own responseId
    with GeminiEmulator(replay=cassette, replay_timing=True) as timed:
        start = time.monotonic()
        assert events(post(timed, path, body)) == events(first)
        # The recorded pauses again (a lower bound: a loaded machine only adds to it).
        assert time.monotonic() - start >= gaps[-1]


def test_a_streamed_recording_answers_a_whole_answer_request(
    google: GeminiEmulator, tmp_path: Path
) -> None:
    """ADK's evaluation asks generateContent what a chat served over SSE recorded with
    streamGenerateContent: the chunks, merged into the one answer they add up to."""
    cassette = tmp_path / "streamed.jsonl"
    body = {"contents": [{"role": "user", "parts": [{"text": "story"}]}]}
    stream = f"/v1beta/models/{TEXT_MODEL}:streamGenerateContent?alt=sse"
    whole = f"/v1beta/models/{TEXT_MODEL}:generateContent"
    with GeminiEmulator(record=cassette, upstream=Upstream(google.base_url, REAL_KEY)) as rec:
        chunks = events(post(rec, stream, body))
    assert len(chunks) > 2
    with GeminiEmulator(replay=cassette) as replaying:
        answer = post(replaying, whole, body)
        assert answer.status_code == 200, answer.text
        merged = answer.json()
        assert merged["candidates"][0]["content"]["parts"] == [
            {"text": "".join(c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks)}
        ]
        assert merged["usageMetadata"] == chunks[-1]["usageMetadata"]
        assert merged["candidates"][0]["finishReason"] == "STOP"
        other = {"contents": [{"role": "user", "parts": [{"text": "another"}]}]}
        assert post(replaying, whole, other).status_code == 404  # still matched by contents


def events(response: httpx.Response) -> list[Any]:
    return [json.loads(line[6:]) for line in response.text.splitlines() if line]


def post(emulator: GeminiEmulator, path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(
        emulator.base_url + path,
        json=body,
        verify=emulator.ssl_context(),
        headers={"x-goog-api-key": "any"},
        timeout=30,
    )


def test_bad_cassettes_and_options_are_refused(tmp_path: Path) -> None:
    missing = tmp_path / "none.jsonl"
    with pytest.raises(CassetteError, match="cannot read the cassette"):
        GeminiEmulator(replay=missing)
    (tmp_path / "bad.jsonl").write_text('{"not": "a cassette"}\n')
    with pytest.raises(CassetteError, match="not a cassette"):
        GeminiEmulator(replay=tmp_path / "bad.jsonl")
    with pytest.raises(ValueError, match="records or replays, not both"):
        GeminiEmulator(record=missing, replay=missing)
    with pytest.raises(ValueError, match="a script answers only"):
        GeminiEmulator(lambda request: None, replay=missing)  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="pass record= too"):
        GeminiEmulator(upstream="https://example.invalid")
    no_key = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY")}
    done = subprocess.run(
        [sys.executable, "-m", "adk_asgi.testing.gemini", "--record", str(missing)],
        env=no_key,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "set GOOGLE_API_KEY (or GEMINI_API_KEY)" in done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "adk_asgi.testing.gemini", "--replay", str(missing)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "cannot read the cassette" in done.stderr


# -- the pytest fixture -------------------------------------------------------------------

USER_TEST: Final = textwrap.dedent(
    """
    import pytest
    from google import genai

    def ask(text):
        client = genai.Client()  # from the environment the fixture set
        return client.models.generate_content(model="gemini-2.5-flash", contents=text).text

    def test_default_cassette(gemini_cassette):
        assert ask("hello").startswith('You said: "hello"')

    @pytest.mark.gemini_cassette("shared/story.jsonl")
    def test_named_cassette(gemini_cassette):
        assert ask("story").startswith("Once upon a time")
        assert gemini_cassette.journal.records("generateContent")
    """
)


def test_the_pytest_fixture_records_then_replays(
    pytester: pytest.Pytester, google: GeminiEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = (Path(__file__).parents[2] / "docs" / "testing" / "gemini-emulator.md").read_text()
    (documented,) = [
        b
        for b in re.findall(r"^```python\n(.*?)^```", page, re.S | re.M)
        if "def test_greeting(gemini_cassette)" in b
    ]
    pytester.makepyfile(test_user=USER_TEST, test_shop=documented)  # and the page's example
    # In-process runs drop the modules each run imported; a TLS emulator started here
    # first keeps cryptography's (a module imported anew would not match its compiled part).
    with GeminiEmulator():
        pass
    monkeypatch.setenv("GOOGLE_API_KEY", REAL_KEY)
    recorded = pytester.runpytest_inprocess(
        "--gemini-record", "--gemini-upstream", google.base_url, "-p", "no:cacheprovider"
    )
    recorded.assert_outcomes(passed=4)
    monkeypatch.delenv("GOOGLE_API_KEY")
    default = pytester.path / "cassettes" / "test_user" / "test_default_cassette.jsonl"
    named = pytester.path / "shared" / "story.jsonl"
    assert default.is_file() and named.is_file()
    assert REAL_KEY not in default.read_text() + named.read_text()
    assert (pytester.path / "cassettes" / "test_shop" / "test_greeting.jsonl").is_file()
    assert (pytester.path / "cassettes" / "checkout.jsonl").is_file()
    google.stop()
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=4)  # offline
    # A test whose request changed fails with the nearest recording and the difference;
    # a test without a cassette says how to record one.
    pytester.makepyfile(
        test_user=USER_TEST.replace('ask("hello")', 'ask("hello again")')
        + "\n\ndef test_new(gemini_cassette):\n    pass\n"
    )
    changed = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    # test_default_cassette: its request failed, then the fixture; test_new: no cassette
    changed.assert_outcomes(passed=3, failed=1, errors=2)
    report = changed.stdout.str()
    assert "test_default_cassette.jsonl: 1 request(s) had no recording:" in report
    assert 'it differs at contents[0].parts[0].text: recorded "hello", sent "hello again"' in report
    assert "record it with `pytest --gemini-record`" in report


async def test_live_replays_pick_the_session_by_its_messages_and_keep_timing(
    tmp_path: Path,
) -> None:
    cassette = tmp_path / "two.jsonl"
    config = types.LiveConnectConfig(response_modalities=[types.Modality.TEXT])
    with GeminiEmulator(tls=False, api_key=REAL_KEY, chunk_delay=0.03, tokens_per_chunk=8) as slow:
        with GeminiEmulator(record=cassette, upstream=Upstream(slow.base_url, REAL_KEY)) as rec:
            await live_turns(rec, config, "hello", "story")
            await live_turns(rec, config, "hello", "think about tea")
    # Two recorded sessions begin alike; the second message tells them apart.
    with GeminiEmulator(replay=cassette) as fast:
        assert await live_turns(fast, config, "hello", "think about tea") == [
            'You said: "hello".',
            "After thinking it ",
        ]
        assert (await live_turns(fast, config, "hello", "story"))[1] == "Once upon a time"
        assert fast.replay_misses == []
    with GeminiEmulator(replay=cassette, replay_timing=True) as timed:
        start = time.monotonic()
        assert (await live_turns(timed, config, "hello", "story"))[1] == "Once upon a time"
        # The story's 8 chunks came 30 ms apart when recorded, and do again (a lower
        # bound: a loaded machine only adds to it).
        assert time.monotonic() - start >= 8 * 0.03


async def test_ephemeral_tokens_are_forwarded_and_never_recorded(
    google: GeminiEmulator, tmp_path: Path
) -> None:
    cassette = tmp_path / "token.jsonl"
    token = "auth_tokens/ephemeral-secret-4242"
    with GeminiEmulator(record=cassette, upstream=Upstream(google.base_url, REAL_KEY)) as rec:
        client = genai.Client(api_key=token, http_options=rec.http_options("v1alpha"))
        config = types.LiveConnectConfig(response_modalities=[types.Modality.TEXT])
        async with client.aio.live.connect(model=LIVE_MODEL, config=config) as session:
            await session.send_client_content(turns=types.UserContent("hello"))
            said = "".join([m.text or "" async for m in session.receive()])
    assert said.startswith('You said: "hello"')
    # The upstream got the client's token on the constrained method (it accepts tokens
    # there only), and the cassette holds neither the token nor the key.
    assert google.journal.records("setup")
    text = cassette.read_text()
    assert token not in text and "ephemeral-secret-4242" not in text and REAL_KEY not in text
    assert '"method":"BidiGenerateContentConstrained"' in text


async def test_an_unreachable_upstream_is_a_503_and_a_1011(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, raw_live: Any
) -> None:
    import socket

    with socket.socket() as spare:  # a port nobody listens on
        spare.bind(("127.0.0.1", 0))
        port = spare.getsockname()[1]
    upstream = Upstream(f"http://127.0.0.1:{port}", api_key=REAL_KEY)
    path = f"/v1beta/models/{TEXT_MODEL}:generateContent"
    with GeminiEmulator(record=tmp_path / "down.jsonl", upstream=upstream) as recorder:
        answer = post(recorder, path, {"contents": [{"parts": [{"text": "hi"}]}]})
        assert answer.status_code == 503
        assert answer.json()["error"]["status"] == "UNAVAILABLE"
        async with raw_live(recorder) as live:
            await live.send({"setup": {"model": f"models/{LIVE_MODEL}"}})
            assert await live.closed() == (1011, "The upstream Live API is unreachable.")
    assert "unreachable" in caplog.text and REAL_KEY not in caplog.text
    assert len((tmp_path / "down.jsonl").read_text().splitlines()) == 1  # nothing recorded


def test_an_https_upstream_is_trusted_only_when_told(tmp_path: Path) -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hello"}]}]}
    path = f"/v1beta/models/{TEXT_MODEL}:generateContent"
    with GeminiEmulator(api_key=REAL_KEY) as google:  # https, its own throwaway CA
        untrusted = Upstream(google.base_url, api_key=REAL_KEY)
        with GeminiEmulator(record=tmp_path / "no.jsonl", upstream=untrusted) as recorder:
            refused = post(recorder, path, body)
            assert refused.status_code == 503
            # Named as what it is (a certificate not trusted), with the option that fixes it.
            message = refused.json()["error"]["message"]
            assert "TLS certificate" in message and "--gemini-upstream-ca" in message, message
            assert "unreachable" not in message
        trusted = Upstream(google.base_url, api_key=REAL_KEY, ssl_context=google.ssl_context())
        with GeminiEmulator(record=tmp_path / "yes.jsonl", upstream=trusted) as recorder:
            assert post(recorder, path, body).status_code == 200
    assert len((tmp_path / "no.jsonl").read_text().splitlines()) == 1  # nothing recorded
    assert len((tmp_path / "yes.jsonl").read_text().splitlines()) == 2


def test_the_pytest_fixture_records_from_an_https_upstream_it_is_told_to_trust(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pytest --gemini-record --gemini-upstream URL --gemini-upstream-ca FILE``: an https
    upstream with a CA of its own is trusted; without the option the test fails, its
    answer naming the certificate."""
    monkeypatch.setenv("GOOGLE_API_KEY", REAL_KEY)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    pytester.makepyfile(
        test_tls="""
from google import genai


def test_hello(gemini_cassette):
    client = genai.Client()
    assert client.models.generate_content(model="gemini-2.5-flash", contents="hello").text
"""
    )
    with GeminiEmulator(api_key=REAL_KEY) as google:  # https, its own throwaway CA
        assert google.ca_file is not None
        argv = ("-p", "no:cacheprovider", "--gemini-record", "--gemini-upstream", google.base_url)
        untrusted = pytester.runpytest_inprocess(*argv)
        untrusted.assert_outcomes(failed=1)
        assert "TLS certificate" in untrusted.stdout.str()
        trusted = pytester.runpytest_inprocess(*argv, "--gemini-upstream-ca", str(google.ca_file))
        trusted.assert_outcomes(passed=1)
    assert (pytester.path / "cassettes" / "test_tls" / "test_hello.jsonl").is_file()
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)  # offline


def test_a_miss_in_the_other_streaming_mode_says_how_to_record(
    google: GeminiEmulator, tmp_path: Path
) -> None:
    """A cassette recorded without streaming (a plain ``Runner`` test) asked with
    ``streamGenerateContent`` (``adk-asgi serve``): the miss names the streaming modes and
    how to record, not a difference in the conversation."""
    body = {"contents": [{"role": "user", "parts": [{"text": "hello"}]}]}
    upstream = Upstream(google.base_url, api_key=REAL_KEY)
    with GeminiEmulator(record=tmp_path / "plain.jsonl", upstream=upstream) as recorder:
        assert post(recorder, f"/v1beta/models/{TEXT_MODEL}:generateContent", body).is_success
    with GeminiEmulator(replay=tmp_path / "plain.jsonl") as replayer:
        streamed = post(replayer, f"/v1beta/models/{TEXT_MODEL}:streamGenerateContent", body)
    assert streamed.status_code == 404
    message = streamed.json()["error"]["message"]
    assert "recorded with generateContent" in message
    assert "other streaming mode" in message and "--gemini-record" in message, message
    assert "differs at" not in message
