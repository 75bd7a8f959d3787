"""ADK events to UI message chunks: ``EventTranslator`` (its hooks, ``translator``) writes
one assistant message (``message``: its edges, steps and blocks in ``blocks``, tool parts in
``tool_parts``, what responses say in ``response_meta``), lane by lane (``lanes``), with the
pauses (``pause_parts``) and the surfaced extras (``surface``); ``live`` adds what only
``run_live`` yields; ``factory`` makes an app's translators. Internal but for the classes
``adk_asgi`` exports."""
