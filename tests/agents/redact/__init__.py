"""The redact test app (ADK agent-folder layout: ``agent.py`` exports ``root_agent``)."""

from . import agent

__all__ = ("agent",)
