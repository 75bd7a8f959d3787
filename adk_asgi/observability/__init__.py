"""What operators see: OpenTelemetry metrics (``metrics``) and spans (``tracing``), structured
logs (``logs``), failures in the log (``failures``) and the exporters ``adk-asgi serve``
starts (``exporters``). Internal."""
