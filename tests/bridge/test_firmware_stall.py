"""Issue 26, F4: a firmware stall while two cards land.  The stalled device's next scan finds
both and reports them in antenna order, which is not the order they landed in: 5 of 5 trials
gave them to the engine as ordered (2 false misdeals in 9 hands).  Now the link sees the stall
(a silence longer than a heartbeat period, confirmed by the device's own uptime in the next
heartbeat) and hands them on with ``ordered=False``; cards dealt at the usual pace, and a
single card after a stall, keep their order.  Emulated board on a real pty, pyserial."""

from __future__ import annotations

import time

from firmware_bridge.emulator import Emulator
from firmware_bridge.link import BridgeLink
from tests.bridge.test_bridge_link import FAST, Recorder, uid_of, wait_for


def test_cards_that_land_during_a_stall_are_flagged_unordered(tmp_path) -> None:
    rec = Recorder()
    with Emulator(16, link_path=str(tmp_path / "ttySTALL")) as emu, BridgeLink(emu.url, FAST, on_change=rec) as link:
        assert link.wait_synced(5)
        # The usual pace: in order, flagged ordered.
        emu.place(9, uid_of(1))
        assert rec.wait_count(1)
        time.sleep(0.15)
        emu.place(2, uid_of(2))
        assert rec.wait_count(2)
        # A stall: the dealer pitches to antenna 12, then 3; the device sees both in one scan.
        emu.silence(0.5)
        assert wait_for(lambda: emu.counters["silences"] == 1)  # the board has stopped
        emu.place(12, uid_of(3))
        time.sleep(0.1)
        emu.place(3, uid_of(4))
        assert rec.wait_count(4, timeout=5)
        # A single card after another stall: nothing to order it against.
        time.sleep(0.3)
        emu.silence(0.5)
        assert wait_for(lambda: emu.counters["silences"] == 2)
        emu.place(5, uid_of(5))
        assert rec.wait_count(5, timeout=5)
        assert wait_for(lambda: link.counters["stall_windows"] >= 2), dict(link.counters)
    got = [(c.antenna, c.ordered) for c in rec.changes]
    assert got[:2] == [(9, True), (2, True)], got
    assert sorted(got[2:4]) == [(3, False), (12, False)], got
    assert got[4] == (5, True), got


def test_a_stall_shorter_than_the_line_can_see_still_flags_the_cards_unordered(tmp_path) -> None:
    """Issue 26: the stall the link could not see.  The board's loop stops for less than a heartbeat
    period plus the margin (the emulator's thread starved by load: 0.12 s against 50 ms beats), so
    the line is never silent long enough to open a stall window, and two cards pitched meanwhile came
    in antenna order as ordered (the bench's false ``seat_dealt_out``).  The board now times the gap
    between two reads and says so (FAULT 7, scan stalled) before the first arrival after it."""
    rec = Recorder()
    with Emulator(16, link_path=str(tmp_path / "ttySHORT")) as emu, BridgeLink(emu.url, FAST, on_change=rec) as link:
        assert link.wait_synced(5)
        emu.silence(0.12)
        assert wait_for(lambda: emu.counters["silences"] == 1)
        emu.place(12, uid_of(1))  # pitched first, read second: antenna 3 comes first in the scan
        emu.place(3, uid_of(2))
        assert rec.wait_count(2, timeout=5)
        assert wait_for(lambda: link.counters["scan_stalls"] >= 1), dict(link.counters)
    got = [(c.antenna, c.ordered) for c in rec.changes]
    # Never antenna 3 before 12 as if that were the order; found by one scan, both are in doubt.
    assert got != [(3, True), (12, True)], got
    assert sorted(got) == [(3, False), (12, False)] or got == [(12, True), (3, True)], got
