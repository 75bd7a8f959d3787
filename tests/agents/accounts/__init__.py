"""An assistant whose tools need the user's own credentials (API key, bearer token, OAuth2)."""

from . import agent

__all__ = ("agent",)
