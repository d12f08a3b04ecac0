"""The model board in real time on a pty: the firmware, on its model readers, as a serial device.

CPython only (the bench's firmware process).  The virtual clock is held to the wall clock: when
the firmware gets ahead (it sleeps, or the model's radio time passes faster than CPython runs
it) the process sleeps; ``lag_us`` records how far it ever fell behind.  The USB line is a pty
(the host opens the slave path with pyserial, as it would ``/dev/ttyACM0``), emptied once per
1 ms USB frame; cards are placed and lifted by commands from the bench at the current virtual time.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from firmware_bridge.emulator import PtyTransport
from firmware_bridge.sim.board import Board


class RealtimeBoard(Board):
    """A :class:`Board` paced by the wall clock, its USB on a pty at ``link_path``."""

    def __init__(self, link_path: str, poll: Callable[[], None] | None = None, **kw) -> None:
        super().__init__(**kw)
        self.pty = PtyTransport(link_path)
        self.pty.open()
        self.poll = poll
        self.t0 = time.monotonic()
        self.lag_us = 0.0
        self.samples = 0
        self.late_samples = 0  # samples where the model ran more than 5 ms behind the wall clock
        self.late: list[list[float]] = []  # [from, to] wall-clock spans when it did
        self._next_io = 0.0

    def deliver(self, now: float, data: bytes) -> None:
        self.pty.write(data)

    def wall_of(self, virtual_us: float) -> float:
        """The monotonic time of a virtual instant."""
        return self.t0 + virtual_us / 1e6

    def _hook(self, now: float) -> None:
        if now < self._next_io:
            if self.wdt_timeout_us is not None and now - self.wdt_fed > self.wdt_timeout_us:
                super()._hook(now)
            return
        self._next_io = now + 250
        ahead = now / 1e6 - (time.monotonic() - self.t0)
        if ahead > 0.0002:
            time.sleep(ahead)
        elif ahead < 0:
            self.lag_us = max(self.lag_us, -ahead * 1e6)
        self.samples += 1
        if ahead < -0.005:
            self.late_samples += 1
            wall = time.monotonic()
            if self.late and wall - self.late[-1][1] < 0.01:
                self.late[-1][1] = wall
            else:
                self.late.append([wall, wall])
        super()._hook(now)
        data = self.pty.read()
        if data:
            self.rx.extend(data)
        if self.poll is not None:
            self.poll()
