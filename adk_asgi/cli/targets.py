"""What ``adk-asgi serve`` serves: the target named on the command line, found the way ADK's
own tools (``adk web``, ``adk api_server``) find agents.

- ``pkg.module:attr``: that attribute (an agent, an ADK 2 ``Workflow`` or any workflow node
  ADK's ``Runner`` takes, an ADK ``App`` or a ``Runner``);
- ``pkg.module``: its ``root_agent``, else its ``app`` (ADK's convention), also in its
  ``agent`` submodule (``my_agent/agent.py``);
- a folder: ADK's agents-directory layout — a single agent folder (``my_agent/`` with an
  ``agent.py``, an ``__init__.py`` or a ``root_agent.yaml``), or a parent folder of agents with
  ``--agent NAME`` (not needed when it holds one agent). The agent folder's ``.env`` is loaded
  as ADK loads it.

Every failure is one line naming what was looked for (``TargetError``), raised before the
server claims to be serving anything.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = ("Target", "TargetError", "load_target")

_CONVENTIONAL = ("root_agent", "app")


class TargetError(SystemExit):
    """The target cannot be served; the message says what was looked for."""

    def __init__(self, message: str) -> None:
        super().__init__(f"adk-asgi: {message}")


@dataclass(frozen=True, slots=True)
class Target:
    kind: Literal["agent", "app", "runner"]
    value: Any
    where: str
    app_name: str | None = None
    """The app name the target implies: its agent folder's name (ADK's own tools key
    sessions by it); None: the App's name, else the root agent's."""


def load_target(spec: str, agent: str | None = None) -> Target:
    """The agent (or workflow), ``App`` or ``Runner`` that ``spec`` (and ``--agent``)
    name."""
    path = Path(spec)
    if os.sep in spec or spec.startswith(".") or (path.is_dir() and ":" not in spec):
        return _from_folder(path, spec, agent)
    if agent is not None:
        raise TargetError(f"--agent {agent!r} goes with an agents folder, not a module ({spec!r})")
    return _from_module(spec)


def _classify(value: Any, where: str, app_name: str | None = None) -> Target:
    from google.adk.apps import App
    from google.adk.runners import Runner
    from google.adk.workflow import BaseNode

    if isinstance(value, Runner):
        return Target("runner", value, where)
    if isinstance(value, App):
        return Target("app", value, where)
    if isinstance(value, BaseNode):  # an agent, a Workflow or another workflow node
        return Target("agent", value, where, app_name)
    raise TargetError(
        f"{where} is a {type(value).__name__}, not an ADK agent, Workflow, App or Runner"
    )


def _from_module(spec: str) -> Target:
    module_name, _, attr = spec.partition(":")
    if not module_name or not all(p.isidentifier() for p in module_name.split(".")):
        raise TargetError(
            f"invalid target {spec!r}: expected module:attr, a module, or a folder of ADK agents"
        )
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    module = _import(module_name)
    if attr:
        if not hasattr(module, attr):
            raise TargetError(f"module {module_name!r} has no attribute {attr!r}")
        return _classify(getattr(module, attr), f"{module_name}:{attr}")
    candidates = [module]
    submodule = _import(f"{module_name}.agent", optional=True)
    if submodule is not None:
        candidates.append(submodule)
    for candidate in candidates:
        for name in _CONVENTIONAL:
            if hasattr(candidate, name):
                return _classify(getattr(candidate, name), f"{candidate.__name__}:{name}")
    looked = " or ".join(f"{c.__name__}" for c in candidates)
    raise TargetError(
        f"{looked} defines neither root_agent nor app; name the object with {module_name}:ATTRIBUTE"
    )


def _import(name: str, *, optional: bool = False) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if optional and exc.name == name:
            return None
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            raise TargetError(
                f"no module named {name!r} (looked in {os.getcwd()} and sys.path)"
            ) from None
        raise TargetError(f"importing {name!r} failed: {type(exc).__name__}: {exc}") from None
    except Exception as exc:  # the user's module raised while importing
        raise TargetError(f"importing {name!r} failed: {type(exc).__name__}: {exc}") from None


def _from_folder(path: Path, spec: str, agent: str | None) -> Target:
    if not path.is_dir():
        raise TargetError(f"no folder {spec!r}")
    from google.adk.cli.utils.agent_loader import AgentLoader

    loader = AgentLoader(str(path))
    if loader.is_single_agent:
        if agent is not None and agent != loader.single_agent_name:
            raise TargetError(
                f"{spec!r} is the agent folder {loader.single_agent_name!r}, not {agent!r}"
            )
        name = loader.single_agent_name
    else:
        names = loader.list_agents()
        if agent is not None:
            if agent not in names:
                raise TargetError(
                    f"no agent {agent!r} in {spec!r} (found: {', '.join(names) or 'none'})"
                )
            name = agent
        elif len(names) == 1:
            name = names[0]
        elif not names:
            raise TargetError(
                f"no ADK agent in {spec!r} (looked for NAME/agent.py, "
                "NAME/__init__.py, NAME.py or NAME/root_agent.yaml defining "
                "root_agent or app)"
            )
        else:
            raise TargetError(
                f"{spec!r} holds the agents {', '.join(names)}; choose one with --agent NAME"
            )
    assert name is not None
    try:
        value = loader.load_agent(name)
    except TargetError:
        raise
    except Exception as exc:
        raise TargetError(
            f"loading agent {name!r} from {spec!r} failed: {type(exc).__name__}: {exc}"
        ) from None
    from ..adk.runtime import valid_app_name

    where = spec if loader.is_single_agent else f"{spec.rstrip('/')}/{name}"
    return _classify(value, where, valid_app_name(name))
