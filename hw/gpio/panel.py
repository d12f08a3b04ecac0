"""The table panel: shuffler lines, dealer buttons, alert LED and buzzer (gpiozero).

Wiring is described by a named config (:class:`PanelConfig`, BCM pin numbers) and
the panel turns line changes into plain :class:`PanelSignal` callbacks:

==================  =========================================================
kind                meaning
==================  =========================================================
``shuffle_started`` the automatic shuffler began a cycle (informational)
``deck_ready``      the shuffler's deck-ready push: **a new hand begins**
``new_hand``        the dealer's new-hand button: **a new hand begins**
``shuffler_fault``  the shuffler reports a fault: **hard stop**, latched
``call_misdeal``    the dealer calls a misdeal (the engine rules on it)
``acknowledge``     the dealer acknowledges the alert
==================  =========================================================

Rules encoded here (the engine applies the poker rules; the panel only refuses
what must not reach it):

* A hand begins on the shuffler's button push or on the dealer push (TDA 21, "A
  hand begins on the first riffle; push of the shuffler button, or on the dealer
  push"), so both ``deck_ready`` and ``new_hand`` have :attr:`PanelSignal.starts_hand`.
* A shuffler fault is a HARD STOP.  The panel latches it: LED steady and buzzer on,
  and every hand start (``deck_ready``/``new_hand``) is refused -- not emitted,
  kept in :attr:`TablePanel.refused`, and the buzzer sounds again -- until the
  dealer presses acknowledge.  Acknowledge always silences the buzzer; it clears
  the latch only once the shuffler's fault line has gone inactive, otherwise the
  dealer has to clear the shuffler and press again.  A fault line already active
  at start-up latches at once.  ``clear()`` from software never hides a latched
  fault.

Debounce: ``bounce_time`` is handed to gpiozero (the real pin backends filter in
the driver), and the panel also applies its own guard, identical on every
backend: an activation counts only when the line had been inactive for at least
``bounce_time`` before it.  That drops the chatter of a press *and* of a release.
(gpiozero's ``MockPin`` ignores ``bounce_time``, so the guard is what the tests
exercise, with an injectable clock.)

Tests and simulations run on gpiozero's mock backend::

    from gpiozero.pins.mock import MockFactory
    panel = TablePanel(PanelConfig(), on_signal=print, pin_factory=MockFactory())
    set_line(panel, "deck_ready", True)   # hw.gpio.fake
"""


from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from gpiozero import LED, Buzzer, DigitalInputDevice

from hw.gpio.config import _STEADY_LEVELS, ALERT_LEVELS, HAND_START_KINDS, AlertLevel, PanelConfig, PanelSignal


class Panel(Protocol):
    """What the daemon needs from a panel (a real :class:`TablePanel` or a test double)."""

    @property
    def fault_latched(self) -> bool: ...

    def alert(self, level: AlertLevel) -> None: ...

    def clear(self) -> None: ...

    def close(self) -> None: ...


class TablePanel:
    """The dealer's panel and the shuffler's status lines, as :class:`PanelSignal` callbacks.

    ``on_signal`` is called from gpiozero's event thread (synchronously inside
    ``drive_high``/``drive_low`` on the mock backend); keep it short, e.g. put the
    signal on a queue.  ``pin_factory`` is any gpiozero factory (``None``: the
    default, real hardware); ``clock`` times debounce and :attr:`PanelSignal.at`.
    """

    def __init__(
        self,
        config: PanelConfig | None = None,
        on_signal: Callable[[PanelSignal], None] | None = None,
        *,
        pin_factory: Any = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config or PanelConfig()
        self._on_signal = on_signal
        self._clock = clock
        self._lock = threading.RLock()
        self._inputs: dict[str, DigitalInputDevice] = {}
        self._last_inactive: dict[str, float] = {}
        self._fault_latched = False
        self._alert: str | None = None
        self._silenced = False
        self._shown: tuple[str, bool] = ("off", False)
        self._refused: deque[PanelSignal] = deque(maxlen=32)
        self._led: LED | None = None
        self._buzzer: Buzzer | None = None
        try:
            cfg = self.config
            pf = pin_factory
            if cfg.alert_led is not None:
                self._led = LED(cfg.alert_led.pin, active_high=cfg.alert_led.active_high, pin_factory=pf)
            if cfg.buzzer is not None:
                self._buzzer = Buzzer(cfg.buzzer.pin, active_high=cfg.buzzer.active_high, pin_factory=pf)
            for kind, line in cfg.inputs().items():
                dev = DigitalInputDevice(
                    line.pin, bounce_time=cfg.bounce_time or None, pin_factory=pf, **line.device_kwargs()
                )
                self._inputs[kind] = dev
                self._last_inactive[kind] = float("-inf")  # idle at start counts as settled
                dev.when_activated = self._make_handler(kind, True)
                dev.when_deactivated = self._make_handler(kind, False)
            fault = self._inputs.get("shuffler_fault")
            if fault is not None and fault.is_active:
                self._latch_fault()
                if on_signal is not None:
                    on_signal(PanelSignal("shuffler_fault", clock()))
        except Exception:
            self.close()
            raise

    # -- state --------------------------------------------------------------------------------

    @property
    def fault_latched(self) -> bool:
        """A shuffler fault is latched: hand starts are refused until acknowledge."""
        return self._fault_latched

    @property
    def fault_active(self) -> bool:
        """The shuffler's fault line is asserted right now."""
        dev = self._inputs.get("shuffler_fault")
        return bool(dev is not None and dev.is_active)

    @property
    def alert_level(self) -> str | None:
        """The alert set by :meth:`alert` (a latched fault shows over it)."""
        return self._alert

    @property
    def refused(self) -> tuple[PanelSignal, ...]:
        """Hand starts refused while a fault was latched (most recent last, bounded)."""
        return tuple(self._refused)

    @property
    def outputs(self) -> tuple[str, bool]:
        """What the outputs show: (``"off"``/``"blink"``/``"steady"``, buzzer on)."""
        return self._shown

    def device(self, kind: str) -> DigitalInputDevice:
        """The gpiozero input device behind a signal kind (its ``.pin`` is a ``MockPin`` in tests)."""
        try:
            return self._inputs[kind]
        except KeyError:
            raise KeyError(f"no {kind!r} line configured; have {sorted(self._inputs)}") from None

    # -- outputs ------------------------------------------------------------------------------

    def alert(self, level: AlertLevel) -> None:
        """Show an alert: ``irregularity`` blinks the LED; ``misdeal``, ``void`` and ``fault``
        light it steady and sound the buzzer until acknowledge.  A latched shuffler fault
        stays on top whatever is asked here."""
        if level not in ALERT_LEVELS:
            raise ValueError(f"alert level must be one of {ALERT_LEVELS}, got {level!r}")
        self._set_alert(level)

    def clear(self) -> None:
        """Drop the software alert (a new hand).  Does not clear a latched shuffler fault."""
        self._set_alert(None)

    def _set_alert(self, level: AlertLevel | None) -> None:
        with self._lock:
            self._alert = level
            self._silenced = False  # a new alert, or none: the next one sounds again
            self._render()

    def _render(self) -> None:
        if self._fault_latched:
            want = ("steady", not self._silenced)
        elif self._alert is not None:
            want = ("steady" if self._alert in _STEADY_LEVELS else "blink", self._alert in _STEADY_LEVELS)
            want = (want[0], want[1] and not self._silenced)
        else:
            want = ("off", False)
        if want == self._shown:
            return
        led_mode, buzz = want
        if self._led is not None and led_mode != self._shown[0]:
            if led_mode == "steady":
                self._led.on()
            elif led_mode == "blink":
                self._led.blink(on_time=self.config.blink_on, off_time=self.config.blink_off, background=True)
            else:
                self._led.off()
        if self._buzzer is not None and buzz != self._shown[1]:
            if buzz:
                self._buzzer.on()
            else:
                self._buzzer.off()
        self._shown = want

    # -- inputs -------------------------------------------------------------------------------

    def _make_handler(self, kind: str, active: bool) -> Callable[[], None]:
        def handler() -> None:
            self._edge(kind, active)

        return handler

    def _edge(self, kind: str, active: bool) -> None:
        now = self._clock()
        emits: list[PanelSignal] = []
        with self._lock:
            if not active:
                self._last_inactive[kind] = now
                return
            if now - self._last_inactive[kind] < self.config.bounce_time:
                return  # chatter: the line was not settled inactive before this edge
            self._last_inactive[kind] = float("inf")  # until it goes inactive again
            signal = PanelSignal(kind, now)  # type: ignore[arg-type]
            if kind == "shuffler_fault":
                if not self._fault_latched:
                    self._latch_fault()
                    emits.append(signal)
            elif kind in HAND_START_KINDS:
                if not self._fault_latched and self.fault_active:
                    # fail safe: the fault line is asserted though its edge was lost as chatter
                    self._latch_fault()
                    emits.append(PanelSignal("shuffler_fault", now))
                if self._fault_latched:
                    self._refused.append(signal)
                    self._silenced = False  # the buzzer sounds again: acknowledge first
                    self._render()
                else:
                    emits.append(signal)
            elif kind == "acknowledge":
                self._silenced = True
                if self._fault_latched and not self.fault_active:
                    self._fault_latched = False
                self._render()
                emits.append(signal)
            else:
                emits.append(signal)
        if self._on_signal is not None:
            for emit in emits:
                self._on_signal(emit)

    def _latch_fault(self) -> None:
        with self._lock:
            self._fault_latched = True
            self._silenced = False
            self._render()

    # -- lifecycle ----------------------------------------------------------------------------

    def close(self) -> None:
        """Release every pin (outputs off)."""
        for dev in list(self._inputs.values()):
            dev.close()
        self._inputs.clear()
        for out in (self._led, self._buzzer):
            if out is not None:
                out.close()
        self._led = self._buzzer = None

    def __enter__(self) -> TablePanel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


