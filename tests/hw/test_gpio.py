"""TablePanel on gpiozero's mock pin backend: no hardware, no sleeps for the logic."""

from __future__ import annotations

import time

import pytest
from gpiozero.pins.mock import MockFactory

from hw.gpio.config import InputLine, OutputLine, PanelConfig, PanelSignal
from hw.gpio.fake import press, set_line
from hw.gpio.panel import TablePanel


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float = 1.0) -> None:
        self.now += seconds


@pytest.fixture
def factory():
    f = MockFactory()
    yield f
    f.reset()


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def rig(factory, clock):
    signals: list[PanelSignal] = []
    cfg = PanelConfig(blink_on=0.01, blink_off=0.01)
    panel = TablePanel(cfg, on_signal=signals.append, pin_factory=factory, clock=clock)
    yield panel, signals, factory, clock
    panel.close()


def kinds(signals):
    return [s.kind for s in signals]


DEFAULT = PanelConfig()


def led_on(factory, cfg=DEFAULT) -> bool:
    return factory.pin(cfg.alert_led.pin).state == int(cfg.alert_led.active_high)


def buzzer_on(factory, cfg=DEFAULT) -> bool:
    return factory.pin(cfg.buzzer.pin).state == int(cfg.buzzer.active_high)


def test_buttons_and_shuffler_lines_emit_signals(rig):
    panel, signals, factory, clock = rig
    cfg = panel.config
    # default wiring is active-low with pull-ups: drive the MockPin low to press
    factory.pin(cfg.new_hand.pin).drive_low()
    factory.pin(cfg.new_hand.pin).drive_high()
    for kind in ("shuffle_started", "deck_ready", "call_misdeal", "acknowledge"):
        clock.advance()
        press(panel, kind)
    assert kinds(signals) == ["new_hand", "shuffle_started", "deck_ready", "call_misdeal", "acknowledge"]
    assert [s.starts_hand for s in signals] == [True, False, True, False, False]
    assert signals[1].at == pytest.approx(1001.0)
    assert not led_on(factory) and not buzzer_on(factory)


def test_release_does_not_emit_and_holding_emits_once(rig):
    panel, signals, factory, clock = rig
    set_line(panel, "new_hand", True)
    clock.advance()
    set_line(panel, "new_hand", True)  # no edge: still held
    clock.advance()
    set_line(panel, "new_hand", False)
    assert kinds(signals) == ["new_hand"]


def test_bouncing_switch_is_one_press(rig):
    panel, signals, factory, clock = rig
    pin = factory.pin(panel.config.deck_ready.pin)
    # press: contact chatters for a few ms
    for _ in range(5):
        pin.drive_low()
        clock.advance(0.002)
        pin.drive_high()
        clock.advance(0.002)
    pin.drive_low()
    clock.advance(0.5)  # held
    # release: chatter again, the line briefly returns active
    for _ in range(4):
        pin.drive_high()
        clock.advance(0.003)
        pin.drive_low()
        clock.advance(0.003)
    pin.drive_high()
    assert kinds(signals) == ["deck_ready"]
    clock.advance(0.2)  # a real second press after the line settled
    pin.drive_low()
    assert kinds(signals) == ["deck_ready", "deck_ready"]


def test_bounce_time_is_configurable_and_handed_to_gpiozero(factory, clock):
    signals: list[PanelSignal] = []
    cfg = PanelConfig(bounce_time=0.0)
    panel = TablePanel(cfg, on_signal=signals.append, pin_factory=factory, clock=clock)
    try:
        assert panel.device("new_hand").pin.bounce is None
        press(panel, "new_hand")
        press(panel, "new_hand")
        assert kinds(signals) == ["new_hand", "new_hand"]
    finally:
        panel.close()
    panel = TablePanel(PanelConfig(bounce_time=0.02), pin_factory=factory, clock=clock)
    try:
        assert panel.device("new_hand").pin.bounce == pytest.approx(0.02)
    finally:
        panel.close()


def test_shuffler_fault_latches_and_refuses_hand_starts_until_acknowledged(rig):
    panel, signals, factory, clock = rig
    fault = factory.pin(panel.config.shuffler_fault.pin)
    fault.drive_low()  # fault asserted
    assert kinds(signals) == ["shuffler_fault"]
    assert panel.fault_latched
    assert led_on(factory) and buzzer_on(factory)

    clock.advance()
    press(panel, "deck_ready")
    clock.advance()
    press(panel, "new_hand")
    assert kinds(signals) == ["shuffler_fault"]  # refused, not emitted
    assert [s.kind for s in panel.refused] == ["deck_ready", "new_hand"]

    # software cannot hide the hard stop
    panel.clear()
    assert panel.fault_latched and led_on(factory) and buzzer_on(factory)

    # acknowledge while the shuffler still reports the fault: silence only
    clock.advance()
    press(panel, "acknowledge")
    assert panel.fault_latched and led_on(factory) and not buzzer_on(factory)
    clock.advance()
    press(panel, "new_hand")  # still refused, and the buzzer sounds again
    assert buzzer_on(factory) and len(panel.refused) == 3

    fault.drive_high()  # shuffler cleared
    clock.advance()
    press(panel, "acknowledge")
    assert not panel.fault_latched
    assert not led_on(factory) and not buzzer_on(factory)
    clock.advance()
    press(panel, "deck_ready")
    assert kinds(signals) == ["shuffler_fault", "acknowledge", "acknowledge", "deck_ready"]


def test_fault_line_active_at_startup_latches(factory, clock):
    signals: list[PanelSignal] = []
    # an active-high shuffler output with the board's own resistor, already asserted at boot
    cfg = PanelConfig(shuffler_fault=InputLine(13, active_high=True, internal_pull=False))
    factory.pin(13).drive_high()
    panel = TablePanel(cfg, on_signal=signals.append, pin_factory=factory, clock=clock)
    try:
        assert panel.fault_latched and kinds(signals) == ["shuffler_fault"]
        assert led_on(factory) and buzzer_on(factory)
    finally:
        panel.close()


def test_hand_start_with_fault_line_asserted_latches_fail_safe(rig):
    panel, signals, factory, clock = rig
    fault = factory.pin(panel.config.shuffler_fault.pin)
    fault.drive_low()
    clock.advance()
    fault.drive_high()
    press(panel, "acknowledge")
    assert not panel.fault_latched
    clock.advance(0.001)
    fault.drive_low()  # re-asserted 1 ms after clearing: taken for chatter, the edge is lost
    assert not panel.fault_latched and panel.fault_active
    clock.advance()
    press(panel, "new_hand")  # ... but no hand may start while the line is asserted
    assert panel.fault_latched
    assert kinds(signals) == ["shuffler_fault", "acknowledge", "shuffler_fault"]
    assert [s.kind for s in panel.refused] == ["new_hand"]
    assert led_on(factory) and buzzer_on(factory)


def test_alert_patterns(rig):
    panel, signals, factory, clock = rig
    led_pin = factory.pin(panel.config.alert_led.pin)

    panel.alert("misdeal")
    assert panel.outputs == ("steady", True)
    assert led_on(factory) and buzzer_on(factory)

    clock.advance()
    press(panel, "acknowledge")  # silences the buzzer, the LED stays until clear()
    assert panel.outputs == ("steady", False)
    assert led_on(factory) and not buzzer_on(factory)
    panel.clear()
    assert not led_on(factory) and panel.outputs == ("off", False)

    led_pin.clear_states()
    panel.alert("irregularity")
    assert panel.outputs == ("blink", False) and not buzzer_on(factory)
    deadline = time.monotonic() + 5
    while len(led_pin.states) < 4 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert [s.state for s in led_pin.states[:4]] == [False, True, False, True]
    panel.clear()
    assert not led_on(factory)

    for level in ("void", "fault"):
        panel.alert(level)
        assert led_on(factory) and buzzer_on(factory)
        panel.clear()
    with pytest.raises(ValueError):
        panel.alert("panic")


def test_active_high_outputs_and_inputs(factory, clock):
    cfg = PanelConfig(
        new_hand=InputLine(17, active_high=True),
        alert_led=OutputLine(23, active_high=False),
        buzzer=OutputLine(24, active_high=False),
    )
    signals: list[PanelSignal] = []
    panel = TablePanel(cfg, on_signal=signals.append, pin_factory=factory, clock=clock)
    try:
        assert factory.pin(23).state == 1 and factory.pin(24).state == 1  # off = high when active-low
        factory.pin(17).drive_high()
        assert kinds(signals) == ["new_hand"]
        panel.alert("void")
        assert factory.pin(23).state == 0 and factory.pin(24).state == 0
    finally:
        panel.close()


def test_config_from_mapping_and_validation():
    cfg = PanelConfig.from_mapping(
        {"deck_ready": 16, "new_hand": {"pin": 20, "active_high": True}, "buzzer": None, "bounce_time": 0.03}
    )
    assert cfg.deck_ready == InputLine(16)
    assert cfg.new_hand == InputLine(20, active_high=True)
    assert cfg.buzzer is None and cfg.bounce_time == 0.03
    with pytest.raises(ValueError, match="used by both"):
        PanelConfig(deck_ready=InputLine(17))
    with pytest.raises(ValueError, match="unknown keys"):
        PanelConfig.from_mapping({"dealer_button": 4})
    with pytest.raises(ValueError, match="acknowledge"):
        PanelConfig.from_mapping({"acknowledge": None})
    with pytest.raises(ValueError):
        PanelConfig.from_mapping({"new_hand": {"pin": 20, "colour": "red"}})


def test_unwired_lines_and_close(factory, clock):
    cfg = PanelConfig(shuffle_started=None, deck_ready=None, shuffler_fault=None, alert_led=None, buzzer=None)
    panel = TablePanel(cfg, pin_factory=factory, clock=clock)
    panel.alert("misdeal")  # no outputs wired: nothing to drive, no error
    with pytest.raises(KeyError):
        panel.device("deck_ready")
    panel.close()
    # pins are free again
    TablePanel(cfg, pin_factory=factory, clock=clock).close()
