"""The WebSocket (live) pipeline: frames (``protocol_a``, ``protocol_b``, ``commands``) ->
``socket`` -> connection inbox (``connection``) -> LiveRequestQueue (``run/input.py``) ->
Runner.run_live (``run``) -> events -> turns (``turns``, ``translator``, ``gate``) -> chunks
-> frames. Internal."""
