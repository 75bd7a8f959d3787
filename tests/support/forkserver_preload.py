"""Imported once by the fork server of ``support.forked``: the CLI's imports and ADK's
first run (``adk_asgi.adk.warmup``), paid before any server is forked from it. Nothing
else imports this module."""

import asyncio

import adk_asgi.cli.main  # noqa: F401  (the import is the point)
from adk_asgi.adk.warmup import warm_up

asyncio.run(warm_up())
