"""Names and texts the HTTP and Live endpoints share: API versions, the "model not
supported" error, and the tool and instruction fields of a request."""

from __future__ import annotations

from typing import Any

import pydantic
from google.genai import types

from . import wire
from .errors import ApiError

__all__ = (
    "API_VERSIONS",
    "function_declarations",
    "instruction_text",
    "not_supported",
)

API_VERSIONS = frozenset({"v1", "v1beta", "v1alpha"})


def not_supported(model: str, version: str, method: str) -> ApiError:
    """The answer for a model that does not serve ``method``: the text the Gemini API
    sends (e.g. "models/gemini-2.0-flash-001 is not found for API version v1alpha, or is
    not supported for bidiGenerateContent", google/adk-samples#23)."""
    return ApiError(
        404,
        f"models/{model} is not found for API version {version}, or is not supported for "
        f"{method}. Call ListModels to see the list of available models and their "
        "supported methods.",
    )


def function_declarations(tools: Any) -> tuple[types.FunctionDeclaration, ...]:
    """The function declarations of a request's ``tools``; one that does not parse keeps
    its name alone."""
    found: list[types.FunctionDeclaration] = []
    for tool in tools if isinstance(tools, list) else ():
        declarations = wire.get(tool, "function_declarations")
        for declaration in declarations if isinstance(declarations, list) else ():
            name = wire.get(declaration, "name")
            if not name:
                continue
            try:
                found.append(types.FunctionDeclaration.model_validate(declaration))
            except pydantic.ValidationError:
                found.append(types.FunctionDeclaration(name=str(name)))
    return tuple(found)


def instruction_text(instruction: Any) -> str:
    if isinstance(instruction, str):
        return instruction
    parts = wire.get(instruction, "parts")
    if not isinstance(parts, list):
        return ""
    return "".join(str(wire.get(p, "text") or "") for p in parts)
