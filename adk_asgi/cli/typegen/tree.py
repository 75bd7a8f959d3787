"""What an agent tree declares, read without running it (``read_tree``): each tool the model
can call with its kind, the JSON Schema of its arguments (ADK's own declaration,
``BaseTool._get_declaration()``) and of its result (the function's return annotation), the
answers its requests for input take where the code states them, and the shapes of the
``data-state`` and ``data-node`` parts.

A toolset (an MCP server's, say) is asked for its tools once, with a time limit; one that
cannot list them at start is named in ``unlisted`` and the module says so, rather than the
command failing.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import logging
import textwrap
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.tools import AgentTool, BaseTool, FunctionTool
from google.adk.tools.base_toolset import BaseToolset
from google.genai import types
from pydantic import BaseModel, TypeAdapter

from ...pauses.kinds import INPUT_TOOL
from ...pauses.tools import FrontendTool

__all__ = ("AgentTree", "Answer", "Tool", "json_schema_of", "read_tree")

logger = logging.getLogger("adk_asgi")

Kind = Literal["server", "approval", "long-running", "browser", "browser-approval", "agent"]

_TOOLSET_TIMEOUT = 10.0
_STATIC = (
    ast.Name,
    ast.Attribute,
    ast.Subscript,
    ast.Tuple,
    ast.Load,
    ast.Constant,
    ast.BinOp,
    ast.BitOr,
)


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool the model can call, as the page sees its ``tool-{name}`` part."""

    name: str
    kind: Kind
    description: str
    input: dict[str, Any]
    output: dict[str, Any] | None
    """None: nothing states it (the part's ``output`` is ``unknown``)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A ``RequestInput`` the code states: its interrupt id (when a literal) and the JSON
    Schema of the answer it takes."""

    interrupt_id: str | None
    message: str | None
    schema: dict[str, Any]


@dataclass(slots=True)
class AgentTree:
    root: str
    tools: dict[str, Tool] = field(default_factory=dict)
    answers: list[Answer] = field(default_factory=list)
    any_answer: bool = False
    """Some request for input takes an answer no code states (the ``request_input`` tool,
    whose schema the model writes; a ``RequestInput`` built at run time)."""
    state: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Session state keys the tree declares (``state_schema`` fields, ``output_key``s)."""
    state_open: bool = True
    """Some state is not declared (no ``state_schema``)."""
    nodes: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    """Workflow nodes by name and the JSON Schema of their output (None: not stated)."""
    unlisted: list[str] = field(default_factory=list)


def json_schema_of(
    schema: Any, mode: Literal["validation", "serialization"] = "serialization"
) -> dict[str, Any]:
    """The JSON Schema of an ADK ``SchemaType``: a pydantic class or any type pydantic
    knows, a JSON Schema dict, or a ``types.Schema``."""
    if isinstance(schema, dict):
        return dict(schema)
    if isinstance(schema, types.Schema):
        dumped = schema.json_schema.model_dump(mode="json", exclude_none=True, by_alias=True)
        return dict(dumped)
    return dict(TypeAdapter(schema).json_schema(mode=mode))


def read_tree(root: Any) -> AgentTree:
    """The declarations of ``root`` (an agent or workflow) and everything under it."""
    tree = AgentTree(root=str(getattr(root, "name", "agent")))
    seen: set[int] = set()
    pending = [root]
    while pending:
        node = pending.pop(0)
        if id(node) in seen:
            continue
        seen.add(id(node))
        _read_node(node, tree, pending)
    return tree


def _read_node(node: Any, tree: AgentTree, pending: list[Any]) -> None:
    state_schema = getattr(node, "state_schema", None)
    if isinstance(state_schema, type) and issubclass(state_schema, BaseModel):
        tree.state_open = False
        for field_name, info in state_schema.model_fields.items():
            annotation: Any = info.annotation
            tree.state[info.alias or field_name] = TypeAdapter(annotation).json_schema(
                mode="serialization"
            )
    if isinstance(node, LlmAgent):
        _read_agent(node, tree)
    elif isinstance(node, BaseTool):  # a tool used directly as a workflow node
        _add_tool(node, tree)
    name = getattr(node, "name", None)
    graph = getattr(node, "graph", None)
    if graph is not None:  # a Workflow: its nodes
        for child in getattr(graph, "nodes", None) or ():
            child_name = getattr(child, "name", None)
            if child_name and child_name != "__START__" and not _is_agent(child):
                output = getattr(child, "output_schema", None)
                tree.nodes[str(child_name)] = None if output is None else json_schema_of(output)
            pending.append(child)  # its requests for input are read when it is
    elif name is not None and not _is_agent(node):
        _read_requests(node, tree)
    pending.extend(getattr(node, "sub_agents", None) or ())


def _is_agent(node: Any) -> bool:
    return isinstance(node, BaseAgent)


def _read_agent(agent: LlmAgent, tree: AgentTree) -> None:
    if agent.output_key:
        schema = agent.output_schema
        tree.state[agent.output_key] = (
            {"type": "string"} if schema is None else json_schema_of(schema)
        )
    for tool in _tools(agent, tree):
        _add_tool(tool, tree)
    names = _transfer_targets(agent)
    if names:
        tree.tools.setdefault(
            "transfer_to_agent",
            Tool(
                "transfer_to_agent",
                "server",
                "Hands the conversation to another agent (ADK's own tool).",
                {
                    "type": "object",
                    "properties": {"agent_name": {"type": "string", "enum": sorted(names)}},
                    "required": ["agent_name"],
                },
                None,
            ),
        )


def _transfer_targets(agent: LlmAgent) -> set[str]:
    """The agents ADK lets this one transfer to (its sub-agents, its parent and peers)."""
    names = {sub.name for sub in agent.sub_agents}
    parent = agent.parent_agent
    if isinstance(parent, LlmAgent):
        if not agent.disallow_transfer_to_parent:
            names.add(parent.name)
        if not agent.disallow_transfer_to_peers:
            names.update(p.name for p in parent.sub_agents if p is not agent)
    return names


def _tools(agent: LlmAgent, tree: AgentTree) -> Iterator[BaseTool]:
    for item in agent.tools:
        if isinstance(item, BaseTool):
            yield item
        elif isinstance(item, BaseToolset):
            yield from _listed(item, tree)
        elif callable(item):
            yield FunctionTool(item)


def _listed(toolset: BaseToolset, tree: AgentTree) -> list[BaseTool]:
    async def listing() -> list[BaseTool]:
        try:
            return await asyncio.wait_for(toolset.get_tools_with_prefix(None), _TOOLSET_TIMEOUT)
        finally:
            try:
                await toolset.close()
            except Exception:  # closing what failed to open may fail too
                logger.debug("closing %s failed", type(toolset).__name__, exc_info=True)

    try:
        return asyncio.run(listing())
    except Exception as exc:
        tree.unlisted.append(f"{type(toolset).__name__}: {type(exc).__name__}: {exc}")
        return []


def _add_tool(tool: BaseTool, tree: AgentTree) -> None:
    if tool.name == INPUT_TOOL:
        tree.any_answer = True  # the request_input tool: the model writes the schema
        return
    try:
        declaration = tool._get_declaration()
    except Exception as exc:  # a tool whose declaration needs what only a run has
        tree.unlisted.append(f"{tool.name}: {type(exc).__name__}: {exc}")
        return
    if declaration is None:  # a built-in tool the model runs itself (google_search, ...)
        return
    tree.tools[tool.name] = Tool(
        tool.name,
        _kind(tool),
        (declaration.description or tool.description or "").strip(),
        _parameters(declaration),
        _output(tool),
    )


def _kind(tool: BaseTool) -> Kind:
    if isinstance(tool, FrontendTool):
        return "browser-approval" if tool.require_approval else "browser"
    if isinstance(tool, AgentTool):
        return "agent"
    if isinstance(tool, FunctionTool) and tool._require_confirmation:
        return "approval"
    return "long-running" if tool.is_long_running else "server"


def _parameters(declaration: types.FunctionDeclaration) -> dict[str, Any]:
    if declaration.parameters_json_schema is not None:
        return json_schema_of(declaration.parameters_json_schema)
    if declaration.parameters is not None:
        return json_schema_of(declaration.parameters)
    return {"type": "object", "properties": {}}


def _output(tool: BaseTool) -> dict[str, Any] | None:
    """The part's ``output``: what ADK makes of the tool's result (a dict as it is, anything
    else as ``{"result": ...}``); None where nothing states it or others supply it."""
    if tool.is_long_running or isinstance(tool, FrontendTool):
        return None  # the result comes from the page, or from whoever completes the call
    if isinstance(tool, AgentTool):
        schema = getattr(tool.agent, "output_schema", None)
        if schema is not None:
            return json_schema_of(schema)
        return _wrapped({"type": "string"})
    func = getattr(tool, "func", None)
    if not isinstance(tool, FunctionTool) or func is None:
        return None
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception:  # an annotation that does not resolve: say nothing rather than guess
        return None
    if "return" not in hints:
        return None
    returned = _awaited(hints["return"], func)
    if returned is None or returned is Any:
        return None
    try:
        schema = json_schema_of(returned)
    except Exception:  # a type pydantic cannot describe: say nothing rather than guess
        return None
    return schema if _is_mapping(returned) else _wrapped(schema)


def _awaited(annotation: Any, func: Callable[..., Any]) -> Any:
    if inspect.isasyncgenfunction(func) or inspect.isgeneratorfunction(func):
        return None  # a streaming tool: its parts are not one result
    return None if annotation is type(None) else annotation


def _is_mapping(annotation: Any) -> bool:
    origin = typing.get_origin(annotation) or annotation
    if typing.is_typeddict(origin):
        return True
    return isinstance(origin, type) and issubclass(origin, Mapping)


def _wrapped(schema: dict[str, Any]) -> dict[str, Any]:
    defs = schema.pop("$defs", None)
    out: dict[str, Any] = {
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
    }
    if defs:
        out["$defs"] = defs
    return out


def _read_requests(node: Any, tree: AgentTree) -> None:
    """The ``RequestInput(...)`` a function node's code builds, with the answer schema it
    states (a name the function's module defines, or a literal JSON Schema)."""
    func = getattr(node, "func", None) or getattr(node, "_func", None)
    if not callable(func):
        return
    try:
        source = textwrap.dedent(inspect.getsource(func))
        parsed = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return
    names = dict(getattr(func, "__globals__", {}))
    for call in ast.walk(parsed):
        if not (isinstance(call, ast.Call) and _called(call) == "RequestInput"):
            continue
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        schema = _static(keywords.get("response_schema"), names)
        if schema is None:
            tree.any_answer = True
            continue
        tree.answers.append(
            Answer(
                _literal_str(keywords.get("interrupt_id")),
                _literal_str(keywords.get("message")),
                json_schema_of(schema, "validation"),
            )
        )


def _called(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _static(expression: ast.expr | None, names: dict[str, Any]) -> Any:
    if expression is None:
        return None
    if isinstance(expression, ast.Dict):
        try:
            return ast.literal_eval(expression)
        except ValueError:
            return None
    if not all(isinstance(n, _STATIC) for n in ast.walk(expression)):
        return None  # a call, say: only a run knows what it gives
    try:  # a name, a dotted name or a subscript of them (list[Budget]) in the module
        return eval(compile(ast.Expression(expression), "<schema>", "eval"), {}, dict(names))
    except Exception:
        return None


def _literal_str(expression: ast.expr | None) -> str | None:
    if isinstance(expression, ast.Constant) and isinstance(expression.value, str):
        return expression.value
    return None
