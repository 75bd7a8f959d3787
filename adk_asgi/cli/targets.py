"""What ``adk-asgi serve`` serves: the target named on the command line."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

__all__ = ("load_target",)


def load_target(spec: str) -> Any:
    """``pkg.module:attr`` (``attr`` defaults to ``root_agent``) -> the object."""
    module_name, _, attr = spec.partition(":")
    if not module_name:
        raise SystemExit(f"adk-asgi: invalid target {spec!r}; expected module:attr")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    module = importlib.import_module(module_name)
    try:
        return getattr(module, attr or "root_agent")
    except AttributeError:
        raise SystemExit(
            f"adk-asgi: {module_name!r} has no attribute {attr or 'root_agent'!r}"
        ) from None
