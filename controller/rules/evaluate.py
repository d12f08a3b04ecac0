"""Hand evaluation for every game in Robert's Rules of Poker v4 (RRoP) and the TDA rules.

Each evaluator takes ``(hole, board)`` and returns a :class:`HandValue` or ``None`` (a low
that does not qualify).  Values of one evaluator are totally ordered and LARGER IS ALWAYS
BETTER, whatever the game: a low evaluator negates its "badness" so the showdown code never
needs to know whether it is awarding a high or a low.  Equal values split the pot: suits
never break a tie for winning a pot (RRoP s3 Ties 1).

The evaluators favour clarity over speed (best of 5..7 cards tries every 5-card
combination); the showdown of one hand costs well under a millisecond per player.

Games and their evaluators:

* ``high`` - hold'em, stud, draw high, jacks-or-better: best 5 cards, ace high or low in a
  straight (5-4-3-2-A, the wheel, is a five-high straight).
* ``high_joker`` - draw high with the joker as the "bug" (RRoP s12 The Joker 2-4).
* ``omaha_high`` - exactly two hole cards and three board cards (RRoP s6 Omaha).
* ``low_a5`` - razz and ace-to-five lowball: straights and flushes do not count, aces are
  low, the best hand is 5-4-3-2-A (RRoP s9 Razz 2, s11 Ace-to-Five Lowball); the joker is
  the lowest card not present in the hand (RRoP s11 Ace-to-Five Lowball 1).
* ``low_a5_8`` / ``omaha_low_a5_8`` - the low half of stud/8 and Omaha/8: ace-to-five, but
  only five unpaired cards of eight or lower qualify (RRoP s10 Seven-Card Stud High-Low 2,
  s7 Omaha High-Low 2).
* ``low_27`` - deuce-to-seven: the worst conventional hand wins; aces are high only and
  straights and flushes count against you (RRoP s11 Deuce-to-Seven Lowball 1).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from controller.errors import PokerTableError
from controller.rules.cards import RANKS, SUITS, Card

# Categories of the conventional high ranking.  FIVE_ACES exists only with the bug
# (RRoP s12 The Joker 4: "Five aces is the best possible hand").
HIGH_CARD, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH, FIVE_ACES = range(10)

_RANK_WORD = {
    1: ("Ace", "Aces"),
    2: ("Deuce", "Deuces"),
    3: ("Three", "Threes"),
    4: ("Four", "Fours"),
    5: ("Five", "Fives"),
    6: ("Six", "Sixes"),
    7: ("Seven", "Sevens"),
    8: ("Eight", "Eights"),
    9: ("Nine", "Nines"),
    10: ("Ten", "Tens"),
    11: ("Jack", "Jacks"),
    12: ("Queen", "Queens"),
    13: ("King", "Kings"),
    14: ("Ace", "Aces"),
}
_RANK_CHAR = {1: "A", **{i + 2: r for i, r in enumerate(RANKS)}}

# Ace-to-five lows are ranked like high hands without straights or flushes (RRoP s9 Razz 2),
# so the categories keep the conventional numbers and only their order is reversed.
_A5_CATEGORY = {
    (1, 1, 1, 1, 1): HIGH_CARD,
    (2, 1, 1, 1): PAIR,
    (2, 2, 1): TWO_PAIR,
    (3, 1, 1): TRIPS,
    (3, 2): FULL_HOUSE,
    (4, 1): QUADS,
}


class HandError(PokerTableError, ValueError):
    """Raised for cards that cannot form a hand in this game (too few, a joker not in use)."""


@dataclass(frozen=True, slots=True, order=True)
class HandValue:
    """The value of one hand for one evaluator: compare with ``<``, larger is better.

    Only ``key`` takes part in comparisons, equality and hashing, so two hands that differ
    only in suits are equal and split the pot (RRoP s3 Ties 1).  ``name`` is the full
    spoken value ("Full House, Kings over Fives", "8-6-5-3-2 low"); ``short`` is what a
    dealer would call at a glance ("Full House", "Eight-Six low"); ``cards`` are the five
    cards used, best first, so a display can highlight them and odd chips can be awarded by
    the high card by suit in the best five-card hand (TDA 18-B).
    """

    key: tuple[int, ...]
    name: str = field(compare=False)
    cards: tuple[Card, ...] = field(compare=False)
    short: str = field(compare=False, default="")

    def __str__(self) -> str:
        return self.name


Evaluator = Callable[[Sequence[Card], Sequence[Card]], HandValue | None]


@dataclass(frozen=True, slots=True)
class EvaluatorSpec:
    """What the showdown needs to know about an evaluator besides its ordering.

    ``low`` says the part is a low half/low game, which matters for odd chips in stud
    (RRoP s3 Ties 5(b): lowest card by suit in low games).  ``ace_low`` is the rank order
    used when comparing single cards for those odd chips.
    """

    name: str
    evaluate: Evaluator
    low: bool
    ace_low: bool
    jokers: bool = False


# ---------------------------------------------------------------- five-card ranking


def _group(ranks: Iterable[int]) -> list[tuple[int, int]]:
    """(count, rank) pairs, biggest groups first then higher ranks: the tie-break order."""
    return sorted(((n, r) for r, n in Counter(ranks).items()), reverse=True)


def _straight_top(ranks: Sequence[int], wheel: bool) -> int | None:
    """Top rank of a straight made by five ace-high ``ranks``, or None.

    With ``wheel`` the ace may also play low, making 5-4-3-2-A a five-high straight; in
    deuce-to-seven it may not (RRoP s11 Deuce-to-Seven Lowball: "5-4-3-2-A is not considered
    to be a straight, but an ace-5 high").
    """
    distinct = sorted(set(ranks))
    if len(distinct) != 5:
        return None
    if distinct[-1] - distinct[0] == 4:
        return distinct[-1]
    if wheel and distinct == [2, 3, 4, 5, 14]:
        return 5
    return None


def _high_key(cards: Sequence[Card], wheel: bool = True) -> tuple[int, ...]:
    """Conventional high ranking of exactly five real cards as (category, tie-breaks...)."""
    ranks = [c.high for c in cards]
    flush = len({c.suit for c in cards}) == 1 and cards[0].suit is not None
    top = _straight_top(ranks, wheel)
    if top is not None:
        return (STRAIGHT_FLUSH if flush else STRAIGHT, top)
    groups = _group(ranks)
    shape = tuple(n for n, _ in groups)
    tiebreak = tuple(r for _, r in groups)
    if flush:
        return (FLUSH, *tiebreak)
    category = {
        (4, 1): QUADS,
        (3, 2): FULL_HOUSE,
        (3, 1, 1): TRIPS,
        (2, 2, 1): TWO_PAIR,
        (2, 1, 1, 1): PAIR,
        (1, 1, 1, 1, 1): HIGH_CARD,
        (5,): FIVE_ACES,  # only reachable through the bug (four aces and the joker)
    }[shape]
    return (category, *tiebreak)


def _one(rank: int) -> str:
    return _RANK_WORD[rank][0]


def _many(rank: int) -> str:
    return _RANK_WORD[rank][1]


def _dashed(ranks: Iterable[int]) -> str:
    return "-".join(_RANK_CHAR[r] for r in ranks)


# How a high key of each category is called (its name from the key, its short name); a category
# not here is a high card.
_HIGH_NAMES: dict[int, tuple[Callable[[tuple[int, ...]], str], str]] = {
    FIVE_ACES: (lambda k: "Five Aces", "Five Aces"),
    QUADS: (lambda k: f"Four of a Kind, {_many(k[1])}", "Four of a Kind"),
    FULL_HOUSE: (lambda k: f"Full House, {_many(k[1])} over {_many(k[2])}", "Full House"),
    FLUSH: (lambda k: f"Flush, {_one(k[1])} high", "Flush"),
    STRAIGHT: (lambda k: f"Straight, {_one(k[1])} high", "Straight"),
    TRIPS: (lambda k: f"Three of a Kind, {_many(k[1])}", "Three of a Kind"),
    TWO_PAIR: (lambda k: f"Two Pair, {_many(k[1])} and {_many(k[2])}", "Two Pair"),
    PAIR: (lambda k: f"Pair of {_many(k[1])}", "Pair"),
}


def _high_name(key: tuple[int, ...]) -> tuple[str, str]:
    """(name, short) of a conventional high key."""
    category, first = key[0], key[1]
    if category == STRAIGHT_FLUSH:
        if first == 14:
            return "Royal Flush", "Royal Flush"
        return f"Straight Flush, {_one(first)} high", "Straight Flush"
    if category in _HIGH_NAMES:
        name, short = _HIGH_NAMES[category]
        return name(key), short
    return f"{_one(first)} high", f"{_one(first)} high"


def _ordered(cards: Sequence[Card], rank_of: Callable[[Card], int]) -> tuple[Card, ...]:
    """Cards in display order: bigger groups first, then higher rank, then suit."""
    counts = Counter(rank_of(c) for c in cards)
    return tuple(sorted(cards, key=lambda c: (counts[rank_of(c)], rank_of(c), c.suit_order), reverse=True))


def _low_name(ranks: Sequence[int]) -> str:
    """'Seven-Five low' from ranks highest first: how lows are called at the table."""
    return f"{_one(ranks[0])}-{_one(ranks[1])} low"


# ---------------------------------------------------------------- five-card evaluators


def _reject_jokers(cards: Sequence[Card], game: str) -> None:
    if any(c.is_joker for c in cards):
        # RRoP s3 Irregularities 8: a joker in a game where it is not used is a scrap of
        # paper; the engine replaces it or kills the hand, it never reaches the showdown.
        raise HandError(f"a joker is not in use in {game}")


def high5(cards: Sequence[Card]) -> HandValue:
    """Conventional high value of exactly five cards (no joker)."""
    key = _high_key(cards)
    name, short = _high_name(key)
    if key[0] in (STRAIGHT, STRAIGHT_FLUSH) and key[1] == 5:
        shown = tuple(sorted(cards, key=lambda c: (c.low, c.suit_order), reverse=True))
    else:
        shown = _ordered(cards, lambda c: c.high)
    return HandValue(key, name, shown, short)


def _joker_substitutes(hand: Sequence[Card]) -> Iterable[tuple[Card, bool]]:
    """What the bug may stand for in ``hand`` (RRoP s12 The Joker 2): (card, must_complete).

    It is always an ace; as any other card it counts only if it completes a straight,
    flush or straight flush.  It never duplicates a card present in the hand, so a flush
    gets "the highest card of the flush not present in the hand" (The Joker 3).
    """
    present = {(c.rank, c.suit) for c in hand if not c.is_joker}
    # As an ace of no suit: pairs, trips, four aces and five aces (The Joker 4), no flush.
    yield Card("A", None), False
    for rank in RANKS:
        for suit in SUITS:
            if (rank, suit) not in present:
                yield Card(rank, suit), True


def high5_joker(cards: Sequence[Card]) -> HandValue:
    """High value of five cards where a joker plays as the bug (RRoP s12 The Joker 2-4)."""
    jokers = [c for c in cards if c.is_joker]
    if not jokers:
        return high5(cards)
    if len(jokers) > 1:
        raise HandError("only one joker is used at draw high (RRoP s12 The Joker)")
    real = [c for c in cards if not c.is_joker]
    best: tuple[int, ...] | None = None
    for card, must_complete in _joker_substitutes(real):
        key = _high_key([*real, card])
        if must_complete and key[0] not in (STRAIGHT, FLUSH, STRAIGHT_FLUSH):
            continue
        if best is None or key > best:
            best = key
    assert best is not None  # the ace is always a legal substitute
    name, short = _high_name(best)
    shown = (*_ordered(real, lambda c: c.high), jokers[0])
    return HandValue(best, name, shown, short)


def _a5_ranks(cards: Sequence[Card]) -> list[int]:
    """Ace-low ranks, the joker becoming the lowest rank not present in the hand.

    RRoP s11 Ace-to-Five Lowball 1: "If a joker is used, it becomes the lowest card not
    present in your hand."
    """
    ranks = [c.low for c in cards if not c.is_joker]
    for _ in range(len(cards) - len(ranks)):
        ranks.append(next(r for r in range(1, 14) if r not in ranks))
    return ranks


def low_a5_5(cards: Sequence[Card]) -> HandValue:
    """Ace-to-five value of exactly five cards: the lower the hand, the larger the value.

    Straights and flushes are ignored and the ace is low (RRoP s9 Razz 2), so a hand is
    judged as a high hand with ace = 1 and no straights or flushes; the order is reversed.
    """
    ranks = _a5_ranks(cards)
    groups = _group(ranks)
    shape = tuple(n for n, _ in groups)
    category = _A5_CATEGORY[shape]
    badness = (category, *(r for _, r in groups))
    counts = Counter(ranks)
    # The joker's rank is the one appended last by _a5_ranks; pair each card with its rank.
    real = [c for c in cards if not c.is_joker]
    playing = list(zip(real + [c for c in cards if c.is_joker], ranks, strict=True))
    playing.sort(key=lambda cr: (counts[cr[1]], cr[1], cr[0].suit_order), reverse=True)
    shown = tuple(c for c, _ in playing)
    ordered = [r for _, r in playing]
    if category == HIGH_CARD:
        name, short = f"{_dashed(ordered)} low", _low_name(ordered)
    else:
        name, short = _high_name(tuple(badness))
        name = f"{name} ({_dashed(ordered)})"
    return HandValue(tuple(-x for x in badness), name, shown, short)


def low_27_5(cards: Sequence[Card]) -> HandValue:
    """Deuce-to-seven value of five cards: the worst conventional hand is the best.

    RRoP s11 Deuce-to-Seven Lowball: straights and flushes count against you, the ace is
    only high, and 5-4-3-2-A is an ace-high hand, not a straight.
    """
    key = _high_key(cards, wheel=False)
    shown = _ordered(cards, lambda c: c.high)
    if key[0] == HIGH_CARD:
        name, short = f"{_dashed(key[1:])} low", _low_name(key[1:])
    else:
        name, short = _high_name(key)
    return HandValue(tuple(-x for x in key), name, shown, short)


# ---------------------------------------------------------------- best-of wrappers


def _best(fives: Iterable[Sequence[Card]], rank5: Callable[[Sequence[Card]], HandValue]) -> HandValue:
    best: HandValue | None = None
    for five in fives:
        value = rank5(five)
        if best is None or value > best:
            best = value
    if best is None:
        raise HandError("no five-card hand can be made")
    return best


def _any_five(hole: Sequence[Card], board: Sequence[Card]) -> Iterable[tuple[Card, ...]]:
    """Every five of the player's cards: hold'em, stud, draw (any five may play)."""
    cards = [*hole, *board]
    if len(cards) < 5:
        raise HandError(f"{len(cards)} cards cannot make a five-card hand")
    return combinations(cards, 5)


def _omaha_fives(hole: Sequence[Card], board: Sequence[Card]) -> Iterable[tuple[Card, ...]]:
    """Exactly two hole cards and three board cards (RRoP s6 Omaha)."""
    if len(hole) < 2 or len(board) < 3:
        raise HandError("Omaha needs at least two hole cards and three board cards")
    return (h + b for h in combinations(hole, 2) for b in combinations(board, 3))


def _qualifies_8(value: HandValue) -> bool:
    """Eight-or-better: five unpaired cards, none above an eight (RRoP s10 Seven-Card Stud High-Low 2)."""
    return value.key[0] == 0 and -value.key[1] <= 8


def evaluate_high(hole: Sequence[Card], board: Sequence[Card] = ()) -> HandValue:
    """Best conventional high hand of any five cards."""
    _reject_jokers([*hole, *board], "high")
    return _best(_any_five(hole, board), high5)


def evaluate_high_joker(hole: Sequence[Card], board: Sequence[Card] = ()) -> HandValue:
    """Best high hand with the bug (RRoP s12 The Joker): draw high with a 53-card deck."""
    return _best(_any_five(hole, board), high5_joker)


def evaluate_omaha_high(hole: Sequence[Card], board: Sequence[Card]) -> HandValue:
    """Best Omaha high hand: two hole cards plus three board cards."""
    _reject_jokers([*hole, *board], "Omaha")
    return _best(_omaha_fives(hole, board), high5)


def evaluate_low_a5(hole: Sequence[Card], board: Sequence[Card] = ()) -> HandValue:
    """Best ace-to-five low of any five cards, no qualifier (razz, ace-to-five lowball)."""
    if sum(c.is_joker for c in [*hole, *board]) > 1:
        raise HandError("only one joker is used at ace-to-five lowball")
    return _best(_any_five(hole, board), low_a5_5)


def evaluate_low_a5_8(hole: Sequence[Card], board: Sequence[Card] = ()) -> HandValue | None:
    """Best eight-or-better ace-to-five low, or None when no low qualifies (stud/8)."""
    _reject_jokers([*hole, *board], "stud high-low")
    value = _best(_any_five(hole, board), low_a5_5)
    return value if _qualifies_8(value) else None


def evaluate_omaha_low_a5_8(hole: Sequence[Card], board: Sequence[Card]) -> HandValue | None:
    """Best Omaha/8 low with two hole cards and three board cards, or None (RRoP s7 Omaha High-Low 2).

    A qualifying low made only with the board plus hole cards that pair it does not count:
    exactly two hole cards must play, which is why a low draw can be "counterfeited".
    """
    _reject_jokers([*hole, *board], "Omaha high-low")
    value = _best(_omaha_fives(hole, board), low_a5_5)
    return value if _qualifies_8(value) else None


def evaluate_low_27(hole: Sequence[Card], board: Sequence[Card] = ()) -> HandValue:
    """Best (lowest) deuce-to-seven hand of any five cards."""
    _reject_jokers([*hole, *board], "deuce-to-seven lowball")
    return _best(_any_five(hole, board), low_27_5)


SPECS: dict[str, EvaluatorSpec] = {
    spec.name: spec
    for spec in (
        EvaluatorSpec("high", evaluate_high, low=False, ace_low=False),
        EvaluatorSpec("high_joker", evaluate_high_joker, low=False, ace_low=False, jokers=True),
        EvaluatorSpec("omaha_high", evaluate_omaha_high, low=False, ace_low=False),
        EvaluatorSpec("low_a5", evaluate_low_a5, low=True, ace_low=True, jokers=True),
        EvaluatorSpec("low_a5_8", evaluate_low_a5_8, low=True, ace_low=True),
        EvaluatorSpec("omaha_low_a5_8", evaluate_omaha_low_a5_8, low=True, ace_low=True),
        EvaluatorSpec("low_27", evaluate_low_27, low=True, ace_low=False),
    )
}

EVALUATORS: dict[str, Evaluator] = {name: spec.evaluate for name, spec in SPECS.items()}


def best_of(evaluator_name: str, hole: Sequence[Card], board: Sequence[Card] = ()) -> HandValue | None:
    """Evaluate one hand by evaluator name; ``KeyError`` names the known evaluators."""
    try:
        evaluator = EVALUATORS[evaluator_name]
    except KeyError:
        raise KeyError(f"unknown evaluator {evaluator_name!r}; known: {', '.join(EVALUATORS)}") from None
    return evaluator(hole, board)


def best_hands(
    evaluator_name: str, hands: Mapping[int, Sequence[Card]], board: Sequence[Card] = ()
) -> tuple[list[int], dict[int, HandValue | None]]:
    """Evaluate every seat; return (winning seats in seat order, value of each seat).

    The winners list is empty when no hand qualifies (a low with no 8-or-better).
    """
    values = {seat: best_of(evaluator_name, cards, board) for seat, cards in hands.items()}
    qualified = [v for v in values.values() if v is not None]
    if not qualified:
        return [], values
    top = max(qualified)
    return sorted(seat for seat, v in values.items() if v is not None and v == top), values
