"""UI message stream chunks: the wire types the AI SDK client validates (public API).

The types are defined in ``adk_asgi.wire.chunks``, the AI SDK side of the package; this
module is where applications import them from (``from adk_asgi.chunks import TextDelta``).
"""

from __future__ import annotations

from .wire.chunks import *  # noqa: F403
from .wire.chunks import __all__ as __all__
