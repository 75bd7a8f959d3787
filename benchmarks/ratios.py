"""Medians and paired ratios, as every report of the suite states them."""

from __future__ import annotations

from typing import Any


def median(values: list[float | None]) -> float | None:
    """The median of the values that are numbers (None and NaN left out)."""
    kept = sorted(v for v in values if v is not None and v == v)
    if not kept:
        return None
    mid = len(kept) // 2
    return kept[mid] if len(kept) % 2 else (kept[mid - 1] + kept[mid]) / 2


def spread(ratio: float | None, per_rep: list[float]) -> dict[str, Any]:
    """A ratio of medians with the median, min and max of the per-repetition ratios."""
    return {
        "ratio": ratio,
        "paired": median(list(per_rep)),
        "min": min(per_rep) if per_rep else None,
        "max": max(per_rep) if per_rep else None,
    }


def format_paired(p: dict[str, Any]) -> str:
    """``1.18× (1.10, 0.95–1.30)``: ratio of medians (paired median, range)."""
    if not p or p.get("ratio") is None:
        return "–"
    text = f"{p['ratio']:.2f}×"
    if p.get("paired") is not None and p.get("min") is not None:
        text += f" ({p['paired']:.2f}, {p['min']:.2f}–{p['max']:.2f})"
    return text
