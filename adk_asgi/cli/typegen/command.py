"""``adk-asgi types TARGET --out FILE``: write (or ``--check``) the agent's TypeScript module."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..targets import Target
from .module import COMPILER, CompilerMissing, typescript_module
from .tree import read_tree

__all__ = ("root_of", "types_command")


def root_of(target: Target) -> Any:
    """The agent (or workflow) at the root of what ``serve`` would serve."""
    if target.kind == "app":
        return target.value.root_agent
    if target.kind == "runner":
        return target.value.agent
    return target.value


def types_command(args: argparse.Namespace, target: Target) -> int:
    out = Path(args.out).resolve() if args.out else None
    search = [out.parent] if out is not None else []
    search.append(Path.cwd())
    shown = " ".join(
        [
            "types",
            *([args.target] if args.target else []),
            *(["--name", args.name] if args.name else []),
        ]
    )
    try:
        text = typescript_module(
            read_tree(root_of(target)), name=args.name, command=shown, search=search
        )
    except CompilerMissing as exc:
        print(
            f"adk-asgi: {exc}. `adk-asgi types` compiles the schemas with {COMPILER} "
            f"under Node >= 20, from your page's project: npm install --save-dev {COMPILER}",
            file=sys.stderr,
        )
        return 2
    if out is None:
        sys.stdout.write(text)
        return 0
    if args.check:
        current = out.read_text(encoding="utf-8") if out.is_file() else None
        if current != text:
            print(f"adk-asgi: {args.out} is not the agent's current types", file=sys.stderr)
            return 1
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(f"adk-asgi: wrote {args.out} ({len(read_tree(root_of(target)).tools)} tools)")
    return 0
