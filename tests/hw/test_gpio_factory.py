"""The pin factory chosen per board (hw/gpio/factory.py): a fake /proc/device-tree/model, gpiozero's
own MockFactory standing in for the factory that loads, and the clear error when none does."""

from __future__ import annotations

import pytest
from gpiozero.pins.mock import MockFactory

from controller.errors import PokerTableError
from hw.gpio.config import PanelConfig
from hw.gpio.factory import GPIOZERO_ORDER, PinFactoryError, choose_pin_factory, read_board
from hw.gpio.fake import press
from hw.gpio.panel import TablePanel

MODELS = {
    "Raspberry Pi 5 Model B Rev 1.0": "pi5",
    "Raspberry Pi 500 Rev 1.0": "pi5",
    "Raspberry Pi Compute Module 5 Rev 1.0": "pi5",
    "Raspberry Pi 4 Model B Rev 1.5": "pi4",
    "Raspberry Pi Compute Module 4 Rev 1.0": "pi4",
    "Raspberry Pi Zero 2 W Rev 1.0": "zero2w",
    "Raspberry Pi 3 Model B Plus Rev 1.3": "pi3",
    "Raspberry Pi Zero W Rev 1.1": "pi",
}


def model_file(tmp_path, model: str):
    path = tmp_path / "model"
    path.write_bytes(model.encode() + b"\0")  # the device tree's string ends in NUL
    return path


class Loader:
    """gpiozero's entry-point loader as the tests see it: the names asked for, in order; the
    factories in ``works`` load as gpiozero's MockFactory, the others fail like a missing library."""

    def __init__(self, *works: str) -> None:
        self.works = set(works)
        self.asked: list[str] = []

    def __call__(self, name: str):
        self.asked.append(name)
        if name in self.works:
            return MockFactory
        raise ImportError(f"No module named {name!r}")


@pytest.mark.parametrize("model,family", MODELS.items())
def test_board_family_from_the_device_tree(tmp_path, model, family):
    board = read_board(model_file(tmp_path, model))
    assert (board.model, board.family) == (model, family)


def test_not_a_pi(tmp_path):
    assert read_board(tmp_path / "missing").family is None
    assert read_board(model_file(tmp_path, "QEMU Virtual Machine")).family is None


def test_pi5_takes_lgpio_and_a_panel_runs_on_it(tmp_path):
    load = Loader("lgpio")
    factory = choose_pin_factory(model_file(tmp_path, "Raspberry Pi 5 Model B Rev 1.0"), {}, load)
    assert load.asked == ["lgpio"] and isinstance(factory, MockFactory)
    signals = []
    with TablePanel(PanelConfig(), signals.append, pin_factory=factory) as panel:
        press(panel, "new_hand")
    assert [s.kind for s in signals] == ["new_hand"]
    factory.reset()


def test_pi5_without_lgpio_is_a_clear_error_and_tries_nothing_else(tmp_path):
    load = Loader("rpigpio", "pigpio", "native")  # they would "load", but cannot drive the Pi 5's RP1
    with pytest.raises(PinFactoryError) as err:
        choose_pin_factory(model_file(tmp_path, "Raspberry Pi 5 Model B Rev 1.0"), {}, load)
    assert load.asked == ["lgpio"]
    msg = str(err.value)
    assert "Raspberry Pi 5 Model B" in msg and "lgpio" in msg and "pip install lgpio" in msg
    assert isinstance(err.value, PokerTableError)


@pytest.mark.parametrize("model", ["Raspberry Pi 4 Model B Rev 1.5", "Raspberry Pi Zero 2 W Rev 1.0"])
def test_pi4_and_zero2w_follow_gpiozeros_order(tmp_path, model):
    load = Loader("pigpio")
    factory = choose_pin_factory(model_file(tmp_path, model), {}, load)
    assert isinstance(factory, MockFactory)
    assert load.asked == ["lgpio", "rpigpio", "pigpio"]
    assert GPIOZERO_ORDER[:3] == ("lgpio", "rpigpio", "pigpio")
    factory.reset()


def test_no_factory_on_a_pi4_names_each_failure(tmp_path):
    with pytest.raises(PinFactoryError) as err:
        choose_pin_factory(model_file(tmp_path, "Raspberry Pi 4 Model B Rev 1.5"), {}, Loader())
    msg = str(err.value)
    assert msg.startswith("GPIO: no pin factory works on Raspberry Pi 4 Model B Rev 1.5")
    assert all(f"  {name}: ImportError" in msg for name in GPIOZERO_ORDER)


def test_not_a_pi_says_to_turn_the_panel_off(tmp_path):
    with pytest.raises(PinFactoryError, match=r"\[gpio\] enabled = false"):
        choose_pin_factory(tmp_path / "missing", {}, Loader())


def test_gpiozero_pin_factory_wins_through_gpiozeros_own_entry_points(tmp_path):
    # The real loader: gpiozero's registered "mock" factory, whatever the board.
    factory = choose_pin_factory(model_file(tmp_path, "Raspberry Pi 5 Model B Rev 1.0"),
                                 {"GPIOZERO_PIN_FACTORY": "mock"})
    assert isinstance(factory, MockFactory)
    factory.reset()
    with pytest.raises(PinFactoryError, match="GPIOZERO_PIN_FACTORY=nosuch"):
        choose_pin_factory(tmp_path / "missing", {"GPIOZERO_PIN_FACTORY": "nosuch"})


def test_the_daemons_gpio_source_takes_the_chosen_factory(monkeypatch):
    """The [gpio] source with no stand-in backend builds the real panel on choose_pin_factory's pick."""
    import threading

    from controller.rules.decks import DeckRegistry
    from controller.rules.events import NewHand
    from controller.sources import SourceContext
    from hw.gpio.config import GpioSection
    from hw.gpio.source import PanelSource

    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    posted = []
    ctx = SourceContext(config=None, registry=DeckRegistry([]), post=lambda e, s: posted.append((e, s)),
                        apply_now=lambda e, s: None, owner_lock=threading.RLock(), engine=lambda: None,
                        stopping=threading.Event())
    src = PanelSource(ctx, GpioSection(enabled=True))
    src.start()
    factory = src.panel.device("new_hand").pin_factory
    try:
        assert isinstance(factory, MockFactory)
        press(src.panel, "new_hand")
        assert posted == [(NewHand(source="button"), "gpio")]
    finally:
        src.stop()
        factory.reset()


def test_tablectl_run_without_a_usable_factory_says_why_and_exits_2(tmp_path):
    """This machine has no Pi GPIO header (CI's x86 host, or the arm64 root filesystem on it)."""
    import os
    import subprocess
    import sys

    if os.path.exists("/proc/device-tree/model") and b"Raspberry Pi" in open("/proc/device-tree/model", "rb").read():
        pytest.fail("this test expects a machine without a Raspberry Pi's GPIO header")
    (tmp_path / "decks.json").write_text('{"version": 1, "decks": []}')
    (tmp_path / "t.toml").write_text(
        '[table]\nid = "t1"\nsize = 6\ngame = "holdem"\n[stakes]\nsmall_blind = 1\nbig_blind = 2\n'
        f'[mqtt]\nurl = "mqtt://127.0.0.1:9"\n[journal]\npath = "{tmp_path / "j.sqlite"}"\n'
        '[gpio]\nenabled = true\n[web]\nenabled = false\n')
    env = {k: v for k, v in os.environ.items() if k != "GPIOZERO_PIN_FACTORY"}
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "run", "--config", str(tmp_path / "t.toml"),
                           "--registry", str(tmp_path / "decks.json")], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 2, proc.stderr
    assert "cannot start: GPIO:" in proc.stderr and "[gpio] enabled = false" in proc.stderr
    assert "lgpio:" in proc.stderr and "Traceback" not in proc.stderr
