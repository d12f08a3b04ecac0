"""Forced bets that put players all in before any action (found by the demo over 200 hands).

When the blinds and antes leave one player able to bet, whether he still has a decision depends on
the chips: facing a short all-in blind bigger than his own blind he must call or fold; having put
in as much already, the cards come without betting (RRoP s15 Tournaments 19: a short blind plays
for what it is).  PokerKit is the referee in both cases, and the dealer simulator must agree."""

from __future__ import annotations

import random

import pytest

from controller.rules.cards import Card
from controller.rules.chips import Stakes
from controller.rules.engine import HandEngine
from controller.rules.events import BoardCards, Burn, Deal, HandSetup
from controller.sim import dealer as dealer_sim

pokerkit = pytest.importorskip("pokerkit")


def _engine(stacks: dict[int, int], blinds: tuple[int, int], ante: int = 0, bb_ante: int = 0) -> HandEngine:
    setup = HandSetup(game="holdem", rules="tda", seats=tuple(stacks), button=min(stacks), structure="no_limit",
                      chips=Stakes(stacks=stacks, blinds=blinds, ante=ante, bb_ante=bb_ante))
    return HandEngine(setup)


def _deal(engine: HandEngine, cards: str) -> None:
    for card in cards.split():
        assert engine.apply(Deal(engine.next_seat, Card.parse(card))) == []


def _pokerkit(stacks: tuple[int, int], blinds: tuple[int, int], ante: int, bb_ante: int) -> tuple[int | None, list]:
    """Heads-up in PokerKit, forced bets posted: (the player to act, the stacks left).  The stacks
    show which player posted what (index 0 here is the short big blind)."""
    from pokerkit import Automation, NoLimitTexasHoldem

    auto = (Automation.ANTE_POSTING, Automation.BET_COLLECTION, Automation.BLIND_OR_STRADDLE_POSTING,
            Automation.CARD_BURNING, Automation.HOLE_DEALING, Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
            Automation.HAND_KILLING, Automation.CHIPS_PUSHING, Automation.CHIPS_PULLING)
    antes = {1: bb_ante} if bb_ante else ante
    state = NoLimitTexasHoldem.create_state(auto, False, antes, blinds, blinds[1], stacks, 2)
    return state.actor_index, list(state.stacks)


def test_the_small_blind_facing_a_bigger_short_all_in_blind_must_still_act() -> None:
    # Seat 1 (button, small blind 100) faces seat 2's big blind all in for 180 after a 20 ante.
    assert _pokerkit((200, 37_900), (100, 200), 20, 0) == (1, [0, 37_780])
    engine = _engine({1: 37_900, 2: 200}, (100, 200), ante=20)
    _deal(engine, "Ad 6h Kh Jd")
    assert engine.to_act == 1
    flop = BoardCards(tuple(map(Card.parse, ("Tc", "5h", "4s"))))
    rulings = engine.apply(Burn(Card.parse("5d"))) + engine.apply(flop)
    assert [r.reason for r in rulings] == ["premature_flop"]


def test_a_small_blind_that_already_matched_a_short_all_in_blind_has_no_decision() -> None:
    # Seat 2's big-blind ante of 10 leaves 5 for its blind: the button's 5 small blind matches it.
    assert _pokerkit((15, 105), (5, 10), 0, 10) == (None, [0, 100])
    engine = _engine({1: 105, 2: 15}, (5, 10), bb_ante=10)
    _deal(engine, "Ad 6h Kh Jd")
    assert engine.to_act is None
    assert engine.apply(Burn(Card.parse("5s"))) == []
    assert engine.apply(BoardCards(tuple(map(Card.parse, ("9c", "Jc", "9d"))))) == []
    assert engine.to_act is None  # no betting on the flop either: nobody left to bet against


def test_the_dealer_simulator_agrees_with_the_engine_on_forced_all_ins() -> None:
    """Random hands with short stacks: the simulator's legal hands raise no ruling."""
    from controller.rules.scenario import Scenario, run_scenario

    rng = random.Random(2026)
    checked = 0
    for i in range(400):
        hand = dealer_sim.legal_hand(rng, game=("holdem", "omaha8", "draw_high")[i % 3], chips=True)
        stacks = hand.get("stacks") or {}
        if not stacks or min(stacks.values()) > 3 * max(hand.get("blinds") or [1]):
            continue
        checked += 1
        result = run_scenario(Scenario.from_dict(hand))
        assert result.passed, (hand["name"], result.failures)
    assert checked > 10
