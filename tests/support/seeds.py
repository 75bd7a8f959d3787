"""The seed app's captured streams (``tests/fixtures/seed-baselines``), as requests."""

from __future__ import annotations

import json
from typing import Any, Final

from .paths import FIXTURES

SEEDS: Final = FIXTURES / "seed-baselines"


def seed_requests(name: str) -> list[list[Any]]:
    data = json.loads((SEEDS / "frontend" / name).read_text())
    requests: list[list[Any]] = [[]]
    for raw in data["output"]["rawEvents"]:
        payload = raw.strip()[len("data: ") :]
        if payload == "[DONE]":
            requests[-1].append("[DONE]")
            requests.append([])
        else:
            requests[-1].append(json.loads(payload))
    return [r for r in requests if r]
