"""Where things are: the repository, the test tree and what the tests read from it."""

from __future__ import annotations

from pathlib import Path
from typing import Final

TESTS: Final = Path(__file__).resolve().parents[1]
ROOT: Final = TESTS.parent
FIXTURES: Final = TESTS / "fixtures"
