"""``python -m adk_asgi.testing.gemini``: started as a subprocess, reached from another
subprocess that has nothing but the environment the emulator wrote."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

CLIENT = textwrap.dedent(
    """
    import asyncio
    from google import genai
    from google.genai import types

    async def main():
        client = genai.Client()  # everything comes from the environment
        response = await client.aio.models.generate_content(
            model="gemini-2.5-flash", contents="hello from the subprocess"
        )
        print("HTTP:", response.text)
        live = genai.Client(http_options=types.HttpOptions(api_version="v1alpha"))
        config = types.LiveConnectConfig(response_modalities=["TEXT"])
        async with live.aio.live.connect(model="gemini-live-2.5-flash-preview", config=config) as s:
            await s.send_client_content(
                turns=types.Content(role="user", parts=[types.Part(text="story")])
            )
            text = "".join([m.text or "" async for m in s.receive()])
        print("LIVE:", text)

    asyncio.run(main())
    """
)


def wait_for_file(path: Path, process: subprocess.Popen[str], within: float = 30) -> str:
    deadline = time.monotonic() + within
    while not path.exists():
        if process.poll() is not None:
            raise AssertionError(f"the emulator exited: {process.communicate()}")
        if time.monotonic() > deadline:
            raise AssertionError("no env file")
        time.sleep(0.05)
    return path.read_text()


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    env_file = tmp_path / "gemini.env"
    process = subprocess.Popen(
        [
            sys.executable, "-m", "adk_asgi.testing.gemini",
            "--host", "127.0.0.1", "--port", "0", "--env-file", str(env_file),
            "--tokens-per-chunk", "8",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        yield process, env_file
    finally:
        if process.poll() is None:
            process.terminate()  # SIGTERM: it removes its certificate files
            try:
                process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()


def test_cli_env_file_is_all_a_process_needs(
    cli: tuple[subprocess.Popen[str], Path], tmp_path: Path
) -> None:
    process, env_file = cli
    lines = wait_for_file(env_file, process).splitlines()
    env = dict(line.split("=", 1) for line in lines)
    assert sorted(env) == ["GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "SSL_CERT_FILE"]
    assert env["GOOGLE_GEMINI_BASE_URL"].startswith("https://127.0.0.1:")
    assert not env["GOOGLE_GEMINI_BASE_URL"].endswith(":0")
    bundle = Path(env["SSL_CERT_FILE"])
    assert bundle.is_file()
    client = subprocess.run(
        [sys.executable, "-c", CLIENT],
        env=env,  # nothing else: no PATH, no HOME, no proxy settings
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert client.returncode == 0, client.stderr
    assert 'HTTP: You said: "hello from the subprocess".' in client.stdout
    assert "LIVE: Once upon a time, a tiny server lived inside a laptop." in client.stdout
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0
    assert f"listening on {env['GOOGLE_GEMINI_BASE_URL']}" in stderr
    assert not bundle.exists()  # the throwaway CA is removed with the emulator


def test_cli_without_the_environment_cannot_reach_it(
    cli: tuple[subprocess.Popen[str], Path], tmp_path: Path
) -> None:
    process, env_file = cli
    env = dict(line.split("=", 1) for line in wait_for_file(env_file, process).splitlines())
    # The CA bundle is what makes TLS work: without it the client refuses the server.
    without_ca = {k: v for k, v in env.items() if k != "SSL_CERT_FILE"}
    client = subprocess.run(
        [sys.executable, "-c", CLIENT],
        env=without_ca,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert client.returncode != 0
    assert "CERTIFICATE_VERIFY_FAILED" in client.stderr


def test_cli_help_lists_the_knobs() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "adk_asgi.testing.gemini", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ},
    )
    assert result.returncode == 0
    for flag in (
        "--host", "--port", "--env-file", "--tokens-per-chunk", "--chunk-delay",
        "--connection-lifetime", "--go-away-lead", "--context-window", "--handle-ttl",
        "--heard-text", "--silence-gap", "--live-model-pattern", "--api-key", "--script",
        "--include-thoughts", "--no-tls",
    ):  # fmt: skip
        assert flag in result.stdout, flag


def test_cli_refuses_bad_settings() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "adk_asgi.testing.gemini", "--tokens-per-chunk", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "tokens_per_chunk must be at least 1" in result.stderr
