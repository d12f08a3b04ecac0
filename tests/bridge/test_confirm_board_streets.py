"""Issue 26, F5: after the dealer confirmed a flop of unknown order (request/confirm), the table's
fusion still counted no board card dealt, so the turn and the river each waited out the board
window (1 s) instead of going out as a complete street; a dealer who acted meanwhile was refused
("no betting round is open") and the hand did not finish.  And a card the dealer entered himself
(the table never heard its tag) is not dealt a second time when its tag is reported late."""

from __future__ import annotations

from controller.geometry import Zone
from controller.rules.cards import Card
from controller.rules.events import BoardCards
from firmware_bridge.fusion import OrderUnknown
from firmware_bridge.zones import ZoneChange
from tests.bridge.fusion_util import fusion_of

CARDS = {"Qc": "01", "Kh": "02", "2h": "03", "4c": "04", "4d": "05"}


def _board(face: str, slot: int, ordered: bool = True) -> ZoneChange:
    return ZoneChange(CARDS[face], Zone("board"), True, slot, 100.0, ordered)


def test_the_turn_after_a_confirmed_flop_goes_out_at_once() -> None:
    f = fusion_of(CARDS)
    assert f.feed(_board("Qc", 0, False)) == [] and f.feed(_board("Kh", 1, False)) == []
    assert [type(o) for o in f.poll(101.0)] == [OrderUnknown]  # the timer, once the batch has ended
    # The dealer's answer: the whole flop (the third card came in order, held behind the question).
    assert f.feed(_board("2h", 2)) == []
    flop = {Card.parse(c): "board" for c in ("Qc", "Kh", "2h")}
    assert f.confirmed(flop) == []  # 2h: the dealer's answer placed it already
    # The turn completes a street: out at once, not after the board window.
    assert f.feed(_board("4c", 3)) == [BoardCards((Card.parse("4c"),), source="rfid")]
    assert f.feed(_board("4d", 4)) == [BoardCards((Card.parse("4d"),), source="rfid")]


def test_a_late_tag_of_a_card_the_dealer_entered_is_not_dealt_again() -> None:
    f = fusion_of(CARDS)
    f.remember({Card.parse(c): "board" for c in ("Qc", "Kh", "2h", "4c")})  # the dealer entered the turn
    assert f.feed(_board("4c", 3)) == []  # its tag, late: the card where he put it
    assert f.feed(_board("4d", 4)) == [BoardCards((Card.parse("4d"),), source="rfid")]  # the river: at once


def test_a_flop_card_waiting_in_its_group_that_the_dealers_answer_named_is_not_sent_again() -> None:
    """The 200-hand run's hand 66: the flop's first card came in order and waited in the board group
    (the street incomplete), the other two came of unknown order; the dealer's answer named all
    three; when the group's window closed the first went to the table again: a false duplicate_card."""
    f = fusion_of(CARDS)
    assert f.feed(_board("Qc", 0)) == []  # one card of three: the group waits
    assert f.feed(_board("Kh", 1, False)) == [] and f.feed(_board("2h", 2, False)) == []
    assert [type(o) for o in f.poll(100.5)] == [OrderUnknown]  # the group's window (1 s) still open
    assert f.confirmed({Card.parse(c): "board" for c in ("Qc", "Kh", "2h")}) == []
    assert f.poll(105.0) == []  # the group's window passes: nothing to send
    assert f.feed(_board("4c", 3)) == [BoardCards((Card.parse("4c"),), source="rfid")]  # the turn, at once
