"""An agent with Gemini's code execution (``BuiltInCodeExecutor``), as ADK's docs build one.

The model runs the code itself: its answer holds, in order, text, an ``executable_code``
part, its ``code_execution_result`` and more text, streamed part by part as Gemini streams
them (``ScriptedModel`` answers with Gemini's shapes; ``GEMINI_SCRIPT`` makes the Gemini
API emulator answer the same to ADK's real ``Gemini``). ADK gives the final event of such
an answer another id than its partials (the executor's response processor yields an event
of its own first).

- "compute ..." runs ``print(2 + 2)``: outcome ``OUTCOME_OK``, output ``4``;
- "divide ..." runs ``print(1 / 0)``: outcome ``OUTCOME_FAILED``, the traceback's last
  line as output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from google.adk.agents import LlmAgent
from google.adk.code_executors import BuiltInCodeExecutor
from google.adk.models import BaseLlm
from google.genai import types

from adk_asgi.testing.gemini import Reply as EmulatedReply
from adk_asgi.testing.gemini import Request, Script

from ..team.scripted import Reply, ScriptedModel, latest

__all__ = ("DIVIDED", "GEMINI_SCRIPT", "SUM", "build_root_agent", "root_agent")

MODEL: Final = "gemini-2.5-flash"  # BuiltInCodeExecutor accepts Gemini models only
SUM: Final = (
    types.Part(text="Let me compute that. "),
    types.Part(
        executable_code=types.ExecutableCode(language=types.Language.PYTHON, code="print(2 + 2)")
    ),
    types.Part(
        code_execution_result=types.CodeExecutionResult(
            outcome=types.Outcome.OUTCOME_OK, output="4\n"
        )
    ),
)
SUM_TEXT: Final = "The answer is 4."
DIVIDED: Final = (
    types.Part(
        executable_code=types.ExecutableCode(language=types.Language.PYTHON, code="print(1 / 0)")
    ),
    types.Part(
        code_execution_result=types.CodeExecutionResult(
            outcome=types.Outcome.OUTCOME_FAILED, output="ZeroDivisionError: division by zero"
        )
    ),
)
DIVIDED_TEXT: Final = "Dividing by zero fails."


def _answer(text: str) -> tuple[tuple[types.Part, ...], str]:
    if "divide" in text.lower():
        return DIVIDED, DIVIDED_TEXT
    if "compute" in text.lower():
        return SUM, SUM_TEXT
    return (), f"You said: {text}"


def calculator(contents: Sequence[types.Content]) -> Reply | None:
    said = latest(contents)
    if said is None:
        return None
    parts, text = _answer(said.text or "")
    return Reply(parts=parts, text=text)


def build_root_agent(delay: float = 0.0, *, model: BaseLlm | None = None) -> LlmAgent:
    return LlmAgent(
        name="calculator",
        model=model
        if model is not None
        else ScriptedModel(model=MODEL, planner=calculator, delay=delay),
        instruction="Answer with Python: run code for any arithmetic.",
        code_executor=BuiltInCodeExecutor(),
    )


def _emulated(request: Request) -> EmulatedReply:
    said = request.text.lower()
    if "divide" in said:
        return EmulatedReply.code(
            "print(1 / 0)",
            "ZeroDivisionError: division by zero",
            text=DIVIDED_TEXT,
            outcome="OUTCOME_FAILED",
        )
    if "compute" in said:
        return EmulatedReply.code(
            "print(2 + 2)", "4\n", text=SUM_TEXT, before="Let me compute that. "
        )
    return EmulatedReply(f"You said: {request.text}")


GEMINI_SCRIPT: Final = Script(fallback=_emulated)
"""The calculator's answers on the Gemini API emulator: ``GeminiEmulator(GEMINI_SCRIPT)``."""

root_agent = build_root_agent()
