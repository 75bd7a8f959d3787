"""Cassettes: what the Gemini API answered, kept as JSON lines to replay offline.

A cassette is a text file of JSON objects, one a line. The first is a header::

    {"cassette": "adk-asgi-gemini", "version": 1, "upstream": "https://generativelanguage.googleapis.com"}

then one line per exchange, written when it ends:

* an HTTP exchange: ``{"type": "http", "id", "version", "model", "method", "request"
  (the JSON body), "status", "content_type", "events"`` (for ``?alt=sse``: each SSE
  event's JSON and ``t``, its seconds since the request) or ``"body"`` (any other answer)``}``;
* a Live API session: ``{"type": "live", "id", "version", "method", "model", "frames"
  (each ``{"t", "from": "client" | "server", "message"}``, in the order they passed),
  "close" ({"t", "by", "code", "reason"})}``.

No header is kept, and every secret the recorder saw (the real API key, the keys and
ephemeral tokens clients sent) is replaced by ``REDACTED`` wherever it appears.

**How a replay matches a request** (`Cassette.match_http`): a request matches a recorded
HTTP exchange when the method (``generateContent`` or ``streamGenerateContent``), the
model and the ``contents`` (the whole conversation, part by part; either JSON spelling of
a field name) are the same. The system instruction, the tools and the generation settings
are not compared. Identical requests get their recordings in the order they were
recorded, then the last one again. A Live API session matches a recorded one when its
``setup`` names the same model (and the same resumption handle, if any) and each client
message is the recorded one, in order; the server messages recorded after a client
message are sent once that message arrives.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from .. import wire

__all__ = (
    "FORMAT",
    "Cassette",
    "CassetteError",
    "CassetteWriter",
    "HttpExchange",
    "LiveExchange",
    "LiveFrame",
    "canonical",
    "difference",
)

FORMAT = "adk-asgi-gemini"
_VERSION = 1
REDACTED = "REDACTED"
_SHOWN = 160  # characters of a value shown in an explanation


# A request that differs from its recording only by the method was recorded in the other
# streaming mode: ADK asks streamGenerateContent when streaming (adk-asgi serve, SSE), and
# generateContent otherwise (a plain Runner.run_async).
_MODES = (
    "the same conversation was recorded in the other streaming mode (streamGenerateContent: "
    "a streaming run such as adk-asgi serve or RunConfig(streaming_mode=StreamingMode.SSE); "
    "generateContent: a run without streaming). Run the agent as it was recorded, or record "
    "this test anew in this mode (pytest --gemini-record, or the emulator's --record)"
)


class CassetteError(ValueError):
    """A cassette file that cannot be read."""


def canonical(value: Any) -> Any:
    """``value`` with every object key in snake_case (proto JSON takes both spellings),
    for comparing what two clients sent."""
    if isinstance(value, Mapping):
        return {wire.snake(str(key)): canonical(item) for key, item in value.items()}
    if isinstance(value, list):
        return [canonical(item) for item in value]
    return value


def difference(recorded: Any, sent: Any, where: str = "") -> str | None:
    """Where two canonical values first differ, e.g. ``contents[2].parts[0].text:
    recorded "a", sent "b"``; None when they are equal."""
    if recorded == sent:
        return None
    if isinstance(recorded, dict) and isinstance(sent, dict):
        for key in sorted(set(recorded) | set(sent)):
            path = f"{where}.{key}" if where else key
            if key not in sent:
                return f"{path}: recorded {_shown(recorded[key])}, not sent"
            if key not in recorded:
                return f"{path}: sent {_shown(sent[key])}, not recorded"
            if (found := difference(recorded[key], sent[key], path)) is not None:
                return found
    if isinstance(recorded, list) and isinstance(sent, list):
        for index, (old, new) in enumerate(zip(recorded, sent, strict=False)):
            if (found := difference(old, new, f"{where}[{index}]")) is not None:
                return found
        return f"{where}: {len(recorded)} recorded, {len(sent)} sent"
    return f"{where or 'the value'}: recorded {_shown(recorded)}, sent {_shown(sent)}"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def public_url(url: str) -> str:
    """``url`` without user info, query or fragment (what a cassette may name)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


# ---- recording ---------------------------------------------------------------------------


class CassetteWriter:
    """Writes exchanges to a cassette file as they end (thread-safe), secrets redacted."""

    def __init__(self, path: str | Path, upstream: str, secrets: Iterable[str] = ()) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._secrets = {s for s in secrets if s}
        self._ids = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        header = {"cassette": FORMAT, "version": _VERSION, "upstream": public_url(upstream)}
        self.path.write_text(json.dumps(header) + "\n")

    def next_id(self) -> int:
        """The number of an exchange that starts now (replays keep this order)."""
        with self._lock:
            self._ids += 1
            return self._ids

    def secret(self, value: str) -> None:
        """Never write ``value`` (a key or token a client sent)."""
        if value:
            with self._lock:
                self._secrets.add(value)

    def write(self, exchange: Mapping[str, Any]) -> None:
        with self._lock:
            line = json.dumps(exchange, ensure_ascii=False, separators=(",", ":"))
            for secret in sorted(self._secrets, key=len, reverse=True):
                line = line.replace(secret, REDACTED)
            with self.path.open("a", encoding="utf-8") as file:
                file.write(line + "\n")


# ---- replaying ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HttpExchange:
    id: int
    line: int
    model: str
    method: str
    request: dict[str, Any]
    status: int
    content_type: str
    events: tuple[tuple[float, Any], ...] | None
    body: Any
    key: Any = field(repr=False, compare=False)

    def describe(self) -> str:
        said = _first_text(self.request.get("contents"))
        return f"{self.method} for {self.model} on line {self.line}" + (
            f' (last user text "{said}")' if said else ""
        )


@dataclass(frozen=True, slots=True)
class LiveFrame:
    t: float
    sender: Literal["client", "server"]
    message: Any
    key: Any = field(repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class LiveExchange:
    id: int
    line: int
    method: str
    model: str
    frames: tuple[LiveFrame, ...]
    close: dict[str, Any] | None

    @property
    def client_frames(self) -> list[LiveFrame]:
        return [f for f in self.frames if f.sender == "client"]

    def describe(self) -> str:
        return f"the Live API session for {self.model} on line {self.line}"


def _first_text(contents: Any) -> str:
    texts = [
        str(wire.get(part, "text"))
        for content in (contents if isinstance(contents, list) else ())
        if wire.get(content, "role") in (None, "user")
        for part in (wire.get(content, "parts") or ())
        if isinstance(part, Mapping) and wire.get(part, "text")
    ]
    text = texts[-1] if texts else ""
    return text if len(text) <= 60 else text[:59] + "…"


class Cassette:
    """A cassette read for replay: its exchanges and which were replayed."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.http: list[HttpExchange] = []
        self.live: list[LiveExchange] = []
        self._used: dict[int, int] = {}
        self._lock = threading.Lock()
        self._read()

    def _read(self) -> None:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise CassetteError(f"cannot read the cassette {self.path}: {error}") from None
        if not lines:
            raise CassetteError(f"{self.path} is empty, not a cassette")
        try:
            header = json.loads(lines[0])
        except json.JSONDecodeError:
            header = None
        if not isinstance(header, dict) or header.get("cassette") != FORMAT:
            raise CassetteError(f"{self.path} is not a cassette (no {FORMAT} header line)")
        if header.get("version") != _VERSION:
            raise CassetteError(
                f"{self.path}: cassette version {header.get('version')} is "
                f"not supported (this emulator reads version {_VERSION})"
            )
        for number, line in enumerate(lines[1:], start=2):
            if not line.strip():
                continue
            try:
                self._add(json.loads(line), number)
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
                raise CassetteError(f"{self.path}, line {number}: {error}") from None
        self.http.sort(key=lambda e: e.id)
        self.live.sort(key=lambda e: e.id)

    def _add(self, raw: dict[str, Any], line: int) -> None:
        if raw["type"] == "http":
            events = raw.get("events")
            self.http.append(
                HttpExchange(
                    id=int(raw["id"]),
                    line=line,
                    model=str(raw["model"]),
                    method=str(raw["method"]),
                    request=dict(raw["request"]),
                    status=int(raw["status"]),
                    content_type=str(raw.get("content_type") or "application/json"),
                    events=None
                    if events is None
                    else tuple((float(e["t"]), e["data"]) for e in events),
                    body=raw.get("body"),
                    key=canonical(raw["request"].get("contents")),
                )
            )
        elif raw["type"] == "live":
            frames = tuple(
                LiveFrame(
                    float(f["t"]),
                    "client" if f["from"] == "client" else "server",
                    f["message"],
                    canonical(f["message"]),
                )
                for f in raw["frames"]
            )
            self.live.append(
                LiveExchange(
                    id=int(raw["id"]),
                    line=line,
                    method=str(raw.get("method", "")),
                    model=str(raw["model"]),
                    frames=frames,
                    close=raw.get("close"),
                )
            )
        else:
            raise ValueError(f"unknown exchange type {raw['type']!r}")

    # ---- HTTP --------------------------------------------------------------------------

    def match_http(self, method: str, model: str, body: Mapping[str, Any]) -> HttpExchange:
        """The recorded exchange for a request (the rule in the module's docstring);
        `NoMatch` naming the nearest recorded one when none matches."""
        key = canonical(body.get("contents"))
        found = [e for e in self.http if (e.method, e.model, e.key) == (method, model, key)]
        if not found and method == "generateContent":
            # A chat recorded streaming, replayed by a caller that does not stream (ADK's
            # evaluation runs the agent so): the streamed answer, merged (the replayer's).
            found = [
                e
                for e in self.http
                if (e.method, e.model, e.key) == ("streamGenerateContent", model, key)
            ]
        if not found:
            raise NoMatch(self._explain_http(method, model, key))
        with self._lock:
            chosen = next((e for e in found if e.id not in self._used), found[-1])
            self._used[chosen.id] = self._used.get(chosen.id, 0) + 1
        return chosen

    def _explain_http(self, method: str, model: str, key: Any) -> str:
        head = (
            f"No recorded exchange in {self.path.name} matches this {method} request for "
            f"{model} (matched by method, model and contents)."
        )
        if not self.http:
            return head + " The cassette holds no HTTP exchange."

        def closeness(exchange: HttpExchange) -> tuple[int, int, int]:
            same = _common_prefix(exchange.key, key)
            return (same, exchange.model == model, exchange.method == method)

        nearest = max(self.http, key=closeness)
        parts = [f"The nearest is {nearest.describe()}"]
        if nearest.model != model:
            parts.append(f"recorded for model {nearest.model}")
        if nearest.method != method:
            parts.append(f"recorded with {nearest.method}")
        if (where := difference(nearest.key, key, "contents")) is not None:
            parts.append(f"it differs at {where}")
        elif nearest.method != method and nearest.model == model:
            parts.append(_MODES)
        return f"{head} {'; '.join(parts)}."

    # ---- Live --------------------------------------------------------------------------

    def live_candidates(self, method: str, setup: Any) -> list[LiveExchange]:
        """The recorded sessions a connection with this ``setup`` may replay, unreplayed
        ones first, in the order they were recorded."""
        wanted = _setup_key(canonical(setup))
        found = [
            e
            for e in self.live
            if e.method == method
            and e.frames
            and e.frames[0].sender == "client"
            and _setup_key(e.frames[0].key.get("setup")) == wanted
        ]
        with self._lock:
            return sorted(found, key=lambda e: (e.id in self._used, e.id))

    def used(self, exchange: LiveExchange) -> None:
        with self._lock:
            self._used[exchange.id] = self._used.get(exchange.id, 0) + 1

    def explain_live(
        self, setup: Any, candidates: Sequence[LiveExchange], index: int, sent: Any
    ) -> str:
        """Why the ``index``-th client message (0: the setup) matched no recorded session."""
        model = _setup_key(canonical(setup))[0]
        if index == 0:
            head = (
                f"No recorded Live API session in {self.path.name} matches a setup for "
                f"{model} (matched by model and resumption handle)."
            )
            others = sorted({e.model for e in self.live})
            return head + (
                f" Recorded sessions are for {', '.join(others)}."
                if others
                else " The cassette holds no Live API session."
            )
        head = (
            f"No recorded Live API session in {self.path.name} matches client message "
            f"#{index} of this connection (a session is matched message by message)."
        )
        if not candidates:
            return head
        nearest = candidates[0]
        recorded = nearest.client_frames
        if index >= len(recorded):
            return (
                f"{head} The nearest, {nearest.describe()}, ends after "
                f"{len(recorded) - 1} client messages; this one is {_shown(sent)}."
            )
        where = difference(recorded[index].key, canonical(sent)) or "the message"
        return f"{head} The nearest is {nearest.describe()}: it differs at {where}."


class NoMatch(Exception):
    """A request the cassette has no recording of (the message explains)."""


def _setup_key(setup: Any) -> tuple[str, str | None]:
    model = str(setup.get("model") or "") if isinstance(setup, Mapping) else ""
    resumption = setup.get("session_resumption") if isinstance(setup, Mapping) else None
    handle = resumption.get("handle") if isinstance(resumption, Mapping) else None
    return model.removeprefix("models/"), str(handle) if handle else None


def _common_prefix(recorded: Any, sent: Any) -> int:
    """How many leading contents (and parts of the first differing one) two requests
    share: the nearest recording shares the most."""
    if not isinstance(recorded, list) or not isinstance(sent, list):
        return 0
    count = 0
    for old, new in zip(recorded, sent, strict=False):
        if old == new:
            count += 100
            continue
        old_parts = old.get("parts") if isinstance(old, dict) else None
        new_parts = new.get("parts") if isinstance(new, dict) else None
        for a, b in zip(old_parts or (), new_parts or (), strict=False):
            if a != b:
                break
            count += 1
        break
    return count


def monotonic_since(start: float) -> float:
    """Seconds since ``start`` (time.monotonic), to the millisecond."""
    return round(time.monotonic() - start, 3)
