"""Stream stores: chat owners, turn locks and resumable streams, shared by the workers
(``base``: the interface; ``memory``: one process; ``redis``: several workers)."""

from .base import (
    INTERRUPTED_BLOB,
    AtCapacity,
    StoreUnavailable,
    StreamRecorder,
    StreamStore,
    split_frames,
)
from .memory import MemoryStreamStore

__all__ = (
    "INTERRUPTED_BLOB",
    "AtCapacity",
    "MemoryStreamStore",
    "StoreUnavailable",
    "StreamRecorder",
    "StreamStore",
    "split_frames",
)
