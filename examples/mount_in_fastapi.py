"""An existing FastAPI site with its own routes and CORS, and the agent at /api/chat.

Run:  uvicorn examples.mount_in_fastapi:app --port 8000
Then point useChat() (default api '/api/chat') at this server.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from adk_asgi import AdkApp, mount
from adk_asgi.demo import build_demo_agent

# Your own agent goes here: `from my_pkg.agent import root_agent`.
chat = AdkApp(build_demo_agent(token_delay=0.02))

app = FastAPI(title="My site")
app.add_middleware(
    CORSMiddleware,
    allow_origins=["http://localhost:3000"],
    # DELETE: the page's stop request (DELETE /api/chat/{id}/stream) is cross-origin too.
    allow_methods=["GET", "POST", "DELETE"],
    allow_headers=["*"],
)


@app.get("/health")
async def health() -> dict[str, str]:
    return {"status": "ok"}


# HTTP and WebSocket at /api/chat (and /api/chat/...), warmed up with the site's lifespan.
mount(app, "/api/chat", chat)
