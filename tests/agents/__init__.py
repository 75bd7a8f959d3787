"""Test agents: ADK apps built for the tests (offline, scripted models)."""
