"""The order scripts/test hands files to the xdist workers (tests/support/schedule.py): the
table of the slowest tests must parse, name files that exist, and put them first."""

from __future__ import annotations

from dataclasses import dataclass

from support import ROOT
from support.schedule import TABLE, file_seconds, slowest_files_first


@dataclass
class Item:
    nodeid: str


def test_the_table_names_existing_files_by_their_seconds() -> None:
    seconds = file_seconds(TABLE.read_text())
    assert len(seconds) >= 5, "the table of the slowest tests did not parse"
    for path, total in seconds.items():
        assert (ROOT / path).is_file(), f"{path}: in the table, not in tests/"
        assert total > 0


def test_slowest_files_first_keeps_each_files_order() -> None:
    (slowest, _), (second, _) = sorted(
        file_seconds(TABLE.read_text()).items(), key=lambda x: -x[1]
    )[:2]
    unlisted = "/".join(("tests", "unlisted", "test_unlisted.py"))  # in no table, no tree
    items = [
        Item(f"{unlisted}::one"),
        Item(f"{second}::x"),
        Item(f"{slowest}::y"),
        Item(f"{unlisted}::two"),
        Item(f"{slowest}::z"),
    ]
    order = [items[i].nodeid for i in slowest_files_first(items)]
    assert order == [
        f"{slowest}::y",
        f"{slowest}::z",
        f"{second}::x",
        f"{unlisted}::one",
        f"{unlisted}::two",
    ]
