"""Stream stores: chat owners, turn locks and resumable streams, shared by the workers
(``base``: the interface; ``memory``: one process; ``redis``: several workers)."""

from .base import INTERRUPTED_BLOB, StoreUnavailable, StreamRecorder, StreamStore, split_frames
from .memory import MemoryStreamStore

__all__ = (
    "INTERRUPTED_BLOB",
    "MemoryStreamStore",
    "StoreUnavailable",
    "StreamRecorder",
    "StreamStore",
    "split_frames",
)
