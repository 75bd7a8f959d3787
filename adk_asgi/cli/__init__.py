"""``adk-asgi``: the command line (``main``; its flags in ``flags``, what it serves in
``build`` and ``targets``, uvicorn in ``server``, the chat page in ``site``). Internal."""
