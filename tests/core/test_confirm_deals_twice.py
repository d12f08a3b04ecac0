"""Issue 26, from the 200-hand fault bench: the flop's first card (Qh) reached the table as the
board; the next two landed in a board stall ("order unknown: confirm"); the dealer, looking at a
display a moment late, confirmed all three.  The table dealt Qh again and voided the hand
(duplicate_card).  A card the dealer names where the table already has it is that card, not a
second copy: it is skipped, the rest of his answer is dealt, and no ruling comes of it.  A card he
names somewhere else still goes to the rules."""

from __future__ import annotations

from controller.rules.cards import Card
from controller.rules.events import Act, BoardCards, Burn, ConfirmDeals, Deal
from controller.service import TableService
from tests.core.test_service_alerts import heads_up_hand

C = Card.parse


def _flop_begun() -> TableService:
    svc = heads_up_hand()
    engine = svc.engine
    assert engine is not None
    for face in ("Ah", "Kd", "2c", "3c"):
        svc.submit(Deal(engine.next_seat, C(face)))
    svc.submit(Act(engine.to_act, "call"))
    svc.submit(Act(engine.to_act, "check"))
    svc.submit(Burn(C("7s")))
    svc.submit(BoardCards((C("Qh"),)))
    assert not svc.alerts, [a.data for a in svc.alerts]
    return svc


def test_a_confirmed_card_already_on_the_board_is_not_dealt_again() -> None:
    svc = _flop_begun()
    svc.submit(ConfirmDeals(("board", "board", "board"), (C("Qh"), C("8h"), C("4c"))), source="console")
    assert not svc.alerts, [a.data for a in svc.alerts]
    assert svc.engine is not None and not svc.engine.over
    assert [c.face for c in svc.engine.board] == ["Qh", "8h", "4c"]


def test_a_confirmed_card_the_table_has_elsewhere_still_goes_to_the_rules() -> None:
    svc = _flop_begun()
    svc.submit(ConfirmDeals(("board", "board"), (C("Ah"), C("8h"))), source="console")  # Ah is seat 1's
    assert [a.data["reason"] for a in svc.alerts] == ["duplicate_card"]
