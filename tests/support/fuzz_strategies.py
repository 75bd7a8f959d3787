"""Hypothesis settings and strategies shared by the fuzz tests.

Hostile inputs are built as JSON *text* (``Raw`` fragments, ``Obj`` with repeated
keys), so a body can hold what ``json.dumps`` never writes: duplicated keys,
nesting deeper than any recursion limit, lone surrogate escapes, ``1e999``.

``ADK_ASGI_FUZZ_SCALE`` multiplies every example count (default 1: a quick run;
e.g. ``ADK_ASGI_FUZZ_SCALE=20 scripts/test tests/wire/test_fuzz_request.py`` for a long one);
``ADK_ASGI_FUZZ_SHRINK=0`` reports failures unshrunk (faster while developing).
"""

from __future__ import annotations

import base64
import copy
import json
import os
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

SCALE = float(os.environ.get("ADK_ASGI_FUZZ_SCALE", "1"))


def fuzz_settings(examples: int) -> settings:
    """``examples`` at scale 1; no deadline (each example is bounded by its own
    timeout instead), no example database (nothing written to the work tree)."""
    phases = list(Phase)
    if os.environ.get("ADK_ASGI_FUZZ_SHRINK", "1") == "0":
        phases.remove(Phase.shrink)  # report the first failing example as found
    return settings(
        max_examples=max(1, round(examples * SCALE)),
        phases=phases,
        deadline=None,
        database=None,
        print_blob=True,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
            HealthCheck.filter_too_much,
        ],
    )


# -- JSON text with room for hostility ---------------------------------------------


class Raw(str):
    """A JSON fragment written as is."""


class Obj:
    """A JSON object as ordered pairs: keys may repeat."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        self.pairs = pairs

    def __repr__(self) -> str:
        return f"Obj({self.pairs!r})"


class Repeat:
    """``text * times`` as one JSON string, with a short repr (failures stay readable)."""

    __slots__ = ("text", "times")

    def __init__(self, text: str, times: int) -> None:
        self.text = text
        self.times = times

    def __repr__(self) -> str:
        return f"Repeat({self.text!r}, {self.times})"


class Deep:
    """``depth`` nested arrays (``[[[0]]]``) or objects (``{"a":{"a":1}}``)."""

    __slots__ = ("depth", "kind")

    def __init__(self, kind: str, depth: int) -> None:
        self.kind = kind
        self.depth = depth

    def __repr__(self) -> str:
        return f"Deep({self.kind!r}, {self.depth})"


def encode(value: Any) -> str:
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, Repeat):
        return json.dumps(value.text * value.times)
    if isinstance(value, Deep):
        if value.kind == "array":
            return "[" * value.depth + "0" + "]" * value.depth
        return '{"a":' * value.depth + "1" + "}" * value.depth
    if isinstance(value, Obj):
        return "{" + ",".join(f"{json.dumps(k)}:{encode(v)}" for k, v in value.pairs) + "}"
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k))}:{encode(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(encode(v) for v in value) + "]"
    return json.dumps(value)


def to_bytes(value: Any) -> bytes:
    return encode(value).encode("utf-8", "surrogatepass")


# -- scalars ----------------------------------------------------------------------

EDGE_STRINGS = [
    "",
    " ",
    "\u0000",
    "\t\n\r",
    "\u202e",
    "\ufeff",
    "\u200b",
    "\U0001f600",
    "e\u0301",
    "\u00e9",
    "花子",
    "\uffff",
    "\U0010ffff",
    "%00",
    "../../etc/passwd",
    "<script>",
    "data:",
    "null",
    "[DONE]",
    "\\",
    '"',
    "a" * 300,
]
RAW_SCALARS = [
    Raw('"\\ud800"'),
    Raw('"\\udc00x"'),
    Raw('"\\ud83d\\ude00"'),
    Raw('"\\u0000"'),
    Raw("1e999"),
    Raw("-1e999"),
    Raw("-0"),
    Raw("123456789012345678901234567890"),
    Raw("1.0e-400"),
    Raw("0.1e1"),
]


def long_strings() -> st.SearchStrategy[Repeat]:
    return st.builds(
        Repeat,
        st.sampled_from(["a", "花", "\U0001f600", "ab%"]),
        st.sampled_from([1000, 70_000, 1_000_000]),
    )


text = st.one_of(st.text(max_size=40), st.sampled_from(EDGE_STRINGS))
scalars: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    text,
    st.sampled_from(RAW_SCALARS),
)
deep = st.builds(
    Deep, st.sampled_from(["array", "object"]), st.integers(min_value=1, max_value=3000)
)
anything: st.SearchStrategy[Any] = st.recursive(
    st.one_of(scalars, deep),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(text, inner, max_size=4)),
    max_leaves=8,
)


def valid_or(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly the valid value, sometimes anything at all in its place."""
    return st.one_of(valid, valid, valid, anything)


def with_duplicates(obj: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[Any]:
    """A dict, or the same object written with some of its keys repeated
    (a hostile value first, the real one second, or the other way round)."""

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        value = draw(obj)
        if not value or not draw(st.booleans()):
            return value
        pairs = list(value.items())
        for key in draw(st.lists(st.sampled_from(list(value)), max_size=2, unique=True)):
            hostile = (key, draw(anything))
            index = pairs.index((key, value[key]))
            pairs.insert(index + draw(st.integers(0, 1)), hostile)
        return Obj(pairs)

    return build()


# -- the chat request -----------------------------------------------------------

TOOL_NAMES = [
    "process_payment",
    "get_weather",
    "get_location",
    "change_bgm",
    "adk_request_confirmation",
    "nope",
    "",
]
TOOL_STATES = [
    "input-streaming",
    "input-available",
    "approval-requested",
    "approval-responded",
    "output-available",
    "output-error",
    "output-denied",
]
ids = st.one_of(
    st.sampled_from(
        [
            "c1",
            "chat-1",
            "u1",
            "adk-1",
            "adk-forged",
            "approval-adk-1",
            "msg-1",
            "x" * 256,
            "x" * 257,
            "",
        ]
    ),
    st.text(min_size=1, max_size=12),
)
DATA_URLS = [
    "data:",
    "data:,",
    "data:,hello%20world",
    "data:,%zz%",
    "data:text/plain,caf%C3%A9",
    "data:image/png;base64",
    "data:image/png;base64,",
    "data:image/png;base64,!!!!",
    "data:image/png;base64,aGVsbG8",
    "data:;base64,aGVsbG8=",
    "data:;;;base64,aGk=",
    "data:image/png;base64,aGVs\nbG8=",
    "data:text/plain;charset=utf-8;base64,aGk=",
    "data:" + "a" * 5000 + ",x",
    "http://example.com/a.png",
    "https://example.com/a.pdf",
    "https://",
    "http:x",
    "ftp://example.com/x",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "gs://b/x",
    "",
]
urls = st.one_of(
    st.sampled_from(DATA_URLS),
    st.builds(
        lambda b, m: f"data:{m};base64,{base64.b64encode(b).decode()}",
        st.binary(max_size=64),
        st.sampled_from(["image/png", "text/plain", "", "x/y;z"]),
    ),
    st.builds(lambda s: "data:," + s, text),
    text,
)
mime_types = st.one_of(
    st.sampled_from(
        ["image/png", "text/plain", "application/pdf", "", "audio/pcm;rate=16000", "x" * 200]
    ),
    text,
)


def _part(kind: str, **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return with_duplicates(
        st.fixed_dictionaries(
            {"type": valid_or(st.just(kind))}, optional={k: valid_or(v) for k, v in fields.items()}
        )
    )


tool_types = st.one_of(
    st.builds(lambda n: "tool-" + n, st.sampled_from(TOOL_NAMES)),
    st.builds(lambda n: "tool-" + n, text),
    st.just("dynamic-tool"),
)
approvals = st.fixed_dictionaries(
    {"id": valid_or(ids)}, optional={"approved": valid_or(st.booleans()), "reason": valid_or(text)}
)

text_part = _part(
    "text", text=st.one_of(text, long_strings()), state=st.sampled_from(["done", "streaming"])
)
file_part = _part("file", url=urls, mediaType=mime_types, filename=text)
tool_part = with_duplicates(
    st.fixed_dictionaries(
        {"type": tool_types},
        optional={
            "toolCallId": valid_or(ids),
            "toolName": valid_or(st.sampled_from(TOOL_NAMES)),
            "state": valid_or(st.sampled_from(TOOL_STATES)),
            "input": anything,
            "output": anything,
            "errorText": valid_or(text),
            "approval": valid_or(approvals),
            "providerExecuted": valid_or(st.booleans()),
            "callProviderMetadata": anything,
        },
    )
)
other_part = st.one_of(
    _part("reasoning", text=text),
    _part("step-start"),
    _part("source-url", sourceId=text, url=urls),
    _part("source-document", sourceId=text),
    _part("data-weather", id=ids, data=anything),
    st.builds(lambda t, v: {"type": t, "value": v}, text, anything),
)
parts = st.one_of(text_part, text_part, file_part, tool_part, other_part, anything)
ROLES = ["user", "assistant", "system"]


def messages_of(role: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return with_duplicates(
        st.fixed_dictionaries(
            {"role": role, "parts": valid_or(st.lists(parts, max_size=5))},
            optional={
                "id": valid_or(ids),
                "metadata": anything,
                "content": anything,
                "createdAt": anything,
            },
        )
    )


message = messages_of(valid_or(st.sampled_from(ROLES)))
user_message = st.builds(
    lambda t, i: {"id": i, "role": "user", "parts": [{"type": "text", "text": t}]},
    st.one_of(text.filter(bool), long_strings()),
    ids,
)
message_lists = st.one_of(
    st.lists(message, max_size=4),
    st.builds(lambda ms, last: [*ms, last], st.lists(message, max_size=3), user_message),
    # many messages: an unknown chat gets them all seeded as history
    st.builds(
        lambda r, t, n, last: [{"role": r, "parts": [{"type": "text", "text": t}]}] * n + [last],
        st.sampled_from(ROLES),
        text,
        st.sampled_from([50, 500, 3000]),
        user_message,
    ),
)
request_bodies = with_duplicates(
    st.fixed_dictionaries(
        {"id": valid_or(ids)},
        optional={
            "messages": valid_or(message_lists),
            "message": valid_or(message),
            "trigger": valid_or(st.sampled_from(["submit-message", "regenerate-message"])),
            "messageId": valid_or(ids),
            "body": anything,
            "headers": anything,
            "extra": anything,
        },
    )
)
json_documents = st.one_of(anything, request_bodies, request_bodies)


@st.composite
def mutated(draw: st.DrawFn, documents: st.SearchStrategy[Any]) -> bytes:
    """A document's bytes with a few bytes inserted, replaced or deleted: broken UTF-8
    inside strings, stray quotes and brackets, NULs, truncation."""
    raw = bytearray(to_bytes(draw(documents)))
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(0, len(raw)))
        blob = draw(
            st.one_of(
                st.binary(min_size=1, max_size=4),
                st.sampled_from(
                    [
                        b"\xff",
                        b"\xed\xa0\x80",
                        b"\xc3",
                        b"\x00",
                        b'"',
                        b"}",
                        b"]",
                        b"\\u",
                        b"\\",
                        b",,",
                    ]
                ),
            )
        )
        op = draw(st.sampled_from(["insert", "replace", "delete", "truncate"]))
        if op == "insert":
            raw[pos:pos] = blob
        elif op == "replace":
            raw[pos : pos + len(blob)] = blob
        elif op == "delete":
            del raw[pos : pos + len(blob)]
        else:
            del raw[pos:]
    return bytes(raw)


# -- plausible bodies with a twist ----------------------------------------------------
# Fully hostile documents mostly stop at the parser. These are what a client sends,
# with zero to two defects planted somewhere deep, so the hostile value reaches
# planning, session seeding, ADK content and the model.

printable_ids = st.text(
    st.characters(
        min_codepoint=33, max_codepoint=0x2FFF, exclude_categories=("Cs", "Cc", "Zl", "Zp")
    ),
    min_size=1,
    max_size=12,
)
plain_parts = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t, "state": "done"}, text),
    st.builds(lambda t: {"type": "reasoning", "text": t}, text),
    st.just({"type": "step-start"}),
    st.builds(lambda u, m: {"type": "file", "url": u, "mediaType": m}, urls, mime_types),
    st.builds(
        lambda n, i, s, o: {
            "type": "tool-" + n,
            "toolCallId": i,
            "state": s,
            "input": {},
            "output": o,
        },
        st.sampled_from(TOOL_NAMES),
        ids,
        st.sampled_from(TOOL_STATES),
        anything,
    ),
    st.builds(lambda d: {"type": "data-x", "data": d}, anything),
    st.builds(lambda u: {"type": "source-url", "sourceId": "s", "url": u}, urls),
)
new_user_parts = st.builds(
    lambda first, rest, order: [first, *rest][::order],
    st.builds(lambda t: {"type": "text", "text": t}, st.one_of(text, long_strings())),
    st.lists(
        st.one_of(
            st.builds(
                lambda u, m, f: {"type": "file", "url": u, "mediaType": m, "filename": f},
                urls,
                mime_types,
                text,
            ),
            plain_parts,
        ),
        max_size=2,
    ),
    st.sampled_from([1, -1]),
)
plain_messages = st.builds(
    lambda r, i, ps: {"id": i, "role": r, "parts": ps},
    st.sampled_from(["user", "assistant"]),
    ids,
    st.lists(plain_parts, max_size=3),
)
plain_bodies = st.builds(
    lambda i, history, last, trigger: {"id": i, "messages": [*history, last], "trigger": trigger},
    printable_ids,
    st.lists(plain_messages, max_size=3),
    st.builds(lambda i, ps: {"id": i, "role": "user", "parts": ps}, ids, new_user_parts),
    st.sampled_from(["submit-message", "regenerate-message"]),
)


@st.composite
def twisted(draw: st.DrawFn, documents: st.SearchStrategy[Any]) -> Any:
    """``documents`` with up to two defects: a value replaced by anything, an unknown
    key added, or a key written twice with a hostile first value."""
    doc = copy.deepcopy(draw(documents))  # strategies may hand out shared objects
    for _ in range(draw(st.integers(0, 2))):
        containers: list[Any] = []
        stack = [doc]
        while stack:
            node = stack.pop()
            if isinstance(node, dict | list) and node:
                containers.append(node)
                stack.extend(node.values() if isinstance(node, dict) else node)
        if not containers:
            break
        node = draw(st.sampled_from(containers))
        if isinstance(node, list):
            node[draw(st.integers(0, len(node) - 1))] = draw(anything)
            continue
        key = draw(st.sampled_from(sorted(node)))
        op = draw(st.sampled_from(["replace", "add", "duplicate"]))
        if op == "replace":
            node[key] = draw(anything)
        elif op == "add":
            node[draw(text)] = draw(anything)
        else:
            # a duplicated key: a hostile value first, the client's value last
            replacement = Obj([(key, draw(anything)), *node.items()])
            if node is doc:
                doc = replacement
            else:
                _replace(doc, node, replacement)
    return doc


def _replace(root: Any, old: Any, new: Any) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        items = (
            list(node.items())
            if isinstance(node, dict)
            else list(enumerate(node))
            if isinstance(node, list)
            else []
        )
        for k, v in items:
            if v is old:
                node[k] = new
                return
            stack.append(v)
