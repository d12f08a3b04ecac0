"""The panel's wiring and signals: pure data, no gpiozero (the config checks it on any machine).

:class:`PanelConfig` names each line's BCM pin and polarity; :class:`GpioSection` is the
``[gpio]`` config section this driver owns.  Signal kinds are listed in :mod:`hw.gpio.panel`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal

from pydantic import Field, StrictBool, field_validator

from controller.errors import PokerTableError, reject_unknown_keys
from controller.sources import Section

#: BCM numbers of the Raspberry Pi's GPIO header.
GPIO_PINS = range(0, 28)


class PanelConfigError(PokerTableError, ValueError):
    """A panel wiring that cannot work (unknown key, pin out of range, one pin used twice)."""


SignalKind = Literal[
    "shuffle_started", "deck_ready", "shuffler_fault", "new_hand", "call_misdeal", "acknowledge"
]
AlertLevel = Literal["irregularity", "misdeal", "void", "fault"]

INPUT_KINDS: tuple[str, ...] = (
    "shuffle_started",
    "deck_ready",
    "shuffler_fault",
    "new_hand",
    "call_misdeal",
    "acknowledge",
)
HAND_START_KINDS = frozenset({"deck_ready", "new_hand"})
ALERT_LEVELS: tuple[str, ...] = ("irregularity", "misdeal", "void", "fault")
_STEADY_LEVELS = frozenset({"misdeal", "void", "fault"})


@dataclass(frozen=True, slots=True)
class PanelSignal:
    """Something happened on the panel; ``at`` is the panel clock (monotonic seconds by default)."""

    kind: SignalKind
    at: float

    @property
    def starts_hand(self) -> bool:
        """True for the shuffler's deck-ready push and the dealer's new-hand push (TDA 21)."""
        return self.kind in HAND_START_KINDS


@dataclass(frozen=True, slots=True)
class InputLine:
    """One input: BCM pin, polarity and pull.

    ``active_high=False`` (the default) is a contact that pulls the line to ground
    when pressed / asserted.  With ``internal_pull`` the SoC's resistor pulls the
    line to its inactive level (up for active-low, down for active-high); turn it
    off when the board has its own resistor (opto-isolated shuffler outputs).
    """

    pin: int
    active_high: bool = False
    internal_pull: bool = True

    def device_kwargs(self) -> dict[str, Any]:
        if self.internal_pull:
            return {"pull_up": not self.active_high, "active_state": None}
        return {"pull_up": None, "active_state": self.active_high}


@dataclass(frozen=True, slots=True)
class OutputLine:
    """One output: BCM pin and polarity (``active_high=False`` for a sink-driven LED)."""

    pin: int
    active_high: bool = True


@dataclass(frozen=True, slots=True)
class PanelConfig:
    """Where everything is wired (BCM numbers).  Any line but ``acknowledge`` may be ``None``.

    The defaults are the reference wiring; cardrooms override them from config
    with :meth:`from_mapping`.
    """

    shuffle_started: InputLine | None = InputLine(5)
    deck_ready: InputLine | None = InputLine(6)
    shuffler_fault: InputLine | None = InputLine(13)
    new_hand: InputLine | None = InputLine(17)
    call_misdeal: InputLine | None = InputLine(27)
    acknowledge: InputLine = InputLine(22)
    alert_led: OutputLine | None = OutputLine(23)
    buzzer: OutputLine | None = OutputLine(24)
    bounce_time: float = 0.05
    blink_on: float = 0.25
    blink_off: float = 0.25

    def __post_init__(self) -> None:
        if self.acknowledge is None:
            raise PanelConfigError("panel config: the acknowledge button is required (it clears a shuffler fault)")
        if self.bounce_time < 0 or self.blink_on <= 0 or self.blink_off <= 0:
            raise PanelConfigError("panel config: bounce_time must be >= 0 and blink times > 0")
        seen: dict[int, str] = {}
        for name in (*INPUT_KINDS, "alert_led", "buzzer"):
            line = getattr(self, name)
            if line is None:
                continue
            if line.pin not in GPIO_PINS:
                raise PanelConfigError(f"panel config: {name}: BCM pin {line.pin} is not a GPIO pin (0..27)")
            if line.pin in seen:
                raise PanelConfigError(f"panel config: GPIO{line.pin} is used by both {seen[line.pin]} and {name}")
            seen[line.pin] = name

    def inputs(self) -> dict[str, InputLine]:
        return {k: line for k in INPUT_KINDS if (line := getattr(self, k)) is not None}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> PanelConfig:
        """Build from YAML-ish data, e.g. ``{deck_ready: 6, new_hand: {pin: 17, active_high: true}}``.

        A bare int is a pin with the default polarity; ``null`` leaves a line unwired; a
        missing key keeps the default.
        """
        known = sorted(f.name for f in fields(cls))
        reject_unknown_keys(data, known, PanelConfigError, "panel config", hint=f"; expected some of {known}")
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            if key in ("bounce_time", "blink_on", "blink_off"):
                kwargs[key] = float(value)
                continue
            line_cls = OutputLine if key in ("alert_led", "buzzer") else InputLine
            if value is None:
                kwargs[key] = None
            elif isinstance(value, bool) or not isinstance(value, int | Mapping):
                raise PanelConfigError(f"panel config: {key} must be a pin number or a mapping, got {value!r}")
            elif isinstance(value, int):
                kwargs[key] = line_cls(value)
            else:
                try:
                    kwargs[key] = line_cls(**value)
                except TypeError as exc:
                    raise PanelConfigError(f"panel config: {key}: {exc}") from exc
        return cls(**kwargs)




class GpioSection(Section):
    """``[gpio]``: ``enabled`` and ``[gpio.pins]`` (see :meth:`PanelConfig.from_mapping`)."""

    enabled: StrictBool = False
    pins: dict[str, Any] = Field(default_factory=dict)

    @field_validator("pins")
    @classmethod
    def _panel(cls, v: dict[str, Any]) -> dict[str, Any]:
        try:
            PanelConfig.from_mapping(v)
        except (PanelConfigError, TypeError, ValueError) as exc:
            raise ValueError(str(exc).removeprefix("panel config: ")) from None
        return v

    def panel_config(self) -> PanelConfig:
        return PanelConfig.from_mapping(self.pins)
