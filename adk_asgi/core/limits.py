"""Limits: what one client may send, in one place. Every limit answers with a clear 4xx
(HTTP) or a close code / error frame (WebSocket); none is silent truncation."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ("DEFAULT_MAX_QUEUED_BYTES", "DEFAULT_MAX_TURN_BYTES", "DEFAULT_MAX_TURN_SECONDS",
           "Limits")

_MiB = 1024 * 1024
DEFAULT_MAX_QUEUED_BYTES = _MiB
DEFAULT_MAX_TURN_SECONDS = 600.0
DEFAULT_MAX_TURN_BYTES = 32 * _MiB


@dataclass(frozen=True, slots=True)
class Limits:
    """Request and connection limits. The defaults fit a chat UI with file uploads.

    HTTP (``POST``): ``max_body_bytes`` -> 413; ``max_messages``, ``max_parts_per_message``,
    ``max_file_bytes`` -> 413 with a code naming the limit.
    WebSocket: ``max_frame_bytes`` -> close 1009; more than ``frames_per_second`` (with
    bursts up to ``frame_burst``) -> close 1008; more than ``max_pending_approvals``
    calls waiting for the client on one connection -> the extra call is refused (the
    model is told) and the client gets an error; a camera or screen frame (protocol A
    ``image_frame``) over ``max_image_bytes``, or more than ``images_per_second`` (with
    bursts up to ``image_burst``) -> that frame is refused with an ``error`` frame and
    the connection goes on.
    Both: more than ``max_queued_bytes`` waiting for a client that does not read -> dropped
    (its run aborted), like a client that takes nothing for ``send_timeout``.
    HTTP: a turn that runs ``max_turn_seconds`` or streams ``max_turn_bytes`` -> stopped,
    with an ``error`` chunk (what bounds a client whose kernel keeps accepting bytes its
    application never reads; on WebSockets the server's keepalive pings do).
    """

    max_body_bytes: int = 16 * _MiB
    max_messages: int = 1000
    max_parts_per_message: int = 256
    max_file_bytes: int = 10 * _MiB
    """Decoded size of one ``data:`` URL file part."""
    max_frame_bytes: int = 16 * _MiB
    frames_per_second: float = 100.0
    frame_burst: int = 200
    max_pending_approvals: int = 32
    max_image_bytes: int = 7_000_000
    """Decoded size of one live image frame: the Live API's limit for an inline image
    (7 MB; its recommended frame is 768x768, some 50-150 kB as JPEG)."""
    images_per_second: float = 1.0
    """Live image frames per second and connection: the Live API takes video as image
    frames at 1 frame per second."""
    image_burst: int = 2
    """Image frames a connection may send at once (a page's 1-second timer drifts)."""
    max_queued_bytes: int = DEFAULT_MAX_QUEUED_BYTES
    """What the server queues for one slow client (an SSE stream or a WebSocket) behind a
    full socket; more and the client is dropped (``core/outbox.py``)."""
    max_turn_seconds: float | None = DEFAULT_MAX_TURN_SECONDS
    """The longest one HTTP turn may run, from its response's start; None: no ceiling."""
    max_turn_bytes: int | None = DEFAULT_MAX_TURN_BYTES
    """The most one HTTP turn may stream to its client (its SSE bytes); None: no ceiling."""

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "max_messages", "max_parts_per_message",
                     "max_file_bytes", "max_frame_bytes", "frame_burst",
                     "max_pending_approvals", "max_queued_bytes", "max_image_bytes",
                     "image_burst"):
            if getattr(self, name) < 1:
                raise ValueError(f"Limits.{name} must be >= 1")
        for name in ("frames_per_second", "images_per_second"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Limits.{name} must be > 0")
        if self.max_turn_seconds is not None and self.max_turn_seconds <= 0:
            raise ValueError("Limits.max_turn_seconds must be > 0 (or None)")
        if self.max_turn_bytes is not None and self.max_turn_bytes < 1:
            raise ValueError("Limits.max_turn_bytes must be >= 1 (or None)")
