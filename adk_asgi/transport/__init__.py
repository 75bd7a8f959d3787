"""Plain-ASGI plumbing for one connection, either transport: bounded bodies and JSON answers
(``asgi``), who is asking (``auth``), which origins may open sockets (``origin``), what one
client may send (``limits``) and what the server holds for a slow client (``outbox``).
Internal."""
