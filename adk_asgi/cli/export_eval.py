"""``adk-asgi export-eval [TARGET] --session-db URL --chat ID``: a chat as an ADK ``EvalSet``
with one eval case (``history/evalset.py``, what ``GET {api}/{chatId}/evalset`` answers),
read from the sessions ``serve`` kept; with the Gemini emulator's cassette it was recorded
in, named beside it, so ``adk eval`` replays the chat offline."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from .build import build_app
from .flags import parser
from .targets import Target

__all__ = ("export_eval_command",)

CASSETTE_ENV = "ADK_ASGI_CASSETTE"


def export_eval_command(args: argparse.Namespace, target: Target | None) -> int:
    # The runtime serve would build for the same target and --session-db: the same app
    # name, the same session service (sqlite hardened, PostgreSQL, ...).
    serve_args = parser().parse_args(
        ["serve", *([args.target] if args.target else []), "--session-db", args.session_db]
        + (["--agent", args.agent] if args.agent else [])
    )
    runtime = build_app(serve_args, target).adk.runtime  # no target: the demo agent's
    try:
        eval_set = asyncio.run(_export(runtime, args))
    except LookupError as exc:
        print(f"adk-asgi: {exc}", file=sys.stderr)
        return 1
    text = json.dumps(eval_set, indent=2, ensure_ascii=False) + "\n"
    cassette = _cassette(args)
    if args.out is None:
        sys.stdout.write(text)
        if cassette is not None:
            print(f"adk-asgi: its model answers are in {cassette}", file=sys.stderr)
        return 0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(f"adk-asgi: wrote {out} ({len(eval_set['eval_cases'][0]['conversation'])} turns)")
    if cassette is not None:
        copy = out.with_name(out.name.removesuffix(".json").removesuffix(".evalset") + ".cassette")
        if cassette.resolve() != copy.resolve():
            shutil.copyfile(cassette, copy)
        print(f"adk-asgi: wrote {copy} (replay it: python -m adk_asgi.testing.gemini --replay)")
    return 0


async def _export(runtime: Any, args: argparse.Namespace) -> dict[str, Any]:
    from ..history.evalset import chat_eval_set

    await runtime.startup(warm=False)
    try:
        service = runtime.session_service
        app_name = args.app or runtime.app_name
        user = args.user
        if user is None:  # the chat's owner: the one user with a session of this id
            listed = await service.list_sessions(app_name=app_name, user_id=None)
            owners = {s.user_id for s in listed.sessions if s.id == args.chat}
            if len(owners) > 1:
                raise LookupError(f"chat {args.chat!r} has several owners: name one with --user")
            user = next(iter(owners), None)
        session = (
            None
            if user is None
            else await service.get_session(app_name=app_name, user_id=user, session_id=args.chat)
        )
        if session is None:
            raise LookupError(f"no chat {args.chat!r} of app {app_name!r} in {args.session_db}")
        return chat_eval_set(session, getattr(runtime.runner, "agent", None))
    finally:
        await runtime.shutdown()


def _cassette(args: argparse.Namespace) -> Path | None:
    named = args.cassette or os.environ.get(CASSETTE_ENV)
    if not named:
        return None
    path = Path(named)
    if not path.is_file():
        raise SystemExit(f"adk-asgi: no cassette at {path}")
    return path
