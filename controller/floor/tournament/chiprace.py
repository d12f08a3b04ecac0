"""Colour-ups and the chip race (TDA 22, RRoP s15 8), computed from the stacks and the cards.

RRoP s15 8: "All lower-denomination chips that are of sufficient quantity for a new chip will be
changed up directly. The method for removal of odd chips is to deal one card to a player for each
odd chip possessed. Cards are dealt clockwise starting with the 1-seat, with each player receiving
all cards before any cards are dealt to the next player. The player with the highest card by suit
gets enough odd chips to exchange for one new chip, the second-highest card gets to exchange for the
next chip, and so forth [...] A player may not be eliminated from the event by the chip-change
process. If a player has no chips after the race has been held, he will be given a chip of the
higher denomination before anyone else is awarded a chip. If an odd number of lower-denomination
chips are left after this process, the player with the highest card remaining will receive a new
chip if he has half or more of the quantity of lower-denomination chips needed, otherwise nothing."
TDA 22-A adds: "a maximum of one chip awarded to a player".

Read with the race's own mechanics: the odd chips are pooled and each winner takes "enough odd
chips to exchange for one new chip", so what the next-highest card "has" at the end is what is left
in the pool; he gets a new chip when that is half a new chip or more (the usual rounding of a race).

The cards are what the table's antennas read as the dealer deals them, in deal order; a
simulation draws them from a journaled random source instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from controller.errors import PokerTableError
from controller.rules.cards import Card

CITATIONS = ("TDA 22", "RRoP s15 8")


class ChipRaceError(PokerTableError, ValueError):
    """Stacks, denominations or cards that a chip race cannot be run with."""


@dataclass(frozen=True)
class RaceResult:
    """One seat's outcome: what it had, the cards it got, what it has now, and why."""

    seat: int
    value_before: int
    value_after: int
    odd_chips: int
    cards: tuple[str, ...]
    awarded: bool
    why: str

    def describe(self) -> dict[str, Any]:
        return {"seat": self.seat, "before": self.value_before, "after": self.value_after,
                "odd_chips": self.odd_chips, "cards": list(self.cards), "awarded": self.awarded, "why": self.why}


def _card_key(card: Card) -> tuple[int, int]:
    """Highest card by suit: rank (ace high), then spades > hearts > diamonds > clubs."""
    return (card.high, card.suit_order)


def cards_needed(stacks: Mapping[int, Mapping[int, int]], removed: Iterable[int], remaining: Sequence[int]) -> int:
    """How many cards the dealer deals for the race: one per odd chip."""
    return sum(n for n in _odd_chips(stacks, tuple(sorted(removed)), min(remaining)).values())


def _odd_chips(stacks: Mapping[int, Mapping[int, int]], removed: tuple[int, ...], new: int) -> dict[int, int]:
    smallest = min(removed)
    odd: dict[int, int] = {}
    for seat, chips in stacks.items():
        value = sum(d * n for d, n in chips.items() if d in removed)
        odd[seat] = -(-(value % new) // smallest)  # ceil: chips making up the remainder
    return odd


def chip_race(stacks: Mapping[int, Mapping[int, int]], removed: Iterable[int], remaining: Sequence[int],
              cards: Sequence[str]) -> list[RaceResult]:
    """Race off the ``removed`` denominations into the lowest ``remaining`` one.

    ``stacks`` is seat -> {denomination: count}; ``cards`` the cards dealt, in deal order
    (clockwise from seat 1, each player all his cards before the next: one per odd chip).
    """
    removed_t = tuple(sorted(set(removed)))
    if not removed_t or not remaining:
        raise ChipRaceError("a colour-up names the denominations removed and those that remain")
    if set(removed_t) & set(remaining):
        raise ChipRaceError(f"{sorted(set(removed_t) & set(remaining))} cannot be both removed and kept")
    new = min(remaining)
    if any(new % d for d in removed_t):
        raise ChipRaceError(f"the new chip {new} is not a whole number of the removed chips {list(removed_t)}")
    for seat, chips in stacks.items():
        unknown = set(chips) - set(removed_t) - set(remaining)
        if unknown or any(n < 0 for n in chips.values()):
            raise ChipRaceError(f"seat {seat}: chips {dict(chips)} are not counts of the chips in play")
    odd = _odd_chips(stacks, removed_t, new)
    if len(cards) != sum(odd.values()):
        raise ChipRaceError(f"the race needs {sum(odd.values())} cards (one per odd chip), got {len(cards)}")
    # Deal order: clockwise from seat 1, each player all his cards before the next (RRoP s15 8).
    dealt: dict[int, list[Card]] = {}
    it = iter(cards)
    for seat in sorted(stacks):
        dealt[seat] = [Card.parse(next(it)) for _ in range(odd[seat])]
    faces = [c.face for cs in dealt.values() for c in cs]
    if len(set(faces)) != len(faces):
        raise ChipRaceError("the same card was dealt twice in the race: deal it again")

    before, kept, odd_value = {}, {}, {}
    for seat, chips in stacks.items():
        before[seat] = sum(d * n for d, n in chips.items())
        removed_value = sum(d * n for d, n in chips.items() if d in removed_t)
        odd_value[seat] = removed_value % new
        kept[seat] = before[seat] - odd_value[seat]  # everything but the odd chips, changed up directly
    to_award = sum(odd_value.values()) // new
    leftover = sum(odd_value.values()) % new
    racers = sorted((s for s in stacks if odd[s]), key=lambda s: max(map(_card_key, dealt[s])), reverse=True)
    awarded: dict[int, str] = {}
    # Nobody is raced out: a player left with no chip gets one first (TDA 22-A, RRoP s15 8).
    for seat in racers:
        if kept[seat] == 0:
            awarded[seat] = "no chips left after the race: given one chip first, nobody is raced out"
            to_award = max(0, to_award - 1)
    for seat in racers:
        if to_award == 0:
            break
        if seat not in awarded:
            awarded[seat] = "highest card by suit still in the race: one chip (at most one a player)"
            to_award -= 1
    if leftover:
        nxt = next((s for s in racers if s not in awarded), None)
        if nxt is not None and leftover * 2 >= new:
            awarded[nxt] = "highest card remaining: the odd chips left make half a new chip or more"
    results = []
    for seat in sorted(stacks):
        won = seat in awarded
        why = awarded.get(seat) or ("no odd chips" if not odd[seat] else "odd chips removed without compensation")
        results.append(RaceResult(seat, before[seat], kept[seat] + (new if won else 0), odd[seat],
                                  tuple(c.face for c in dealt[seat]), won, why))
    return results
