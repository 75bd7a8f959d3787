"""A trip-planning ADK 2 ``Workflow`` that asks the user (``RequestInput``) and books only with
their approval (a tool node with ``require_confirmation=True``)."""

from . import agent

__all__ = ("agent",)
