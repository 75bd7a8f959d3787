"""`adk-asgi types`: the TypeScript module of an agent tree's tools, answers and data parts.

A test agent declaring every shape (nested pydantic arguments, enums, optional fields,
lists, a typed result, a long-running tool, one needing approval, a `RequestInput` with a
pydantic schema) is generated into a small page's project; one `tsc --noEmit` run compiles a
page reading `part.input.city` and `part.output.temperature` (no error) beside one reading
fields the tool does not declare (the compiler's errors asserted). The chat page's own module
(examples/web/src/agent.gen.ts) is what the command writes for the demo agent today.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools import BaseTool
from google.adk.tools.base_toolset import BaseToolset

from adk_asgi.cli.main import main
from adk_asgi.cli.typegen.tree import read_tree

from support import ROOT
from support.web_harness import CLIENT_DIR, WEB_DIR, web_tooling_problem

MODULES: Final = WEB_DIR / "node_modules"
DEMO_MODULE: Final = WEB_DIR / "src" / "agent.gen.ts"

GOOD: Final = """
import { useChat } from '@ai-sdk/react';
import type { Unit, WeatherDeskMessage } from './agent.gen';

export function Page(): string[] {
  const { messages } = useChat<WeatherDeskMessage>();
  const out: string[] = [];
  for (const part of messages.flatMap((m) => m.parts)) {
    if (part.type === 'tool-get_weather' && part.state === 'output-available') {
      const unit: Unit = part.output.unit;
      const days: number[] | undefined = part.input.window?.days;
      out.push(part.input.city, String(part.output.temperature), unit, String(days?.length));
    }
    if (part.type === 'tool-cancel_trip' && part.state === 'output-available') {
      out.push(part.input.trip_id, part.output.result.status);
    }
    if (part.type === 'tool-watch_storms' && part.state === 'input-available') {
      out.push(...part.input.cities);
    }
    if (part.type === 'tool-adk_request_input' && part.state === 'output-available') {
      out.push(String(part.output.alerts), part.output.unit ?? 'celsius');
    }
    if (part.type === 'data-node' && part.data.node === 'note_preferences') {
      const unit: Unit = part.data.output.unit;
      out.push(unit);
    }
    if (part.type === 'data-state') out.push(part.data.forecast_text ?? '');
  }
  return out;
}
"""

BAD: Final = """
import { useChat } from '@ai-sdk/react';
import type { WeatherDeskMessage } from './agent.gen';

export function Page(): string[] {
  const { messages } = useChat<WeatherDeskMessage>();
  return messages.flatMap((m) => m.parts).flatMap((part) =>
    part.type === 'tool-get_weather' && part.state === 'output-available'
      ? [part.input.zip, String(part.output.humidity)]
      : part.type === 'tool-adk_request_input' && part.state === 'output-available'
        ? [part.output.budget]
        : part.type === 'data-node' && part.data.node === 'note_preferences'
          ? [part.data.output.city]
          : [],
  );
}
"""


def _types(*argv: str, cwd: Path = WEB_DIR) -> int:
    # The compiler is found from the page's project (--out's folder, then the cwd).
    with contextlib.chdir(cwd):
        return main(["types", *argv])


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The compiler's errors for each page, one tsc run for both."""
    problem = web_tooling_problem()
    if problem:
        pytest.fail(problem, pytrace=False)
    project = tmp_path_factory.mktemp("typed-page")
    module = project / "agent.gen.ts"
    assert _types("tests.agents.typed.agent:root_agent", "--out", str(module)) == 0
    (project / "good.tsx").write_text(GOOD)
    (project / "bad.tsx").write_text(BAD)
    paths = {
        "ai": [str(MODULES / "ai")],
        "adk-asgi": [str(CLIENT_DIR / "src" / "index.ts")],  # this checkout's, unbuilt
        "@ai-sdk/react": [str(MODULES / "@ai-sdk" / "react")],
        "react": [str(MODULES / "@types" / "react")],
        "react/jsx-runtime": [str(MODULES / "@types" / "react" / "jsx-runtime")],
    }
    config = {
        "compilerOptions": {
            "target": "ES2022",
            "lib": ["ES2023", "DOM", "DOM.Iterable"],
            "module": "ESNext",
            "moduleResolution": "Bundler",
            "jsx": "react-jsx",
            "strict": True,
            "noEmit": True,
            "skipLibCheck": True,
            "types": [],
            "paths": paths,
        },
        "files": ["good.tsx", "bad.tsx"],
    }
    (project / "tsconfig.json").write_text(json.dumps(config))
    done = subprocess.run(
        [str(MODULES / ".bin" / "tsc"), "-p", ".", "--pretty", "false"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    errors: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        if match := re.match(r"^(\w+\.tsx?)\(\d+,\d+\): error (.*)$", line):
            errors.setdefault(match.group(1), []).append(match.group(2))
        else:
            assert line.startswith(" "), done.stdout  # a continuation of the line before
    errors["module"] = [(project / "agent.gen.ts").read_text()]
    return errors


def test_a_page_reading_declared_fields_compiles(compiled: dict[str, list[str]]) -> None:
    assert "good.tsx" not in compiled, compiled.get("good.tsx")
    assert "agent.gen.ts" not in compiled, compiled.get("agent.gen.ts")


def test_a_page_reading_undeclared_fields_does_not(compiled: dict[str, list[str]]) -> None:
    assert compiled["bad.tsx"] == [
        "TS2339: Property 'zip' does not exist on type 'GetWeatherInput'.",
        "TS2339: Property 'humidity' does not exist on type 'GetWeatherOutput'.",
        "TS2339: Property 'budget' does not exist on type 'Preferences'.",
        "TS2339: Property 'city' does not exist on type 'NotePreferencesOutput'.",
    ]


def test_the_module_states_each_kind_and_shape(compiled: dict[str, list[str]]) -> None:
    module = compiled["module"][0]
    assert module.startswith("// Generated by `adk-asgi types tests.agents.typed.agent:root_agent`")
    # one type per model, however many tools use it (no Unit1, Unit2)
    assert module.count("export type Unit = 'celsius' | 'fahrenheit';") == 1
    assert "Unit1" not in module
    assert "window?: Window | null;" in module  # optional, nullable, nested
    assert "days?: number[];" in module
    assert "cancel_trip: { input: CancelTripInput; output: CancelTripOutput };" in module
    assert "once the user approves the call" in module
    assert "watch_storms: { input: WatchStormsInput; output: unknown };" in module
    assert "Long-running" in module
    assert "export type WeatherDeskAnswer = Preferences;" in module
    assert '"preferences": Preferences;' in module
    assert "export type ForecastTextState = string;" in module  # the output_key
    assert "forecast_text?: ForecastTextState;" in module
    assert '{ node: "note_preferences"; path: string; output: NotePreferencesOutput }' in module
    assert (
        "export type WeatherDeskMessage = AdkUIMessage<WeatherDeskTools, WeatherDeskData>;"
        in module
    )


def test_the_chat_pages_module_is_the_demo_agents(tmp_path: Path) -> None:
    """The bundled page is typed with what the command writes for the demo agent now."""
    assert _types("--out", str(DEMO_MODULE), "--check") == 0
    stale = tmp_path / "agent.gen.ts"
    stale.write_text(DEMO_MODULE.read_text().replace("location: string", "city: string"))
    assert _types("--out", str(stale), "--check") == 1
    assert (ROOT / "examples" / "web" / "src" / "session.ts").read_text().count(
        "AssistantMessage"
    ) >= 1


def test_without_the_compiler_it_says_what_to_install(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _types("--out", str(tmp_path / "agent.gen.ts"), cwd=tmp_path) == 2
    assert "npm install --save-dev json-schema-to-typescript" in capsys.readouterr().err
    assert not (tmp_path / "agent.gen.ts").exists()


def test_a_toolset_that_cannot_list_its_tools_is_named_not_fatal() -> None:
    class Unreachable(BaseToolset):
        async def get_tools(self, readonly_context: Any = None) -> list[BaseTool]:
            raise ConnectionError("the MCP server is down")

    agent = LlmAgent(name="helper", model="gemini-2.5-flash", tools=[Unreachable()])
    tree = read_tree(agent)
    assert tree.unlisted == ["Unreachable: ConnectionError: the MCP server is down"]
    assert tree.tools == {}
