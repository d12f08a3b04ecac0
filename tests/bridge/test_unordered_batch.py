"""Issue 26, kill -9 in the fault bench (hand 14 of the 200-hand run): the restarted daemon's board
re-reported every card on the table, of unknown order (the ring no longer covered the first ones).
A card the table already had, re-reported between two new ones, settled the batch after the first
new one: a batch of one is no question, so it was dealt alone, ahead of a seat's earlier card still
to come in the batch: a false ``seat_dealt_out``.  The timer's poll, falling between two cards of a
batch, did the same.  Now a re-report settles nothing, and the timer waits for the batch to end."""

from __future__ import annotations

from controller.geometry import Zone
from controller.rules.cards import Card
from controller.rules.events import Deal
from firmware_bridge.fusion import UNORDERED_QUIET, Fusion, OrderUnknown
from firmware_bridge.zones import ZoneChange
from tests.bridge.fusion_util import fusion_of

CARDS = {"9h": "01", "8d": "02", "Jd": "03", "5h": "04"}


class Clock:
    t = 100.0

    def __call__(self) -> float:
        return self.t


def _fusion(clock: Clock) -> Fusion:
    f = fusion_of(CARDS, clock)
    f.remember({Card.parse("9h"): "seat:2"})  # journaled before the kill
    return f


def _arrive(face: str, seat: int, ordered: bool = False) -> ZoneChange:
    return ZoneChange(CARDS[face], Zone("seat", seat), True, 0, 100.0, ordered)


def test_a_card_the_table_has_re_reported_inside_a_batch_settles_nothing() -> None:
    clock = Clock()
    f = _fusion(clock)
    assert f.feed(_arrive("Jd", 6)) == []
    assert f.feed(_arrive("9h", 2)) == []  # before: Jd dealt here, alone, as "no question"
    assert f.feed(_arrive("8d", 1)) == []
    out = f.feed(_arrive("5h", 3, ordered=True))  # the batch is over
    assert [type(o) for o in out] == [OrderUnknown], out
    assert {c.face for _, c in out[0].cards} == {"Jd", "8d"}  # type: ignore[union-attr]


def test_the_timer_settles_a_batch_only_once_it_has_ended() -> None:
    clock = Clock()
    f = _fusion(clock)
    assert f.feed(_arrive("Jd", 6)) == []
    clock.t += 0.01
    assert f.poll() == []  # the timer, between two cards of the batch: before, Jd went out alone
    assert f.feed(_arrive("8d", 1)) == []
    clock.t += UNORDERED_QUIET + 0.01
    out = f.poll()
    assert [type(o) for o in out] == [OrderUnknown] and len(out[0].cards) == 2, out  # type: ignore[union-attr]


def test_a_single_card_of_unknown_order_is_still_no_question() -> None:
    clock = Clock()
    f = _fusion(clock)
    assert f.feed(_arrive("Jd", 6)) == []
    clock.t += UNORDERED_QUIET + 0.01
    assert f.poll() == [Deal(6, Card.parse("Jd"), source="rfid")]


def test_a_card_reaching_the_muck_in_a_batch_is_no_question() -> None:
    """The 200-hand bench, hand 63: the board stalled as a hand began, and its one scan found the
    last hand's Ac reaching the muck with two new hole cards.  The table asked the dealer to order
    all three; he can name only where he dealt (a seat, the burn, the board: ``request/confirm``),
    so the Ac stayed in doubt, was asked about again and again, and every card he pitched after
    it waited for the rest of the hand.  A muck's card is settled as it comes, never asked."""
    clock = Clock()
    f = _fusion(clock)
    f.new_hand()  # 9h (seat 2) was the last hand's
    assert f.feed(ZoneChange(CARDS["9h"], Zone("muck"), True, 0, 100.0, False)) == []
    assert f.feed(_arrive("8d", 3)) == []
    assert f.feed(_arrive("Jd", 4)) == []
    out = f.feed(_arrive("5h", 5, ordered=True))
    assert [type(o) for o in out] == [OrderUnknown], out
    assert {c.face for _, c in out[0].cards} == {"8d", "Jd"}  # type: ignore[union-attr]
    assert f.late_mucks == 1
    held = f.confirmed({Card.parse("8d"): "seat:3", Card.parse("Jd"): "seat:4"})
    assert held == [Deal(5, Card.parse("5h"), source="rfid")] and not f.awaiting
