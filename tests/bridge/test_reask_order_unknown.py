"""Issue 26: cards of unknown order hold every card after them until the dealer confirms them.  The
table asked once (and once more after an answer that left some out): a question acknowledged and
never answered, or answered short twice, left a table that showed none of the cards the dealer
went on pitching, and said nothing.  Under a fault the table says so, never waits silently: a card
held behind a question still open asks it again (not at once: the dealer is reading it)."""

from __future__ import annotations

from controller.geometry import Zone
from controller.rules.cards import Card
from controller.rules.decks import Deck, DeckRegistry
from controller.rules.events import Deal
from firmware_bridge.fusion import REASK_AFTER, Fusion, OrderUnknown
from firmware_bridge.zones import ZoneChange

CARDS = {"9h": "01", "8d": "02", "Jd": "03", "5h": "04", "4c": "05", "Qs": "06"}


class Clock:
    t = 100.0

    def __call__(self) -> float:
        return self.t


def _fusion(clock: Clock) -> Fusion:
    deck = Deck("A")
    for face, uid in CARDS.items():
        deck.add(uid, Card.parse(face))
    return Fusion(DeckRegistry([deck]), clock=clock)


def _arrive(face: str, seat: int, ordered: bool = True) -> ZoneChange:
    return ZoneChange(CARDS[face], Zone("seat", seat), True, 0, 100.0, ordered)


def _asked(out: list) -> set[str]:
    return {c.face for o in out if isinstance(o, OrderUnknown) for _, c in o.cards}


def test_a_card_held_behind_an_open_question_asks_it_again() -> None:
    clock = Clock()
    f = _fusion(clock)
    assert f.feed(_arrive("Jd", 1, ordered=False)) == []
    assert f.feed(_arrive("8d", 2, ordered=False)) == []
    assert _asked(f.feed(_arrive("9h", 3))) == {"Jd", "8d"}  # the question; 9h waits behind it
    clock.t += 1.0
    assert f.feed(_arrive("5h", 4)) == []  # he is reading it: not asked again at once
    clock.t += REASK_AFTER
    assert _asked(f.feed(_arrive("4c", 1))) == {"Jd", "8d"}  # before: nothing, ever
    clock.t += 1.0
    assert f.feed(_arrive("Qs", 2)) == []
    # His answer: the held cards go on, in their order; nothing more is asked.
    out = f.confirmed({Card.parse("Jd"): "seat:1", Card.parse("8d"): "seat:2"})
    assert out == [Deal(seat, Card.parse(face), source="rfid")
                   for face, seat in (("9h", 3), ("5h", 4), ("4c", 1), ("Qs", 2))]
    clock.t += REASK_AFTER
    assert _asked(f.feed(_arrive("9h", 3))) == set()


def test_an_answer_short_twice_is_asked_again_for_what_it_left_out() -> None:
    clock = Clock()
    f = _fusion(clock)
    for face, seat in (("Jd", 1), ("8d", 2), ("9h", 3)):
        f.feed(_arrive(face, seat, ordered=False))
    assert _asked(f.feed(_arrive("5h", 4))) == {"Jd", "8d", "9h"}
    placed = {Card.parse("Jd"): "seat:1"}
    assert _asked(f.confirmed(placed)) == {"8d", "9h"}  # asked again for the rest (as before)
    assert f.confirmed(placed) == []  # the same answer again: not asked in a loop
    clock.t += REASK_AFTER
    assert _asked(f.feed(_arrive("4c", 1))) == {"8d", "9h"}  # only what is still in doubt
