"""AgentRuntime: the ADK side of the app — runner, sessions, start-up and shutdown."""

from __future__ import annotations

import asyncio
import logging
import time
import warnings
import weakref
from dataclasses import dataclass
from typing import Any, Final

from google.adk.agents import RunConfig
from google.adk.agents.run_config import StreamingMode
from google.adk.apps import App, ResumabilityConfig
from google.adk.apps.app import validate_app_name
from google.adk.artifacts import BaseArtifactService
from google.adk.auth.credential_service.base_credential_service import BaseCredentialService
from google.adk.memory import BaseMemoryService
from google.adk.plugins.save_files_as_artifacts_plugin import SaveFilesAsArtifactsPlugin
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService
from google.adk.workflow import BaseNode

from ..observability.failures import install_adk_log_filter
from ..options import Settings, SurfaceOptions
from ..pauses.credentials import CredentialHandoff
from ..pauses.tools import ToolKinds, tool_kinds
from ..wire.body import BodyFields
from .artifacts import ChatArtifacts, upload_marks
from .plugin import register as register_plugin
from .remember import SessionMemory
from .services import AppServices
from .sessions import META_KEY, session_service_from_url

__all__ = ("AgentRuntime", "Served", "Services")

logger = logging.getLogger("adk_asgi")

DEFAULT_APP_NAME = "adk_asgi"
"""The app name of a root whose own name ADK refuses as an app name."""
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # ResumabilityConfig is marked experimental in ADK 2.x.
    _RESUMABLE = ResumabilityConfig(is_resumable=True)


@dataclass(frozen=True, slots=True)
class Served:
    """What the app serves: exactly one of ``agent`` (any root ADK's ``Runner`` takes),
    ``app`` (an ADK ``App``) or ``runner``; the name and run config of a runner adk-asgi
    builds."""

    agent: BaseNode | None = None
    app: App | None = None
    runner: Runner | None = None
    app_name: str | None = None
    run_config: RunConfig | None = None


def app_name_of(root: BaseNode) -> str:
    """The app name of a served root: its own name (ADK keys sessions and artifacts by
    app), or ``DEFAULT_APP_NAME`` when ADK refuses that as an app name."""
    return valid_app_name(getattr(root, "name", None)) or DEFAULT_APP_NAME


def valid_app_name(name: object) -> str | None:
    """``name`` if ADK takes it as an app name, else None."""
    if not isinstance(name, str):
        return None
    try:
        validate_app_name(name)
    except ValueError:
        return None
    return name


# The started runtimes of this process by (session store, app name): two apps that share
# both read, continue and delete each other's chats (a warning at start-up).
_SHARING: Final[weakref.WeakValueDictionary[tuple[str, str], AgentRuntime]] = (
    weakref.WeakValueDictionary()
)


@dataclass(frozen=True, slots=True)
class Services:
    """ADK's services as ``Runner`` takes them, for a runner adk-asgi builds: the session
    service (or a ``session_db`` URL), the credential service, and the artifact and memory
    services (each a service, or a URI as ADK's CLI takes it; ``adk/services.py``)."""

    session_service: BaseSessionService | None = None
    session_db: str | None = None
    credential_service: BaseCredentialService | None = None
    artifact_service: BaseArtifactService | str | None = None
    memory_service: BaseMemoryService | str | None = None


def _resumable(config: ResumabilityConfig | None) -> bool:
    return config is not None and config.is_resumable


class AgentRuntime:
    """Owns (or borrows) the ADK ``Runner``.

    Give exactly one of ``agent``, ``app`` or ``runner``; ``agent`` is any root ADK's
    ``Runner`` takes: an agent, or a workflow node (a ``Workflow``, a ``FunctionNode``, ...).
    The runner must be *resumable*
    (``ResumabilityConfig(is_resumable=True)``): tool confirmations, browser-executed and
    long-running tools pause the invocation and resume it from the session alone, so the
    answer may reach any process that shares the session store. Without it ADK does not
    pause: the model goes on without the answer, and an approval the page sends later
    finds nothing to resume. So an agent is wrapped in a resumable ``App``, an ``App`` that
    is not resumable is served as a resumable copy, and a ready ``Runner`` that is not
    resumable is refused (the bridge does not build it, so it does not change it).
    """

    def __init__(self, served: Served, services: Services, settings: Settings) -> None:
        agent, app, runner = served.agent, served.app, served.runner
        session_service, session_db = services.session_service, services.session_db
        credential_service = services.credential_service
        artifact_service, memory_service = services.artifact_service, services.memory_service
        uploads_as_artifacts = settings.storage.uploads_as_artifacts
        remember_sessions = settings.storage.remember_sessions
        if sum(x is not None for x in (agent, app, runner)) != 1:
            raise TypeError("Give exactly one of agent=, app= or runner=.")
        if runner is not None and (session_service is not None or session_db is not None):
            raise TypeError("A ready Runner brings its own session service.")
        if runner is not None and credential_service is not None:
            raise TypeError("A ready Runner brings its own credential service.")
        if runner is not None and (artifact_service is not None or memory_service is not None):
            raise TypeError(
                "A ready Runner brings its own artifact and memory services "
                "(Runner(artifact_service=..., memory_service=...))."
            )
        if runner is not None and uploads_as_artifacts and runner.artifact_service is None:
            raise ValueError(
                "uploads_as_artifacts needs an artifact service: the Runner has "
                "none (Runner(artifact_service=...))"
            )
        if runner is not None and remember_sessions and runner.memory_service is None:
            raise ValueError(
                "remember_sessions needs a memory service: the Runner has none "
                "(Runner(memory_service=...))"
            )
        if session_service is not None and session_db is not None:
            raise TypeError("Give session_service= or session_db=, not both.")
        if runner is not None and not _resumable(runner.resumability_config):
            raise ValueError(
                "the Runner is not resumable: tool confirmations and browser or long-running "
                "tools could not pause and resume. Build it with App(..., resumability_config="
                "ResumabilityConfig(is_resumable=True)), or give the agent (agent=) or the "
                "App (adk_app=) and let adk-asgi build the runner."
            )
        if app is not None and not _resumable(app.resumability_config):
            logger.info(
                "Serving ADK App %r as resumable (tool confirmations pause and resume "
                "the invocation)",
                app.name,
            )
            app = app.model_copy(update={"resumability_config": _RESUMABLE})
        self._agent = agent
        self._app = app
        self._runner: Runner | None = runner
        self._owns_runner = runner is None
        self._session_service = session_service
        self._session_db = session_db
        self._credential_service = credential_service
        self._services = AppServices(artifact_service, memory_service) if runner is None else None
        self._uploads_as_artifacts = uploads_as_artifacts
        self._remember_sessions = remember_sessions
        self._artifacts: ChatArtifacts | None = None
        self._memory: SessionMemory | None = None
        self._app_name = served.app_name
        self.run_config = served.run_config or RunConfig(streaming_mode=StreamingMode.SSE)
        self._tools: ToolKinds | None = None
        self._client_completes = frozenset(settings.pauses.client_completes)
        surface = settings.surface
        self.surface: SurfaceOptions | None = surface if surface.active else None
        """What translators add to messages besides ADK's content (None: nothing)."""
        self.body_fields = BodyFields(settings.body_fields)
        """Request body fields that go into the session state."""
        self.credentials = CredentialHandoff()
        """Credentials on their way from a turn's answer into its ADK run."""
        self._plugged = False
        self._started = False
        self._start_lock = asyncio.Lock()
        install_adk_log_filter()

    @property
    def runner(self) -> Runner:
        if self._runner is None:
            self._runner = self._build_runner()
        if not self._plugged:  # also on a runner the application built
            register_plugin(self._runner, self.credentials)
            if self._uploads_as_artifacts:
                _save_uploads(self._runner)
            self._plugged = True
        return self._runner

    @property
    def artifacts(self) -> ChatArtifacts:
        """The ``file`` parts of the artifacts an agent saves (``adk/artifacts.py``)."""
        if self._artifacts is None:
            runner = self.runner
            self._artifacts = ChatArtifacts(
                runner.artifact_service,
                runner.app_name,
                upload_marks(runner.plugin_manager.plugins),
            )
        return self._artifacts

    def turn_ended(self, user_id: str, chat_id: str) -> None:
        """A turn of the chat ended (either transport): with ``remember_sessions``, its
        session goes to the memory service, in the background."""
        if not self._remember_sessions:
            return
        if self._memory is None:
            runner = self.runner
            assert runner.memory_service is not None
            self._memory = SessionMemory(
                runner.session_service, runner.memory_service, runner.app_name
            )
        self._memory.turn_ended(user_id, chat_id)

    @property
    def memory(self) -> SessionMemory | None:
        """The sessions being added to memory (None until a turn ended with
        ``remember_sessions``)."""
        return self._memory

    @property
    def session_service(self) -> BaseSessionService:
        return self.runner.session_service

    @property
    def app_name(self) -> str:
        return self.runner.app_name

    @property
    def agent_name(self) -> str:
        agent = getattr(self.runner, "agent", None)
        return str(getattr(agent, "name", "model"))

    @property
    def tools(self) -> ToolKinds:
        """The agent's browser, approval and long-running tools."""
        if self._tools is None:
            self._tools = tool_kinds(
                self.runner.agent, self._client_completes, self.runner.plugin_manager.plugins
            )
        return self._tools

    @property
    def approval_tools(self) -> frozenset[str]:
        """Names of the browser-executed tools that need the user's approval."""
        return self.tools.approval

    def _build_runner(self) -> Runner:
        service = self._session_service or session_service_from_url(self._session_db)
        app = self._app
        if app is None:
            assert self._agent is not None
            with warnings.catch_warnings():
                # ResumabilityConfig is marked experimental in ADK 2.x.
                warnings.simplefilter("ignore")
                app = App(
                    name=self._app_name or app_name_of(self._agent),
                    root_agent=self._agent,
                    resumability_config=_RESUMABLE,
                )
        services = self._services
        assert services is not None
        credentials = self._credential_service
        if credentials is None:
            from google.adk.auth.credential_service.in_memory_credential_service import (
                InMemoryCredentialService,
            )

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # marked experimental in ADK 2.x
                credentials = InMemoryCredentialService()
        return Runner(
            app=app,
            session_service=service,
            app_name=self._app_name or app.name,
            artifact_service=services.artifact_service,
            memory_service=services.memory_service,
            credential_service=credentials,
        )

    async def startup(self, *, warm: bool = True) -> None:
        """Build the runner and pay ADK's one-off lazy imports before the first request."""
        async with self._start_lock:
            if self._started:
                return
            self._started = True
            _ = self.runner
            _ = self.tools  # a bad client_completes fails here, not on a request
            self._claim_app_name()
            if warm:
                started = time.perf_counter()
                from .warmup import warm_up

                await warm_up()
                logger.info("ADK warmed up in %.0f ms", (time.perf_counter() - started) * 1000)

    def _claim_app_name(self) -> None:
        """Warn when another app of this process, still running, keeps its chats in the same
        session store under the same app name: each would list, read, continue and delete
        the other's chats (and their artifacts share a folder)."""
        key = (self._store_key(), self.app_name)
        other = _SHARING.get(key)
        if other is not None and other is not self and other.started:
            logger.warning(
                "Two apps in this process keep their chats in one session store under "
                "the app name %r: each lists, reads, continues and deletes the other's "
                "chats. Give each its own AdkApp(app_name=...) (adk-asgi serve --app-name).",
                self.app_name,
            )
        _SHARING[key] = self

    def _store_key(self) -> str:
        if self._session_db is not None and not self._session_db.startswith("memory"):
            return self._session_db  # two services on one database share it
        return f"service:{id(self.session_service)}"

    @property
    def started(self) -> bool:
        return self._started

    async def shutdown(self) -> None:
        if self._memory is not None:
            await self._memory.close()
        if self._runner is not None and self._owns_runner:
            try:
                await self._runner.close()
            except Exception:  # close is best effort at shutdown
                logger.exception("Error while closing the ADK runner")
        if self._services is not None:
            await self._services.close()
        self._started = False

    def run_config_for(self, metadata: dict[str, Any]) -> RunConfig:
        """The run config of one turn, tagged so the session maps messages to invocations."""
        custom = dict(self.run_config.custom_metadata or {})
        custom[META_KEY] = metadata
        return self.run_config.model_copy(update={"custom_metadata": custom})


def _save_uploads(runner: Runner) -> None:
    """Register ADK's ``SaveFilesAsArtifactsPlugin`` unless the app has one already."""
    manager = runner.plugin_manager
    if not any(isinstance(p, SaveFilesAsArtifactsPlugin) for p in manager.plugins):
        manager.register_plugin(SaveFilesAsArtifactsPlugin())
