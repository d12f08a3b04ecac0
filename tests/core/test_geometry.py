"""One geometry for config, bridge, fusion, camera and engine: zones, slots, antennas, regions."""

from __future__ import annotations

import pytest

from controller.errors import PokerTableError
from controller.geometry import Region, Slot, Zone, ZoneError, ZoneMap, seat_of


def test_slots_parse_in_both_spellings_to_one_canonical_name() -> None:
    assert Slot.parse("seat:3/1") == Slot.parse("seat:3:1") == Slot(Zone("seat", 3), 1)
    assert Slot.parse("board/4") == Slot.parse("board:4") == Slot(Zone("board"), 4)
    assert Slot.parse("seat:3") == Slot(Zone("seat", 3), 0)
    assert Slot.parse("burn") == Slot.parse("burn/0") == Slot(Zone("burn"))
    assert [s.name for s in (Slot.parse("seat:3:1"), Slot.parse("board:4"), Slot.parse("muck"))] == [
        "seat:3/1", "board/4", "muck"]
    assert Slot.parse("seat:3/1").zone.name == "seat:3"


@pytest.mark.parametrize("bad", ["seat", "seat:x", "seat:1:2:3", "seat:1/9", "board/5", "muck:1", "hand", "seat:0",
                                 "seat:2/x", 5])
def test_bad_slots_are_clear_errors_under_the_root(bad: object) -> None:
    with pytest.raises(ZoneError) as info:
        Slot.parse(bad)  # type: ignore[arg-type]
    assert isinstance(info.value, PokerTableError) and isinstance(info.value, ValueError)
    assert str(info.value)


def test_standard_wiring_round_trips_and_refuses_a_slot_twice() -> None:
    zones = ZoneMap.standard(seats=3)
    assert zones.slot(0) == Slot(Zone("seat", 1), 0) and zones.slot(5) == Slot(Zone("seat", 3), 1)
    assert zones.slot(6) == Slot(Zone("board"), 0) and zones.slot(13) == Slot(Zone("shoe"))
    assert ZoneMap.from_dict(zones.to_dict()) == zones and zones.antenna_of(Slot(Zone("burn"))) == 11
    assert zones.seats() == {1, 2, 3}
    with pytest.raises(ZoneError, match="both"):
        ZoneMap.from_dict({"0": "burn", "1": "burn"})
    with pytest.raises(ZoneError, match="antenna map"):
        ZoneMap.from_dict({"x": "burn"})


def test_camera_regions_name_slots() -> None:
    r = Region.parse("board/2", [10, 20, 30, 40])
    assert r.slot == Slot(Zone("board"), 2) and r.box == (10, 20, 30, 40)
    for box in ([1, 2, 3], [0, 0, 0, 5], "1,2,3,4", [1.5, 2, 3, 4]):
        with pytest.raises(ZoneError):
            Region.parse("board/2", box)


def test_seat_of_any_zone_name() -> None:
    assert [seat_of(z) for z in ("seat:3", "board", "muck", "enroll", "seat:x", Zone("seat", 2))] == [
        3, None, None, None, None, 2]
