"""The emulated chip as a serial device: its USB CDC line on a pty the daemon opens like /dev/ttyACM0.

The chip runs in its own process (spawned: no GIL shared with the daemon) as fast as rp2040js
goes, which is slower than real time (README: 0.09-0.27 chip seconds per wall second), so a card's
path is timed in two parts that are each exact: from the card landing to the frame's last byte
leaving the board's USB, in the chip's own time; from those bytes reaching the pty to whatever the
host does with them, in wall time.  Cards are placed and lifted at the chip time the command
arrives (checked every 1 ms USB frame).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from typing import Any


def _main(conn: Any, link_path: str, kw: dict[str, Any], own_session: bool = True) -> None:
    # A session of its own, so a scheduling group of its own where Linux groups tasks by session
    # (autogroup, the default on desktop and many server kernels): the emulator (one core, flat
    # out) then no longer spends the CPU share of the daemon, the broker and the subscriber it is
    # timed against.  The board is a separate chip on a real table; sharing that share, the
    # host's part of a card waited behind the emulator (pty -> link p99 0.3-1.7 s at load 20-36).
    # (Measured here: in a group of its own the emulator got ~0.55x the CPU it got in the bench's,
    # so a long run that wants hands rather than the host's latency passes own_session=False.)
    if own_session:
        try:
            os.setsid()
        except OSError:
            pass
    from firmware_bridge.chip.harness import Chip
    from firmware_bridge.emulator import PtyTransport
    from firmware_bridge.sim.rc522 import Tag

    pty = PtyTransport(link_path)
    pty.open()
    moves: dict[int, float] = {}  # key -> chip us
    wake = [float("inf")]  # chip us at which a "sleep" answers
    writes: list[tuple[float, float, bytes]] = []  # (chip us, wall monotonic, bytes)
    chip: Chip

    def on_usb(t: float, data: bytes) -> None:
        pty.write(data)
        writes.append((t, time.monotonic(), bytes(data)))

    def on_tick(t: float) -> None:
        data = pty.read()
        if data:
            chip.host_send(data)
        if t >= wake[0]:
            wake[0] = float("inf")
            conn.send(("woke", t))
        while conn.poll():
            cmd = conn.recv()
            if cmd[0] == "place":
                chip.table.place(cmd[2], Tag(bytes.fromhex(cmd[3]), powerup_us=cmd[4]))
                moves[cmd[1]] = t
            elif cmd[0] == "remove":
                chip.table.remove(cmd[2], bytes.fromhex(cmd[3]))
                moves[cmd[1]] = t
            elif cmd[0] == "sleep":
                wake[0] = t + cmd[1]
            elif cmd[0] == "times":
                conn.send((dict(moves), list(writes), t, chip.elapsed(), list(chip.scratch)))
            elif cmd[0] == "stop":
                chip.stop()

    chip = Chip(on_usb=on_usb, on_tick=on_tick, **kw)
    conn.send("ready")
    try:
        chip.run(float("inf"))
    finally:
        pty.close()
        conn.send("bye")


class ChipProcess:
    """The chip on a pty at ``link_path``; keyword arguments go to :class:`Chip`.  ``own_session``:
    the emulator in a session (a scheduling group) of its own, see ``_main``."""

    def __init__(self, link_path: str, own_session: bool = True, **kw: Any) -> None:
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_main, args=(child, link_path, kw, own_session), daemon=True)
        self.proc.start()
        if not self.conn.poll(30) or self.conn.recv() != "ready":
            raise RuntimeError("the chip's process did not start")
        self.t0 = time.monotonic()

    def place(self, key: int, antenna: int, uid: str, powerup_us: int = 1500) -> None:
        self.conn.send(("place", key, antenna, uid, powerup_us))

    def remove(self, key: int, antenna: int, uid: str) -> None:
        self.conn.send(("remove", key, antenna, uid))

    def sleep(self, chip_seconds: float, timeout: float = 600.0) -> float:
        """Wait until the chip's own clock has advanced ``chip_seconds``; returns the chip's time
        (us).  A dealer paced by the chip: the cards land at the chip's pace, however slow the
        emulator runs."""
        self.conn.send(("sleep", chip_seconds * 1e6))
        if not self.conn.poll(timeout):
            raise RuntimeError("the chip's process does not answer")
        reply = self.conn.recv()
        if reply[0] != "woke":
            raise RuntimeError(f"the chip's process answered {reply!r}")
        return float(reply[1])

    def times(self) -> tuple[dict[int, float], list[tuple[float, float, bytes]], float, float, list[int]]:
        """(chip us of every move by key, every USB write as (chip us, wall, bytes), chip now,
        wall seconds the chip has run, the probe's SCRATCH4..7)."""
        self.conn.send(("times",))
        if not self.conn.poll(60):
            raise RuntimeError("the chip's process does not answer")
        return self.conn.recv()

    def stop(self) -> None:
        try:
            self.conn.send(("stop",))
            self.conn.poll(10)
        except (BrokenPipeError, OSError):
            pass
        finally:
            self.proc.join(10)
            if self.proc.is_alive():
                self.proc.kill()
                self.proc.join(5)
