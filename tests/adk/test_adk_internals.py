"""The ADK internals adk-asgi relies on, one test each, so that an ADK release in the range
pyproject.toml allows (``google-adk>=2.13,<2.14``; scripts/test installs the newest) that
moves one fails here, by name, rather than somewhere downstream.

The list is docs/development/index.md's table "ADK internals adk-asgi relies on": the first
test reads the package's source for every private ADK module, name and attribute it
reaches and fails on one the table does not list (or a row that nothing uses any more);
each row names its test below."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig
from google.adk.events import Event, EventActions
from google.adk.plugins import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools import BaseTool, ToolContext
from google.genai import types

from adk_asgi.demo import build_demo_agent

from support import ROOT

PACKAGE = ROOT / "adk_asgi"
ADK = Path(importlib.import_module("google.adk").__path__[0])
TABLE_PAGE = ROOT / "docs" / "development" / "index.md"
HEADING = "## ADK internals adk-asgi relies on"
NAMEDTUPLE = {"_replace", "_asdict", "_fields", "_make"}  # public API, despite the underscore


def _adk_private_names() -> set[str]:
    """Every private function, method and attribute ADK's own source defines."""
    names: set[str] = set()
    for path in ADK.rglob("*.py"):
        text = path.read_text()
        names |= set(re.findall(r"def (_[a-z]\w*)", text))
        names |= set(re.findall(r"self\.(_[a-z]\w*)\s*[:=]", text))
    return names


def reached() -> set[str]:
    """What of ADK's the package reaches that ADK keeps private: modules
    (``google.adk.auth._auth_resume``, in imports and logger names), names imported from
    them (``_apply_rewinds``) and attributes of ADK objects (``._invocation_context``)."""
    private = _adk_private_names() - NAMEDTUPLE
    ours: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        ours |= set(re.findall(r"def (_[a-z]\w*)", path.read_text()))
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for line in path.read_text().splitlines():
            code = line.split("#", 1)[0]
            for module in re.findall(r"google\.adk(?:\.\w+)*?\.(_[a-z]\w*)", code):
                found.add(module)
            for name in re.findall(r"from google\.adk[\w.]* import (_[a-z]\w*)", code):
                found.add(name)
            # Overlapping (a lookahead), so a chain ``a._b._c`` yields both ``_b`` and ``_c``.
            for receiver, name in re.findall(r"(?<![\w)])(?=(\w+|\))\.(_[a-z]\w*)\b)", code):
                # ``super()._x`` of a method we override is ADK's; ``obj._x`` of one of
                # ours is ours.
                theirs = name in private and (receiver == ")" or name not in ours)
                if receiver not in ("self", "cls") and theirs:
                    found.add(name)
    return found


def table() -> list[tuple[set[str], str]]:
    """The page's rows: the private names each lists, and its test."""
    text = TABLE_PAGE.read_text()
    start = text.index(HEADING)
    rows = re.findall(r"^\| (.+?) \| .+? \| `(test_\w+)` \|$", text[start:], re.M)
    assert rows, "the table has no rows"
    return [(set(re.findall(r"\b(_[a-z]\w*)", first)), test) for first, test in rows]


def test_every_internal_the_package_reaches_is_listed_with_a_test() -> None:
    listed = set().union(*(names for names, _ in table()))
    used = reached()
    assert used - listed == set(), "reached but not in the table"
    assert listed - used == set(), "in the table but no longer reached"
    for _, test in table():
        assert callable(globals().get(test)), f"the table names {test}, which is not here"


def test_apply_rewinds_drops_what_a_rewind_undid() -> None:
    """history/messages.py rebuilds a chat from the events ADK's prompt building sees."""
    from google.adk.events._rewind_events import _apply_rewinds

    def said(invocation: str, text: str) -> Event:
        return Event(
            invocation_id=invocation,
            author="user",
            content=types.Content(role="user", parts=[types.Part(text=text)]),
        )

    events = [said("i1", "kept"), said("i2", "rewound"), said("i2", "rewound too")]
    rewind = Event(
        invocation_id="i3", author="user", actions=EventActions(rewind_before_invocation_id="i2")
    )
    after = [said("i4", "after")]
    assert _apply_rewinds([*events, rewind, *after]) == [events[0], *after]


def test_store_auth_response_takes_what_credentials_py_passes() -> None:
    """pauses/credentials.py hands a credential to ADK's own flow with these keywords."""
    from google.adk.auth._auth_resume import store_auth_response

    assert inspect.iscoroutinefunction(store_auth_response)
    parameters = inspect.signature(store_auth_response).parameters
    assert set(parameters) == {"requested", "response", "state", "interrupt_id"}
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters.values())


class _Seen(BasePlugin):
    def __init__(self) -> None:
        super().__init__(name="seen")
        self.seen: dict[str, Any] = {}

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        invocation = tool_context._invocation_context
        self.seen = {
            "run_config": invocation.run_config,
            "live_request_queue": invocation.live_request_queue,
            "state": invocation.session.state,
        }
        return None


async def test_a_tool_context_reaches_its_invocation() -> None:
    """adk/plugin.py reads the run's RunConfig, live/gate the run's LiveRequestQueue and
    session state, through ``ToolContext._invocation_context``."""
    seen = _Seen()
    agent: LlmAgent = build_demo_agent()
    runner = Runner(
        app_name="internals",
        agent=agent,
        session_service=InMemorySessionService(),
        plugins=[seen],
    )
    session = await runner.session_service.create_session(
        app_name="internals", user_id="u", state={"mark": 1}
    )
    config = RunConfig(custom_metadata={"adk_asgi": {"x": 1}})
    message = types.Content(role="user", parts=[types.Part(text="What's the weather in Tokyo?")])
    async for _ in runner.run_async(
        user_id="u", session_id=session.id, new_message=message, run_config=config
    ):
        pass
    await runner.close()
    assert seen.seen["run_config"].custom_metadata == {"adk_asgi": {"x": 1}}
    assert seen.seen["live_request_queue"] is None  # not a live run
    assert seen.seen["state"]["mark"] == 1


async def test_sqlite_service_connection_lists_sessions(tmp_path: Path) -> None:
    """history/chat_index.py lists a user's chats with one query on ADK's SQLite table,
    through ``SqliteSessionService._get_db_connection`` (adk/sqlite.py wraps it)."""
    service = SqliteSessionService(str(tmp_path / "s.db"))
    await service.create_session(app_name="a", user_id="u", session_id="c1", state={"k": 1})
    async with service._get_db_connection() as db:
        rows = await db.execute_fetchall(
            "SELECT id, state, update_time FROM sessions WHERE app_name = ? AND user_id = ?",
            ["a", "u"],
        )
    assert [(row["id"], row["state"]) for row in rows] == [("c1", '{"k": 1}')]
    assert float(rows[0]["update_time"]) > 0


async def test_database_service_schema_and_session(tmp_path: Path) -> None:
    """history/chat_index.py lists chats from ADK's SQLAlchemy table through
    ``_get_schema_classes().StorageSession`` and ``_rollback_on_exception_session``."""
    pytest.importorskip("sqlalchemy")
    from google.adk.sessions.database_session_service import DatabaseSessionService
    from sqlalchemy import select

    service = DatabaseSessionService(f"sqlite+aiosqlite:///{tmp_path / 'd.db'}")
    try:
        await service.create_session(app_name="a", user_id="u", session_id="c1", state={"k": 1})
        await service.prepare_tables()
        table = service._get_schema_classes().StorageSession
        statement = select(table).where(table.app_name == "a", table.user_id == "u")
        statement = statement.order_by(table.update_time.desc(), table.id.desc()).limit(5)
        async with service._rollback_on_exception_session(read_only=True) as db:
            rows = (await db.execute(statement)).scalars().all()
        assert [(row.id, dict(row.state)) for row in rows] == [("c1", {"k": 1})]
        assert rows[0].get_update_timestamp() > 0
    finally:
        await service.close()


def test_the_reports_failures_py_demotes_are_adks() -> None:
    """observability/failures.py demotes ADK's duplicate reports of an exception it
    re-raises, by logger and message: each logger is an ADK module that logs that text."""
    from adk_asgi.observability.failures import _REPORTS

    for logger_name, message in _REPORTS:
        module = logger_name.removeprefix("google_adk.")
        spec = importlib.util.find_spec(module)
        assert spec is not None and spec.origin is not None, module
        source = Path(spec.origin).read_text()
        text = message.split("%")[0].split("'adk_asgi_")[0]
        assert text in source, (module, text)


def test_function_tool_keeps_require_confirmation() -> None:
    """cli/typegen/tree.py reads a ``FunctionTool``'s declared ``require_confirmation``
    (ADK keeps it as ``_require_confirmation``; its public check needs the call's args)."""
    from google.adk.tools import FunctionTool

    def pay(amount: int) -> str:
        return str(amount)

    assert FunctionTool(pay, require_confirmation=True)._require_confirmation is True
    assert FunctionTool(pay)._require_confirmation is False


def test_an_invocation_lists_its_background_tools() -> None:
    """live/gate/plugin.py tells a streaming tool still running from one that ended by
    ``InvocationContext._active_background_tools`` (ADK has no public handle)."""
    from google.adk.agents.invocation_context import InvocationContext

    assert "_active_background_tools" in InvocationContext.__private_attributes__
