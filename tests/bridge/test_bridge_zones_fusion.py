"""Zones (debounce) and fusion (engine events), with an injected clock."""

from __future__ import annotations

import pytest

from controller.geometry import Slot, Zone, ZoneError, ZoneMap
from controller.rules.cards import Card
from controller.rules.decks import Deck, DeckRegistry
from controller.rules.events import BoardCards, Burn, Deal, Muck, Stub
from firmware_bridge.fusion import Fusion, RfidPipeline, UnknownTag
from firmware_bridge.link import PresenceChange
from firmware_bridge.zones import ZoneChange, ZoneTracker
from tests.fakes import ManualClock as Clock

ZONES = ZoneMap.standard(seats=3)  # 0-5 seats 1..3, 6-10 board, 11 burn, 12 muck, 13 shoe
BOARD, BURN, MUCK, SHOE = 6, 11, 12, 13


def pc(antenna: int, uid: str, arrived: bool = True) -> PresenceChange:
    return PresenceChange(antenna, uid, arrived, 0.0)


def names(changes: list[ZoneChange]) -> list[tuple[str, str, bool]]:
    return [(c.uid, c.zone.name, c.entered) for c in changes]


def test_zone_map_parsing_and_standard_layout() -> None:
    assert ZONES.slot(0) == Slot(Zone("seat", 1), 0) and ZONES.slot(5) == Slot(Zone("seat", 3), 1)
    assert ZONES.slot(BOARD + 2) == Slot(Zone("board"), 2) and ZONES.slot(SHOE).zone.name == "shoe"
    assert ZoneMap.from_dict(ZONES.to_dict()).antennas == ZONES.antennas
    assert Slot.parse("seat:4/1") == Slot(Zone("seat", 4), 1)
    for bad in ("seat", "seat:0", "table", "burn:2"):
        with pytest.raises(ZoneError):
            Zone.parse(bad)
    with pytest.raises(ZoneError):
        ZoneMap.from_dict({"0": "burn", "1": "burn"})


def test_enter_after_debounce_and_flicker_is_nothing() -> None:
    clock = Clock()
    zt = ZoneTracker(ZONES, debounce=0.2, clock=clock)
    assert zt.feed(pc(0, "AA")) == []
    clock.advance(0.2)
    assert names(zt.poll()) == [("AA", "seat:1", True)]
    assert zt.feed(pc(0, "AA", False)) == []
    clock.advance(0.1)
    assert zt.feed(pc(0, "AA")) == []  # back within the window
    clock.advance(0.5)
    assert zt.poll() == [] and zt.where("AA") == Zone("seat", 1)


def test_slide_across_antennas_is_one_move() -> None:
    clock = Clock()
    zt = ZoneTracker(ZONES, debounce=0.2, clock=clock)
    zt.feed(pc(BOARD, "AA"))
    clock.advance(0.3)
    zt.poll()
    # slid from board slot 0 over slot 1 (same zone): nothing
    zt.feed(pc(BOARD + 1, "AA"))
    zt.feed(pc(BOARD, "AA", False))
    clock.advance(0.3)
    assert zt.poll() == []
    # then pushed to the muck, seen by both for a moment
    zt.feed(pc(MUCK, "AA"))
    clock.advance(0.05)
    zt.feed(pc(BOARD + 1, "AA", False))
    clock.advance(0.3)
    assert names(zt.poll()) == [("AA", "board", False), ("AA", "muck", True)]


def test_pitched_card_skimming_another_seat_is_ignored() -> None:
    clock = Clock()
    zt = ZoneTracker(ZONES, debounce=0.2, clock=clock)
    zt.feed(pc(2, "AA"))  # over seat 2 for 50 ms
    clock.advance(0.05)
    zt.feed(pc(2, "AA", False))
    zt.feed(pc(4, "AA"))
    clock.advance(0.25)
    assert names(zt.poll()) == [("AA", "seat:3", True)]


def test_straddling_two_zones_waits() -> None:
    clock = Clock()
    zt = ZoneTracker(ZONES, debounce=0.1, clock=clock)
    zt.feed(pc(0, "AA"))
    zt.feed(pc(2, "AA"))
    clock.advance(1)
    assert zt.poll() == [] and zt.straddling() == {"AA": {Zone("seat", 1), Zone("seat", 2)}}
    zt.feed(pc(0, "AA", False))
    clock.advance(0.1)
    assert names(zt.poll()) == [("AA", "seat:2", True)]


def test_leaving_the_table_and_unmapped_antennas() -> None:
    clock = Clock()
    zt = ZoneTracker(ZONES, debounce=0.0, clock=clock)
    assert names(zt.feed(pc(SHOE, "AA"))) == [("AA", "shoe", True)]
    assert names(zt.feed(pc(SHOE, "AA", False))) == [("AA", "shoe", False)]
    assert zt.feed(pc(99, "BB")) == [] and zt.unmapped == 1


# -- fusion -------------------------------------------------------------------------------
def registry() -> DeckRegistry:
    a, b = Deck("A"), Deck("B")
    for i, face in enumerate(["Ah", "Kd", "7c", "2s", "Ts", "9h", "3d"]):
        a.add(f"04{i:02X}", Card.parse(face))
    b.add("0B01", Card.parse("Qs"))
    return DeckRegistry([a, b])


def zc(uid: str, zone: str, entered: bool = True) -> ZoneChange:
    return ZoneChange(uid, Zone.parse(zone), entered, 0, 0.0)


def test_fusion_maps_zones_to_engine_events() -> None:
    clock = Clock()
    f = Fusion(registry(), board_window=0.5, clock=clock, board_streets=())  # the window alone
    assert f.feed(zc("0400", "seat:2")) == [Deal(seat=2, card=Card.parse("Ah"), face=None, source="rfid")]
    assert f.feed(zc("0400", "seat:2", entered=False)) == []
    assert f.feed(zc("0401", "burn")) == [Burn(Card.parse("Kd"), source="rfid")]
    assert f.feed(zc("0402", "board")) == []
    clock.advance(0.3)
    assert f.feed(zc("0403", "board")) == []
    clock.advance(0.3)
    assert f.feed(zc("0404", "board")) == []  # sliding window: each card within 0.5 s of the last
    clock.advance(0.49)
    assert f.poll() == []
    clock.advance(0.01)
    assert f.poll() == [BoardCards(tuple(Card.parse(c) for c in ("7c", "2s", "Ts")), source="rfid")]
    assert f.feed(zc("0405", "muck")) == [Muck(Card.parse("9h"), source="rfid")]


def test_a_complete_flop_goes_at_once_and_the_window_waits_only_for_a_short_one() -> None:
    clock = Clock()
    f = Fusion(registry(), board_window=1.0, clock=clock)
    assert f.feed(zc("0402", "board")) == []
    assert f.feed(zc("0403", "board")) == []
    flop = BoardCards(tuple(Card.parse(c) for c in ("7c", "2s", "Ts")), source="rfid")
    assert f.feed(zc("0404", "board")) == [flop]  # the third card: no window to wait out
    assert f.feed(zc("0405", "board")) == [BoardCards((Card.parse("9h"),), source="rfid")]  # the turn
    f.new_hand()
    assert f.feed(zc("0402", "board")) == [] and f.feed(zc("0403", "board")) == []
    clock.advance(1.0)
    assert f.poll() == [BoardCards((Card.parse("7c"), Card.parse("2s")), source="rfid")]  # a short flop


def test_an_arrival_commits_at_once_when_the_device_confirms_arrivals() -> None:
    clock = Clock()
    t = ZoneTracker(ZoneMap.standard(seats=3), debounce=0.25, clock=clock, arrive_debounce=0.0)
    assert [(c.zone.name, c.entered) for c in t.feed(pc(0, "AA"))] == [("seat:1", True)]
    assert t.feed(pc(0, "AA", arrived=False)) == []  # leaves still wait out the window
    clock.advance(0.25)
    assert [(c.zone.name, c.entered) for c in t.poll()] == [("seat:1", False)]


def test_any_other_event_closes_the_board_group_first() -> None:
    f = Fusion(registry(), board_window=5, clock=Clock())
    f.feed(zc("0402", "board"))
    f.feed(zc("0403", "board"))
    out = f.feed(zc("0401", "burn"))
    flop = BoardCards((Card.parse("7c"), Card.parse("2s")), source="rfid")
    assert out == [flop, Burn(Card.parse("Kd"), source="rfid")]


def test_unknown_and_foreign_tags() -> None:
    f = Fusion(registry(), clock=Clock())
    (notice,) = f.feed(zc("ab:cd:ef", "seat:1"))
    assert notice == UnknownTag(Zone("seat", 1), "ABCDEF", notice.t)
    (deal,) = f.feed(zc("0B01", "seat:1"))
    assert deal.card == Card("Q", "s", "B")  # the engine sees the foreign back and voids the hand


def test_reentry_is_suppressed_until_next_hand_and_stub_groups() -> None:
    clock = Clock()
    f = Fusion(registry(), board_window=0.5, clock=clock)
    assert len(f.feed(zc("0400", "seat:1"))) == 1
    assert f.feed(zc("0400", "seat:1")) == [] and f.suppressed == 1  # player lifted and replaced it
    f.feed(zc("0400", "shoe"))
    f.feed(zc("0401", "shoe"))
    clock.advance(1)
    assert f.poll() == [Stub((Card.parse("Ah"), Card.parse("Kd")), source="rfid")]
    f.new_hand()
    assert len(f.feed(zc("0400", "shoe"))) == 0 and f.flush() == [Stub((Card.parse("Ah"),), source="rfid")]


def test_camera_hook_and_mixed_groups() -> None:
    clock = Clock()
    f = Fusion(registry(), board_window=0.5, clock=clock)
    five = Card.parse("5c")
    assert f.camera_identified("seat:3", five) == [Deal(seat=3, card=five, source="camera")]
    f.feed(zc("0402", "board"))
    f.camera_identified(Zone("board"), Card.parse("Jd"))
    clock.advance(0.5)
    assert f.poll() == [BoardCards((Card.parse("7c"), Card.parse("Jd")), source="camera")]


def test_pipeline_end_to_end_with_debounce() -> None:
    clock = Clock()
    out: list = []
    pipe = RfidPipeline(ZoneTracker(ZONES, 0.1, clock), Fusion(registry(), 0.5, clock), out.append)
    for uid, antenna in (("0400", 0), ("0401", 2), ("0402", BURN)):
        pipe.feed(pc(antenna, uid))
    for i, uid in enumerate(("0403", "0404", "0405")):
        pipe.feed(pc(BOARD + i, uid))
    clock.advance(0.1)
    pipe.poll()
    clock.advance(0.5)
    pipe.poll()
    assert out == [
        Deal(seat=1, card=Card.parse("Ah"), source="rfid"),
        Deal(seat=2, card=Card.parse("Kd"), source="rfid"),
        Burn(Card.parse("7c"), source="rfid"),
        BoardCards(tuple(Card.parse(c) for c in ("2s", "Ts", "9h")), source="rfid"),
    ]


def test_a_card_slid_to_another_seat_is_no_new_deal() -> None:
    """The same tag arriving at another seat did not come off the deck: no second Deal, which the
    engine would read as a duplicate card and void the hand."""
    f = Fusion(registry(), clock=Clock())
    assert f.feed(zc("0400", "seat:2")) == [Deal(seat=2, card=Card.parse("Ah"), face=None, source="rfid")]
    assert f.feed(zc("0400", "seat:3")) == []
    assert f.moved == 1
    assert f.feed(zc("0400", "muck")) == [Muck(Card.parse("Ah"), source="rfid")]  # folded into the muck
    f.new_hand()
    assert f.feed(zc("0400", "seat:3")) == [Deal(seat=3, card=Card.parse("Ah"), face=None, source="rfid")]


def test_expected_antennas_is_a_hint_even_past_the_seat_slots() -> None:
    """A draw game's replacements can give a seat more cards than it has slots: the hint then
    leaves the seat out instead of raising (it once failed the pipeline's poll on every tick)."""
    from types import SimpleNamespace

    from controller.geometry import MAX_SLOTS

    zone_map = ZoneMap.standard(seats=2, hole_slots=MAX_SLOTS["seat"])
    pipe = RfidPipeline(ZoneTracker(zone_map), Fusion(DeckRegistry([])), lambda item: None)
    lying = {1: MAX_SLOTS["seat"] + 1}
    hand = SimpleNamespace(over=False, next_seat=1, lying=lambda seat: lying[seat], phase="bet", board_dealt=())
    engine = SimpleNamespace(over=False, view=lambda: hand)
    assert pipe.expected_antennas(engine) == ()
    lying[1] = 1
    assert pipe.expected_antennas(engine) == (zone_map.antenna_of(Slot(Zone("seat", 1), 1)),)
