"""The fault bench's dealer paces himself on the cards the display has shown.  A ``request/confirm``
of seven cards gives seven ``event/card`` with one seq: counted by seq they were one, and the dealer
waited 8 s at every later step of the hand (a bench run stuck ~3 minutes on one hand)."""

from __future__ import annotations

from collections import Counter

from controller.bench.faults import events_in


def test_a_confirm_of_seven_cards_counts_seven_and_a_repeat_counts_once() -> None:
    confirm = Counter({2: 2, 3: 1, 4: 1, 5: 1, 6: 1, 1: 1})  # seven cards, two to seat 2
    assert events_in({265: confirm}) == 7
    assert events_in({265: Counter({k: 2 * v for k, v in confirm.items()})}) == 7  # sent again after an outage
    assert events_in({10: Counter({3: 1}), 11: Counter({None: 3})}) == 2  # one card; a board event repeated
    assert events_in({}) == 0


def test_the_dealer_waits_for_every_card_of_a_flop_not_its_first_event() -> None:
    """Counted as events, a flop the table got as one card, then two of unknown order, was "in" after
    its first card: the dealer acted, was refused, and the table later ruled a false premature_turn."""
    from controller.bench.faults import cards_due
    from controller.rules.cards import Card
    from controller.rules.events import BoardCards, Burn, Deal

    plan = [Deal(1, Card.parse("Ah")), Deal(2, Card.parse("Kd")), Burn(Card.parse("2c")),
            BoardCards(tuple(Card.parse(c) for c in ("8d", "5s", "Ks")))]
    assert cards_due(plan) == 6
