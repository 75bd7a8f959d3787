"""Demo rules for a turn that answers tool results: one sentence per result ("The weather in
Tokyo is sunny, 22°C.", "Sent 50 USD to Hanako.", "The payment to Hanako was cancelled.")."""

from __future__ import annotations

import json
import re
from collections.abc import Container, Sequence
from typing import Any

from google.genai import types

from ._reply import Reply, is_japanese, latest_user_text

__all__ = ("answer_tool_results",)


_REJECTED = re.compile(r"reject|denied|deny|cancel|declin", re.IGNORECASE)
_CONDITIONS_JA = {
    "sunny": "晴れ",
    "cloudy": "くもり",
    "rainy": "雨",
    "snowy": "雪",
    "windy": "強風",
}


def answer_tool_results(
    contents: Sequence[types.Content],
    responses: Sequence[types.FunctionResponse],
    *,
    generic: Container[str] = (),
) -> Reply:
    """One sentence per result; results of the functions in ``generic`` get the sentence
    any function gets ("NAME returned {...}."), even when a demo tool has that name."""
    ja = is_japanese(latest_user_text(contents))
    calls = _recent_calls(contents[:-1])
    sentences = [
        _describe_result(fr, _match_call(fr, calls), ja, generic=fr.name in generic)
        for fr in responses
        if fr.name
    ]
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
    response: types.FunctionResponse,
    call: types.FunctionCall | None,
    ja: bool,
    *,
    generic: bool = False,
) -> str:
    result: dict[str, Any] = dict(response.response or {})
    args: dict[str, Any] = dict(call.args or {}) if call else {}
    failure = _failure(result)
    name = "" if generic else response.name
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
    name = response.name
    if failure:
        return f"{name} failed: {failure}."
    return f"{name} returned {json.dumps(result, ensure_ascii=False, sort_keys=True)}."


def _format_amount(amount: Any) -> str:
    if isinstance(amount, (int, float)) and not isinstance(amount, bool):
        return str(int(amount)) if float(amount).is_integer() else f"{amount:.2f}"
    return str(amount)
