"""The panel's fake: gpiozero's own ``MockFactory`` pins, driven like a dealer's hand would.

There is no hand-written fake panel: :class:`hw.gpio.panel.TablePanel` runs unchanged on
gpiozero's mock backend, and these helpers press its buttons and move its lines.
"""

from __future__ import annotations

from collections.abc import Callable

from gpiozero.pins.mock import MockFactory

from hw.gpio.config import PanelConfig, PanelSignal
from hw.gpio.panel import TablePanel


def mock_panel(config: PanelConfig | None = None, on_signal: Callable[[PanelSignal], None] | None = None,
               **kw) -> TablePanel:
    """A real :class:`TablePanel` on a fresh gpiozero ``MockFactory``."""
    return TablePanel(config, on_signal, pin_factory=MockFactory(), **kw)


def set_line(panel: TablePanel, kind: str, active: bool) -> None:
    """Drive an input of a panel built on gpiozero's ``MockFactory`` to its active or
    inactive level, honouring the line's polarity (for tests and the simulator)."""
    pin = panel.device(kind).pin
    line = panel.config.inputs()[kind]
    if active == line.active_high:
        pin.drive_high()
    else:
        pin.drive_low()


def press(panel: TablePanel, kind: str) -> None:
    """A clean press and release of a mock input (no chatter)."""
    set_line(panel, kind, True)
    set_line(panel, kind, False)
