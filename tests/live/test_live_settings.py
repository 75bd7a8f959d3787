"""The live-mode settings and their defaults (docs/live-mode.md, "The live model and its
settings"): what each `LiveOptions` field makes of a connection's `RunConfig`, and that
settings the app's own `RunConfig` makes are kept. What the Live API is then sent is
checked on the emulator in tests/gemini/test_gemini_live.py."""

from __future__ import annotations

import asyncio
from typing import Any

from google.adk.agents.run_config import RunConfig
from google.genai import types

from adk_asgi import AdkApp, LiveOptions
from adk_asgi.demo import build_demo_agent

from support import LoopbackServer
from support.ws_client import LiveClient, ws_url

NATIVE_AUDIO = "gemini-2.5-flash-native-audio-latest"


def _config(audio: bool = False, activity: Any = "manual", **options: Any) -> RunConfig:
    app = AdkApp(build_demo_agent(), warm_up=False, live_options=LiveOptions(**options))
    return app.live.live_run_config(audio, activity)


def _manual(config: RunConfig) -> bool | None:
    assert config.realtime_input_config is not None
    detection = config.realtime_input_config.automatic_activity_detection
    assert detection is not None
    return detection.disabled


def test_defaults() -> None:
    config = _config()
    assert _manual(config) is True  # manual activity detection
    assert config.session_resumption == types.SessionResumptionConfig()
    assert config.context_window_compression == types.ContextWindowCompressionConfig(
        sliding_window=types.SlidingWindow()
    )
    assert config.response_modalities == [types.Modality.TEXT]  # the scripted model: text
    assert _config(audio=True).response_modalities == [types.Modality.AUDIO]
    assert _manual(_config(activity="automatic")) is False


def test_resumption_and_compression_can_be_turned_off() -> None:
    config = _config(session_resumption=False, context_window_compression=None)
    assert config.session_resumption is None
    assert config.context_window_compression is None


def test_text_modality() -> None:
    audio = [types.Modality.AUDIO]
    assert _config(text_modality="AUDIO").response_modalities == audio
    # auto: a native-audio (or Gemini 3) Live model refuses TEXT, so it speaks
    assert _config(model=NATIVE_AUDIO).response_modalities == audio
    assert _config(model="gemini-live-2.5-flash-preview").response_modalities == [
        types.Modality.TEXT
    ]
    assert _config(model=NATIVE_AUDIO, text_modality="TEXT").response_modalities == [
        types.Modality.TEXT
    ]


def test_the_apps_own_run_config_is_kept() -> None:
    own = RunConfig(
        realtime_input_config=types.RealtimeInputConfig(
            automatic_activity_detection=types.AutomaticActivityDetection(disabled=False)
        ),
        session_resumption=types.SessionResumptionConfig(handle="theirs"),
        context_window_compression=types.ContextWindowCompressionConfig(trigger_tokens=1000),
    )
    config = _config(run_config=own)
    assert _manual(config) is False  # not overridden by the manual default
    assert config.session_resumption == own.session_resumption
    assert config.context_window_compression == own.context_window_compression


async def test_the_default_activity_mode_is_an_option_and_a_connection_may_ask() -> None:
    app = AdkApp(
        build_demo_agent(), warm_up=False, live_options=LiveOptions(activity_detection="automatic")
    )
    with LoopbackServer(app) as server:
        for query, manual in (("", False), ("activity=manual", True)):
            client = await LiveClient.open(ws_url(server.url, query))
            try:
                await client.say("hello")
                await client.turn()
                (connection,) = app.live.connections
                assert connection.run.manual_activity is manual
            finally:
                await client.close()
            await _closed(app)


async def _closed(app: AdkApp, within: float = 10.0) -> None:
    """The server side of a closed connection ends soon after the close."""
    for _ in range(int(within / 0.02)):
        if not app.live.connections:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the connection did not end")
