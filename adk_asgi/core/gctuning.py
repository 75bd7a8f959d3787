"""GcTuning: the garbage collector settings a server process runs ADK with.

ADK allocates many short-lived container objects per streamed event (events, parts,
pydantic models, their dicts). With Python's default generation-0 threshold (700) the
collector runs every few events, and each run of generation 1 and 2 walks every object
the process has ever imported. Two process-wide changes, applied once start-up and
warm-up are over (``AdkApp(gc_tuning=...)``, on by default in ``adk-asgi serve``):

- ``gc.freeze()``: the objects alive after warm-up (modules, ADK, the agent, the runner)
  move to the permanent generation, so later collections no longer walk them;
- ``gc.set_threshold(...)``: a larger generation-0 threshold, so young-generation
  collections run less often (each one walks more objects, fewer times in total).

Cyclic garbage still gets collected; it just lives a little longer. Figures:
``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import gc
import logging
from dataclasses import dataclass

__all__ = ("GcTuning",)

logger = logging.getLogger("adk_asgi")


@dataclass(frozen=True, slots=True)
class GcTuning:
    """How ``AdkApp`` sets the process's garbage collector after its start-up.

    ``threshold``: ``gc.set_threshold(*threshold)`` (``None``: leave the thresholds);
    ``freeze``: ``gc.collect()`` then ``gc.freeze()`` once start-up and warm-up are
    done. ``GcTuning()`` is what ``adk-asgi serve`` uses."""

    threshold: tuple[int, int, int] | None = (20_000, 50, 50)
    freeze: bool = True

    def __post_init__(self) -> None:
        if self.threshold is not None and (
                len(self.threshold) != 3 or any(n < 0 for n in self.threshold)):
            raise ValueError("GcTuning.threshold is three numbers >= 0, as gc.set_threshold")

    def apply(self) -> None:
        """Apply to this process (the GC settings are process-wide) and log them."""
        if self.freeze:
            gc.collect()
            gc.freeze()
        if self.threshold is not None:
            gc.set_threshold(*self.threshold)
        logger.info("GC tuned: threshold %s, %d objects frozen", gc.get_threshold(),
                    gc.get_freeze_count())
