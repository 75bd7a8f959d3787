"""The documentation's links, where `mkdocs build --strict` does not look.

scripts/test runs the strict build (mkdocs.yml), which checks the links between the
site's pages with MkDocs' heading ids. These tests cover the rest: README.md, the landing
page on GitHub and PyPI, is short; every link of every Markdown file in the repository
resolves, anchors under GitHub's heading ids (the pages are read there too); and every
``docs/….md`` path named anywhere in the repository exists.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from support import ROOT

DOCS = ROOT / "docs"

FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
SNIPPET = re.compile(r'^--8<-- "([^":]+)(?::[\w-]+)?"\s*$', re.M)
DOCS_PATH = re.compile(r"(?<![\w/.-])docs/[\w./-]+\.md(?:#[\w-]+)?")
TESTS_PATH = re.compile(r"(?<![\w/.-])tests/[\w./-]+\.(?:py|mjs)\b")


def repository_files() -> list[Path]:
    """The files git tracks or would track (not ignored), minus the built chat page."""
    names = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return sorted(
        {ROOT / n for n in names if not n.startswith("adk_asgi/_web/") and (ROOT / n).is_file()}
    )


FILES = repository_files()
MARKDOWN = [f for f in FILES if f.suffix == ".md"]
TEXT_KINDS = {".py", ".md", ".mjs", ".ts", ".tsx", ".conf", ".yml", ".toml", ".json", ""}


def prose(text: str) -> str:
    """Markdown without code blocks and inline code, where links are not links."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def expand_snippets(text: str) -> str:
    """The page as built: `--8<-- "path"` lines replaced by the file (pymdownx.snippets)."""
    return SNIPPET.sub(lambda m: (ROOT / m.group(1)).read_text(), text)


def github_slug(heading: str) -> str:
    """GitHub's id for a heading: plain text, lower case, punctuation dropped, spaces -> '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    headings = HEADING.findall(FENCE.sub("", expand_snippets(path.read_text())))
    return {github_slug(h) for h in headings}


def test_readme_is_a_landing_page() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 200, "README.md is the landing page; details belong in docs/"


@pytest.mark.parametrize("page", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve_on_github(page: Path) -> None:
    broken = []
    for target in LINK.findall(prose(page.read_text())):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading #{anchor}")
    assert not broken, broken


def test_docs_paths_named_in_the_repository_exist() -> None:
    """Comments, docstrings and pages that point into docs/ follow the pages when they move;
    so do those that name a file of the tests (``tests/….py``, ``.mjs``)."""
    missing = []
    for file in FILES:
        if file.suffix not in TEXT_KINDS:
            continue
        try:
            text = file.read_text()
        except UnicodeDecodeError:
            continue
        for mention in set(DOCS_PATH.findall(text)):
            path, _, anchor = mention.partition("#")
            target = ROOT / path
            if not target.is_file():
                missing.append(f"{file.relative_to(ROOT)}: {mention}")
            elif anchor and anchor not in anchors(target):
                missing.append(f"{file.relative_to(ROOT)}: {mention} (no such heading)")
        for mention in set(TESTS_PATH.findall(text)):
            if not (ROOT / mention).is_file():
                missing.append(f"{file.relative_to(ROOT)}: {mention}")
    assert not missing, missing
