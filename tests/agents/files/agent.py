"""An agent whose model answers with files a browser cannot use as they are.

curator (LlmAgent)   "files": a Cloud Storage file (``gs://``) the app can sign, one it
                     cannot, a web file with a display name, and raw PCM audio
                     (``audio/pcm;rate=16000``, Gemini's audio output format), then
                     text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from google.adk.agents import LlmAgent
from google.genai import types

from ..team.scripted import Reply, ScriptedModel, latest

__all__ = ("APP_NAME", "PCM", "SHARED", "SIGNED", "WEB", "build_root_agent", "sign")

APP_NAME: Final = "curator"
SHARED: Final = "gs://archive-bucket/shared/report.pdf"
PRIVATE: Final = "gs://archive-bucket/private/ledger.csv"
WEB: Final = "https://files.example.test/chart.png"
SIGNED: Final = "https://storage.example.test/archive-bucket/shared/report.pdf?signature=s1"
PCM: Final = bytes(range(256)) * 8  # 1024 samples of 16-bit mono
FILES: Final = (
    types.Part(
        file_data=types.FileData(
            file_uri=SHARED, mime_type="application/pdf", display_name="report.pdf"
        )
    ),
    types.Part(file_data=types.FileData(file_uri=PRIVATE, mime_type="text/csv")),
    types.Part(
        file_data=types.FileData(file_uri=WEB, mime_type="image/png", display_name="chart.png")
    ),
    types.Part(inline_data=types.Blob(data=PCM, mime_type="audio/pcm;rate=16000")),
)


def sign(ref: types.FileData) -> str | None:
    """The app's resolver: a signed URL for the shared folder, nothing for the rest."""
    return SIGNED if ref.file_uri == SHARED else None


def curator(contents: Sequence[types.Content]) -> Reply | None:
    said = latest(contents)
    if said is None:
        return None
    if "files" in (said.text or ""):
        return Reply(parts=FILES, text="Here they are.")
    return Reply(text=f"You said: {said.text}")


def build_root_agent() -> LlmAgent:
    return LlmAgent(
        name="curator", model=ScriptedModel(planner=curator), instruction="Share files."
    )
