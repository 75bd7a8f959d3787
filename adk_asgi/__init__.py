"""adk-asgi: serve Google ADK agents to Vercel AI SDK chat UIs (``useChat``).

    from adk_asgi import AdkApp, mount
    mount(site, "/api/chat", AdkApp(agent=root_agent))

The public API is what this module exports, plus ``adk_asgi.chunks`` (the UI message
stream chunk types), ``adk_asgi.testing`` (test helpers) and ``adk_asgi.demo`` (the
offline demo agent). Everything else is internal and may change between releases;
ARCHITECTURE.md maps it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .app import AdkApp
from .middleware import AdkMiddleware
from .mount import mount
from .observability.logs import JsonFormatter
from .options import (
    Authenticate,
    ChatListOptions,
    GcTuning,
    Limits,
    LiveOptions,
    PauseOptions,
    StorageOptions,
    StreamingOptions,
    SurfaceOptions,
)
from .pauses.tools import FrontendTool, frontend_tool
from .stores import MemoryStreamStore, StreamRecorder, StreamStore
from .translate.lanes import Lane
from .translate.message import AssistantMessage
from .translate.translator import EventTranslator
from .transport.auth import AuthError, bearer_token
from .wire.errors import ErrorInfo, RequestError, describe_error_generic
from .wire.parts import EventParts

if TYPE_CHECKING:
    from .stores.redis import RedisStreamStore

__all__ = [
    "AdkApp",
    "AdkMiddleware",
    "AssistantMessage",
    "AuthError",
    "Authenticate",
    "ChatListOptions",
    "ErrorInfo",
    "EventParts",
    "EventTranslator",
    "FrontendTool",
    "GcTuning",
    "JsonFormatter",
    "Lane",
    "Limits",
    "LiveOptions",
    "MemoryStreamStore",
    "PauseOptions",
    "RedisStreamStore",
    "RequestError",
    "StorageOptions",
    "StreamRecorder",
    "StreamStore",
    "StreamingOptions",
    "SurfaceOptions",
    "bearer_token",
    "describe_error_generic",
    "frontend_tool",
    "mount",
]

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # Optional dependency: importing adk_asgi must not need the redis package.
    if name == "RedisStreamStore":
        from .stores.redis import RedisStreamStore

        return RedisStreamStore
    raise AttributeError(f"module 'adk_asgi' has no attribute {name!r}")
