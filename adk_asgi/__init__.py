"""adk-asgi: serve Google ADK agents to Vercel AI SDK chat UIs (``useChat``).

    from adk_asgi import AdkApp, mount
    mount(site, "/api/chat", AdkApp(agent=root_agent))

The public API is what this module exports, plus ``adk_asgi.chunks`` (the UI message
stream chunk types), ``adk_asgi.testing`` (test helpers) and ``adk_asgi.demo`` (the
offline demo agent). Everything else (``core``, ``http``, ``live``, ``stores``, ``cli``)
is internal and may change between releases; ARCHITECTURE.md maps it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .app import AdkApp
from .core.auth import Authenticate, AuthError, bearer_token
from .core.errors import RequestError
from .core.gctuning import GcTuning
from .core.limits import Limits
from .core.message import ErrorInfo, describe_error_generic
from .core.surface import EventParts, SurfaceOptions
from .core.tools import FrontendTool, frontend_tool
from .middleware import AdkMiddleware
from .mount import mount
from .observability.logs import JsonFormatter
from .options import (
    ChatListOptions,
    LiveOptions,
    PauseOptions,
    StorageOptions,
    StreamingOptions,
)
from .stores import MemoryStreamStore, StreamRecorder, StreamStore

if TYPE_CHECKING:
    from .stores.redis import RedisStreamStore

__all__ = [
    "AdkApp",
    "AdkMiddleware",
    "AuthError",
    "Authenticate",
    "ChatListOptions",
    "ErrorInfo",
    "EventParts",
    "FrontendTool",
    "GcTuning",
    "JsonFormatter",
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
