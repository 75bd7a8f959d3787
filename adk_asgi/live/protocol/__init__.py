"""A live connection's frames: the commands both protocols decode into (``commands``),
protocol A (``protocol_a``) and protocol B (``protocol_b``, the AI SDK's
``WebSocketChatTransport``), the socket with its limits (``socket``) and the rules for
microphone audio and camera frames (``media``). Internal."""
