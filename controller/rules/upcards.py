"""Who acts first in stud: the bring-in on third street and the best board after.

RRoP s8 Seven-Card Stud 1: lowest upcard by suit brings it in (ace high); later the
high hand on board acts first, ties broken by position (the seat dealt first).
RRoP s9 Razz 3: the highest card by suit (aces low) brings it in; later the low
hand acts first.  RRoP s10 Stud High-Low 4: as stud, ace counts high for the
bring-in.  Straights and flushes never count on a partial board.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from controller.rules.cards import Card


def bring_in_seat(rule: str, doors: Mapping[int, Card]) -> int:
    """Seat of the forced bet: ``rule`` is ``low`` (stud, stud8) or ``high`` (razz)."""
    if rule == "low":
        return min(doors, key=lambda s: (doors[s].high, doors[s].suit_order))
    return max(doors, key=lambda s: (doors[s].low, doors[s].suit_order))


def _groups(values: Iterable[int]) -> tuple[int, tuple[int, ...]]:
    """Pair category (0 none, 1 pair, 2 two pair, 3 trips, 4 quads) and ranks by (count, rank)."""
    counts = Counter(values)
    ordered = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    if shape and shape[0] >= 4:
        cat = 4
    elif shape and shape[0] == 3:
        cat = 3
    elif shape[:2] == [2, 2]:
        cat = 2
    elif shape and shape[0] == 2:
        cat = 1
    else:
        cat = 0
    return cat, tuple(r for r, _ in ordered)


def showing_strength(rule: str, cards: Sequence[Card]) -> tuple:
    """A key where larger means 'acts first'.

    ``high``: pairs/trips/quads then high cards.  ``low_a5``: the lowest ace-to-five
    board acts first, pairs count against it.
    """
    if rule == "high":
        cat, ranks = _groups(c.high for c in cards)
        return (cat, ranks)
    cat, ranks = _groups(c.low for c in cards)
    # Lower category and lower ranks are better for razz: negate so larger = acts first.
    return (-cat, tuple(-r for r in ranks))


def first_showing_seat(rule: str, boards: Mapping[int, Sequence[Card]], order: Sequence[int]) -> int:
    """The seat with the best board; a tie goes to the seat earliest in ``order``."""
    best = max(boards, key=lambda s: (showing_strength(rule, boards[s]), -order.index(s)))
    return best
