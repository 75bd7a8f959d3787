"""Tool failures that arrive as results: what a tool's result says of its outcome, and what
the page reads for it.

ADK tells the model about a failed tool in the tool's result, so that the model can retry
or explain, and these results are written for the model (they name other tools, quote the
arguments and an exception's text, tell the model what to do next):

- ``{"error": "..."}``: a tool's own failure, ADK's answer to a call of a tool it does not
  have (one whose ``McpToolset`` failed to connect, say, after a refused token), an MCP
  call that raised (``MCP tool execution failed: ...``);
- an MCP tool's ``CallToolResult`` with ``isError: true`` (the server ran the tool and it
  failed; ADK's own telemetry calls it ``MCP_TOOL_ERROR``);
- ``ReflectAndRetryToolPlugin``'s ``ToolFailureResponse``
  (``response_type: "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN"``, with the exception's
  class as ``error_type`` and its ``reflection_guidance`` for the model);
- a result a tool's own ADK error hook (``_detect_error_in_response``, as ADK's
  environment tools have) marks as an error.

Each is a failure on the page: ``tool-output-error`` with the generic text ``"The tool
failed."``, or what the application's ``describe_error`` says when it says more than its
generic text (it gets an ``ErrorInfo`` whose ``tool`` names the tool); never the text
meant for the model. The server log gets one line per failure (the tool, the call and the
code, never the text: it can quote what the tool was given).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Final

from ..pauses.notices import GATE_TEXTS
from ..wire.errors import DescribeError, ErrorInfo, describe, describe_error_generic

__all__ = (
    "MCP_TOOL_ERROR",
    "RETRY_PLUGIN_RESPONSE",
    "TOOL_ERROR",
    "TOOL_FAILED",
    "ToolFailures",
    "is_error",
    "tool_failure",
)

TOOL_FAILED: Final = "The tool failed."
"""What the page reads for a failed tool, unless ``describe_error`` says more."""
TOOL_ERROR: Final = "TOOL_ERROR"
"""The code of an ``{"error": ...}`` result (ADK's telemetry calls it so too)."""
MCP_TOOL_ERROR: Final = "MCP_TOOL_ERROR"
"""The code of an MCP result with ``isError: true`` (ADK's own name for it)."""
RETRY_PLUGIN_RESPONSE: Final = "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN"
"""``ReflectAndRetryToolPlugin``'s ``response_type`` (ADK's
``REFLECT_AND_RETRY_RESPONSE_TYPE``)."""

Detector = Callable[[Any], "str | None"]
"""A tool's ADK error hook: ``(result) -> error type`` or None."""

logger = logging.getLogger("adk_asgi")


def is_error(result: Any) -> bool:
    """ADK reports tool failures (and rejections) as ``{"error": "..."}``."""
    return (
        isinstance(result, dict)
        and "error" in result
        and "result" not in result
        and (len(result) == 1 or result.get("status") in ("error", None))
    )


def tool_failure(result: Any, detect: Detector | None = None) -> ErrorInfo | None:
    """The failure a tool's own result reports (None: it succeeded). ``message`` is the
    text meant for the model, for ``describe_error`` to map; never sent as it is."""
    if not isinstance(result, dict):
        return None
    said = result.get("error")
    if isinstance(said, str) and said in GATE_TEXTS:
        # The live gate's answers for calls it did not run are the server's own texts,
        # written for the user too: they stay errors with their text.
        return None
    if result.get("response_type") == RETRY_PLUGIN_RESPONSE:
        code = result.get("error_type")
        details = result.get("error_details")
        return ErrorInfo(
            code if isinstance(code, str) and code else "ToolError",
            details if isinstance(details, str) else None,
        )
    if result.get("isError") is True or result.get("is_error") is True:
        return ErrorInfo(MCP_TOOL_ERROR, _mcp_text(result))
    if is_error(result):
        return ErrorInfo(TOOL_ERROR, str(said))
    if detect is not None:
        try:
            code = detect(result)
        except Exception:  # the tool's hook must not break the stream (ADK ignores it too)
            logger.exception("The error hook of a tool raised")
            return None
        if code:
            return ErrorInfo(str(code))
    return None


def _mcp_text(result: dict[str, Any]) -> str | None:
    content = result.get("content")
    if not isinstance(content, list):
        return None
    said = [
        item["text"]
        for item in content
        if isinstance(item, dict) and isinstance(item.get("text"), str)
    ]
    return "\n".join(said) or None


class ToolFailures:
    """How one message reports its tools' failures: the text the page reads and the log
    line (none when ``quiet``: a chat's history replays what a stream already logged)."""

    __slots__ = ("_browser", "_describe_error", "_detectors", "_quiet")

    def __init__(
        self,
        describe_error: DescribeError = describe_error_generic,
        detectors: Mapping[str, Detector] | None = None,
        *,
        browser: frozenset[str] = frozenset(),
        quiet: bool = False,
    ) -> None:
        self._describe_error = describe_error
        self._detectors = detectors or {}
        self._browser = browser
        self._quiet = quiet

    def of(self, name: str, result: Any) -> ErrorInfo | None:
        """The failure the result of tool ``name`` reports, the tool named in it. A browser
        tool's result is the page's own answer (in live mode it comes back through the
        agent): its error keeps its text."""
        if name in self._browser:
            return None
        failure = tool_failure(result, self._detectors.get(name))
        if failure is None:
            return None
        return ErrorInfo(failure.code, failure.message, tool=name or None)

    def text(self, call_id: str, failure: ErrorInfo) -> str:
        """What the page reads for ``failure`` (and its one log line)."""
        if not self._quiet:
            logger.warning(
                "Tool %r failed (call %s): %s; the page shows a tool error",
                failure.tool,
                call_id,
                failure.code,
            )
        if self._describe_error is describe_error_generic:
            return TOOL_FAILED
        text = describe(failure, self._describe_error)
        # An application's describe_error that falls back on the generic text (a turn's
        # failure) says nothing about a tool.
        return TOOL_FAILED if text == describe_error_generic(failure) else text
