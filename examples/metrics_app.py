"""A mounted chat whose metrics Prometheus scrapes: the OpenTelemetry SDK's Prometheus reader
as the process's MeterProvider, served on a port of its own (apart from the public site).

Run:  pip install 'adk-asgi[otel]'
      uvicorn examples.metrics_app:app --port 8000
Then: curl localhost:9464/metrics        (METRICS_PORT to choose another port)
"""

from __future__ import annotations

# --8<-- [start:setup]
import os

from fastapi import FastAPI
from opentelemetry import metrics
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import MeterProvider
from prometheus_client import start_http_server

from adk_asgi import AdkApp, mount
from adk_asgi.demo import build_demo_agent

# Before serving: the chat's instruments (adk_asgi_*) report to this provider.
metrics.set_meter_provider(MeterProvider(metric_readers=[PrometheusMetricReader()]))
start_http_server(int(os.environ.get("METRICS_PORT", "9464")), addr="127.0.0.1")

# Your own agent goes here: `from my_pkg.agent import root_agent`.
chat = AdkApp(build_demo_agent(token_delay=0.02))
app = FastAPI(title="My site")
mount(app, "/api/chat", chat)
# --8<-- [end:setup]
