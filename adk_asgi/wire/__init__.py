"""The AI SDK's side of the wire: UI message stream chunks (``chunks``), the chat request and
its UI messages (``request``, ``body``), how a client folds chunks into a ``UIMessage``
(``ui_message``, ``ui_tool_parts``), JSON values (``jsonable``), the application's data parts
(``parts``) and what clients are told when something goes wrong (``errors``). The bottom of
the package: it imports nothing of it. Internal: the public chunk types are
``adk_asgi.chunks``."""
