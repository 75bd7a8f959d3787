"""Summarize a cProfile dump of the adk-asgi server (SSE or live): self time by component.

Self time (``tottime``) is summed per source file, and files are grouped into
components; C functions (``~`` file) are grouped by name (pydantic-core, msgspec,
socket/transport, the rest). Inclusive times of a few of our non-generator functions
are added for reference.
"""

from __future__ import annotations

import pstats
from pathlib import Path
from typing import Any

# (component, group, substring of the file path); first match wins.
_FILE_RULES: tuple[tuple[str, str, str], ...] = (
    ("demo model (scripted LLM)", "model", "/adk_asgi/demo/"),
    ("adk_asgi live translator (_live_translator)", "ours", "/adk_asgi/_live_translator.py"),
    ("adk_asgi live endpoint (_live, _live_frames)", "ours", "/adk_asgi/_live.py"),
    ("adk_asgi live endpoint (_live, _live_frames)", "ours", "/adk_asgi/_live_frames.py"),
    ("adk_asgi live gate (_live_gate)", "ours", "/adk_asgi/_live_gate.py"),
    ("adk_asgi translator", "ours", "/adk_asgi/_translator.py"),
    ("adk_asgi encoding (_chunks)", "ours", "/adk_asgi/_chunks.py"),
    ("adk_asgi endpoint (_chat, _turn, _request, ...)", "ours", "/adk_asgi/"),
    ("sse-starlette", "transport", "/sse_starlette/"),
    ("anyio (used by sse-starlette)", "transport", "/anyio/"),
    ("starlette", "transport", "/starlette/"),
    ("uvicorn + httptools", "transport", "/uvicorn/"),
    ("websockets (uvicorn's WebSocket protocol)", "transport", "/websockets/"),
    ("ADK (google.adk)", "adk", "/google/adk/"),
    ("google-genai types", "adk", "/google/genai/"),
    ("opentelemetry (called by ADK)", "adk", "/opentelemetry/"),
    ("pydantic (python part)", "adk", "/pydantic/"),
    ("asyncio", "loop", "/asyncio/"),
    ("copy/deepcopy (stdlib)", "adk", "/copy.py"),
)
_BUILTIN_RULES: tuple[tuple[str, str, str], ...] = (
    ("msgspec encode (C)", "ours", "msgspec"),
    ("pydantic-core (C)", "adk", "pydantic_core"),
    ("pydantic-core (C)", "adk", "SchemaValidator"),
    ("pydantic-core (C)", "adk", "SchemaSerializer"),
    ("uvloop / socket I/O (C)", "transport", "uvloop"),
    ("uvloop / socket I/O (C)", "transport", "socket"),
    ("uvloop / socket I/O (C)", "transport", "transport"),
    ("httptools (C)", "transport", "httptools"),
    ("permessage-deflate (zlib, C)", "transport", "zlib"),
    ("permessage-deflate (zlib, C)", "transport", "Compress"),
    ("permessage-deflate (zlib, C)", "transport", "Decompress"),
    ("websockets frame masking (C)", "transport", "apply_mask"),
)
GROUPS = {
    "adk": "ADK and its dependencies (google.adk, genai, pydantic, otel, deepcopy)",
    "model": "the scripted demo model",
    "ours": "adk_asgi (translator, encoding, endpoint)",
    "transport": "transport (sse-starlette, anyio, starlette, uvicorn, websockets, socket I/O)",
    "loop": "event loop (asyncio, uvloop scheduling)",
    "other": "other stdlib / builtins",
}
# (file, function); the file matches the end of the path after a "/".
_INCLUSIVE = (
    ("_translator.py", "translate"),
    ("_chat.py", "_frames"),
    ("_chunks.py", "sse_frame"),
    ("_chat.py", "_prepare"),
    ("_live_translator.py", "translate"),
    ("_live.py", "_event"),
    ("_live.py", "_emit"),
    ("_live.py", "_send_text"),
    ("_live.py", "_run_pump"),
    ("_live.py", "_downstream"),
    ("websockets_sansio_impl.py", "send"),
)


def _classify(filename: str, name: str) -> tuple[str, str]:
    if filename == "~":
        for component, group, needle in _BUILTIN_RULES:
            if needle in name:
                return component, group
        return "other builtins (C)", "other"
    for component, group, needle in _FILE_RULES:
        if needle in filename:
            return component, group
    if "/site-packages/" in filename:
        package = filename.split("/site-packages/", 1)[1].split("/", 1)[0]
        return f"other package: {package}", "other"
    return "other stdlib (python)", "other"


def summarize(path: Path, *, streams: int, tokens: int) -> dict[str, Any]:
    stats = pstats.Stats(str(path))
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    components: dict[str, float] = {}
    groups: dict[str, float] = {}
    total = 0.0
    inclusive: dict[str, float] = {}
    top: list[tuple[float, str]] = []
    for (filename, line, name), (_cc, _nc, tottime, cumtime, _callers) in raw.items():
        # The idle loop's select()/epoll wait is not work.
        if filename == "~" and ("poll" in name or "select" in name):
            continue
        if name == "run_forever" or "run_until_complete" in name:
            continue
        component, group = _classify(filename, name)
        components[component] = components.get(component, 0.0) + tottime
        groups[group] = groups.get(group, 0.0) + tottime
        total += tottime
        top.append((tottime, f"{Path(filename).name}:{line}({name})"))
        for file_end, func in _INCLUSIVE:
            if filename.endswith("/" + file_end) and name == func:
                key = f"{file_end}::{func}"
                inclusive[key] = inclusive.get(key, 0.0) + cumtime
    frames_estimate = streams * (tokens + 7)
    return {
        "streams": streams,
        "tokens": tokens,
        "total_s": total,
        "per_frame_us": total / frames_estimate * 1e6 if frames_estimate else None,
        "groups": {
            GROUPS[g]: {"s": t, "share": t / total}
            for g, t in sorted(groups.items(), key=lambda kv: -kv[1])
        },
        "components": {
            c: {"s": t, "share": t / total}
            for c, t in sorted(components.items(), key=lambda kv: -kv[1])
        },
        "inclusive_s": inclusive,
        "top_self": [{"s": t, "function": f} for t, f in sorted(top, reverse=True)[:25]],
    }
