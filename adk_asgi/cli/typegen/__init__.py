"""``adk-asgi types``: a TypeScript module from an agent tree's own declarations — its tools'
inputs and outputs, the answers its requests for input take, the data parts and metadata
the server sends for it — and one ``UIMessage`` type for ``useChat<…>()``."""
