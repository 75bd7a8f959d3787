"""Every Python block of the README and the docs is complete as written: each name it uses
is imported or defined in the block (ruff's undefined-name check, F821), and each import
resolves against the installed packages, except the reader's own modules (``my_pkg``,
``my_agent``: the agent, its tools and site a block stands for). Doctest blocks (``>>>``)
run as doctests (tests/docs/test_docs_examples.py); the README's quick start, the emulator
page's tests and the pause curls run in tests/package/test_dist.py and
tests/docs/test_pauses_docs.py."""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from support import ROOT

FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
RUFF = (sys.executable, "-m", "ruff", "check", "--isolated")
READERS_OWN = ("my_pkg", "my_agent", "fakes")  # the modules a block stands for


def blocks() -> dict[str, str]:
    """``page#n`` -> the page's n-th Python block that is not a doctest."""
    found: dict[str, str] = {}
    for page in PAGES:
        for n, block in enumerate(FENCE.findall(page.read_text())):
            if not block.lstrip().startswith(">>>"):
                found[f"{page.relative_to(ROOT)}#{n}"] = block
    return found


def test_every_name_a_block_uses_is_imported_or_defined(tmp_path: Path) -> None:
    names = {}
    for n, (where, block) in enumerate(blocks().items()):
        (tmp_path / f"block_{n}.py").write_text(block)
        names[f"block_{n}.py"] = where
    done = subprocess.run(
        [*RUFF, "--select", "F821,E9", "--output-format", "json", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    problems = [
        f"{names[Path(p['filename']).name]}:{p['location']['row']}: {p['message']}"
        for p in json.loads(done.stdout or "[]")
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("where", sorted(blocks()))
def test_every_import_of_a_block_resolves(where: str) -> None:
    for node in ast.walk(ast.parse(blocks()[where])):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not alias.name.startswith(READERS_OWN):
                    importlib.import_module(alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith(READERS_OWN) or node.level:
                continue
            module = importlib.import_module(node.module)
            for alias in node.names:
                if not hasattr(module, alias.name):
                    importlib.import_module(f"{node.module}.{alias.name}")


async def test_the_request_for_input_example_asks_and_resumes(tmp_path: Path) -> None:
    """human-in-the-loop.md's workflow with ``RequestInput``, as written: it asks, and the
    answer resumes it into the booking."""
    import httpx

    from adk_asgi import AdkApp

    (example,) = [b for b in blocks().values() if "RequestInput(" in b]
    namespace: dict[str, object] = {}
    exec(compile(example, "trips.py", "exec"), namespace)  # the page's own code
    app = AdkApp(agent=namespace["root_agent"], warm_up=False)  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=app)
    async with app.lifespan(), httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "plan a trip"}]}
        asked = _chunks(await c.post("/", json={"id": "t1", "messages": [user]}))
        call = next(
            x
            for x in asked
            if x.get("toolName") == "adk_request_input" and x["type"] == "tool-input-available"
        )
        assert call["input"]["message"] == "How much may we spend on the Lisbon trip?"
        part = {
            "type": "tool-adk_request_input",
            "toolCallId": call["toolCallId"],
            "state": "output-available",
            "input": {},
            "output": {"amount": 600, "currency": "EUR"},
        }
        answer = {"id": asked[0]["messageId"], "role": "assistant", "parts": [part]}
        done = _chunks(await c.post("/", json={"id": "t1", "message": answer}))
    said = "".join(str(x["delta"]) for x in done if x["type"] == "text-delta")
    assert said == "Booked for at most 600 EUR.", done
    assert done[-1]["type"] == "finish"


def _chunks(response: object) -> list[dict[str, object]]:
    text = str(getattr(response, "text", ""))
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]
