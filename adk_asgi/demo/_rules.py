"""Deterministic reply rules shared by the SSE model and the live connection.

The rules look only at the request contents, never at time or randomness, so the
same conversation always produces the same reply (tests and benchmarks rely on it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from google.genai import types

from ._answers import answer_tool_results
from ._reply import (
    ERROR_CODE,
    MODEL_NAME,
    STORY,
    DemoModelError,
    Reply,
    content_text,
    is_japanese,
    latest_user_text,
    split_tokens,
    usage_for,
)

__all__ = (
    "ERROR_CODE",
    "MODEL_NAME",
    "STORY",
    "DemoModelError",
    "Reply",
    "content_text",
    "echo_reply",
    "is_japanese",
    "latest_user_text",
    "plan_reply",
    "split_tokens",
    "usage_for",
)


def plan_reply(contents: Sequence[types.Content]) -> Reply:
    """Decide the next model turn from the conversation so far."""
    # Camera and screen frames (live mode) are context, not a turn: the newest content
    # that is more than frames is what the model answers.
    turn = [c for c in contents if not _only_images(c)]
    if not turn:
        return Reply.of("Hello! I am the offline adk-asgi demo model. Ask me anything.")
    last = turn[-1]
    responses = [p.function_response for p in last.parts or () if p.function_response]
    if responses:
        return answer_tool_results(turn, responses)
    return _answer_text(content_text(last), last, contents)


def echo_reply(content: types.Content) -> Reply:
    """The demo's answer to a message no rule knows: an echo of it."""
    text = content_text(content)
    return Reply.of(_echo(text, content, is_japanese(text)))


# ---------------------------------------------------------------------------
# User text rules
# ---------------------------------------------------------------------------

_PAY_VERB = re.compile(r"\b(send|pay|transfer|wire)\b|送金|送って|払", re.IGNORECASE)
_AMOUNT = r"(?P<amount>\d+(?:\.\d+)?)"
_CURRENCY = r"(?P<cur>dollars?|usd|bucks|euros?|eur|yen|jpy|ドル|円|ユーロ)"
_PAY_EN = re.compile(
    rf"(?:(?P<sym>[$€¥])\s*{_AMOUNT}|(?P<amount2>\d+(?:\.\d+)?)\s*{_CURRENCY}?)"
    r"\s+to\s+(?P<name>[^\s,.!?;、。]+)",
    re.IGNORECASE,
)
_PAY_JA = re.compile(
    r"(?P<name>[^\s,.!?;、。，！？]{1,20}?)(?:さん|様|さま|くん|ちゃん)?に\s*"
    rf"{_AMOUNT}\s*{_CURRENCY}",
    re.IGNORECASE,
)
_CURRENCY_CODES = {
    "$": "USD", "dollar": "USD", "dollars": "USD", "usd": "USD", "bucks": "USD", "ドル": "USD",
    "€": "EUR", "euro": "EUR", "euros": "EUR", "eur": "EUR", "ユーロ": "EUR",
    "¥": "JPY", "yen": "JPY", "jpy": "JPY", "円": "JPY",
}  # fmt: skip
_CITY_EN = re.compile(r"\b(?:in|for|at)\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)")
_CITY_JA = re.compile(r"([^\s、。のは]{1,10}?)の天気")
_TRACK = re.compile(r"(?:track|トラック|曲)\s*(?:no\.?|number|#)?\s*(\d+)", re.IGNORECASE)
_NUMBER = re.compile(r"\d+")
_BGM_EN = re.compile(r"\b(?:play|change|switch)\b.*\b(?:track|music)\b")
_BGM_JA = re.compile(r"トラック|曲[をにの]|音楽")


def _answer_text(text: str, content: types.Content, contents: Sequence[types.Content]) -> Reply:
    low = text.lower()
    ja = is_japanese(text)
    if _LOOK.search(text):
        return _what_i_see(_images(contents), ja)
    if "please fail" in low:
        return Reply(error='The demo model failed on purpose ("please fail").')
    if "please raise" in low:
        return Reply.of("I am about to fail on purpose, right in the middle.", raise_after=2)
    if match := re.match(r"\s*bench\s+(\d+)", low):
        count = max(1, min(int(match.group(1)), 100_000))
        return Reply.of(" ".join(f"w{i}" for i in range(1, count + 1)))
    if match := re.match(r"\s*think\b[\s:,]*(?:about\s+)?(.*)", text, re.IGNORECASE | re.DOTALL):
        topic = match.group(1).strip().rstrip("?.!") or "the question"
        return Reply.of(
            f"After thinking it over: {topic} deserves a short, honest answer, and in this "
            "scripted demo the answer is always 42.",
            thought=f"The user wants me to think about {topic}. "
            "I will reason step by step before answering.",
        )
    if _PAY_VERB.search(text) and (payments := _parse_payments(text)):
        return Reply.of("", calls=[_call("process_payment", **p) for p in payments])
    if "weather" in low or "forecast" in low or "天気" in text:
        city = _parse_city(text, ja)
        return Reply.of(
            f"{city}の天気を調べます。" if ja else f"Let me check the weather in {city}.",
            calls=[_call("get_weather", location=city)],
        )
    if "where am i" in low or re.search(r"\blocation\b", low) or "現在地" in text:
        return Reply.of("", calls=[_call("get_location")])
    if "bgm" in low or _BGM_EN.search(low) or _BGM_JA.search(text):
        match = _TRACK.search(text) or _NUMBER.search(text)
        track = int(match.group(match.lastindex or 0)) if match else 1
        return Reply.of(
            f"トラック{track}に切り替えます。" if ja else f"Switching the music to track {track}.",
            calls=[_call("change_bgm", track=track)],
        )
    if re.search(r"\b(?:story|long)\b", low) or "物語" in text:
        return Reply.of(STORY)
    return Reply.of(_echo(text, content, ja))


_LOOK = re.compile(r"\bwhat (?:do|can) you see\b|何が見え", re.IGNORECASE)


def _images(contents: Sequence[types.Content]) -> list[types.Blob]:
    return [
        p.inline_data
        for c in contents
        for p in c.parts or ()
        if p.inline_data is not None and (p.inline_data.mime_type or "").startswith("image/")
    ]


def _only_images(content: types.Content) -> bool:
    parts = content.parts or ()
    return content.role == "user" and bool(parts) and len(_images([content])) == len(parts)


def _what_i_see(images: list[types.Blob], ja: bool) -> Reply:
    """What the model "sees": the images of the conversation (live camera or screen
    frames, attached pictures), by count and the newest one's type and size."""
    if not images:
        return Reply.of(
            "カメラや画面共有の映像はまだ届いていません。"
            if ja
            else "I see nothing yet: turn on the camera or share your screen."
        )
    newest = images[-1]
    kind, size = newest.mime_type or "image", len(newest.data or b"")
    if ja:
        return Reply.of(f"画像を{len(images)}枚受け取りました。最新は{kind}（{size}バイト）です。")
    return Reply.of(f"I can see {len(images)} image(s) so far; the newest is {kind}, {size} bytes.")


def _call(name: str, **args: Any) -> types.FunctionCall:
    # The id stays unset: ADK assigns "adk-<uuid>" ids, as it does for Gemini.
    return types.FunctionCall(name=name, args=args)


def _parse_payments(text: str) -> list[dict[str, Any]]:
    payments: list[dict[str, Any]] = []
    for match in _PAY_EN.finditer(text):
        amount = match.group("amount") or match.group("amount2")
        unit = match.group("sym") or match.group("cur") or "$"
        name = match.group("name")
        payments.append(_payment(amount, unit, name[:1].upper() + name[1:]))
    if not payments:
        for match in _PAY_JA.finditer(text):
            payments.append(
                _payment(match.group("amount"), match.group("cur"), match.group("name"))
            )
    return payments


def _payment(amount: str, unit: str, recipient: str) -> dict[str, Any]:
    value = float(amount)
    return {
        "amount": int(value) if value.is_integer() else value,
        "recipient": recipient,
        "currency": _CURRENCY_CODES.get(unit.lower(), "USD"),
    }


def _parse_city(text: str, ja: bool) -> str:
    if match := _CITY_EN.search(text):
        return match.group(1)
    if match := _CITY_JA.search(text):
        return match.group(1)
    return "東京" if ja else "Tokyo"


def _echo(text: str, content: types.Content, ja: bool) -> str:
    words = text.split()
    snippet = " ".join(words[:8]) + (" …" if len(words) > 8 else "")
    if ja and len(snippet) > 30:
        snippet = snippet[:30] + "…"
    files = [p for p in content.parts or () if p.inline_data or p.file_data]
    if ja:
        reply = (
            f"「{snippet}」ですね。これはオフラインで動くadk-asgiのデモモデルです。"
            "天気、送金、現在地、BGMについて聞いてみてください。"
        )
        if files:
            reply += f"添付ファイルを{len(files)}件受け取りました。"
        return reply
    said = f'You said: "{snippet}". ' if snippet else "Hello! "
    reply = (
        f"{said}I am the offline adk-asgi demo model, so this reply is scripted and "
        'deterministic. Try asking about the weather, sending a payment, or starting with "think".'
    )
    if files:
        kinds = ", ".join(_describe_file(p) for p in files)
        reply += f" I also received {len(files)} attachment(s): {kinds}."
    return reply


def _describe_file(part: types.Part) -> str:
    if part.inline_data:
        size = len(part.inline_data.data or b"")
        return f"{part.inline_data.mime_type or 'unknown'} ({size} bytes)"
    assert part.file_data is not None
    return f"{part.file_data.mime_type or 'unknown'} ({part.file_data.file_uri})"
