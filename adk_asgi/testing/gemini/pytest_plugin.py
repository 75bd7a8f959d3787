"""pytest: a Gemini cassette per test, replayed offline, recorded on request.

Installed with adk-asgi, this plugin is loaded by pytest on its own (the ``pytest11``
entry point ``adk_asgi_gemini``); with plugin autoloading off, list it in a
``conftest.py``: ``pytest_plugins = ["adk_asgi.testing.gemini.pytest_plugin"]``.

The ``gemini_cassette`` fixture starts a Gemini API emulator for the test and points
google-genai at it through the environment (``GOOGLE_GEMINI_BASE_URL``,
``GOOGLE_API_KEY``, ``SSL_CERT_FILE``), so an agent on ADK's ``Gemini`` model (a model
name such as ``"gemini-2.5-flash"``) reaches it without changes. It yields the
`GeminiEmulator`; ``gemini_cassette.gemini(...)`` builds a model connected to it
without the environment.

* By default it **replays** the test's cassette, offline. A request the cassette has no
  recording of fails the test, with the nearest recording and where it differs.
* With ``pytest --gemini-record`` it **records**: it forwards every request to the real
  Gemini API (``--gemini-upstream``, trusted with ``--gemini-upstream-ca`` when it is
  https with a CA of its own), with the key of ``GOOGLE_API_KEY`` (or
  ``GEMINI_API_KEY``), and writes the cassette anew.

The cassette is ``cassettes/<test module>/<test name>.jsonl`` next to the test file, or
the file the marker names (relative to the test file):
``@pytest.mark.gemini_cassette("cassettes/checkout.jsonl", timing=True)``; ``timing``
keeps the recorded pauses.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .emulator import GeminiEmulator

__all__ = ("gemini_cassette", "pytest_addoption", "pytest_configure")

_MARKER = "gemini_cassette"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gemini", "Gemini API cassettes (adk-asgi)")
    group.addoption(
        "--gemini-record",
        action="store_true",
        help="record the cassettes of the tests that use gemini_cassette from the real Gemini "
        "API (the key of GOOGLE_API_KEY or GEMINI_API_KEY) instead of replaying them",
    )
    group.addoption(
        "--gemini-upstream",
        metavar="URL",
        default=None,
        help="where --gemini-record forwards (default: the Gemini API)",
    )
    group.addoption(
        "--gemini-upstream-ca",
        metavar="FILE",
        default=None,
        help="the CA (PEM) that --gemini-record trusts for an https upstream (default: "
        "SSL_CERT_FILE, else certifi's roots)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{_MARKER}(path, timing=False): the Gemini cassette of this test (relative to the "
        "test file) and whether its replay keeps the recorded pauses",
    )


def cassette_path(request: pytest.FixtureRequest) -> tuple[Path, bool]:
    """The test's cassette and whether to keep its timing (marker, else the default)."""
    here = Path(str(request.node.path)).parent
    marker = request.node.get_closest_marker(_MARKER)
    timing = bool(marker.kwargs.get("timing", False)) if marker else False
    if marker and marker.args:
        return here / str(marker.args[0]), timing
    name = re.sub(r"[^\w.-]+", "_", request.node.name).strip("_")
    module = Path(str(request.node.path)).stem
    return here / "cassettes" / module / f"{name}.jsonl", timing


@pytest.fixture
def gemini_cassette(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[GeminiEmulator]:
    """A Gemini API emulator replaying (or, with ``--gemini-record``, recording) this
    test's cassette, with the environment pointing google-genai at it."""
    import ssl

    from .cassettes.recorder import DEFAULT_UPSTREAM, Upstream, real_api_key
    from .emulator import GeminiEmulator

    path, timing = cassette_path(request)
    if request.config.getoption("--gemini-record", default=False):
        key = real_api_key()
        if not key:
            pytest.fail(
                "--gemini-record forwards to the real Gemini API: set GOOGLE_API_KEY "
                "(or GEMINI_API_KEY)",
                pytrace=False,
            )
        url = request.config.getoption("--gemini-upstream", default=None)
        ca = request.config.getoption("--gemini-upstream-ca", default=None)
        trust = ssl.create_default_context(cafile=ca) if ca else None
        upstream = Upstream(url or DEFAULT_UPSTREAM, api_key=key, ssl_context=trust)
        emulator = GeminiEmulator(record=path, upstream=upstream)
    else:
        if not path.is_file():
            pytest.fail(
                f"no Gemini cassette {path}: record it with `pytest --gemini-record` "
                "(it needs GOOGLE_API_KEY and the network)",
                pytrace=False,
            )
        emulator = GeminiEmulator(replay=path, replay_timing=timing)
    with emulator:
        for name in ("GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
            monkeypatch.delenv(name, raising=False)
        for name, value in emulator.env.items():
            monkeypatch.setenv(name, value)
        yield emulator
        misses = emulator.replay_misses
    if misses:
        pytest.fail(
            f"{path.name}: {len(misses)} request(s) had no recording:\n"
            + "\n".join(f"- {miss}" for miss in misses),
            pytrace=False,
        )
