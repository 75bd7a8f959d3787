"""An ADK app whose tools save files as artifacts, on a scripted model (offline).

    analyst (root)      draw_chart: renders a PNG and saves it (tool_context.save_artifact)
                        export_table: saves a large CSV (for range requests)
                        load_artifacts (ADK's): opens the user's uploaded files
                        after_agent_callback: saves notes.md when the user says "notes"

What the model does is decided by keywords of the user's message: "chart TITLE",
"export ROWS", "notes", a message carrying ADK's ``[Uploaded Artifact: "NAME"]``
placeholder (``StorageOptions(uploads_as_artifacts=True)``) opens that file, and the file's
content comes back as "I read NAME: CONTENT".
"""

from __future__ import annotations

import re
import struct
import zlib
from collections.abc import Sequence
from typing import Any, Final

from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.apps import App, ResumabilityConfig
from google.adk.models import BaseLlm
from google.adk.tools import load_artifacts
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from ..team.scripted import Reply, ScriptedModel, latest, summary

__all__ = (
    "CHART_SIZE",
    "app",
    "build_app",
    "build_root_agent",
    "chart_png",
    "root_agent",
    "table_csv",
)

CHART_SIZE: Final = (96, 48)
_UPLOADED = re.compile(r'\[Uploaded Artifact: "([^"]+)"\]')
_READ = re.compile(r"^Artifact (.+) is:$")


def chart_png(title: str, size: tuple[int, int] = CHART_SIZE) -> bytes:
    """A real PNG (a bar chart of the title's letters): what a plotting tool would save."""
    width, height = size
    bars = [ord(c) % height for c in (title or "x")]
    rows = []
    for y in range(height):
        row = bytearray([0])  # filter: none
        for x in range(width):
            bar = bars[x * len(bars) // width]
            row += bytes((30, 120, 220) if height - y <= bar else (250, 250, 250))
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"".join(rows)))
        + chunk(b"IEND", b"")
    )


def table_csv(rows: int) -> bytes:
    """A CSV of ``rows`` rows (about 32 bytes each)."""
    lines = ["row,square,label"] + [f"{i},{i * i},item-{i:08d}" for i in range(rows)]
    return ("\n".join(lines) + "\n").encode()


# -- tools and callbacks ---------------------------------------------------------------


async def draw_chart(title: str, tool_context: ToolContext) -> dict[str, Any]:
    """Draw a bar chart and save it as chart.png."""
    image = types.Part.from_bytes(data=chart_png(title), mime_type="image/png")
    version = await tool_context.save_artifact("chart.png", image)
    return {"saved": "chart.png", "version": version}


async def export_table(rows: int, tool_context: ToolContext) -> dict[str, Any]:
    """Export a table of ``rows`` rows as table.csv."""
    table = types.Part.from_bytes(data=table_csv(rows), mime_type="text/csv")
    version = await tool_context.save_artifact("table.csv", table)
    return {"saved": "table.csv", "version": version, "rows": rows}


async def save_notes(callback_context: CallbackContext) -> types.Content | None:
    """after_agent_callback: a callback saves an artifact too (no tool involved)."""
    said = callback_context.user_content
    text = "".join(p.text or "" for p in (said.parts or [])) if said is not None else ""
    if "notes" in text.lower():
        await callback_context.save_artifact(
            "notes.md",
            types.Part(
                inline_data=types.Blob(mime_type="text/markdown", data=b"# Notes\n\n- saved\n")
            ),
        )
    return None


# -- the model --------------------------------------------------------------------------


def analyst(contents: Sequence[types.Content]) -> Reply | None:
    said = latest(contents)
    if said is None:
        return None
    if said.responses:
        return Reply(text=summary(said.responses))
    text = said.text or ""
    read = _opened(contents)
    if read is not None:
        return Reply(text=f"I read {read[0]}: {read[1]}")
    if uploaded := _UPLOADED.findall(text):
        return Reply(calls=(("load_artifacts", {"artifact_names": uploaded}),))
    low = text.lower()
    if low.startswith("chart"):
        return Reply(text="Drawing it.", calls=(("draw_chart", {"title": text[5:].strip()}),))
    if low.startswith("export"):
        rows = int(re.findall(r"\d+", text)[0]) if re.findall(r"\d+", text) else 10
        return Reply(calls=(("export_table", {"rows": rows}),))
    if "notes" in low:
        return Reply(text="Notes saved.")
    return Reply(text=f"You said: {text}")


def _opened(contents: Sequence[types.Content]) -> tuple[str, str] | None:
    """The artifact ADK's load_artifacts put into this request: (name, its text)."""
    if not contents:
        return None
    parts = contents[-1].parts or []
    for i, part in enumerate(parts):
        match = _READ.match(part.text or "")
        if match and i + 1 < len(parts):
            following = parts[i + 1]
            if following.text is not None:
                return match[1], following.text.strip()
            if following.inline_data is not None and following.inline_data.data:
                return match[1], following.inline_data.data.decode(errors="replace").strip()
    return None


def build_root_agent(delay: float = 0.0, *, model: BaseLlm | None = None) -> LlmAgent:
    return LlmAgent(
        name="analyst",
        model=model or ScriptedModel(planner=analyst, delay=delay),
        description="Draws charts and exports tables.",
        instruction="Answer with charts and tables.",
        tools=[draw_chart, export_table, load_artifacts],
        after_agent_callback=save_notes,
    )


def build_app(delay: float = 0.0) -> App:
    return App(
        name="artifacts",
        root_agent=build_root_agent(delay),
        resumability_config=ResumabilityConfig(is_resumable=True),
    )


root_agent = build_root_agent()
app = build_app()
