"""Translators: the one place an app's translators are made — for an HTTP turn, a live turn
and a chat's history alike — from the app's options and the agent's tools, with the
application's own translator class when it gives one (``AdkApp(translator=...)``).

An application's translator is a subclass of ``EventTranslator`` that overrides hooks
(``translator.py``). Live turns need ``LiveTranslator``'s additions too: adk-asgi derives
``class Live<Name>(LiveTranslator, <Name>)``, so the application's hooks run for live
events as well (``LiveTranslator`` adds no ``__slots__``, so any subclass combines).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..options import Settings
from ..pauses.tools import ToolKinds
from .live import LiveTranslator
from .message import MessageContext, MessageSettings
from .translator import EventTranslator

__all__ = ("Translators", "live_class")


def live_class(translator: type[EventTranslator]) -> type[LiveTranslator]:
    """The class of live turns' translators for an application's ``translator`` class."""
    if translator is EventTranslator:
        return LiveTranslator
    if issubclass(translator, LiveTranslator):
        return translator
    return type(
        f"Live{translator.__name__}",
        (LiveTranslator, translator),
        {"__module__": translator.__module__},
    )


class Translators:
    """Makes the translators of one app. ``tools`` gives the agent's tools once the runner
    is built (they are read on first use, after the app started)."""

    __slots__ = ("_base", "_live", "_live_settings", "_settings", "_sse", "_tools")

    def __init__(
        self,
        settings: Settings,
        tools: Callable[[], ToolKinds],
        translator: type[EventTranslator] = EventTranslator,
    ) -> None:
        if not (isinstance(translator, type) and issubclass(translator, EventTranslator)):
            raise TypeError("translator is a subclass of adk_asgi.EventTranslator")
        self._sse = translator
        self._live = live_class(translator)
        self._tools = tools
        surface = settings.surface
        self._base = MessageSettings(
            confirmation_style=settings.pauses.confirmation_style,
            describe_error=settings.describe_error,
            surface=surface if surface.active else None,
            resolve_file=surface.resolve_file,
            hold_partials=settings.streaming.hold_partials,
        )
        self._settings: MessageSettings | None = None
        self._live_settings: MessageSettings | None = None

    @property
    def settings(self) -> MessageSettings:
        """What every message of the app is written with (the agent's tools read once)."""
        if self._settings is None:
            self._settings = replace(self._base, tools=self._tools())
        return self._settings

    def turn(self, message_id: str, context: MessageContext | None = None) -> EventTranslator:
        """The translator of one request's part of a message (an HTTP turn, or a request
        of the history being replayed)."""
        return self._sse(message_id, self.settings, context)

    def live(
        self, message_id: str, *, audio_out: bool = True, turn_based: bool = False
    ) -> LiveTranslator:
        """The translator of a live turn's message. Its approvals are asked by the
        connection's gate, not stated with the call (``live/gate/``)."""
        if self._live_settings is None:
            settings = self.settings
            self._live_settings = replace(
                settings, tools=replace(settings.tools, approval=frozenset())
            )
        return self._live(
            message_id, self._live_settings, audio_out=audio_out, turn_based=turn_based
        )

    def live_history(self, message_id: str) -> LiveTranslator:
        """A live turn's message as a chat's history replays it (no audio; approval tools
        as the app declares them)."""
        return self._live(
            message_id, self.settings, audio_out=False, context=MessageContext(replay=True)
        )
