"""Lanes: who writes each part of a message, and which of them write at the same time.

A lane is one agent (or workflow node) on one branch of the run: ADK's ``author``, its
``branch`` (``ParallelAgent`` sub-agents run on ``parallel.sub`` branches) and its workflow
node path (``workflow@1/node@1``). Everything a lane streams is its own: its text and
reasoning blocks (their ids), whether its final event repeats what it streamed, its model
call. Branches that stream at the same time each write into their own blocks, so the AI SDK
client assembles each branch's text intact.

Everything here is read from the event itself (author, branch, node path), never from
what only a live stream has (partials, ids), so a session's stored events map onto the
same lanes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from google.adk.events import Event

__all__ = ("CODE", "REASONING", "RESULT", "TEXT", "Lane", "Lanes", "common_author")

# What a lane streamed as partials since its last final event (bits of `Lane.streamed`):
# the final event repeats those kinds of parts, aggregated.
TEXT: Final = 1
REASONING: Final = 2
CODE: Final = 4
RESULT: Final = 8


class Lane:
    """One agent on one branch: its open blocks and the state of its model call."""

    __slots__ = (
        "author",
        "branch",
        "call_done",
        "code_call",
        "event_author",
        "metadata",
        "path",
        "reasoning_id",
        "said",
        "step",
        "streamed",
        "text_id",
    )

    def __init__(self, event_author: str, branch: str | None, path: str) -> None:
        self.event_author = event_author
        self.branch = branch
        self.path = path
        self.author = node_name(path) or event_author
        """The name the client sees: the workflow node's (a function node's events are
        authored by its workflow), else the event's author."""
        self.metadata: dict[str, Any] | None = (
            {"adk": {"author": self.author, "branch": branch}} if branch else None
        )
        """``providerMetadata`` of the lane's text and reasoning blocks: set on branches
        (parallel sub-agents, workflow nodes), whose blocks can interleave with others'."""
        self.text_id: str | None = None
        self.reasoning_id: str | None = None
        self.streamed = 0
        self.said: list[str] = []
        """The text it streamed as partials since its last final event: what that final
        event's text is checked against (``EventTranslator``)."""
        self.call_done = True
        """Its model call has ended (its final response came, or its live model turn
        ended); its next model content is a new call."""
        self.step = 0
        """The step (counted from 1 in this request) the lane last wrote in."""
        self.code_call: str | None = None
        """The tool-call id of its code execution waiting for a result."""

    @property
    def open(self) -> bool:
        return self.text_id is not None or self.reasoning_id is not None

    @property
    def busy(self) -> bool:
        """Mid-call or holding an open block: its step cannot end yet."""
        return not self.call_done or self.text_id is not None or self.reasoning_id is not None


class Lanes:
    """The lanes of one message, by (author, branch, node path)."""

    __slots__ = ("_by_key", "_last")

    def __init__(self) -> None:
        self._by_key: dict[tuple[str, str | None, str], Lane] = {}
        self._last: Lane | None = None

    def of(self, event: Event) -> Lane:
        author, branch, path = event.author, event.branch, event.node_info.path
        last = self._last
        if (
            last is not None
            and last.event_author == author
            and last.branch == branch
            and last.path == path
        ):
            return last  # the common case: the same lane as the previous event
        key = (author, branch, path)
        lane = self._by_key.get(key)
        if lane is None:
            lane = self._by_key[key] = Lane(author, branch, path)
        self._last = lane
        return lane

    def __iter__(self) -> Any:
        return iter(self._by_key.values())


def node_name(path: str) -> str:
    """``workflow@1/node@2`` → ``node``."""
    if not path:
        return ""
    return path.rsplit("/", 1)[-1].split("@", 1)[0]


def common_author(lanes: Sequence[Lane]) -> str:
    """Who wrote a step several lanes wrote in: their author if they share one, else the
    agent or workflow that runs them side by side (the innermost node or branch holding
    all of them: a ``ParallelAgent``, a ``Workflow``)."""
    first = lanes[0].author
    if all(lane.author == first for lane in lanes):
        return first
    paths = [lane.path for lane in lanes]
    if all(paths):
        shared = _shared([p.split("/") for p in paths])
        if shared:
            return shared[-1].split("@", 1)[0]
    branches = [lane.branch or "" for lane in lanes]
    if all(branches):
        shared = _shared([b.split(".") for b in branches])
        if shared:
            return shared[-1].split("@", 1)[0]
    return ", ".join(sorted({lane.author for lane in lanes}))


def _shared(paths: list[list[str]]) -> list[str]:
    shared: list[str] = []
    for segments in zip(*paths, strict=False):
        if any(s != segments[0] for s in segments):
            break
        shared.append(segments[0])
    return shared
