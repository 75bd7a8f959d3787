"""What a test sends and reads over HTTP: chat bodies, SSE parsing, a useChat-like history."""

from __future__ import annotations

import copy
import json
from typing import Any

import httpx


def user_message(text: str, msg_id: str | None = None) -> dict[str, Any]:
    return {
        "id": msg_id or f"u-{abs(hash(text)) % 10**8}",
        "role": "user",
        "parts": [{"type": "text", "text": text}],
    }


def chat_body(chat_id: str, *messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": chat_id, "messages": list(messages), "trigger": "submit-message", **extra}


def parse_sse(text: str) -> list[Any]:
    """Chunks of an SSE body (``[DONE]`` kept as the string "[DONE]")."""
    chunks: list[Any] = []
    for event in text.replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].lstrip() for line in event.split("\n") if line.startswith("data:")]
        if not data:
            continue
        payload = "\n".join(data)
        chunks.append(payload if payload == "[DONE]" else json.loads(payload))
    return chunks


def types_of(chunks: list[Any]) -> list[str]:
    return [c if isinstance(c, str) else c["type"] for c in chunks]


def text_of(chunks: list[Any]) -> str:
    return "".join(c["delta"] for c in chunks if isinstance(c, dict) and c["type"] == "text-delta")


class Chat:
    """A minimal client that keeps the history like useChat does."""

    def __init__(self, client: httpx.AsyncClient | httpx.Client, chat_id: str) -> None:
        self.client = client
        self.id = chat_id
        self.messages: list[dict[str, Any]] = []

    def absorb(self, chunks: list[Any]) -> dict[str, Any]:
        # A queued turn's transient notice (``data-queued``) may come first, as for useChat.
        start = next(c for c in chunks if isinstance(c, dict) and c["type"] == "start")
        message = next((m for m in self.messages if m["id"] == start["messageId"]), None)
        if message is None:
            message = {"id": start["messageId"], "role": "assistant", "parts": []}
            self.messages.append(message)
        parts = message["parts"]
        for c in chunks[1:]:
            if not isinstance(c, dict):
                continue
            if c["type"] == "tool-input-available":
                part = next((p for p in parts if p.get("toolCallId") == c["toolCallId"]), None)
                if part is None:
                    parts.append(
                        {
                            "type": f"tool-{c['toolName']}",
                            "toolCallId": c["toolCallId"],
                            "state": "input-available",
                            "input": c["input"],
                        }
                    )
            elif c["type"] == "tool-approval-request":
                part = next(p for p in parts if p["toolCallId"] == c["toolCallId"])
                part.update(state="approval-requested", approval={"id": c["approvalId"]})
            elif c["type"] in ("tool-output-available", "tool-output-denied"):
                part = next(p for p in parts if p.get("toolCallId") == c["toolCallId"])
                part["state"] = (
                    "output-available" if c["type"] == "tool-output-available" else "output-denied"
                )
        return message

    def approve(self, index: int, approved: bool) -> None:
        parts = [
            p
            for p in self.messages[-1]["parts"]
            if p.get("state") == "approval-requested" or p.get("state") == "approval-responded"
        ]
        part = parts[index]
        part.update(state="approval-responded", approval={**part["approval"], "approved": approved})

    def body(self, **extra: Any) -> dict[str, Any]:
        return {
            "id": self.id,
            "messages": copy.deepcopy(self.messages),
            "trigger": "submit-message",
            **extra,
        }
