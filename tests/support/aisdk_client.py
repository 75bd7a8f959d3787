"""Drive the real Vercel AI SDK chat client (the `ai` npm package) from pytest.

The Node side lives in ``tests/js/drive-chat.mjs``: it builds a headless chat from the
library's own ``AbstractChat`` and ``DefaultChatTransport``, runs a list of steps against
a live HTTP endpoint and reports every request, every SSE chunk (validated with that
version's own ``uiMessageChunkSchema``) and the final ``UIMessage[]``. Its live-mode
sibling ``tests/js/drive-ws.mjs`` does the same over ai 7's ``WebSocketChatTransport`` (or
the npm package's ``AdkLiveTransport``). Both run in one shared Node process per test
process (``tests/js/drive-serve.mjs``).

Four client versions are installed side by side under npm aliases (see
``tests/js/package.json``); install them with ``npm ci --prefix tests/js``.
"""

from __future__ import annotations

import atexit
import itertools
import json
import math
import shutil
import subprocess
import threading
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Final, Literal

from .paths import TESTS

__all__ = [
    "AI_VERSIONS",
    "DRIVER",
    "JS_DIR",
    "AutoSend",
    "NodeHarnessError",
    "NodeHarnessMissing",
    "node_harness_problem",
    "require_node_harness",
    "run_chat",
    "run_chat_versions",
    "run_ws_chat",
]

AI_VERSIONS: Final = ("ai5", "ai6strict", "ai6", "ai7")
"""npm aliases: latest 5.x, 6.0.230 (last strict-schema 6.x), latest 6.x, latest 7.x."""

JS_DIR: Final = TESTS / "js"
DRIVER: Final = JS_DIR / "drive-chat.mjs"

AutoSend = Literal["approvals", "toolCalls"]

_INSTALL_HINT: Final = "run `npm ci --prefix tests/js` (Node >= 20) from the repository root"


class NodeHarnessMissing(RuntimeError):
    """Node or the pinned `ai` packages are not installed."""


class NodeHarnessError(RuntimeError):
    """drive-chat.mjs or drive-ws.mjs crashed (as opposed to reporting a failed
    conversation)."""


Driver = Literal["chat", "ws"]


class _DriveServer:
    """One ``node tests/js/drive-serve.mjs`` per test process, running drive-chat's and
    drive-ws's conversations side by side: a Node start and an ``ai`` version's load cost
    about 0.45 s of CPU each, more than most conversations. Thread-safe
    (``run_chat_versions`` calls from threads, tests start ws conversations from threads).
    A process that dies fails what was running with its exit code and stderr, as a
    one-shot driver's crash did, and the next call starts another."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None
        self._pending: dict[int, tuple[Future[dict[str, Any]], str]] = {}
        self._ids = itertools.count()
        self._stderr: deque[str] = deque(maxlen=200)

    def run(
        self, payload: Mapping[str, Any], *, ai: str, timeout: float, driver: Driver = "chat"
    ) -> Any:
        name = f"drive-{driver}"
        answer: Future[dict[str, Any]] = Future()
        with self._lock:
            proc = self._proc if self._proc is not None else self._start()
            key = next(self._ids)
            self._pending[key] = (answer, name)
            assert proc.stdin is not None
            try:
                line = {"id": key, "driver": driver, "input": payload}
                proc.stdin.write(json.dumps(line) + "\n")
                proc.stdin.flush()
            except OSError:
                pass  # it died: the reader fails this conversation with its exit
        try:
            done = answer.result(timeout=timeout)
        except FutureTimeout:
            with self._lock:
                self._pending.pop(key, None)
            raise NodeHarnessError(
                f"{name} ({ai}) did not finish within {timeout} s; stderr:\n{self._tail()}"
            ) from None
        if "crash" in done:
            raise NodeHarnessError(f"{name} ({ai}) crashed:\n{done['crash']}")
        return done["report"]

    def _start(self) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            ["node", str(JS_DIR / "drive-serve.mjs")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            cwd=JS_DIR,
        )
        self._proc = proc
        threading.Thread(target=self._read, args=(proc,), daemon=True).start()
        threading.Thread(target=self._read_stderr, args=(proc,), daemon=True).start()
        return proc

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            try:
                done = json.loads(line)
            except json.JSONDecodeError:
                self._stderr.append(f"(stdout, not JSON) {line[:2000]}")
                continue
            with self._lock:
                waiting = self._pending.pop(done["id"], None)
            if waiting is not None:
                waiting[0].set_result(done)
        code = proc.wait()
        with self._lock:
            if self._proc is proc:
                self._proc = None
            pending, self._pending = self._pending, {}
        for answer, name in pending.values():
            answer.set_exception(
                NodeHarnessError(f"{name} exited with {code}; stderr:\n{self._tail()}")
            )

    def _read_stderr(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            self._stderr.append(line)

    def _tail(self) -> str:
        return "".join(self._stderr)

    def close(self) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()
            proc.wait()


# Started on its first conversation; killed when the test process exits.
_DRIVER: Final = _DriveServer()
atexit.register(_DRIVER.close)


def node_harness_problem() -> str | None:
    """Why the Node harness cannot run, or ``None`` when it can."""
    if shutil.which("node") is None:
        return f"`node` is not on PATH; install Node.js >= 20, then {_INSTALL_HINT}"
    missing = [alias for alias in AI_VERSIONS if not (JS_DIR / "node_modules" / alias).is_dir()]
    if not (JS_DIR / "node_modules").is_dir() or missing:
        what = "tests/js/node_modules is missing"
        if (JS_DIR / "node_modules").is_dir():
            what = f"tests/js/node_modules lacks {', '.join(missing)}"
        return f"{what}: {_INSTALL_HINT}"
    return None


def require_node_harness() -> None:
    """Raise :class:`NodeHarnessMissing` with install instructions if the harness can't run.

    Use it from a (module- or session-scoped) fixture, e.g.::

        @pytest.fixture(scope="module", autouse=True)
        def _node_harness() -> None:
            try:
                require_node_harness()
            except NodeHarnessMissing as exc:
                pytest.fail(str(exc), pytrace=False)
    """
    problem = node_harness_problem()
    if problem is not None:
        raise NodeHarnessMissing(problem)


def run_chat(
    ai: str,
    api: str,
    steps: Sequence[Mapping[str, Any]],
    *,
    chat_id: str | None = None,
    auto_send: AutoSend | None = None,
    headers: Mapping[str, str] | None = None,
    body: Mapping[str, Any] | None = None,
    timeout: float = 30,
    node_timeout_ms: int | None = None,
    settle_ms: int | None = None,
) -> dict[str, Any]:
    """Run one conversation through ``ai``'s own Chat and return drive-chat's report.

    ``ai`` is one of :data:`AI_VERSIONS`. ``steps`` are drive-chat steps, e.g.
    ``{"action": "send", "text": "hi"}``, ``{"action": "approve", "approved": True}``,
    ``{"action": "toolOutput", "tool": "get_location", "output": {...}}``,
    ``{"action": "regenerate"}`` or ``{"action": "sendEmpty"}``.

    The report has ``ok`` (no invalid chunk, no chat error, no step error, no timeout),
    ``version``, ``status``, ``error``, ``messages`` (final ``UIMessage[]``),
    ``requests`` (per HTTP request: ``body``, ``status``, ``headers``, ``chunks``,
    ``rawEvents``, ``invalid``, ``nullPaths``, ``sawDone``, ...), ``stepResults``,
    ``chatErrors``, ``finishes`` and ``problems``.

    ``timeout`` bounds the wait for the report; the driver's own deadline
    (``node_timeout_ms``) defaults to a few seconds less so that a hanging server is
    reported, not given up on. The conversation runs in this process's shared Node
    process (``tests/js/drive-serve.mjs``). Raises :class:`NodeHarnessError` if the
    driver crashes or gives no report in time.
    """
    require_node_harness()
    if node_timeout_ms is None:
        node_timeout_ms = max(1000, math.floor(max(timeout - 5, timeout * 0.75) * 1000))
    payload: dict[str, Any] = {
        "ai": ai,
        "api": api,
        "chatId": chat_id,
        "headers": dict(headers) if headers is not None else None,
        "body": dict(body) if body is not None else None,
        "autoSend": auto_send,
        "steps": [dict(step) for step in steps],
        "timeoutMs": node_timeout_ms,
    }
    if settle_ms is not None:
        payload["settleMs"] = settle_ms
    report = _DRIVER.run(payload, ai=ai, timeout=timeout)
    if not isinstance(report, dict):
        raise NodeHarnessError(f"drive-chat ({ai}) report is not an object: {report!r}")
    return report


def run_chat_versions(
    api: str,
    steps: Sequence[Mapping[str, Any]],
    *,
    versions: Iterable[str] = AI_VERSIONS,
    chat_id: str | None = None,
    auto_send: AutoSend | None = None,
    headers: Mapping[str, str] | None = None,
    body: Mapping[str, Any] | None = None,
    timeout: float = 30,
    node_timeout_ms: int | None = None,
) -> dict[str, dict[str, Any]]:
    """Run the same conversation with several client versions in parallel.

    Returns ``{alias: report}``. Each run gets its own chat id (``<chat_id>-<alias>``)
    so a stateful server sees independent conversations.
    """
    aliases = list(versions)
    base_id = chat_id or "chat"
    with ThreadPoolExecutor(max_workers=max(1, len(aliases))) as pool:
        futures = {
            alias: pool.submit(
                run_chat,
                alias,
                api,
                steps,
                chat_id=f"{base_id}-{alias}",
                auto_send=auto_send,
                headers=headers,
                body=body,
                timeout=timeout,
                node_timeout_ms=node_timeout_ms,
            )
            for alias in aliases
        }
        return {alias: future.result() for alias, future in futures.items()}


def run_ws_chat(
    url: str,
    steps: Sequence[Mapping[str, Any]],
    *,
    chat_id: str,
    ai: str = "ai7",
    transport: str = "ai",
    timeout: float = 90,
    api: str | None = None,
    auto_send: str | None = None,
    node_timeout_ms: int | None = None,
) -> dict[str, Any]:
    """Run one conversation through ``ai``'s own ``WebSocketChatTransport`` (live protocol
    B, ``tests/js/drive-ws.mjs``) against the WebSocket ``url``, or with ``transport="adk"``
    through the npm package's ``AdkLiveTransport`` (protocol A; ``url`` is then the HTTP
    chat endpoint); its report (``messages``, ``frames``, ``invalid``, ``nullPaths``,
    ``stepResults``, ``problems``, ...).

    ``api`` (the app's HTTP base, for ``completeToolCall``) and ``auto_send``
    (``"approvals"``, ``"toolCalls"`` or ``"both"``) are drive-ws's ``api`` and
    ``autoSend``. ``timeout`` bounds the wait for the report; the driver's own deadline
    (``node_timeout_ms``) defaults to a few seconds less. The conversation runs in this
    process's shared Node process (``tests/js/drive-serve.mjs``), side by side with
    whatever else runs there: call it from threads to run several at once. Raises
    :class:`NodeHarnessError` if the driver crashes or gives no report in time.
    """
    require_node_harness()
    if node_timeout_ms is None:
        node_timeout_ms = math.floor(max(timeout - 5, timeout * 0.75) * 1000)
    payload: dict[str, Any] = {
        "ai": ai,
        "transport": transport,
        "url": url,
        "chatId": chat_id,
        "steps": [dict(s) for s in steps],
        "timeoutMs": node_timeout_ms,
    }
    if api is not None:
        payload["api"] = api
    if auto_send is not None:
        payload["autoSend"] = auto_send
    report = _DRIVER.run(payload, ai=ai, timeout=timeout, driver="ws")
    if not isinstance(report, dict):
        raise NodeHarnessError(f"drive-ws ({ai}) report is not an object: {report!r}")
    return report


def drive_history(
    runs: Sequence[Mapping[str, Any]], *, concurrency: int, timeout: float = 120
) -> list[dict[str, Any]]:
    """Drive ``runs`` (each: ``ai``, ``url``, ``chatId``, ``steps``, ...) through the real
    AI SDK clients in one Node process (``tests/js/drive-history.mjs``), ``concurrency``
    at a time; each run's result (its messages, then the reloaded history)."""
    require_node_harness()
    done = subprocess.run(
        ["node", str(JS_DIR / "drive-history.mjs")],
        input=json.dumps({"runs": list(runs), "concurrency": concurrency}),
        text=True,
        capture_output=True,
        timeout=timeout,
        check=False,
        cwd=JS_DIR,
    )
    assert done.returncode == 0, done.stderr
    results: list[dict[str, Any]] = json.loads(done.stdout)["results"]
    return results
