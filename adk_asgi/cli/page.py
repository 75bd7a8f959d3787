"""What the chat page shows about the agent ``adk-asgi serve`` serves (``PageInfo``): its
title, description and suggestions come from the agent (its name, description and tools)
or from the flags (``--title``, ``--description``, ``--suggestion``); only the demo gets the
demo's."""

from __future__ import annotations

import argparse
from typing import Any, Final

from .flags import mount_path
from .site import PageInfo
from .targets import Target

__all__ = ("page_info",)

DEMO_SUGGESTIONS: Final = (
    "What's the weather in Tokyo?",
    "Send 50 dollars to Hanako",
    "Send 30 dollars to Alice and 40 dollars to Bob",
    "Where am I?",
    "Play track 2",
    "think about streaming",
)
DEMO_DESCRIPTION: Final = (
    "Streaming text and reasoning, server tools, approvals before a payment runs, tools "
    "that run in this browser (your location, the background music) and live voice. Pick "
    "a transport above; every answer comes from the same ADK agent."
)
DEMO_TOOLS: Final = frozenset({"get_weather", "process_payment", "get_location", "change_bgm"})
_MOST: Final = 6  # suggestions made from tool names


def page_info(args: argparse.Namespace, target: Target) -> PageInfo:
    """The page's info for ``target``, the flags' values first."""
    api = mount_path(args.mount).lstrip("/")
    root = _root(target)
    if target.where == "demo" or DEMO_TOOLS <= set(tool_names(root)):
        shown = PageInfo("Talk to the offline demo agent", DEMO_DESCRIPTION, DEMO_SUGGESTIONS)
    else:
        name = str(target.value.name if target.kind == "app" else getattr(root, "name", "agent"))
        description = getattr(root, "description", None)
        shown = PageInfo(
            f"Talk to {name}",
            description if isinstance(description, str) else "",
            tuple(f"use {tool}" for tool in tool_names(root)[:_MOST]),
        )
    return PageInfo(
        args.title or shown.title,
        shown.description if args.description is None else args.description,
        shown.suggestions if args.suggestion is None else tuple(args.suggestion),
        api,
    )


def _root(target: Target) -> Any:
    if target.kind == "app":
        return target.value.root_agent
    if target.kind == "runner":
        return getattr(target.value, "agent", None)
    return target.value


def tool_names(agent: Any) -> list[str]:
    """The names of the agent's own tools (functions and tools; toolsets list theirs only
    when asked, so they are left out)."""
    names: list[str] = []
    for tool in getattr(agent, "tools", None) or ():
        name = getattr(tool, "name", None) if not callable(tool) or hasattr(tool, "name") else None
        if name is None and callable(tool):
            name = getattr(tool, "__name__", None)
        if isinstance(name, str) and name and name not in names:
            names.append(name)
    return names
