"""The dealer's panel as a daemon source (``[gpio]``): buttons and shuffler lines in, LED and buzzer out.

A hand begins on the shuffler's deck-ready push or the dealer's new-hand button (TDA 21: "A hand
begins on the first riffle; push of the shuffler button, or on the dealer push"); the panel's LED
and buzzer follow the active alert.

Backend: a callable ``(on_signal) -> panel`` (the demo and the tests build a
:class:`~hw.gpio.panel.TablePanel` on gpiozero's ``MockFactory``: :func:`hw.gpio.fake.mock_panel`).
"""

from __future__ import annotations

import logging
from typing import Any

from controller.rules.events import Acknowledge, CallMisdeal, Event, NewHand, ShufflerFault
from controller.service.results import AlertRaised, AlertsCleared
from controller.sources import SourceContext, SourcePlugin
from hw.gpio.config import GpioSection, PanelSignal

log = logging.getLogger(__name__)


def signal_event(sig: PanelSignal) -> Event | None:
    """The engine event a panel signal stands for (``shuffle_started`` is information only)."""
    if sig.kind == "deck_ready":
        return NewHand(source="shuffler")
    if sig.kind == "new_hand":
        return NewHand(source="button")
    if sig.kind == "call_misdeal":
        return CallMisdeal("called_misdeal")
    if sig.kind == "acknowledge":
        return Acknowledge()
    if sig.kind == "shuffler_fault":
        return ShufflerFault("shuffler fault line")
    return None


class PanelSource:
    def __init__(self, ctx: SourceContext, section: GpioSection) -> None:
        self.ctx = ctx
        self.section = section
        self.panel: Any = None

    def _on_signal(self, sig: PanelSignal) -> None:
        event = signal_event(sig)
        if event is not None:
            self.ctx.post(event, "gpio")

    def start(self) -> None:
        if self.ctx.backend is not None:
            self.panel = self.ctx.backend(self._on_signal)
        else:
            from hw.gpio.factory import choose_pin_factory
            from hw.gpio.panel import TablePanel  # gpiozero: only when the real panel runs

            # The board's factory (lgpio on a Pi 5), or PinFactoryError saying what was tried and why.
            self.panel = TablePanel(self.section.panel_config(), self._on_signal, pin_factory=choose_pin_factory())

    def after(self, outputs: list[Any]) -> None:
        for out in outputs:
            if isinstance(out.result, AlertRaised):
                self.panel.alert(out.result.severity)
            elif isinstance(out.result, AlertsCleared) and out.result.active is None:
                self.panel.clear()

    def stop(self) -> None:
        if self.panel is not None:
            try:
                self.panel.close()
            except Exception:
                log.exception("panel close failed")

    def health(self) -> dict[str, Any]:
        return {"alert": getattr(self.panel, "alert_level", None),
                "fault_latched": getattr(self.panel, "fault_latched", None)}

    def healthy(self) -> bool:
        return self.panel is not None


PLUGIN = SourcePlugin(name="gpio", section=GpioSection, build=PanelSource, order=20)
