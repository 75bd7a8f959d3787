"""adk-asgi: serve Google ADK agents to Vercel AI SDK chat UIs (``useChat``).

    from adk_asgi import AdkApp
    site.mount("/api/chat", AdkApp(agent=root_agent))
"""

from __future__ import annotations

from ._app import AdkApp
from ._auth import Authenticate, AuthError, bearer_token
from ._chunks import UIChunk
from ._errors import RequestError
from ._frontend_tool import FrontendTool, frontend_tool
from ._limits import Limits
from ._live import LiveOptions
from ._middleware import AdkMiddleware
from ._sessions import session_service_from_url
from ._streams import MemoryStreamStore, StreamRecorder, StreamStore
from ._translator import EventTranslator

__all__ = [
    "AdkApp",
    "AdkMiddleware",
    "AuthError",
    "Authenticate",
    "EventTranslator",
    "FrontendTool",
    "Limits",
    "LiveOptions",
    "MemoryStreamStore",
    "RequestError",
    "StreamRecorder",
    "StreamStore",
    "UIChunk",
    "bearer_token",
    "frontend_tool",
    "session_service_from_url",
]

__version__ = "0.1.0"
