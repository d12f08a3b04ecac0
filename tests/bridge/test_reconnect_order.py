"""Issue 17 item 1: cards that arrive while the host is cut off are applied in the order they were
dealt (the device replays the frames the host missed), never in antenna order; when the order is
truly gone (the device's ring no longer holds it), the pipeline says so instead of guessing.

Wiring is seat-major (seat 1 = antennas 0-1, seat 2 = 2-3, seat 3 = 4-5, ...): dealing seat 3's
first card and then seat 1's second card makes antenna order the wrong order."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

from controller.rules.cards import Card
from controller.rules.decks import DeckRegistry
from controller.rules.events import Deal
from firmware_bridge.emulator import Emulator
from firmware_bridge.fusion import Fusion, OrderUnknown, RfidPipeline
from firmware_bridge.link import BridgeLink, PresenceChange
from firmware_bridge.table_sim import FAST_LINK
from firmware_bridge.zones import ZoneMap, ZoneTracker
from tests.bridge.fusion_util import deck_of
from tests.conftest import poll

SEAT3_FIRST = (4, "04000001")  # seat 3, slot 0
SEAT1_SECOND = (1, "04000002")  # seat 1, slot 1
CARDS = {"Ah": SEAT3_FIRST[1], "Kd": SEAT1_SECOND[1], "2c": "04000003"}
LINK = replace(FAST_LINK, reopen_backoff_min=0.05, reopen_backoff_max=0.1)


def wait_for(pred, timeout: float = 8.0) -> bool:
    return poll(pred, timeout, step=0.01)


class Rig:
    """Emulator -> link -> zones -> fusion -> a list of engine events / notices."""

    def __init__(self, tmp_path, heartbeat_ms: int = 50) -> None:
        self.out: list = []
        self.changes: list[PresenceChange] = []
        self.lock = threading.Lock()
        zones = ZoneTracker(ZoneMap.standard(seats=4), arrive_debounce=0.0)
        self.pipeline = RfidPipeline(zones, Fusion(DeckRegistry([deck_of(CARDS)])), self.out.append)
        self.path = str(tmp_path / "ttyEMU")
        self.emu = Emulator(12, link_path=self.path, heartbeat_ms=heartbeat_ms).start()
        self.link = BridgeLink(self.path, LINK, on_change=self._change).start()
        assert self.link.wait_synced(5)

    def _change(self, change: PresenceChange) -> None:
        self.changes.append(change)
        self.pipeline.feed(change)

    def deal_while_unplugged(self, unplug: float) -> None:
        self.emu.place(0, "04000003")  # seat 1's first card, seen live
        assert wait_for(lambda: len(self.changes) == 1)
        self.emu.unplug(unplug)
        time.sleep(0.1)
        self.emu.place(*SEAT3_FIRST)
        time.sleep(0.1)
        self.emu.place(*SEAT1_SECOND)

    def settle(self) -> None:
        assert wait_for(lambda: len(self.changes) >= 3, 10)
        time.sleep(0.1)
        self.pipeline.poll()

    def close(self) -> None:
        self.link.stop()
        self.emu.stop()


def test_cards_dealt_during_an_unplug_keep_their_order(tmp_path) -> None:
    rig = Rig(tmp_path)
    try:
        rig.deal_while_unplugged(0.8)
        rig.settle()
        assert [(c.antenna, c.uid) for c in rig.changes[1:]] == [SEAT3_FIRST, SEAT1_SECOND]
        assert all(c.ordered for c in rig.changes)
        deals = [(e.seat, e.card.label()) for e in rig.out if isinstance(e, Deal)]
        assert deals == [(1, "2c"), (3, "Ah"), (1, "Kd")]
        assert rig.link.health().counters.get("replay_requests", 0) >= 1
    finally:
        rig.close()


def test_when_the_order_is_gone_the_dealer_is_asked_not_a_guess_applied(tmp_path) -> None:
    # Heartbeats every 5 ms fill the device's 128-frame ring long before the host is back.
    rig = Rig(tmp_path, heartbeat_ms=5)
    try:
        rig.deal_while_unplugged(1.5)
        rig.settle()
        late = rig.changes[1:]
        assert {(c.antenna, c.uid) for c in late} == {SEAT3_FIRST, SEAT1_SECOND}
        assert not any(c.ordered for c in late)
        deals = [(e.seat, e.card.label()) for e in rig.out if isinstance(e, Deal)]
        assert deals == [(1, "2c")]  # nothing applied in an invented order
        (notice,) = [e for e in rig.out if isinstance(e, OrderUnknown)]
        assert {(z.name, c.label()) for z, c in notice.cards} == {("seat:3", "Ah"), ("seat:1", "Kd")}
        assert rig.link.health().counters.get("replays_failed", 0) >= 1
    finally:
        rig.close()


def test_a_restarted_host_orders_the_cards_dealt_meanwhile_from_the_device_ring(tmp_path) -> None:
    rig = Rig(tmp_path)
    try:
        rig.emu.place(0, "04000003")
        assert wait_for(lambda: len(rig.changes) == 1)
        rig.link.stop()  # the daemon goes down; the dealer keeps pitching
        rig.emu.place(*SEAT3_FIRST)
        time.sleep(0.1)
        rig.emu.place(*SEAT1_SECOND)
        time.sleep(0.1)
        out: list = []
        pipeline = RfidPipeline(ZoneTracker(ZoneMap.standard(seats=4), arrive_debounce=0.0),
                                Fusion(DeckRegistry([deck_of(CARDS)])), out.append)
        pipeline.remember({Card.parse("2c"): "seat:1"})  # what the journal restores
        changes: list[PresenceChange] = []

        def on_change(change: PresenceChange) -> None:
            changes.append(change)
            pipeline.feed(change)

        with BridgeLink(rig.path, LINK, on_change=on_change) as link:
            assert link.wait_synced(5)
            assert wait_for(lambda: len(changes) >= 3)
            time.sleep(0.1)
            pipeline.poll()
            assert link.health().counters.get("order_replays", 0) == 1
        assert [(c.antenna, c.uid) for c in changes if c.uid != "04000003"] == [SEAT3_FIRST, SEAT1_SECOND]
        assert all(c.ordered for c in changes if c.uid != "04000003")
        assert [(e.seat, e.card.label()) for e in out if isinstance(e, Deal)] == [(3, "Ah"), (1, "Kd")]
    finally:
        rig.emu.stop()
