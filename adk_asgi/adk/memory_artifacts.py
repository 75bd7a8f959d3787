"""BoundedMemoryArtifacts: ADK's in-memory artifact service with a bound (what ``memory://``
and the default get).

ADK's ``InMemoryArtifactService`` keeps every version of every artifact until the process
ends, so a server on the default store would grow with every chart its agents ever drew.
Here the bytes held are bounded: once they pass ``max_bytes``, the artifacts saved longest
ago go first, every version of one name at a time, through the service's own
``delete_artifact`` (their file parts then answer ``404``). The artifact just saved always
stays, even alone over the bound.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from google.adk.artifacts import InMemoryArtifactService
from google.adk.artifacts.base_artifact_service import ensure_part
from google.genai import types
from pydantic import PrivateAttr
from typing_extensions import override

__all__ = ("DEFAULT_MAX_BYTES", "BoundedMemoryArtifacts")

DEFAULT_MAX_BYTES = 256 * 2**20

# (app, user, session or None for the user's own "user:" names, name)
_Key = tuple[str, str, str | None, str]


def _size(part: types.Part) -> int:
    if part.inline_data is not None and part.inline_data.data is not None:
        return len(part.inline_data.data)
    if part.text is not None:
        return len(part.text.encode())
    return 0


class BoundedMemoryArtifacts(InMemoryArtifactService):
    """In-memory artifacts: at most ``max_bytes`` of them, the oldest names go first."""

    max_bytes: int = DEFAULT_MAX_BYTES
    _held: int = PrivateAttr(default=0)
    _sizes: OrderedDict[_Key, int] = PrivateAttr(default_factory=OrderedDict)

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        if self.max_bytes < 1:
            raise ValueError("max_bytes must be >= 1")

    @property
    def held_bytes(self) -> int:
        return self._held

    @override
    async def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        artifact: types.Part | dict[str, Any],
        session_id: str | None = None,
        custom_metadata: dict[str, Any] | None = None,
    ) -> int:
        artifact = ensure_part(artifact)
        version = await super().save_artifact(
            app_name=app_name,
            user_id=user_id,
            filename=filename,
            artifact=artifact,
            session_id=session_id,
            custom_metadata=custom_metadata,
        )
        key = (app_name, user_id, None if filename.startswith("user:") else session_id, filename)
        size = _size(artifact)
        self._sizes[key] = self._sizes.pop(key, 0) + size  # now the newest
        self._held += size
        while self._held > self.max_bytes and len(self._sizes) > 1:
            (app, user, session, name), _ = next(iter(self._sizes.items()))
            await self.delete_artifact(
                app_name=app, user_id=user, filename=name, session_id=session
            )
        return version

    @override
    async def delete_artifact(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> None:
        await super().delete_artifact(
            app_name=app_name, user_id=user_id, filename=filename, session_id=session_id
        )
        key = (app_name, user_id, None if filename.startswith("user:") else session_id, filename)
        self._held -= self._sizes.pop(key, 0)
