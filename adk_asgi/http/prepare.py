"""prepare_turn: the session a turn runs on — found, restored from the client's history
(all or nothing, ``http/seed.py``) or rewound for a regenerate — and the turn's plan.

Runs under the chat's turn lock (``ChatEndpoint``), so two requests never restore one
history twice.
"""

from __future__ import annotations

import logging

from ..core.request import ChatRequest
from ..core.runtime import AgentRuntime
from .seed import create_seeded, incomplete_seed, seed_events
from .turn import TurnPlan, plan_turn

__all__ = ("prepare_turn",)

logger = logging.getLogger("adk_asgi")


async def prepare_turn(runtime: AgentRuntime, request: ChatRequest, user_id: str,
                       max_file_bytes: int) -> TurnPlan:
    """The plan of ``request``'s turn, its session ready: raises ``RequestError`` for a
    request the session refuses; session-service failures propagate."""
    service = runtime.session_service
    app_name = runtime.app_name
    session = await service.get_session(app_name=app_name, user_id=user_id,
                                        session_id=request.id)
    if session is not None and incomplete_seed(session):
        logger.warning("Chat %r holds an incomplete history restore: restoring it again",
                       request.id)
        await service.delete_session(app_name=app_name, user_id=user_id,
                                     session_id=request.id)
        session = None
    fresh = session is None or not session.events
    plan = plan_turn(request, None if fresh else session, runtime.tools, max_file_bytes)
    if fresh:
        events = seed_events(plan.seed, runtime.agent_name)
        if session is None or events:
            await create_seeded(service, app_name=app_name, user_id=user_id,
                                session_id=request.id, events=events, session=session)
    elif plan.rewind_before is not None:
        await runtime.runner.rewind_async(user_id=user_id, session_id=request.id,
                                          rewind_before_invocation_id=plan.rewind_before)
    return plan
