"""A chat as an ADK ``EvalSet`` with one eval case (``chat_eval_set``), for ``adk eval`` and
``AgentEvaluator``.

The conversion is ADK's own, the one its dev server's ``add-session`` route runs
(``convert_session_to_eval_invocations``): each invocation the user's content, the tool
calls with their arguments and the final response, answered pauses as ADK recorded them.
The case's initial state is the dev server's too (``create_empty_state``: the state keys the
agents' instructions name, empty). The session never holds a secret (a credential reaches
ADK's flow in process, ``pauses/credentials.py``), so neither does the eval set.
"""

from __future__ import annotations

import re
import time
from typing import Any

from google.adk.sessions import Session

__all__ = ("chat_eval_set", "eval_set_id")


def eval_set_id(chat_id: str) -> str:
    """The eval set's id for ``chat_id``: ADK's eval set managers take letters, digits and
    underscores only."""
    return "chat_" + re.sub(r"[^A-Za-z0-9_]", "_", chat_id)


def chat_eval_set(session: Session, root: Any | None) -> dict[str, Any]:
    """The eval set of ``session`` (as JSON) whose one case replays it on the agent tree
    ``root`` (None: no initial state)."""
    # Imported here: ADK's evaluation modules cost a server's start-up nothing until asked.
    from google.adk.cli.utils.evals import convert_session_to_eval_invocations
    from google.adk.cli.utils.state import create_empty_state
    from google.adk.evaluation.eval_case import EvalCase, SessionInput
    from google.adk.evaluation.eval_set import EvalSet

    now = time.time()
    case = EvalCase(
        eval_id=eval_set_id(session.id),
        conversation=convert_session_to_eval_invocations(session),
        session_input=SessionInput(
            app_name=session.app_name,
            user_id=session.user_id,
            state={} if root is None else create_empty_state(root),
        ),
        creation_timestamp=now,
    )
    eval_set = EvalSet(
        eval_set_id=eval_set_id(session.id),
        name=f"chat {session.id}",
        eval_cases=[case],
        creation_timestamp=now,
    )
    # As ADK's own eval sets managers write an eval set file.
    dumped: dict[str, Any] = eval_set.model_dump(
        mode="json", exclude_unset=True, exclude_defaults=True, exclude_none=True
    )
    return dumped
