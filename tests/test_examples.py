from __future__ import annotations

import httpx

from conftest import LoopbackServer, chat_body, parse_sse, types_of, user_message


def test_mount_in_fastapi_example() -> None:
    from examples.mount_in_fastapi import app

    with LoopbackServer(app) as server, httpx.Client(base_url=server.url,
                                                     follow_redirects=True) as client:
        assert client.get("/health").json() == {"status": "ok"}
        response = client.post("/api/chat/", json=chat_body("ex", user_message("hello")),
                               headers={"origin": "http://localhost:3000"})
        assert response.status_code == 200
        assert response.headers["access-control-allow-origin"] == "http://localhost:3000"
        assert types_of(parse_sse(response.text))[-2:] == ["finish", "[DONE]"]
        # the bare prefix is redirected (307) and the POST is replayed
        response = client.post("/api/chat", json=chat_body("ex2", user_message("hi")))
        assert response.status_code == 200
        preflight = client.options("/api/chat/", headers={
            "origin": "http://localhost:3000", "access-control-request-method": "POST"})
        assert preflight.status_code == 200
        # The stop request of a cross-origin page is allowed (and answered) too.
        preflight = client.options("/api/chat/ex/stream", headers={
            "origin": "http://localhost:3000", "access-control-request-method": "DELETE"})
        assert preflight.status_code == 200
        stop = client.delete("/api/chat/ex/stream", headers={"origin": "http://localhost:3000"})
        assert stop.status_code == 200 and stop.json() == {"stopped": False}
        assert stop.headers["access-control-allow-origin"] == "http://localhost:3000"
        assert client.get("/api/chat/ex/stream").status_code == 204
