"""Issue 26, F5: under heavy line corruption a REPLAY's own copies are lost too.  The host gave up
after one replay (its ACK came with the gap still open, or no ACK came) and took a snapshot, which
knows neither the order of the cards it finds nor a card that came and went in the gap: a card
pitched and lifted while its frames were lost was never reported, and several found at once went
to the dealer as "order unknown".  Now the host asks again from the first frame still missing
(a few times; a replay that filled part of the gap starts the count again) before a snapshot decides.

Driven frame by frame (the test plays the device), so each interleaving happens every time."""

from __future__ import annotations

from firmware_bridge import protocol as p
from firmware_bridge.link import BridgeLink
from tests.bridge.test_corruption_order import BOOT, Y, Z, _synced

ARRIVE_Y, LEAVE_Y, ARRIVE_Z = p.TagArrive(1, Y, seq=3), p.TagLeave(1, Y, seq=4), p.TagArrive(4, Z, seq=5)
BEAT = p.Heartbeat(BOOT, 1100, 110, 1, seq=6)  # one tag present: Z


def _ack(link: BridgeLink, seq: int) -> p.Ack:
    assert link._replay is not None  # noqa: SLF001 - the REPLAY the host sent
    return p.Ack(link._replay[2], p.MessageType.REPLAY, p.AckStatus.OK, seq=seq)  # noqa: SLF001


def test_a_card_that_came_and_went_in_a_gap_is_reported_when_the_replays_copy_is_lost_too() -> None:
    link, changes, t = _synced()
    # seq 3: Y lands; seq 4: Y lifted; seq 5: Z lands; all three lost.  Seq 6, a heartbeat, shows the gap.
    link._handle(BEAT, t + 0.01)  # noqa: SLF001
    link._timers(t + 0.07)  # noqa: SLF001 - REPLAY(3)
    assert link._replay is not None and link._replay[0] == 3  # noqa: SLF001
    # The replay: seq 3 and 5 come, seq 4 is lost again on the line; then its ACK (seq 7).
    link._handle(ARRIVE_Y, t + 0.08)  # noqa: SLF001
    link._handle(ARRIVE_Z, t + 0.081)  # noqa: SLF001
    link._handle(BEAT, t + 0.082)  # noqa: SLF001
    link._handle(_ack(link, 7), t + 0.083)  # noqa: SLF001
    # The host asks again from seq 4 (not a snapshot, which would find Z alone and never say Y left).
    assert link._replay is not None and link._replay[0] == 4  # noqa: SLF001
    assert link.counters["inventory_requests"] == 0 and link.counters["replay_retries"] == 1
    link._handle(LEAVE_Y, t + 0.09)  # noqa: SLF001
    link._handle(ARRIVE_Z, t + 0.091)  # noqa: SLF001
    link._handle(_ack(link, 8), t + 0.092)  # noqa: SLF001
    link._timers(t + 0.5)  # noqa: SLF001
    assert [(c.antenna, c.arrived, c.ordered) for c in changes] == [(1, True, True), (1, False, True),
                                                                     (4, True, True)]
    assert link.counters["inventory_requests"] == 0 and link.presence() == {4: frozenset({Z.hex().upper()})}


def test_replays_that_bring_nothing_end_in_a_snapshot() -> None:
    """A line that loses every copy: after ``replay_tries`` replays a snapshot decides, as before."""
    link, changes, t = _synced()
    link._handle(BEAT, t + 0.01)  # noqa: SLF001
    now = t + 0.07
    link._timers(now)  # noqa: SLF001
    for _ in range(link.config.replay_tries):
        now += 0.35  # no answer
        link._timers(now)  # noqa: SLF001
    assert link.counters["replay_requests"] == link.config.replay_tries
    assert link.counters["replays_failed"] == 1 and link.counters["inventory_requests"] == 1
    link._handle(p.Inventory(BOOT, 9, 1, 1, ((4, Z),), seq=7), now + 0.01)  # noqa: SLF001
    assert [(c.antenna, c.arrived) for c in changes] == [(4, True)]


def test_a_corruption_burst_loses_no_arrival_and_misorders_none() -> None:
    """The emulated board on a line that mangles a fifth of its frames and drops one in twenty (the
    fault bench's burst), while cards land every 60 ms: every card is reported once, and no two
    reported as ordered come in the wrong order (the host asks the dealer rather than guess), and the
    replays fill every gap (with enough tries that losing one frame's copy that often is no chance:
    before, the first replay that left a hole sent the host to a snapshot, 5-7 times a burst)."""
    import time

    from firmware_bridge.emulator import Emulator, FaultConfig
    from firmware_bridge.link import LinkConfig, PresenceChange

    changes: list[PresenceChange] = []
    with Emulator(28, faults=FaultConfig(seed=26, corrupt=0.2, drop=0.05), transport="tcp") as emu:
        link = BridgeLink(emu.url, LinkConfig(replay_tries=10), on_change=changes.append).start()
        try:
            assert link.wait_synced(10)
            placed = []
            for i in range(28):
                uid = bytes([4, 0, 0, 0, 0, 26, i])
                emu.place(i, uid)
                placed.append((i, uid.hex().upper()))
                time.sleep(0.06)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and len([c for c in changes if c.arrived]) < len(placed):
                time.sleep(0.05)
            time.sleep(0.5)
        finally:
            link.stop()
    assert emu.injector.counters["corrupted"] > 10, emu.injector.counters
    arrived = [(c.antenna, c.uid) for c in changes if c.arrived]
    assert sorted(arrived) == sorted(placed), (arrived, link.counters)  # each once, none lost
    ordered = [placed.index((c.antenna, c.uid)) for c in changes if c.arrived and c.ordered]
    assert ordered == sorted(ordered), (ordered, link.counters)
    assert link.counters["replay_requests"] > 0 and link.counters["replays_failed"] == 0, link.counters
