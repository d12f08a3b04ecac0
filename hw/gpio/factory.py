"""The pin factory for the board the daemon runs on, chosen once, with a clear error when none works.

gpiozero picks a factory by trying ``lgpio``, ``rpigpio``, ``pigpio`` and ``native`` in that order
(gpiozero 2.0's ``Device._default_pin_factory``) and, when all fail, raises a bare "Unable to load
any default pin factory!".  The panel must say why instead, and on a Raspberry Pi 5 only ``lgpio``
can work: its GPIO sits behind the RP1 chip, reached through ``/dev/gpiochip*``, which RPi.GPIO,
pigpio and gpiozero's native factory (all of which program the BCM2835-family registers through
``/dev/gpiomem``) do not drive.  On the Pi 4, 3 and Zero 2 W the order is gpiozero's own, lgpio
first (the character device the systemd unit allows; the others need ``/dev/gpiomem``, see
systemd/INSTALL.md).

The board is named by ``/proc/device-tree/model`` (e.g. ``Raspberry Pi 5 Model B Rev 1.0``).
``GPIOZERO_PIN_FACTORY`` still wins when set, as in gpiozero (``mock`` for a bench without a Pi).

``python -m hw.gpio.factory`` prints the board and the factory it gets, or the error (exit 1).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from controller.errors import PokerTableError

MODEL_PATH = Path("/proc/device-tree/model")

#: gpiozero 2.0's own order of preference (``Device._default_pin_factory``).
GPIOZERO_ORDER = ("lgpio", "rpigpio", "pigpio", "native")
#: The Pi 5's GPIO is on the RP1: only lgpio (the gpiochip character device) drives it.
PI5_ORDER = ("lgpio",)

#: What to install for each factory (pip name in the daemon's environment; the .deb ships lgpio).
INSTALL_HINT = {
    "lgpio": "pip install lgpio (the poker-table-controller package ships it)",
    "rpigpio": "pip install RPi.GPIO (needs /dev/gpiomem: DeviceAllow=/dev/gpiomem rw in the unit)",
    "pigpio": "pip install pigpio and run the pigpiod daemon",
    "native": "built into gpiozero (needs /dev/gpiomem)",
}


class PinFactoryError(PokerTableError, RuntimeError):
    """No gpiozero pin factory works on this machine; the message says what was tried and why."""


@dataclass(frozen=True, slots=True)
class Board:
    """The machine as its device tree names it; ``family`` is ``pi5``, ``pi4``, ``pi3``,
    ``zero2w``, ``pi`` (another Raspberry Pi) or ``None`` (not a Raspberry Pi)."""

    model: str | None
    family: str | None

    @property
    def preferences(self) -> tuple[str, ...]:
        """Pin factories to try, best first."""
        return PI5_ORDER if self.family == "pi5" else GPIOZERO_ORDER


def read_board(model_path: Path = MODEL_PATH) -> Board:
    """The board from the device tree's model string (NUL-terminated in /proc)."""
    try:
        model = model_path.read_bytes().rstrip(b"\0").decode("utf-8", "replace").strip()
    except OSError:
        return Board(None, None)
    if not model.startswith("Raspberry Pi"):
        return Board(model, None)
    rest = model.removeprefix("Raspberry Pi").strip()
    if rest.startswith("5") or rest.startswith("Compute Module 5"):
        family = "pi5"
    elif rest.startswith("4") or rest.startswith("Compute Module 4") or rest.startswith("400"):
        family = "pi4"
    elif rest.startswith("Zero 2"):
        family = "zero2w"
    elif rest.startswith("3") or rest.startswith("Compute Module 3"):
        family = "pi3"
    else:
        family = "pi"
    return Board(model, family)


def _load_entry_point(name: str) -> Callable[[], Any]:
    """gpiozero's factory class registered under ``name`` (its ``gpiozero_pin_factories`` entry points)."""
    for ep in entry_points(group="gpiozero_pin_factories"):
        if ep.name == name.lower():
            return ep.load()
    raise PinFactoryError(f"gpiozero has no pin factory named {name!r}")


def choose_pin_factory(
    model_path: Path = MODEL_PATH,
    environ: Mapping[str, str] = os.environ,
    load: Callable[[str], Callable[[], Any]] = _load_entry_point,
) -> Any:
    """A working gpiozero pin factory for this board, or :class:`PinFactoryError` naming each one
    tried and why it failed, and what to install."""
    forced = environ.get("GPIOZERO_PIN_FACTORY")
    board = read_board(model_path)
    names = (forced,) if forced else board.preferences
    failures: list[str] = []
    for name in names:
        try:
            return load(name)()
        except Exception as exc:  # each factory fails its own way (ImportError, OSError, ...)
            failures.append(f"  {name}: {type(exc).__name__}: {exc} ({INSTALL_HINT.get(name, 'see gpiozero')})")
    where = board.model or f"not a Raspberry Pi ({model_path} is missing)"
    if forced:
        head = f"GPIO: the pin factory GPIOZERO_PIN_FACTORY={forced} does not work on {where}:"
    elif board.family is None:
        head = (f"GPIO: {where}: the dealer's panel needs a Raspberry Pi's GPIO header; set "
                "[gpio] enabled = false in table.toml on another machine.  Tried:")
    else:
        head = f"GPIO: no pin factory works on {where} (tried {', '.join(names)}):"
    raise PinFactoryError("\n".join([head, *failures]))


def main() -> int:
    """Print the board and the pin factory the daemon will use (for an installer's first check)."""
    board = read_board()
    print(f"board: {board.model or '(no device tree model)'} ({board.family or 'not a Raspberry Pi'}); "
          f"tries {', '.join(board.preferences)}")
    try:
        factory = choose_pin_factory()
    except PinFactoryError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"pin factory: {type(factory).__name__}")
    factory.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
