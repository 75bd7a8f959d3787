"""What operators see: health and readiness probes, OpenTelemetry spans and metrics, and
structured logs."""
