"""Tools for testing agents served with adk-asgi offline, without Google's servers.

:mod:`adk_asgi.testing.gemini` is a Gemini API emulator: a real server on loopback that
speaks the Gemini Developer API wire protocol (``generateContent``,
``streamGenerateContent`` and the Live API's ``BidiGenerateContent`` WebSocket), so ADK's
real ``google.adk.models.Gemini`` model and google-genai clients run against it with an
environment such as::

    GOOGLE_GEMINI_BASE_URL=https://127.0.0.1:8765
    GOOGLE_API_KEY=emulator-api-key
    SSL_CERT_FILE=/tmp/.../ca-bundle.pem

Start it from Python (`adk_asgi.testing.gemini.GeminiEmulator`) or from a shell
(``python -m adk_asgi.testing.gemini --port 0 --env-file gemini.env``). It needs the
``testing`` extra (``pip install 'adk-asgi[testing]'``) for its throwaway TLS authority.
"""

from __future__ import annotations
