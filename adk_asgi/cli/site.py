"""The site around the chat endpoint in ``adk-asgi serve``: the chat page (``adk_asgi/_web``,
built from ``examples/web``) at ``/``, the app's probes at ``/healthz`` and ``/readyz``, and
JSON errors everywhere else."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from ..http.health import Health, Probe

__all__ = (
    "DEFAULT_MOUNT",
    "PAGE_INFO",
    "WEB_DIR",
    "PageInfo",
    "SiteApp",
    "page_url",
    "plain_lifespan",
)

WEB_DIR: Final = Path(__file__).resolve().parent.parent / "_web"
"""The built chat page shipped with the package (``npm --prefix examples/web run build``)."""

DEFAULT_MOUNT: Final = "/api/chat"
_PROBES: Final[dict[str, Probe]] = {"/healthz": "healthz", "/readyz": "readyz"}
PAGE_INFO: Final = "/agent.json"
"""Where the page reads what it shows about the agent (``PageInfo``), beside itself."""


@dataclass(frozen=True, slots=True)
class PageInfo:
    """What the chat page shows about the agent it talks to: a title, a description, the
    suggestions above the input line, and where the chat endpoint is (relative to the
    page, so that the page finds it under any prefix)."""

    title: str
    description: str = ""
    suggestions: Sequence[str] = field(default_factory=tuple)
    api: str = DEFAULT_MOUNT.lstrip("/")

    def to_json(self) -> bytes:
        return json.dumps(
            {
                "title": self.title,
                "description": self.description,
                "suggestions": list(self.suggestions),
                "api": self.api,
            }
        ).encode()


_NO_PAGE: Final = b"""<!doctype html><meta charset="utf-8"><title>adk-asgi</title>
<body style="font-family: system-ui, sans-serif; max-width: 40em; margin: 3em auto">
<h1>adk-asgi</h1><p>The chat endpoint is running, but this installation has no chat page
(<code>adk_asgi/_web</code> is missing). Build it from a clone of the repository with
<code>npm ci --prefix examples/web &amp;&amp; npm --prefix examples/web run build</code>,
or talk to the endpoint with your own <code>useChat</code> page.</p></body>
"""


class SiteApp:
    """What the CLI answers outside the chat endpoint: the chat page (``GET /`` and its
    assets) when ``directory`` holds a built page, a short HTML note at ``/`` when it
    does not, and JSON errors for every other path, method and WebSocket."""

    def __init__(
        self, directory: Path, health: Health | None = None, page: PageInfo | None = None
    ) -> None:
        from starlette.staticfiles import StaticFiles

        self.static = (
            StaticFiles(directory=directory, html=True)
            if (directory / "index.html").is_file()
            else None
        )
        self.health = health
        """The chat app's probes, also served at the top: ``/healthz``, ``/readyz``."""
        self.page = page
        """What the page shows about the agent, at ``/agent.json`` (None: not served)."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from starlette.exceptions import HTTPException

        from ..transport.asgi import send_json_error

        if scope["type"] == "lifespan":
            await plain_lifespan(receive, send)
        elif scope["type"] == "http":
            probe: Probe | None = _PROBES.get(scope["path"])
            if probe is not None and self.health is not None:
                await self.health(probe, scope, send)
                return
            if scope["path"] == PAGE_INFO and self.page is not None:
                await self._page_info(scope, send)
                return
            if self.static is None:
                if scope["path"] in ("/", "/index.html") and scope["method"] in ("GET", "HEAD"):
                    await send(
                        {
                            "type": "http.response.start",
                            "status": 404,
                            "headers": [
                                (b"content-type", b"text/html; charset=utf-8"),
                                (b"content-length", str(len(_NO_PAGE)).encode()),
                            ],
                        }
                    )
                    await send({"type": "http.response.body", "body": _NO_PAGE})
                else:
                    await send_json_error(send, 404, "not_found", "Not found.")
                return
            try:
                response = await self.static.get_response(self.static.get_path(scope), scope)
            except HTTPException as exc:
                if exc.status_code == 405:
                    await send_json_error(
                        send,
                        405,
                        "method_not_allowed",
                        "Only GET and HEAD are served here.",
                        [(b"allow", b"GET, HEAD")],
                    )
                else:
                    await send_json_error(send, 404, "not_found", "Not found.")
                return
            await response(scope, receive, send)
        else:
            await send({"type": "websocket.close", "code": 1000})

    async def _page_info(self, scope: Any, send: Any) -> None:
        from ..transport.asgi import send_json_error

        if scope["method"] not in ("GET", "HEAD"):
            await send_json_error(
                send,
                405,
                "method_not_allowed",
                "Only GET and HEAD are served here.",
                [(b"allow", b"GET, HEAD")],
            )
            return
        assert self.page is not None
        body = self.page.to_json()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"cache-control", b"no-cache"),
                ],
            }
        )
        head = scope["method"] == "HEAD"
        await send({"type": "http.response.body", "body": b"" if head else body})


async def plain_lifespan(receive: Any, send: Any) -> None:
    """The lifespan of an app with nothing to start (AdkMiddleware starts the agent)."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def page_url(host: str, port: int, mount: str) -> str:
    """The URL to open the chat page at (it finds a non-default endpoint via ``?api=``)."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    if ":" in shown:
        shown = f"[{shown}]"
    url = f"http://{shown}:{port}/"
    return url if mount == DEFAULT_MOUNT else f"{url}?api={mount}"
