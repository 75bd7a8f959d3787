"""The HTTP pipeline: request (``endpoint``) -> turn plan (``turn``) -> Runner.run_async ->
events -> chunks (``stream``) -> SSE bytes (``sse``). Internal."""
