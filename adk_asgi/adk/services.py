"""ADK's artifact and memory services, from the URIs ADK's own CLI takes.

``adk web`` and ``adk api_server`` build these services with ADK's service registry
(``google.adk.cli.service_registry``), whose schemes are ADK's: artifacts ``memory://``,
``file:///path`` and ``gs://bucket`` (needs ``google-cloud-storage``); memory ``memory://``,
``sqlite:///path.db``, ``rag://corpus`` and ``agentengine://id`` (Vertex AI). Schemes a
``services.py`` or ``services.yaml`` registered with that registry work too. adk-asgi calls
ADK's own factory; what it adds is the default (in memory, bounded for artifacts, without
ADK's CLI's local ``.adk`` folder or its Agent Engine auto-configuration: a server does what
it is told) and an error naming the scheme.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TypeVar
from urllib.parse import parse_qs, urlsplit

from google.adk.artifacts import BaseArtifactService
from google.adk.memory import BaseMemoryService, InMemoryMemoryService

from .memory_artifacts import DEFAULT_MAX_BYTES, BoundedMemoryArtifacts

_S = TypeVar("_S")

__all__ = ("AppServices", "artifact_service_from_url", "memory_service_from_url")

logger = logging.getLogger("adk_asgi")


class AppServices:
    """The artifact and memory services of a runner adk-asgi builds: the application's
    own, or built here from URIs (or the in-memory defaults), which ``close`` closes."""

    __slots__ = ("_built", "artifact_service", "memory_service")

    def __init__(
        self,
        artifact_service: BaseArtifactService | str | None,
        memory_service: BaseMemoryService | str | None,
    ) -> None:
        self._built: list[object] = []
        self.artifact_service = (
            artifact_service
            if isinstance(artifact_service, BaseArtifactService)
            else self._own(artifact_service_from_url(artifact_service))
        )
        self.memory_service = (
            memory_service
            if isinstance(memory_service, BaseMemoryService)
            else self._own(memory_service_from_url(memory_service))
        )

    def _own(self, service: _S) -> _S:
        self._built.append(service)
        return service

    async def close(self) -> None:
        """Close what was built here (ADK's sqlite memory holds a database), best effort."""
        for service in self._built:
            close = getattr(service, "close", None)
            if callable(close):
                try:
                    await close()
                except Exception:
                    logger.exception("Error while closing %s", type(service).__name__)


def artifact_service_from_url(
    url: str | None, *, agents_dir: str | Path | None = None
) -> BaseArtifactService:
    """``None`` or ``memory://``: in memory, at most ``?max_bytes=N`` (default 256 MiB: the
    oldest go first; ``adk/memory_artifacts.py``); ``file:///path``: a local folder (ADK's
    ``FileArtifactService``); ``gs://bucket``: Google Cloud Storage (ADK's
    ``GcsArtifactService``, needs ``google-cloud-storage``). ``ValueError`` for anything
    else."""
    if not url or url.startswith("memory:"):
        return _memory_artifacts(url or "memory://")
    from google.adk.cli.utils.service_factory import create_artifact_service_from_options

    try:
        return create_artifact_service_from_options(
            base_dir=str(agents_dir or "."), artifact_service_uri=url, strict_uri=True
        )
    except ImportError as exc:
        if url.startswith("gs:"):
            raise ValueError(
                "gs:// artifacts need google-cloud-storage: pip install google-cloud-storage"
            ) from exc
        raise ValueError(
            f"the artifact service of {_scheme(url)} URIs cannot be loaded: {exc}"
        ) from exc
    except ValueError as exc:
        raise ValueError(
            f"artifact service URI: {exc} (ADK's schemes: memory://, file:///path, gs://bucket)"
        ) from None


def memory_service_from_url(
    url: str | None, *, agents_dir: str | Path | None = None
) -> BaseMemoryService:
    """``None`` or ``memory://``: in memory (keyword search, for development);
    ``sqlite:///path.db``: ADK's sqlite memory (full-text search); ``rag://CORPUS`` and
    ``agentengine://ID``: Vertex AI (need Google Cloud settings). ``ValueError`` for
    anything else."""
    if not url or url == "memory://":
        return InMemoryMemoryService()
    from google.adk.cli.utils.service_factory import create_memory_service_from_options

    try:
        return create_memory_service_from_options(
            base_dir=str(agents_dir or "."), memory_service_uri=url
        )
    except ImportError as exc:
        raise ValueError(
            f"the memory service of {_scheme(url)} URIs cannot be loaded: {exc}"
        ) from exc
    except ValueError as exc:
        raise ValueError(
            f"memory service URI: {exc} (ADK's schemes: memory://, "
            f"sqlite:///path.db, rag://CORPUS, agentengine://ID)"
        ) from None


def _memory_artifacts(url: str) -> BoundedMemoryArtifacts:
    query = parse_qs(urlsplit(url).query)
    if set(query) - {"max_bytes"}:
        raise ValueError("memory:// artifacts take max_bytes only")
    try:
        max_bytes = int(query.get("max_bytes", [DEFAULT_MAX_BYTES])[0])
    except ValueError:
        raise ValueError("memory://?max_bytes= takes a whole number of bytes") from None
    return BoundedMemoryArtifacts(max_bytes=max_bytes)


def _scheme(url: str) -> str:
    return url.split(":", 1)[0] + "://"
