"""Health and readiness probes: ``GET /healthz`` (the process answers) and ``GET /readyz``
(the ADK runner, the session service and the stream store can serve a turn), as JSON.

Readiness asks each dependency for real (a session lookup, a store ping), concurrently and
within ``timeout`` seconds, so a stopped Redis, a database that refuses queries or a
session file whose table vanished turn it 503 with the failing part named. A draining
server is not ready either: load balancers stop sending before it closes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Final, Literal

import msgspec

from ..adk.runtime import AgentRuntime
from ..stores import StreamStore
from ..transport.asgi import Scope, Send, send_json

__all__ = ("PROBE_ID", "Health", "Probe")

logger = logging.getLogger("adk_asgi")

Probe = Literal["healthz", "readyz"]
PROBE_ID: Final = "adk-asgi-readyz"
"""The user and session id the readiness lookup asks for (it never exists)."""
OK: Final = "ok"

_encoder = msgspec.json.Encoder()
_HEALTHY: Final = _encoder.encode({"status": "ok"})


class Health:
    """The probes of one app (``AdkApp.health``)."""

    __slots__ = ("_draining", "_failing", "runtime", "store", "timeout")

    def __init__(
        self,
        runtime: AgentRuntime,
        store: StreamStore,
        draining: Callable[[], bool],
        *,
        timeout: float = 2.0,
    ) -> None:
        self.runtime = runtime
        self.store = store
        self.timeout = timeout
        self._draining = draining
        self._failing: frozenset[str] = frozenset()

    async def __call__(self, probe: Probe, scope: Scope, send: Send) -> None:
        method = scope["method"]
        if method not in ("GET", "HEAD"):
            await send_json(
                send,
                405,
                _encoder.encode(
                    {
                        "error": {
                            "code": "method_not_allowed",
                            "message": f"{method} is not allowed here.",
                        }
                    }
                ),
                [(b"allow", b"GET, HEAD")],
            )
            return
        if probe == "healthz":
            status, body, headers = 200, _HEALTHY, []
        else:
            checks = await self.checks()
            failing = [name for name, result in checks.items() if result != OK]
            if failing:
                status, headers = 503, [(b"retry-after", b"2")]
                body = _encoder.encode(
                    {
                        "status": "unavailable",
                        "checks": checks,
                        "error": {
                            "code": "not_ready",
                            "message": f"Not ready: {', '.join(failing)}.",
                        },
                    }
                )
            else:
                status, headers = 200, []
                body = _encoder.encode({"status": "ready", "checks": checks})
        if method == "HEAD":
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [(b"content-type", b"application/json"), *headers],
                }
            )
            await send({"type": "http.response.body", "body": b""})
        else:
            await send_json(send, status, body, headers)

    async def checks(self) -> dict[str, str]:
        """Each part's state: ``"ok"``, or why it cannot serve (never an exception's text:
        this goes to whoever can reach the probe; the log has the rest)."""
        if self._draining():
            checks = {"adk": "shutting down", "sessions": OK, "streams": OK}
        else:
            # Shielded: a slow warm-up goes on after the probe gave up on it.
            adk = await self._check("adk", asyncio.shield(self.runtime.startup()))
            sessions, streams = await asyncio.gather(
                self._check("sessions", self._lookup()) if adk == OK else _not_checked(),
                self._check("streams", self.store.ping(), self.store.timeout),
            )
            checks = {"adk": adk, "sessions": sessions, "streams": streams}
        self._report(checks)
        return checks

    async def _lookup(self) -> None:
        runtime = self.runtime
        await runtime.session_service.get_session(
            app_name=runtime.app_name, user_id=PROBE_ID, session_id=PROBE_ID
        )

    async def _check(self, name: str, probe: Awaitable[None], within: float | None = None) -> str:
        """``within``: the part's own timeout (the stream store's calls wait as long),
        else ``self.timeout``."""
        timeout = within or self.timeout
        try:
            await asyncio.wait_for(probe, timeout)
        except TimeoutError:
            return f"timed out after {timeout:g} s"
        except Exception as exc:
            logger.debug("Readiness check %r failed", name, exc_info=exc)
            return f"failed ({type(exc).__name__})"
        return OK

    def _report(self, checks: dict[str, str]) -> None:
        """One log line when readiness changes, not one per probe."""
        failing = frozenset(name for name, result in checks.items() if result != OK)
        if failing == self._failing:
            return
        self._failing = failing
        if failing:
            logger.warning(
                "Not ready: %s", ", ".join(f"{name} {checks[name]}" for name in sorted(failing))
            )
        else:
            logger.info("Ready again")


async def _not_checked() -> str:
    return "not checked (adk is not ready)"
