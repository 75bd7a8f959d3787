"""Griffe extension of the API reference: ``>>>`` examples in docstrings become code blocks.

The package's docstrings show usage as doctest lines outside any "Examples:" section, which
Markdown would render as nested block quotes. Loaded by mkdocstrings (``mkdocs.yml``).
"""

from __future__ import annotations

from typing import Any

import griffe

PROMPTS = (">>> ", "... ")


def fence_doctests(text: str) -> str:
    """Wrap each run of ``>>>``/``...`` lines in a Python code fence, without the prompts;
    a run followed by its expected output (the lines up to the next blank line) becomes a
    ``pycon`` fence that keeps prompts and output, as the doctest reads."""
    lines: list[str] = []
    source = text.splitlines()
    index = 0
    while index < len(source):
        if not _is_prompt(source[index]):
            lines.append(source[index])
            index += 1
            continue
        run: list[str] = []
        while index < len(source) and source[index].strip():
            if not _is_prompt(source[index]) and not run:
                break
            run.append(source[index])
            index += 1
        if all(_is_prompt(line) for line in run):
            lines += ["```python", *(line[4:] for line in run), "```"]
        else:
            lines += ["```pycon", *run, "```"]
    return "\n".join(lines)


def _is_prompt(line: str) -> bool:
    return line.startswith(PROMPTS) or line in (">>>", "...")


class DoctestBlocks(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
