"""adk-asgi: serve Google ADK agents to Vercel AI SDK chat UIs (``useChat``).

    from adk_asgi import AdkApp
    site.mount("/api/chat", AdkApp(agent=root_agent))
"""

from __future__ import annotations

from ._app import AdkApp
from ._chunks import UIChunk
from ._errors import RequestError
from ._frontend_tool import FrontendTool, frontend_tool
from ._middleware import AdkMiddleware
from ._sessions import session_service_from_url
from ._translator import EventTranslator

__all__ = [
    "AdkApp",
    "AdkMiddleware",
    "EventTranslator",
    "FrontendTool",
    "RequestError",
    "UIChunk",
    "frontend_tool",
    "session_service_from_url",
]

__version__ = "0.1.0"
