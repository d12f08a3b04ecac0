"""Issue 15 item 3: a missing board card holds the street.

A flop card with a dead tag reaches the engine seconds late (through the camera).  Meanwhile no
betting round may open on the incomplete board: actions are refused with a reason that names the
missing card (never journaled), the state says which card is missing, and the late card completes
the street with no ruling at all.
"""

from __future__ import annotations

import pytest

from controller.rules.cards import Card
from controller.rules.engine import HandEngine
from controller.rules.events import Act, BoardCards, Burn, Deal, HandSetup, NewHand, SeatPlayer, SetButton
from controller.rules.table import Table
from controller.service import Rejected, TableService


def c(text: str) -> Card:
    return Card.parse(text)


def _to_flop(e: HandEngine) -> None:
    for i, card in enumerate(["Ah", "Kd", "Qs", "Jc", "Th", "9d"]):
        assert not e.apply(Deal(i % 3 + 1, c(card)))
    for seat, action in ((3, "call"), (1, "call"), (2, "check")):
        assert not e.apply(Act(seat, action))
    assert not e.apply(Burn(c("2c")))


def test_engine_holds_the_flop_until_its_third_card() -> None:
    e = HandEngine(HandSetup(game="holdem", rules="robert", seats=(1, 2, 3), button=3))
    _to_flop(e)
    assert not e.apply(BoardCards((c("7h"), c("8h"))))  # the third card's tag is dead
    assert e.to_act is None
    assert e.snapshot()["missing_board"] == {"street": "flop", "have": 2, "need": 3, "missing": [3]}
    reason = e.refusal(Act(1, "check"))
    assert reason is not None and "flop" in reason and "board card 3" in reason
    # the camera's read arrives late: the street completes, betting opens, nobody is ruled against
    assert not e.apply(BoardCards((c("9h"),)))
    assert e.snapshot()["missing_board"] is None and e.refusal(Act(1, "check")) is None
    assert e.to_act == 1 and e.phase.value == "bet"
    for seat in (1, 2, 3):
        assert not e.apply(Act(seat, "check"))
    assert not e.apply(Burn(c("3c")))
    assert not e.apply(BoardCards((c("Tc"),)))  # the turn is the turn, not a premature card
    assert not e.apply(Act(1, "check")) and e.to_act == 2
    assert not e.rulings


def test_turn_not_yet_read_names_board_card_four() -> None:
    e = HandEngine(HandSetup(game="holdem", rules="tda", seats=(1, 2, 3), button=3))
    _to_flop(e)
    e.apply(BoardCards((c("7h"), c("8h"), c("9h"))))
    for seat in (1, 2, 3):
        e.apply(Act(seat, "check"))
    e.apply(Burn(c("3c")))
    assert e.snapshot()["missing_board"] == {"street": "turn", "have": 0, "need": 1, "missing": [4]}
    assert "turn has not been dealt" in (e.refusal(Act(1, "bet")) or "")


class _Journal:
    """An in-memory journal: what was appended is what the service accepted."""

    def __init__(self) -> None:
        self.events: list = []

    def append(self, event, at: float, source: str = "") -> int:
        self.events.append(event)
        return len(self.events)


def test_service_refuses_actions_on_an_incomplete_board_and_journals_none() -> None:
    journal = _Journal()
    svc = TableService(Table(size=6), journal=journal)
    for ev in (SeatPlayer(1, "Ann"), SeatPlayer(2, "Bob"), SeatPlayer(3, "Cy"), SetButton(1), NewHand()):
        svc.submit(ev)
    order = list(svc.engine.order)
    for i, card in enumerate(["Ah", "Kd", "Qs", "Jc", "Th", "9d"]):
        svc.submit(Deal(order[i % 3], c(card)))
    pre = svc.engine.to_act
    while svc.engine.phase.value == "bet" and svc.engine.street_i == 0:
        seat = svc.engine.to_act
        svc.submit(Act(seat, "check" if seat == svc.engine.big_blind else "call"))
    assert pre is not None
    svc.submit(Burn(c("2c")))
    svc.submit(BoardCards((c("7h"), c("8h"))))
    before = len(journal.events)
    first = svc.engine._next_in(svc.engine.active, svc.engine.button)
    with pytest.raises(Rejected, match="board card 3 missing"):
        svc.submit(Act(first, "check"))
    assert len(journal.events) == before  # refused: nothing journaled
    assert svc.public_state()["hand"]["missing_board"]["missing"] == [3]
    outputs = svc.submit(BoardCards((c("9h"),)))
    assert not [o for o in outputs if o.kind == "alert"]
    svc.submit(Act(first, "check"))
    assert not svc.engine.rulings and len(journal.events) == before + 2
