"""Issue 26, F5: heavy line corruption (a fifth of the frames mangled, drops, unplugs) still gave
false misdeals.  What leaked through: a snapshot reconciled after *several* gaps put every lost
arrival before every arrival seen after the first gap, flagged as ordered, when a lost frame may
have come after one of those; a ring replay with holes was trusted as complete; and the ring's
frames were ordered by when their copies arrived, not by their seq.  Now the ring orders by seq,
and arrivals whose order nothing tells go out with ``ordered=False`` (the pipeline asks the
dealer), never in a guessed order.

The host's logic is driven frame by frame here (the test plays the device, at chosen times), so
each interleaving that leaked is reproduced every time; no port is opened.
"""

from __future__ import annotations

from firmware_bridge import protocol as p
from firmware_bridge.link import BridgeLink, LinkConfig, PresenceChange

BOOT = 0xB0070
Y, Z = bytes.fromhex("04000000000001"), bytes.fromhex("04000000000002")
CONFIG = LinkConfig(reorder_window=0.05, ack_timeout=0.2, heartbeat_timeout=60.0)


def _beat(seq: int, uptime: int) -> p.Heartbeat:
    return p.Heartbeat(BOOT, uptime, uptime // 10, 0, seq=seq)


def _synced() -> tuple[BridgeLink, list[PresenceChange], float]:
    """A link in sync with the device at time t (hello, an empty inventory, heartbeat seq 2), the
    changes it sends, and t.  Never started: no port, no thread; the test plays the device's frames."""
    changes: list[PresenceChange] = []
    link = BridgeLink("loop://", CONFIG, on_change=changes.append)  # never started: no port, no thread
    t = 100.0
    link._handle(p.Hello((1, 1, 0), 16, BOOT, heartbeat_ms=50, seq=0), t)  # noqa: SLF001 - the device's frames
    link._handle(p.Inventory(BOOT, 0, 1, 1, (), seq=1), t)  # noqa: SLF001
    link._handle(_beat(2, 1000), t)  # noqa: SLF001
    return link, changes, t


def _snapshot_after_gap(link: BridgeLink, t: float, seq: int) -> None:
    """The gap is declared (REPLAY asked) at t + 0.08; no answer by t + 0.4: the ring is gone and a
    snapshot is asked for; it comes at t + 0.45 as inventory ``seq``: Y on antenna 1, Z on 4."""
    link._timers(t + 0.08)  # noqa: SLF001
    link._timers(t + 0.4)  # noqa: SLF001
    link._handle(p.Inventory(BOOT, 9, 1, 1, ((1, Y), (4, Z)), seq=seq), t + 0.45)  # noqa: SLF001


def test_an_arrival_seen_between_two_lost_frames_is_not_given_an_order() -> None:
    link, changes, t = _synced()
    # seq 3 (a heartbeat) is lost; seq 4: card Y lands on antenna 1; seq 5: card Z on antenna 4, lost.
    link._handle(p.TagArrive(1, Y, seq=4), t + 0.01)  # noqa: SLF001
    link._handle(_beat(6, 1100), t + 0.02)  # noqa: SLF001
    _snapshot_after_gap(link, t, 7)
    link._timers(t + 0.8)  # noqa: SLF001 - the ring could not order them either
    arrivals = [(c.antenna, c.ordered) for c in changes if c.arrived]
    # Y came before Z, but nothing the host received says so: neither goes out as ordered.
    assert sorted(arrivals) == [(1, False), (4, False)], arrivals
    assert link.counters["unordered_arrivals"] == 2


def test_a_single_lost_arrival_before_everything_seen_keeps_its_place() -> None:
    """The rule still holds where it is right: one lost frame, then the frames that revealed it."""
    link, changes, t = _synced()
    # seq 3: card Z lands (lost); seq 4: card Y lands.
    link._handle(p.TagArrive(1, Y, seq=4), t + 0.01)  # noqa: SLF001
    link._handle(_beat(5, 1100), t + 0.02)  # noqa: SLF001
    _snapshot_after_gap(link, t, 6)
    link._timers(t + 0.8)  # noqa: SLF001
    assert [(c.antenna, c.ordered) for c in changes if c.arrived] == [(4, True), (1, True)]


def test_the_rings_replay_orders_arrivals_by_their_seq_not_by_when_the_copies_came() -> None:
    """A ring replay is on the same noisy line: two of its frames swapped must not swap two cards."""
    link, changes, t = _synced()
    # seq 3: Y lands, seq 4: Z lands; both lost.
    link._handle(_beat(5, 1100), t + 0.02)  # noqa: SLF001
    _snapshot_after_gap(link, t, 6)
    # The ring replays them, and the line swaps the two copies.
    link._handle(p.TagArrive(4, Z, seq=4), t + 0.46)  # noqa: SLF001
    link._handle(p.TagArrive(1, Y, seq=3), t + 0.47)  # noqa: SLF001
    link._timers(t + 0.8)  # noqa: SLF001
    assert [(c.antenna, c.ordered) for c in changes if c.arrived] == [(1, True), (4, True)]


def test_a_card_seen_after_the_lost_ones_stays_after_those_the_ring_could_not_order() -> None:
    """The bench's hand 8: a snapshot found five arrivals, four lost and one (seat 4's fourth card)
    seen after the losses; the ring placed some of the four; the one seen went out *first*, in
    order, ahead of the four it followed: a false ``seat_dealt_out``."""
    link, changes, t = _synced()
    w = bytes.fromhex("04000000000003")
    # seq 3: Y lands on antenna 1 (lost); seq 4: W on antenna 2 (lost); seq 5: Z on antenna 4, seen.
    link._handle(p.TagArrive(4, Z, seq=5), t + 0.01)  # noqa: SLF001
    now = t + 0.07
    link._timers(now)  # noqa: SLF001 - REPLAY(3), never answered
    for _ in range(link.config.replay_tries):
        now += 0.35
        link._timers(now)  # noqa: SLF001
    link._handle(p.Inventory(BOOT, 9, 1, 1, ((1, Y), (2, w), (4, Z)), seq=6), now + 0.01)  # noqa: SLF001
    # The ring's replay (asked to order Y and W): W's copy comes, Y's is lost; then its ACK.
    assert link._order_replay is not None  # noqa: SLF001
    link._handle(p.TagArrive(2, w, seq=4), now + 0.02)  # noqa: SLF001
    link._handle(p.Ack(link._order_replay[0], p.MessageType.REPLAY, p.AckStatus.OK, seq=7), now + 0.03)  # noqa: SLF001
    arrivals = [(c.antenna, c.ordered) for c in changes if c.arrived]
    assert arrivals[-1] == (4, True), arrivals  # Z last: it came after both
    assert sorted(arrivals[:2]) == [(1, False), (2, False)], arrivals  # their order: the dealer's to say


def test_a_ring_replay_with_a_stall_in_it_orders_none_of_the_cards_after_the_stall() -> None:
    """The 200-hand run's hand 167 (a kill -9 while the machine was loaded): the restarted host asked
    the ring to order the cards it found; the board had stalled meanwhile, and the scan after the
    stall reported seat 1's card (antenna 1) before seat 6's (antenna 6), as its FAULT 7 said; the
    host took the ring's order and seat 1's card went out first: a false ``seat_dealt_out``."""
    link, changes, t = _synced()
    x, ah = bytes.fromhex("04000000000003"), bytes.fromhex("04000000000004")
    # The host missed seq 3-7 (it was down): seq 3 Ah on antenna 5; seq 4 FAULT 7; seq 5 Y on
    # antenna 1 and seq 6 X on antenna 6 (the scan after the stall, in antenna order); seq 7 a beat.
    link._handle(p.Inventory(BOOT, 0, 1, 1, ((5, ah), (1, Y), (6, x)), seq=8), t)  # noqa: SLF001
    assert link._order_replay is not None  # noqa: SLF001 - the ring is asked for their order
    for frame in (p.TagArrive(5, ah, seq=3), p.Fault(0xFF, p.FaultCode.SCAN_STALLED, 120, seq=4),
                  p.TagArrive(1, Y, seq=5), p.TagArrive(6, x, seq=6), _beat(7, 1200)):
        link._handle(frame, t + 0.01)  # noqa: SLF001
    link._handle(p.Ack(link._order_replay[0], p.MessageType.REPLAY, p.AckStatus.OK, seq=9), t + 0.02)  # noqa: SLF001
    arrivals = [(c.antenna, c.ordered) for c in changes if c.arrived]
    assert sorted(arrivals) == [(1, False), (5, False), (6, False)], arrivals  # the dealer is asked
