"""adk-asgi: serve Google ADK agents to Vercel AI SDK chat UIs (``useChat``).

    from adk_asgi import AdkApp
    site.mount("/api/chat", AdkApp(agent=root_agent))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from ._redis_store import RedisStreamStore

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
    "RedisStreamStore",
    "RequestError",
    "StreamRecorder",
    "StreamStore",
    "UIChunk",
    "bearer_token",
    "frontend_tool",
    "session_service_from_url",
]

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # Optional dependency: importing adk_asgi must not need the redis package.
    if name == "RedisStreamStore":
        from ._redis_store import RedisStreamStore

        return RedisStreamStore
    raise AttributeError(f"module 'adk_asgi' has no attribute {name!r}")
