"""One ``POST``'s turn: its plan from the request and the session (``plan``, the waiting
calls in ``pending``, the session readied in ``prepare``, restored from the client's history
in ``seed``), the run streamed as SSE (``stream``, ``sse``), and the recording a continued
message replays whole (``continuity``). Internal."""
