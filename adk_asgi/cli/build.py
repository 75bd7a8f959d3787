"""What ``adk-asgi serve`` serves, built from its flags: the target (or the offline demo),
the app with its options and services, and what the process reports (``observe``)."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from typing import Any

from ..options import GcTuning, LiveOptions, PauseOptions, StorageOptions, StreamingOptions
from .flags import mount_path
from .page import page_info
from .server import SERVED
from .site import WEB_DIR, SiteApp
from .targets import Target, TargetError, load_target

__all__ = (
    "build_app",
    "gc_tuning",
    "live_model",
    "observe",
    "resolve_target",
    "warn_anonymous",
    "warn_per_worker",
)

logger = logging.getLogger("adk_asgi")


def resolve_target(args: argparse.Namespace) -> Target:
    """What to serve: the named target, or the demo agent (TargetError says why not)."""
    if args.target:
        return load_target(args.target, args.agent)
    if args.agent:
        raise TargetError("--agent needs a folder of agents as the target")
    from ..demo import build_demo_agent

    model = _demo_model(args)
    return Target("agent", build_demo_agent(model=model, token_delay=args.token_delay), "demo")


def _demo_model(args: argparse.Namespace) -> str | None:
    """The demo's model name: ``--model``, else Gemini when credentials are set, else
    None (the offline scripted model)."""
    if args.model is not None:
        return str(args.model)
    if os.environ.get("GOOGLE_API_KEY") or os.environ.get("GOOGLE_GENAI_USE_VERTEXAI"):
        return os.environ.get("ADK_ASGI_MODEL", "gemini-2.5-flash")
    return None


def live_model(args: argparse.Namespace) -> str | None:
    """The model of live runs: ``--live-model``; for the demo on Gemini a Live API model
    (text models are refused on the Live API); else each agent's own."""
    if args.live_model:
        return str(args.live_model)
    demo = None if args.target else _demo_model(args)
    if demo is not None and demo.startswith("gemini"):
        from ..live.run.models import DEFAULT_GEMINI_LIVE_MODEL

        return os.environ.get("ADK_ASGI_LIVE_MODEL", DEFAULT_GEMINI_LIVE_MODEL)
    return None


def build_app(args: argparse.Namespace, target: Target | None = None) -> Any:
    from ..middleware import AdkMiddleware

    target = target or resolve_target(args)
    options: dict[str, Any] = {
        "session_db": args.session_db,
        "streaming": StreamingOptions(
            resume_grace=args.resume_grace, shutdown_grace=args.shutdown_grace
        ),
        "allowed_origins": args.allowed_origin,
        "gc_tuning": gc_tuning(args),
        "artifact_service": args.artifact_service,
        "memory_service": args.memory_service,
        "storage": StorageOptions(
            uploads_as_artifacts=args.uploads_as_artifacts, remember_sessions=args.remember_sessions
        ),
    }
    if args.authenticate:
        options["authenticate"] = _attribute("--authenticate", args.authenticate)
        if not callable(options["authenticate"]):
            raise TargetError(f"--authenticate {args.authenticate!r} is not callable")
    from ..adk.runtime import valid_app_name

    if args.app_name and valid_app_name(args.app_name) is None:
        raise TargetError(
            f"--app-name {args.app_name!r}: an app name starts with a letter and holds "
            "only letters, digits, underscores and hyphens"
        )
    if args.app_name or target.app_name:
        if target.kind == "runner":
            raise TargetError(
                f"{target.where} is a Runner: it brings its own app name, so --app-name "
                "cannot apply"
            )
        options["app_name"] = args.app_name or target.app_name
    if (live := live_model(args)) is not None:
        options["live_options"] = LiveOptions(model=live)
    if args.oauth_redirect_uri:
        options["pauses"] = PauseOptions(oauth_redirect_uri=args.oauth_redirect_uri)
    if args.redis_url:
        from ..stores.redis import RedisStreamStore

        options["stream_store"] = RedisStreamStore(args.redis_url)
    if args.credential_service not in (None, "memory"):
        options["credential_service"] = credential_service(args.credential_service)
    if target.kind == "runner":
        given = [
            flag
            for flag, value in (
                ("--session-db", args.session_db),
                ("--artifact-service", args.artifact_service),
                ("--memory-service", args.memory_service),
                ("--credential-service", "credential_service" in options),
            )
            if value
        ]
        if given:
            raise TargetError(
                f"{target.where} is a Runner: it brings its own services, so "
                f"{' and '.join(given)} cannot apply"
            )
        for key in ("session_db", "artifact_service", "memory_service"):
            del options[key]
    options[{"agent": "agent", "app": "adk_app", "runner": "runner"}[target.kind]] = target.value
    try:
        site = SiteApp(WEB_DIR, page=page_info(args, target))
        app = AdkMiddleware(site, path=mount_path(args.mount), **options)
    except (TypeError, ValueError) as exc:  # e.g. a Runner that cannot pause for approvals
        raise TargetError(f"{target.where}: {exc}") from None
    site.health = app.adk.health
    SERVED.append(app.adk)
    return app


def credential_service(spec: str) -> Any:
    """``--credential-service module:attr``: an ADK ``BaseCredentialService`` (or a callable
    that makes one), e.g. one that keeps credentials where every worker finds them."""
    from google.adk.auth.credential_service.base_credential_service import (
        BaseCredentialService,
    )

    value = _attribute("--credential-service", spec, "'memory' or ")
    if not isinstance(value, BaseCredentialService) and callable(value):
        try:
            value = value()
        except Exception as exc:
            raise TargetError(
                f"--credential-service {spec!r}: calling it failed: {type(exc).__name__}: {exc}"
            ) from None
    if not isinstance(value, BaseCredentialService):
        raise TargetError(
            f"--credential-service {spec!r} is a {type(value).__name__}, not an "
            "ADK BaseCredentialService"
        )
    return value


def _attribute(flag: str, spec: str, other: str = "") -> Any:
    """The object ``module:attr`` names (imported from the current directory first)."""
    module_name, _, attr = spec.partition(":")
    if not attr or not all(p.isidentifier() for p in [*module_name.split("."), attr]):
        raise TargetError(f"{flag} {spec!r}: expected {other}module:attr")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise TargetError(f"{flag} {spec!r}: {exc}") from None


def warn_anonymous(args: argparse.Namespace) -> None:
    """Listening beyond loopback without ``--authenticate``: every visitor is the same
    anonymous user, who lists, reads, continues and deletes every chat."""
    if args.authenticate or _loopback(args.host):
        return
    logger.warning(
        "Listening on %s with no --authenticate: every visitor is the same anonymous "
        "user and can list, read, continue and delete every chat. Give --authenticate "
        "module:function (docs/reference/identity.md), or listen on 127.0.0.1 behind "
        "a proxy that authenticates.",
        args.host,
    )


def _loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: whatever it resolves to, it is not only this machine


def warn_per_worker(args: argparse.Namespace) -> None:
    """Services in memory are per worker: say what that breaks (not an error: an agent may
    never save an artifact)."""

    def in_memory(uri: str | None) -> bool:
        return not uri or uri.startswith("memory:")

    if in_memory(args.artifact_service):
        logger.warning(
            "--workers %d with artifacts in memory: an artifact one worker saved is "
            "not found by the others; give --artifact-service file:///shared/path "
            "or gs://bucket",
            args.workers,
        )
    if args.remember_sessions and in_memory(args.memory_service):
        logger.warning(
            "--workers %d with memory in memory: each worker remembers only its "
            "own turns; give --memory-service",
            args.workers,
        )


def gc_tuning(args: argparse.Namespace) -> GcTuning | None:
    """The collector settings of ``--gc-threshold`` and ``--gc-freeze`` (None: Python's)."""
    if args.gc_threshold is None and not args.gc_freeze:
        return None
    return GcTuning(threshold=args.gc_threshold, freeze=args.gc_freeze)


def observe(args: argparse.Namespace, worker: int = 0) -> None:
    """What this process reports: its logs, its metrics endpoint (``--metrics-port``; a
    port per worker), and OTLP traces when the OTEL_EXPORTER_OTLP_* variables ask."""
    from ..observability.exporters import export_traces_from_env, serve_prometheus
    from ..observability.logs import setup_logging

    setup_logging(args.log_level, args.log_format)
    if args.metrics_port is not None:
        serve_prometheus(args.metrics_port + worker, args.metrics_host or args.host)
    export_traces_from_env()
