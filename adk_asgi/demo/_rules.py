"""Deterministic reply rules shared by the SSE model and the live connection.

The rules look only at the request contents, never at time or randomness, so the
same conversation always produces the same reply (tests and benchmarks rely on it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from google.genai import types

MODEL_NAME = "adk-asgi-demo"
ERROR_CODE = "DEMO_ERROR"

_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]")
_WORD = re.compile(r"\s*\S+\s*")
# Japanese has no spaces between words, so long CJK runs are cut into short
# pieces; otherwise a whole Japanese sentence would stream as one "token".
_CJK_PIECE = 3

STORY = (  # exactly 60 tokens
    "Once upon a time, a tiny server lived inside a laptop. Every morning it woke up, "
    "opened a socket, and waited for messages from a browser far away. Some messages "
    "asked about the weather, others wanted to send money, and a few just said hello. "
    "The server answered each one patiently, one token at a time, until everyone fell asleep."
)


def split_tokens(text: str) -> tuple[str, ...]:
    """Split text into stream chunks whose concatenation is exactly ``text``."""
    tokens: list[str] = []
    for word in _WORD.findall(text):
        if len(word) > _CJK_PIECE * 2 and _JAPANESE.search(word):
            tokens.extend(word[i : i + _CJK_PIECE] for i in range(0, len(word), _CJK_PIECE))
        else:
            tokens.append(word)
    if "".join(tokens) != text:  # only whitespace-only text gets here
        return (text,) if text else ()
    return tuple(tokens)


@dataclass(frozen=True)
class Reply:
    """One model turn: optional thoughts, text, then function calls (or an error)."""

    text_tokens: tuple[str, ...] = ()
    thought_tokens: tuple[str, ...] = ()
    calls: tuple[types.FunctionCall, ...] = ()
    error: str | None = None
    # Stream this many tokens, then raise (the "please raise" rule).
    raise_after: int | None = None

    @classmethod
    def of(
        cls,
        text: str,
        *,
        thought: str = "",
        calls: Sequence[types.FunctionCall] = (),
        raise_after: int | None = None,
    ) -> Reply:
        return cls(
            text_tokens=split_tokens(text),
            thought_tokens=split_tokens(thought),
            calls=tuple(calls),
            raise_after=raise_after,
        )

    @property
    def text(self) -> str:
        return "".join(self.text_tokens)

    @property
    def thought(self) -> str:
        return "".join(self.thought_tokens)


class DemoModelError(RuntimeError):
    """Raised by the demo model on purpose (the "please raise" rule)."""


def usage_for(
    contents: Sequence[types.Content], reply: Reply
) -> types.GenerateContentResponseUsageMetadata:
    """Plausible token counts: ~4 characters per prompt token, one per streamed chunk."""
    prompt = max(1, sum(len(content_text(c)) for c in contents) // 4)
    # A function call costs a few tokens even without any text.
    candidates = len(reply.text_tokens) + 5 * len(reply.calls)
    thoughts = len(reply.thought_tokens)
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt,
        candidates_token_count=candidates,
        thoughts_token_count=thoughts or None,
        total_token_count=prompt + candidates + thoughts,
    )


def is_japanese(text: str) -> bool:
    return bool(_JAPANESE.search(text))


def content_text(content: types.Content | None) -> str:
    """The visible (non-thought) text of a content."""
    if content is None:
        return ""
    return "".join(p.text for p in content.parts or () if p.text and not p.thought)


def latest_user_text(contents: Sequence[types.Content]) -> str:
    """Text of the newest user message, skipping function-response-only contents."""
    for content in reversed(contents):
        if content.role == "user":
            text = content_text(content)
            if text:
                return text
    return ""


def plan_reply(contents: Sequence[types.Content]) -> Reply:
    """Decide the next model turn from the conversation so far."""
    if not contents:
        return Reply.of("Hello! I am the offline adk-asgi demo model. Ask me anything.")
    last = contents[-1]
    responses = [p.function_response for p in last.parts or () if p.function_response]
    if responses:
        return _answer_tool_results(contents, responses)
    return _answer_text(content_text(last), last)


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


def _answer_text(text: str, content: types.Content) -> Reply:
    low = text.lower()
    ja = is_japanese(text)
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


# ---------------------------------------------------------------------------
# Tool result rules
# ---------------------------------------------------------------------------

_REJECTED = re.compile(r"reject|denied|deny|cancel|declin", re.IGNORECASE)
_CONDITIONS_JA = {
    "sunny": "晴れ",
    "cloudy": "くもり",
    "rainy": "雨",
    "snowy": "雪",
    "windy": "強風",
}


def _answer_tool_results(
    contents: Sequence[types.Content], responses: Sequence[types.FunctionResponse]
) -> Reply:
    ja = is_japanese(latest_user_text(contents))
    calls = _recent_calls(contents[:-1])
    sentences = [_describe_result(fr, _match_call(fr, calls), ja) for fr in responses if fr.name]
    return Reply.of(("" if ja else " ").join(sentences) or "Done.")


def _recent_calls(contents: Sequence[types.Content]) -> list[types.FunctionCall]:
    """Function calls of the newest model content that made any."""
    for content in reversed(contents):
        calls = [p.function_call for p in content.parts or () if p.function_call]
        if calls:
            return list(calls)
    return []


def _match_call(
    response: types.FunctionResponse, calls: list[types.FunctionCall]
) -> types.FunctionCall | None:
    # ADK strips its "adk-" ids before calling the model, so ids usually are
    # None here; fall back to pairing calls and responses by name, in order.
    for index, call in enumerate(calls):
        if call.name == response.name and (not response.id or call.id in (None, response.id)):
            return calls.pop(index)
    return None


def _failure(result: dict[str, Any]) -> str | None:
    """The reason a tool result reports failure, or None if it succeeded."""
    if "error" in result:
        error = result["error"]
        return error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)
    status = str(result.get("status", "")).lower()
    if status in {"error", "failed", "failure", "rejected", "denied", "cancelled", "canceled"}:
        return str(result.get("message") or status)
    for flag in ("success", "approved", "confirmed"):
        if result.get(flag) is False:
            return str(result.get("message") or result.get("reason") or "denied")
    return None


def _describe_result(
    response: types.FunctionResponse, call: types.FunctionCall | None, ja: bool
) -> str:
    result: dict[str, Any] = dict(response.response or {})
    args: dict[str, Any] = dict(call.args or {}) if call else {}
    failure = _failure(result)
    name = response.name
    if name == "get_weather":
        place = result.get("location") or args.get("location") or "there"
        if failure:
            return (
                f"{place}の天気を取得できませんでした。"
                if ja
                else (f"I could not get the weather for {place}: {failure}.")
            )
        condition = str(result.get("condition", "unknown"))
        temp = result.get("temperature_c", "?")
        if ja:
            return f"{place}の天気は{_CONDITIONS_JA.get(condition, condition)}、{temp}°Cです。"
        return f"The weather in {place} is {condition}, {temp}°C."
    if name == "process_payment":
        who = result.get("recipient") or args.get("recipient") or "the recipient"
        if failure is None:
            amount = _format_amount(result.get("amount", args.get("amount", "?")))
            currency = result.get("currency") or args.get("currency") or "USD"
            return (
                f"{who}さんに{amount} {currency}を送金しました。"
                if ja
                else (f"Sent {amount} {currency} to {who}.")
            )
        if "requires confirmation" in failure:  # live mode: ADK's gate blocked the call
            return (
                f"{who}さんへの送金は承認待ちです。"
                if ja
                else (f"The payment to {who} is waiting for your approval.")
            )
        if _REJECTED.search(failure):
            return (
                f"{who}さんへの送金はキャンセルされました。"
                if ja
                else (f"The payment to {who} was cancelled.")
            )
        return (
            f"{who}さんへの送金はできませんでした: {failure}"
            if ja
            else (f"The payment to {who} was not made: {failure}.")
        )
    if name == "get_location":
        lat = result.get("latitude", result.get("lat"))
        lng = result.get("longitude", result.get("lng", result.get("lon")))
        if failure is None and lat is not None and lng is not None:
            return (
                f"現在地は緯度{lat}、経度{lng}です。"
                if ja
                else (f"You are at latitude {lat}, longitude {lng}.")
            )
        reason = failure or "no coordinates were returned"
        return (
            f"現在地を取得できませんでした: {reason}"
            if ja
            else (f"I could not get your location: {reason}.")
        )
    if name == "change_bgm":
        track = result.get("track", args.get("track", "?"))
        if failure is None:
            return f"トラック{track}を再生しています。" if ja else f"Now playing track {track}."
        return (
            f"BGMを変更できませんでした: {failure}"
            if ja
            else (f"I could not change the music: {failure}.")
        )
    if failure:
        return f"{name} failed: {failure}."
    return f"{name} returned {json.dumps(result, ensure_ascii=False, sort_keys=True)}."


def _format_amount(amount: Any) -> str:
    if isinstance(amount, (int, float)) and not isinstance(amount, bool):
        return str(int(amount)) if float(amount).is_integer() else f"{amount:.2f}"
    return str(amount)
