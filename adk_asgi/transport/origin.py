"""The WebSocket ``Origin`` check.

Browsers send cookies with cross-site WebSocket handshakes and CORS does not
apply to them, so any page could open a socket as the signed-in user
(cross-site WebSocket hijacking). The default allows only the page's own origin
(``Origin`` host equal to the ``Host`` the browser connected to, or the
``X-Forwarded-Host`` a proxy reports); ``allowed_origins`` lists others
(``"https://app.example.com"``, or ``"*"`` for any). Clients without an
``Origin`` header (servers, scripts, native apps) are not browsers and pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from .asgi import Scope

__all__ = ("OriginPolicy",)


class OriginPolicy:
    __slots__ = ("_allow_any", "_allowed")

    def __init__(self, allowed_origins: Iterable[str] | None = None) -> None:
        origins = [o.rstrip("/").lower() for o in (allowed_origins or ())]
        self._allow_any = "*" in origins
        self._allowed = frozenset(o for o in origins if o != "*")

    def allows(self, scope: Scope) -> bool:
        headers = {
            name.decode("latin-1"): value.decode("latin-1")
            for name, value in scope.get("headers", ())
            if name in (b"origin", b"host", b"x-forwarded-host")
        }
        origin = headers.get("origin")
        if origin is None:
            return True
        origin = origin.rstrip("/").lower()
        if self._allow_any or origin in self._allowed:
            return True
        if origin == "null":
            return False  # sandboxed iframes, file:// pages
        host = urlsplit(origin).netloc
        own = headers.get("x-forwarded-host", headers.get("host", ""))
        own = own.split(",")[0].strip().lower()
        return bool(host) and host == own
