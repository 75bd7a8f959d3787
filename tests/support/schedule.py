"""The order the test files are handed to the xdist workers: the slowest first.

``scripts/test`` runs ``-n 3 --dist loadfile --no-loadscope-reorder``: each worker takes the
next file in collection order when it is free. xdist's default order (most tests first)
left the few-test, minutes-long files (fresh virtual environments, the benchmark run,
Chromium) for the end, one worker busy with them while the other idled. Starting the
longest first (longest processing time first) lets the many short files fill in around
them. The durations are the table of the slowest tests in docs/development/index.md
(``scripts/slowest-tests`` keeps it from CI's runs), added up by file; files not in it
keep their place after those that are.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Protocol

from .paths import ROOT

TABLE = ROOT / "docs" / "development" / "index.md"
ROW = re.compile(r"^\| `(tests/[^`:]+)::[^`]*` \| ([\d.]+) s \|", re.M)


class _Item(Protocol):
    nodeid: str


def file_seconds(text: str) -> dict[str, float]:
    """Seconds per test file in the page's table of the slowest tests."""
    seconds: dict[str, float] = defaultdict(float)
    for path, value in ROW.findall(text):
        seconds[path] += float(value)
    return dict(seconds)


def slowest_files_first(items: Sequence[_Item]) -> list[int]:
    """The indexes of ``items`` reordered: files of the table, slowest first, then the rest
    in their order (a stable sort: a file's own tests keep theirs)."""
    seconds = file_seconds(TABLE.read_text()) if TABLE.is_file() else {}
    return sorted(
        range(len(items)), key=lambda i: -seconds.get(items[i].nodeid.split("::")[0], 0.0)
    )
