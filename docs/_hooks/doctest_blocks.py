"""Griffe extension of the API reference: ``>>>`` examples in docstrings become code blocks.

The package's docstrings show usage as doctest lines outside any "Examples:" section, which
Markdown would render as nested block quotes. Loaded by mkdocstrings (``mkdocs.yml``).
"""

from __future__ import annotations

from typing import Any

import griffe

PROMPTS = (">>> ", "... ")


def fence_doctests(text: str) -> str:
    """Wrap each run of ``>>>``/``...`` lines in a Python code fence, without the prompts."""
    lines: list[str] = []
    in_block = False
    for line in text.splitlines():
        prompt = line.startswith(PROMPTS) or line in (">>>", "...")
        if prompt != in_block:
            lines.append("```python" if prompt else "```")
            in_block = prompt
        lines.append(line[4:] if prompt else line)
    if in_block:
        lines.append("```")
    return "\n".join(lines)


class DoctestBlocks(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
