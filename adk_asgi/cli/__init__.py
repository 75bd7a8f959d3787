"""``adk-asgi serve``: the command line (``main``). Internal."""
