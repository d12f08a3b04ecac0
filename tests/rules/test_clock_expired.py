"""TDA 26 at the table: "If the player does not act by the end of the count, the hand is dead." The floor
runs the clock (controller/floor/director.py); when it runs out the table reports ``clock_expired`` and
the engine kills the hand, citing the rule of the table's profile."""

from __future__ import annotations

from controller.rules.cards import standard_deck
from controller.rules.events import Deal, NewHand, Report, SeatPlayer
from controller.rules.table import Table
from controller.service import TableService


def _hand(rules: str, seats: tuple[int, ...]) -> TableService:
    svc = TableService(Table(size=9, rules=rules, event="tournament", starting_stack=5000,
                             stakes={"blinds": [50, 100]}))
    for s in seats:
        svc.submit(SeatPlayer(s, f"p{s}"))
    svc.submit(NewHand())
    engine = svc.engine
    assert engine is not None
    deck = iter(standard_deck())
    for _ in range(2):
        for s in list(engine.order):
            svc.submit(Deal(s, next(deck)))
    return svc


def _alerts(outputs) -> list[dict]:
    return [o.payload for o in outputs if o.kind == "alert"]


def test_the_seat_to_act_loses_its_hand_and_its_chips_stay_in_the_pot() -> None:
    svc = _hand("tda", (2, 4, 5, 7))
    engine = svc.engine
    on = engine.to_act
    pot = engine.chips.pot
    out = svc.submit(Report("clock_expired", on))
    (alert,) = _alerts(out)
    assert alert["reason"] == "clock_expired" and alert["ruling"] == "irregularity" and alert["seat"] == on
    assert alert["citations"][0] == "TDA 26" and alert["message"].endswith("the hand is dead.")
    assert on in engine.dead and on not in engine.active and on not in engine.folded
    assert engine.to_act not in (None, on)  # the action moves on
    assert on in engine.chips.folded  # he can win nothing; what he put in stays
    assert engine.chips.pot == pot
    seat = svc.public_state()["hand"]["seats"][str(on)]
    assert seat["dead"] and not seat["folded"]


def test_heads_up_the_dead_hand_ends_the_hand_and_robert_cites_its_own_rule() -> None:
    svc = _hand("robert", (3, 8))
    engine = svc.engine
    on = engine.to_act
    out = svc.submit(Report("clock_expired", on))
    assert _alerts(out)[0]["citations"][0] == "RRoP s14 No-Limit Rules 13"
    assert engine.over and engine.active == {({3, 8} - {on}).pop()}


def test_a_seat_not_to_act_is_ruled_on_but_the_dealer_kills_it() -> None:
    svc = _hand("tda", (2, 4, 5, 7))
    engine = svc.engine
    other = next(s for s in engine.active if s != engine.to_act)
    to_act = engine.to_act
    out = svc.submit(Report("clock_expired", other))
    assert _alerts(out)[0]["reason"] == "clock_expired"
    assert other in engine.active and engine.to_act == to_act
