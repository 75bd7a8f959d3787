"""Exporters for ``adk-asgi serve`` (the ``otel`` extra): the metrics as a Prometheus
endpoint on a port of their own, and traces over OTLP when the standard
``OTEL_EXPORTER_OTLP_*`` variables ask for it.

Each installs an OpenTelemetry SDK provider as the process's global one, the way an app of
your own would (docs/serving/operations.md): the bridge's instruments and spans, and ADK's,
then go there.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ("ExporterError", "export_traces_from_env", "serve_prometheus")

_EXTRA = "pip install 'adk-asgi[otel]'"


class ExporterError(SystemExit):
    """An exporter cannot start; one line saying why."""

    def __init__(self, message: str) -> None:
        super().__init__(f"adk-asgi: {message}")


def _resource() -> Any:
    from opentelemetry.sdk.resources import Resource

    # OTEL_RESOURCE_ATTRIBUTES still applies; the service is called adk-asgi unless named.
    return Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", "adk-asgi")})


def serve_prometheus(port: int, host: str) -> None:
    """Serve every OpenTelemetry metric of this process (``adk_asgi_*``, ADK's, and
    Python's process and GC metrics) at ``http://{host}:{port}/metrics``."""
    try:
        from opentelemetry import metrics
        from opentelemetry.exporter.prometheus import PrometheusMetricReader
        from opentelemetry.sdk.metrics import MeterProvider
        from prometheus_client import start_http_server
    except ImportError:
        raise ExporterError(f"--metrics-port needs the otel extra: {_EXTRA}") from None
    try:
        start_http_server(port, addr=host)
    except OSError as exc:
        raise ExporterError(f"cannot serve metrics on {host}:{port}: {exc.strerror}") from None
    metrics.set_meter_provider(
        MeterProvider(metric_readers=[PrometheusMetricReader()], resource=_resource())
    )


def export_traces_from_env() -> bool:
    """Export spans over OTLP/HTTP when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set; whether it does."""
    if not (
        os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    ):
        return False
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        raise ExporterError(
            f"OTEL_EXPORTER_OTLP_ENDPOINT is set: exporting traces needs the otel extra: {_EXTRA}"
        ) from None
    provider = TracerProvider(resource=_resource())
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return True
