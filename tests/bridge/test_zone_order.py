"""Cards reach the engine in the order they were moved, even when a tag moves between zones.

Configured as the daemon runs it (``RfidSource``): arrivals commit at once (the firmware confirms
them), leaves wait out the 0.25 s window; the firmware reports a tag's arrival on its new antenna
before its leave from the old one (it debounces leaves).  Found by ``tablectl bench faults``:
the first card of a hand was a card of the last hand (cleared from the table a moment before), it
reached the engine after the second card (``first_card_wrong_seat``, ``seat_dealt_out``); a fold
mucked just before the flop reached it after the burn and the first flop card and split the flop
(``premature_turn``, then a hand nobody could end).
"""

from __future__ import annotations

from controller.geometry import ZoneMap
from controller.rules.cards import Card
from controller.rules.events import BoardCards, Burn, Deal, Muck
from firmware_bridge.fusion import RfidPipeline
from firmware_bridge.link import PresenceChange
from firmware_bridge.zones import ZoneTracker
from tests.bridge.fusion_util import fusion_of
from tests.fakes import ManualClock as Clock

ZONES = ZoneMap.standard(seats=3)  # 0-5 seats 1..3 (two slots each), 6-10 board, 11 burn, 12 muck
SEAT1, SEAT2, SEAT3, BOARD, BURN, MUCK = 0, 2, 4, 6, 11, 12
FACES = ["Ah", "Kd", "7c", "2s", "Ts", "9h", "3d"]


def card(face: str) -> Card:
    return Card.parse(face)


def uid(face: str) -> str:
    return f"04{FACES.index(face):02X}"


def daemon_pipeline() -> tuple[RfidPipeline, list, Clock]:
    clock = Clock()
    out: list = []
    pipe = RfidPipeline(ZoneTracker(ZONES, debounce=0.25, clock=clock, arrive_debounce=0.0),
                        fusion_of({face: uid(face) for face in FACES}, clock, board_window=1.0), out.append)
    return pipe, out, clock


def arrive(pipe: RfidPipeline, antenna: int, face: str) -> None:
    pipe.feed(PresenceChange(antenna, uid(face), True, 0.0))


def leave(pipe: RfidPipeline, antenna: int, face: str) -> None:
    pipe.feed(PresenceChange(antenna, uid(face), False, 0.0))


def step(pipe: RfidPipeline, clock: Clock, dt: float) -> None:
    clock.t += dt
    pipe.poll()


def last_hand_in_the_muck(pipe: RfidPipeline, out: list, clock: Clock, faces: list[str]) -> None:
    """A hand whose cards ended in the muck (the scoop); the table cleared, the new hand started."""
    for face in faces:
        arrive(pipe, MUCK, face)
    step(pipe, clock, 0.5)
    pipe.new_hand()
    for face in faces:
        leave(pipe, MUCK, face)  # the dealer clears the table: the firmware reports the leaves
    step(pipe, clock, 0.05)
    pipe.new_hand()
    out.clear()


def test_the_last_hands_card_dealt_first_keeps_its_place_in_the_deal() -> None:
    pipe, out, clock = daemon_pipeline()
    last_hand_in_the_muck(pipe, out, clock, ["Ah", "Kd"])
    arrive(pipe, SEAT2, "Ah")  # in the muck last hand, its leave still inside the window
    step(pipe, clock, 0.08)
    arrive(pipe, SEAT3, "7c")  # a card the last hand never used
    step(pipe, clock, 0.08)
    assert out == [Deal(seat=2, card=card("Ah"), source="rfid"), Deal(seat=3, card=card("7c"), source="rfid")]


def test_a_card_dealt_before_its_leave_from_the_muck_is_reported_keeps_its_place() -> None:
    pipe, out, clock = daemon_pipeline()
    arrive(pipe, MUCK, "Kd")
    step(pipe, clock, 0.5)
    pipe.new_hand()
    out.clear()
    arrive(pipe, SEAT2, "Kd")  # seen at seat 2 while the muck antenna still reports it
    step(pipe, clock, 0.08)
    arrive(pipe, SEAT3, "7c")
    leave(pipe, MUCK, "Kd")  # the firmware's leave, debounced, comes later
    step(pipe, clock, 0.5)
    assert out == [Deal(seat=2, card=card("Kd"), source="rfid"), Deal(seat=3, card=card("7c"), source="rfid")]


def test_a_card_cleared_and_dealt_back_to_its_seat_in_the_next_hand_is_dealt() -> None:
    pipe, out, clock = daemon_pipeline()
    arrive(pipe, SEAT2, "Ah")  # a misdealt hand: the card lies at seat 2
    step(pipe, clock, 0.5)
    leave(pipe, SEAT2, "Ah")  # cleared
    step(pipe, clock, 0.05)
    pipe.new_hand()  # the window has not passed: the leave is settled now, not taken for a flicker
    out.clear()
    arrive(pipe, SEAT2, "Ah")
    step(pipe, clock, 0.05)
    assert out == [Deal(seat=2, card=card("Ah"), source="rfid")]


def test_a_fold_mucked_before_the_flop_does_not_split_the_flop() -> None:
    pipe, out, clock = daemon_pipeline()
    arrive(pipe, SEAT1, "Ts")
    step(pipe, clock, 0.5)
    out.clear()
    arrive(pipe, MUCK, "Ts")  # the fold: lifted from seat 1 to the muck
    step(pipe, clock, 0.08)
    arrive(pipe, BURN, "3d")
    step(pipe, clock, 0.04)
    leave(pipe, SEAT1, "Ts")  # the firmware's debounced leave from the seat
    for i, face in enumerate(("Ah", "Kd", "7c")):
        step(pipe, clock, 0.08)
        arrive(pipe, BOARD + i, face)
    step(pipe, clock, 0.5)
    assert out == [
        Muck(card("Ts"), source="rfid"),
        Burn(card("3d"), source="rfid"),
        BoardCards((card("Ah"), card("Kd"), card("7c")), source="rfid"),
    ]


def test_a_flop_pending_while_the_link_is_out_of_sync_is_not_closed_short() -> None:
    """Unplugged after two flop cards: the board window must not close the flop while the device's
    ring replay may still bring the third (a short flop, then the third card alone: the dealer's
    flop actions refused, the turn ruled premature, a hand nobody could end)."""
    pipe, out, clock = daemon_pipeline()
    arrive(pipe, BURN, "3d")
    arrive(pipe, BOARD, "Ah")
    arrive(pipe, BOARD + 1, "Kd")
    step(pipe, clock, 0.1)
    for _ in range(20):  # the link is down for 2 s: the source holds the group on every tick
        pipe.hold()
        step(pipe, clock, 0.1)
    assert out == [Burn(card("3d"), source="rfid")]
    arrive(pipe, BOARD + 2, "7c")  # replayed from the device's ring after the reconnect
    assert out[1:] == [BoardCards((card("Ah"), card("Kd"), card("7c")), source="rfid")]


def test_a_short_flop_still_closes_after_the_window_once_the_link_is_back() -> None:
    pipe, out, clock = daemon_pipeline()
    arrive(pipe, BOARD, "Ah")
    arrive(pipe, BOARD + 1, "Kd")
    pipe.hold()
    step(pipe, clock, 0.9)
    assert out == []
    step(pipe, clock, 0.2)
    assert out == [BoardCards((card("Ah"), card("Kd")), source="rfid")]
