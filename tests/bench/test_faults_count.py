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
