"""The demo agent as ADK's agent loader expects it (``agents_dir/<app>/agent.py``)."""

from __future__ import annotations

import os

from adk_asgi.demo import build_demo_agent

root_agent = build_demo_agent(
    model=os.environ.get("BENCH_MODEL") or None,
    token_delay=float(os.environ.get("BENCH_TOKEN_DELAY", "0")),
)
