"""What the tests share, imported as ``support`` (``tests/`` is on ``sys.path``: pytest's
``pythonpath`` in pyproject.toml). The small helpers are here; the larger ones are modules of
their own (``support.ws_client``, ``support.aisdk_client``, ``support.redis_server``, ...).
Fixtures stay in ``tests/conftest.py``."""

from .chat import Chat, chat_body, parse_sse, text_of, types_of, user_message
from .loopback import LoopbackServer, not_found_app
from .paths import FIXTURES, ROOT, TESTS
from .ports import free_port
from .serve import Serve, serve
from .sqlite import sqlite_threads_done

__all__ = (
    "FIXTURES",
    "ROOT",
    "TESTS",
    "Chat",
    "LoopbackServer",
    "Serve",
    "chat_body",
    "free_port",
    "not_found_app",
    "parse_sse",
    "serve",
    "sqlite_threads_done",
    "text_of",
    "types_of",
    "user_message",
)
