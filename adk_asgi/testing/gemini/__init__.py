"""A Gemini API emulator for testing agents offline.

`GeminiEmulator` is a real HTTPS/WSS server on loopback that speaks the Gemini
Developer API wire protocol google-genai uses:

* ``POST /v1beta/models/{model}:generateContent`` and
  ``:streamGenerateContent?alt=sse`` (also ``v1alpha`` and ``v1``);
* the Live API WebSocket
  ``/ws/google.ai.generativelanguage.{v1alpha|v1beta}.GenerativeService.BidiGenerateContent``.

Point google-genai (and ADK's ``Gemini`` model) at it with ``GOOGLE_GEMINI_BASE_URL``, any
API key, and ``SSL_CERT_FILE`` set to its CA bundle — `GeminiEmulator.env` holds the
three. Replies come from a script (`Script`, `Rule`, `Reply`; by
default `default_reply`, which calls the declared functions a message names and otherwise
answers with the adk-asgi demo agent's phrases), and the emulator enforces the real service's
documented rules: ``setup`` first and once, activity signals only with manual activity
detection, 16-bit PCM audio input, tool responses only for pending calls (several for a
``NON_BLOCKING`` call while they say ``willContinue``), a connection lifetime announced by
``goAway``, the context window, session resumption handles and API keys.

From a shell: ``python -m adk_asgi.testing.gemini --port 0 --env-file gemini.env``.
"""

from __future__ import annotations

from .cassettes.cassette import CassetteError
from .cassettes.recorder import DEFAULT_UPSTREAM, Upstream
from .emulator import GeminiEmulator
from .errors import ApiError
from .journal import Journal, Record
from .script.arguments import arguments_for
from .script.default import default_reply
from .script.exchange import Reply, Request, ScriptFn
from .script.script import Rule, Script
from .settings import DEFAULT_API_KEY, DEFAULT_HEARD_TEXT, EmulatorSettings

__all__ = [
    "DEFAULT_API_KEY",
    "DEFAULT_HEARD_TEXT",
    "DEFAULT_UPSTREAM",
    "ApiError",
    "CassetteError",
    "EmulatorSettings",
    "GeminiEmulator",
    "Journal",
    "Record",
    "Reply",
    "Request",
    "Rule",
    "Script",
    "ScriptFn",
    "Upstream",
    "arguments_for",
    "default_reply",
    "demo_reply",
]


def demo_reply(request: Request) -> Reply:
    """The adk-asgi demo agent's reply to ``request``, whatever functions it declares
    (the default script, `default_reply`, uses the phrases that call a function only when
    the request declares it)."""
    from .script.demo import demo_reply as reply

    return reply(request)
