"""Issue 26 item 3, the fusion's side: cards of unknown order are put to the dealer, and every
arrival after them waits, in order, until the table has them (request/confirm); then the waiting
arrivals are dealt, but for those the dealer's answer placed already.

The first arrival after the batch used to slip out in the same call that settled the batch (a
bench session dealt it ahead of the cards it followed: a false ``seat_dealt_out``)."""

from __future__ import annotations

from controller.geometry import Zone
from controller.rules.cards import Card
from controller.rules.events import Deal
from firmware_bridge.fusion import OrderUnknown
from firmware_bridge.zones import ZoneChange
from tests.bridge.fusion_util import fusion_of

CARDS = {"8s": "01", "Ts": "02", "9h": "03", "8c": "04", "2d": "05"}


def _arrive(face: str, seat: int, ordered: bool) -> ZoneChange:
    return ZoneChange(CARDS[face], Zone("seat", seat), True, 0, 100.0, ordered)


def test_the_arrival_after_cards_of_unknown_order_waits_for_the_dealers_answer() -> None:
    f = fusion_of(CARDS)
    assert f.feed(_arrive("8s", 1, False)) == [] and f.feed(_arrive("Ts", 2, False)) == []
    assert f.feed(_arrive("9h", 3, False)) == []
    out = f.feed(_arrive("8c", 4, True))  # the next card, in order: settles the batch, and waits behind it
    assert [type(o) for o in out] == [OrderUnknown], out
    assert f.awaiting == {Card.parse(c) for c in ("8s", "Ts", "9h")}
    assert f.feed(_arrive("2d", 5, True)) == []  # still waiting
    # The dealer's answer named only 8s: nothing moves, and he is asked again for the other two,
    # once (the bench's dealer left a burn out of his answer and the table took no card after it).
    again = f.confirmed({Card.parse("8s"): "seat:1"})
    assert [type(o) for o in again] == [OrderUnknown], again
    assert {c.face for _, c in again[0].cards} == {"Ts", "9h"}  # type: ignore[union-attr]
    assert f.confirmed({Card.parse("8s"): "seat:1"}) == []
    # The dealer's answer placed the three and 8c; the table has them: only 2d is left to deal.
    placed = {Card.parse("8s"): "seat:1", Card.parse("Ts"): "seat:2", Card.parse("9h"): "seat:3",
              Card.parse("8c"): "seat:4"}
    out = f.confirmed(placed)
    assert out == [Deal(5, Card.parse("2d"), source="rfid")], out
    assert not f.awaiting
    # A new hand forgets any question.
    f.new_hand()
    f.feed(_arrive("8s", 1, False))
    f.feed(_arrive("Ts", 2, False))
    f.poll(101.0)  # the timer, once the batch has ended
    assert f.awaiting
    f.new_hand()
    assert not f.awaiting and f.confirmed(placed) == []
