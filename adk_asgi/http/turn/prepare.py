"""prepare_turn: the session a turn runs on — found, restored from the client's history
(all or nothing, ``http/turn/seed.py``) or rewound for a regenerate — and the turn's plan.

Runs under the chat's turn lock (``ChatEndpoint``), so two requests never restore one
history twice.
"""

from __future__ import annotations

import logging
import time

from google.adk.sessions import Session

from ...adk.runtime import AgentRuntime
from ...history.chats import CREATED_KEY, TITLE_KEY, chat_title, first_user_text
from ...options import ChatListOptions
from ...wire.request import ChatRequest, message_text
from .plan import TurnPlan, plan_turn
from .seed import create_seeded, incomplete_seed, seed_events

__all__ = ("prepare_turn",)

logger = logging.getLogger("adk_asgi")


async def prepare_turn(
    runtime: AgentRuntime,
    request: ChatRequest,
    user_id: str,
    max_file_bytes: int,
    titles: ChatListOptions | None = None,
) -> TurnPlan:
    """The plan of ``request``'s turn, its session ready: raises ``RequestError`` for a
    request the session refuses; session-service failures propagate. The chat's title
    and creation time go into the state with its first turn (``history/chats.py``)."""
    service = runtime.session_service
    app_name = runtime.app_name
    session = await service.get_session(app_name=app_name, user_id=user_id, session_id=request.id)
    if session is not None and incomplete_seed(session):
        logger.warning(
            "Chat %r holds an incomplete history restore: restoring it again", request.id
        )
        await service.delete_session(app_name=app_name, user_id=user_id, session_id=request.id)
        session = None
    fresh = session is None or not session.events
    plan = plan_turn(request, None if fresh else session, runtime.tools, max_file_bytes)
    if fresh:
        events = seed_events(plan.seed, runtime.agent_name)
        if session is None or events:
            await create_seeded(
                service,
                app_name=app_name,
                user_id=user_id,
                session_id=request.id,
                events=events,
                session=session,
            )
    elif plan.rewind_before is not None:
        await runtime.runner.rewind_async(
            user_id=user_id, session_id=request.id, rewind_before_invocation_id=plan.rewind_before
        )
        # The rewind undid the state the rewound turns wrote (the first one's title too).
        created = session.state.get(CREATED_KEY) if session is not None else None
        session = await service.get_session(
            app_name=app_name, user_id=user_id, session_id=request.id
        )
        if created is not None and session is not None and session.state.get(CREATED_KEY) is None:
            plan.state_delta[CREATED_KEY] = created  # the chat is as old as it was
    info = _chat_info(request, None if fresh else session, titles or ChatListOptions())
    plan.state_delta = {**info, **plan.state_delta}
    return plan


def _chat_info(
    request: ChatRequest, session: Session | None, titles: ChatListOptions
) -> dict[str, object]:
    """The title and creation time of a chat that has none yet: its first user text
    (the session's, else the request's first user message)."""
    state = session.state if session is not None else {}
    info: dict[str, object] = {}
    # A rewind leaves the keys it undid as None.
    if state.get(CREATED_KEY) is None:
        info.setdefault(CREATED_KEY, time.time())
    if state.get(TITLE_KEY) is None:
        text = (
            first_user_text(e.content for e in session.events if e.author == "user")
            if session is not None
            else ""
        )
        if not text:
            text = next(
                (t for m in request.history if m.role == "user" and (t := message_text(m).strip())),
                "",
            )
        if text:
            info[TITLE_KEY] = chat_title(titles, text)
    return info
