"""The shared core, used by both pipelines: UI messages in (``request``), ADK events to UI
chunks (``translator``), the approval rules (``approvals``), the ADK runner and sessions
(``runtime``, ``sessions``), identity (``auth``), origins, limits, errors and ASGI
plumbing. Internal: import the public API from ``adk_asgi``."""
