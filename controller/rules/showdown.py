"""Cards speak: split one pot in chips among the hands that reach the showdown.

A game's showdown is a tuple of evaluator names from :mod:`controller.rules.evaluate`: one name
awards the whole pot to the best hand for it, two names ``(high, low)`` split the pot
high-low.  The pot is in units of the smallest chip in play: an odd chip is broken down to
the smallest unit used in the game before this is called (RRoP s3 Ties 3, TDA 18).  Each
pot (main or side) is awarded by a separate call, never mixed together (RRoP s3 Ties 5(d)).

Odd chips follow the active rules profile:

* ``tda`` - TDA 18: board (button) games give the odd chip to the first seat left of the
  button (18-A); stud, razz and ties in stud/8 to the high card by suit in the best
  five-card hand (18-B); in a high-low split the odd chip of the total pot goes to the high
  side (18-C); identical hands winning both ways split the pot as evenly as possible (18-D).
* ``robert`` - RRoP s3 Ties 5: button games to the first hand clockwise from the button
  (5(a)); stud to the highest card by suit in high games and the lowest card by suit in low
  games, using all the player's cards (5(b)); the high hand gets the odd chip between high
  and low, identical hands split as evenly as possible (5(c)); and for stud high-low RRoP s10
  Seven-Card Stud High-Low 9-10.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from controller.errors import PokerTableError
from controller.rules.cards import Card
from controller.rules.evaluate import SPECS, EvaluatorSpec, HandValue, best_hands, best_of

PROFILES = ("tda", "robert")


class ShowdownError(PokerTableError, ValueError):
    """Raised for a showdown that cannot be awarded (no hands, unknown profile, no button)."""


@dataclass(frozen=True, slots=True)
class PartResult:
    """One part of the pot (the whole pot, or the high or low half) and who won it."""

    part: str  # "pot", "high" or "low"
    evaluator: str
    amount: int  # chips in this part, odd chip included
    winners: tuple[int, ...]  # winning seats in seat order
    values: dict[int, HandValue]  # winning seat -> its hand value
    # Winning seat -> chips from this part.  Empty when identical hands won both halves
    # and the pot was split as a whole (``Award.scoop_split``); see ``Award.shares``.
    shares: dict[int, int]
    odd_chips: tuple[int, ...] = ()  # seats that received one odd chip each

    def describe(self) -> str:
        """'seat 3 wins high with a Flush, Ace high' or 'seats 2, 7 split low with ...'."""
        what = "the pot" if self.part == "pot" else self.part
        names = sorted({self.values[s].name for s in self.winners})
        if len(self.winners) == 1:
            seat = self.winners[0]
            return f"seat {seat} wins {what} with {_with_article(self.values[seat].name)}"
        seats = ", ".join(str(s) for s in sorted(self.winners))
        return f"seats {seats} split {what} with {_with_article(names[0])}"


@dataclass(slots=True)
class Award:
    """Chips for each seat from one pot, and per part who won it with which hand."""

    shares: dict[int, int]
    parts: list[PartResult]
    scoop_split: bool = False  # identical hands won both halves: split as evenly as possible
    notes: list[str] = field(default_factory=list)  # the odd-chip rules applied, for the journal

    @property
    def total(self) -> int:
        return sum(self.shares.values())

    def describe(self) -> str:
        """One line for the table display: 'Seat 3 wins high with a Flush, Ace high; ...'."""
        text = "; ".join(part.describe() for part in self.parts)
        return text[:1].upper() + text[1:]


_ARTICLE_A = ("Pair", "Straight", "Flush", "Full House", "Royal Flush")


def _with_article(name: str) -> str:
    return f"a {name}" if name.startswith(_ARTICLE_A) else name


# ---------------------------------------------------------------- odd-chip orders


OrderKey = Callable[[int], tuple]


def _clockwise_from_button(button: int | None, table_size: int) -> OrderKey:
    """Seats nearest clockwise (to the left) of the button first; the button itself last.

    TDA 18-A ("first seat left of the button") and RRoP s3 Ties 5(a) ("the first hand
    clockwise from the button") are the same order.
    """
    if button is None:
        raise ShowdownError("a button game needs the button position to award an odd chip")
    if table_size < 1:
        raise ShowdownError("table_size must be positive")
    return lambda seat: ((seat - button - 1) % table_size, seat)


def _rank_of(spec: EvaluatorSpec) -> Callable[[Card], int]:
    return (lambda c: c.low) if spec.ace_low else (lambda c: c.high)


def _card_by_suit(spec: EvaluatorSpec, card: Card) -> tuple[int, int]:
    """A card's place when ranks then suits decide (suits: RRoP s3 Ties 1, bridge order)."""
    return (_rank_of(spec)(card), card.suit_order)


def _stud_order(
    profile: str, spec: EvaluatorSpec, hands: dict[int, list[Card]], values: dict[int, HandValue]
) -> OrderKey:
    """Odd-chip order between tied stud hands."""
    if profile == "tda":
        # TDA 18-B: "the odd chip goes to the high card by suit in the best 5-card hand",
        # for the high and the low part alike (razz, and ties in stud/8).  The rank order is
        # the part's own: in a low the ace is the lowest card.
        def tda_key(seat: int) -> tuple:
            top = max(_card_by_suit(spec, c) for c in values[seat].cards)
            return (tuple(-x for x in top), seat)

        return tda_key
    if spec.low:
        # RRoP s3 Ties 5(b): "to the lowest card by suit in all low games", all cards used;
        # RRoP s10 Seven-Card Stud High-Low 10: "the low card by suit" for tied low hands.
        def robert_low_key(seat: int) -> tuple:
            return (min(_card_by_suit(spec, c) for c in hands[seat]), seat)

        return robert_low_key

    # RRoP s3 Ties 5(b): "the highest card by suit in all high games" using all cards, not
    # just the five that play; RRoP s10 Seven-Card Stud High-Low 10 for the high half.
    def robert_high_key(seat: int) -> tuple:
        top = max(_card_by_suit(spec, c) for c in hands[seat])
        return (tuple(-x for x in top), seat)

    return robert_high_key


def _odd_chip_order(
    profile: str,
    spec: EvaluatorSpec,
    stud: bool,
    button: int | None,
    table_size: int,
    hands: dict[int, list[Card]],
    values: dict[int, HandValue],
) -> OrderKey:
    if stud:
        return _stud_order(profile, spec, hands, values)
    return _clockwise_from_button(button, table_size)


def _split(
    amount: int, seats: Sequence[int], order: Callable[[], OrderKey]
) -> tuple[dict[int, int], tuple[int, ...]]:
    """Split ``amount`` evenly; leftover chips one each to the first seats in ``order()``.

    There are fewer leftover chips than seats, so nobody receives more than one odd chip
    (RRoP s3 Ties 4).  ``order`` is only called when there is an odd chip, so a button is
    needed only when it matters.
    """
    base, odd = divmod(amount, len(seats))
    ranked = sorted(seats, key=order()) if odd else sorted(seats)
    shares = {seat: base + (1 if i < odd else 0) for i, seat in enumerate(ranked)}
    return shares, tuple(ranked[:odd])


# ---------------------------------------------------------------- award


def award_pot(
    game_showdown: tuple[str, ...],
    hands: dict[int, list[Card]],
    board: list[Card],
    pot: int,
    *,
    profile: str,
    button: int | None,
    table_size: int,
    stud: bool,
    named: bool = True,
) -> Award:
    """Award one pot by cards speak.

    ``named`` False: the parts carry no hand values (no names to show), which spares the
    reference evaluator when only the chips matter (the odd-chip order still reads them in stud).

    ``hands`` maps each seat still in the pot to its cards (hole cards; for stud all seven
    cards, up and down); ``board`` is the shared board (empty for stud and draw).  One
    evaluator name: the best hand takes the pot.  Two names (high, low): the best high takes
    half, the best qualifying low the other half, and with no qualifying low the best high
    takes the whole pot (RRoP s7 Omaha High-Low 2, s10 Seven-Card Stud High-Low 2).  Ties split evenly.
    """
    if profile not in PROFILES:
        raise ShowdownError(f"unknown odd-chip profile {profile!r}; known: {', '.join(PROFILES)}")
    if not hands:
        raise ShowdownError("no hands at the showdown")
    if pot < 0:
        raise ShowdownError("a pot cannot be negative")
    if not 1 <= len(game_showdown) <= 2:
        raise ShowdownError("a showdown is one evaluator, or two for high-low split")
    try:
        specs = [SPECS[name] for name in game_showdown]
    except KeyError as exc:
        raise ShowdownError(f"unknown evaluator {exc.args[0]!r}") from None

    results = []  # (part label, spec, winners, values) for parts with a qualifying hand
    labels = ("pot",) if len(specs) == 1 else ("high", "low")
    for label, spec in zip(labels, specs, strict=True):
        winners, values = _winners(spec.name, hands, board, named)
        if winners:
            results.append((label, spec, winners, values))
    if not results:
        raise ShowdownError(f"no hand qualifies for {' or '.join(game_showdown)}")

    def order_for(spec: EvaluatorSpec, values: dict[int, HandValue]) -> Callable[[], OrderKey]:
        def order() -> OrderKey:
            for seat in hands:  # names skipped (named=False): the stud odd-chip order reads the hands
                if seat not in values and stud:
                    value = best_of(spec.name, hands[seat], board)
                    if value is not None:
                        values[seat] = value
            return _odd_chip_order(profile, spec, stud, button, table_size, hands, values)

        return order

    notes: list[str] = []
    parts: list[PartResult] = []

    if len(results) == 2 and set(results[0][2]) == set(results[1][2]) and len(results[0][2]) > 1:
        # Identical hands win both ways: split the whole pot as evenly as possible, not
        # half by half (TDA 18-D and its Example 1; RRoP s3 Ties 5(c) last sentence; RRoP s10
        # Seven-Card Stud High-Low 9: "the player with the highest card by suit receives the
        # odd chip").  The odd chip goes as in a high game of that form.
        _, hi_spec, seats, hi_values = results[0]
        shares, odd = _split(pot, seats, order_for(hi_spec, hi_values))
        notes.append(
            "identical hands won high and low: split as evenly as possible"
            + _cite(profile, "scoop-stud" if stud else "scoop")
        )
        halves = (pot - pot // 2, pot // 2)
        for i, ((label, spec, winners, values), half) in enumerate(zip(results, halves, strict=True)):
            parts.append(
                PartResult(label, spec.name, half, tuple(winners), values, {}, odd if i == 0 else ())
            )
        return Award(dict(sorted(shares.items())), parts, scoop_split=True, notes=notes)

    if len(results) == 2:
        # The high side gets the odd chip of the total pot (TDA 18-C; RRoP s3 Ties 5(c);
        # RRoP s10 Seven-Card Stud High-Low 9: "the chip goes to the high hand").
        amounts = [pot - pot // 2, pot // 2]
        if pot % 2:
            notes.append(
                "odd chip of the total pot to the high side" + _cite(profile, "hilo-stud" if stud else "hilo")
            )
    else:
        amounts = [pot]
        if len(specs) == 2:
            notes.append(
                "no qualifying low: the best high hand wins the whole pot"
                + (" (RRoP s10 Seven-Card Stud High-Low 2)" if stud else " (RRoP s7 Omaha High-Low 2)")
            )

    totals: dict[int, int] = {}
    for (label, spec, winners, values), amount in zip(results, amounts, strict=True):
        shares, odd = _split(amount, winners, order_for(spec, values))
        if odd:
            case = ("stud-low" if spec.low else "stud") if stud else "button"
            notes.append(
                f"odd chip(s) in {label} to seat(s) {', '.join(map(str, odd))}" + _cite(profile, case)
            )
        parts.append(PartResult(label, spec.name, amount, tuple(winners), values, shares, odd))
        for seat, chips in shares.items():
            totals[seat] = totals.get(seat, 0) + chips
    return Award(dict(sorted(totals.items())), parts, notes=notes)


def kept_after_draw(evaluator: str, before: Sequence[Card], discarded: int) -> list[Card]:
    """The cards a player kept when the draw's discards were not identified.

    Nothing saw which cards went in, only how many; the hand the player tables is read as the
    best partial hand he could keep from what he held before the draw (the pairs kept in a
    high game; in a low game the lowest unpaired cards, the ace low in ace-to-five and high in
    deuce-to-seven).  A discard the muck reader identified is never guessed.
    """
    from itertools import combinations

    keep = len(before) - discarded
    if keep <= 0:
        return []
    if evaluator.startswith("low"):
        ace_low = evaluator.startswith("low_a5")

        def strength(cards: Iterable[Card]) -> tuple:
            ranks = sorted(((c.low if ace_low else c.high) for c in cards), reverse=True)
            paired = len(ranks) - len(set(ranks))
            return (-paired, tuple(-r for r in ranks))
    else:
        def strength(cards: Iterable[Card]) -> tuple:
            counts: dict[int, int] = {}
            for c in cards:
                counts[c.high] = counts.get(c.high, 0) + 1
            return tuple(sorted(((n, r) for r, n in counts.items()), reverse=True))

    return list(max(combinations(before, keep), key=strength))


#: A faster valuation of one hand, larger is better, the reference evaluator's order (installed by
#: the application: :func:`install_fast_values` with :func:`controller.equity.fasteval.card_values`).
#: The core stays free of NumPy; without it every hand goes through :mod:`controller.rules.evaluate`.
FastValues = Callable[[str, Sequence[Card], Sequence[Card]], int]
_fast_values: FastValues | None = None


def install_fast_values(fn: FastValues | None) -> None:
    """Use ``fn`` to find who wins (it raises ``ValueError`` for hands it does not take)."""
    global _fast_values
    _fast_values = fn


def _winners(name: str, hands: dict[int, list[Card]], board: list[Card],
             named: bool = True) -> tuple[list[int], dict[int, HandValue]]:
    """The best hands for one evaluator and their values (names).  Who wins is found with the
    installed fast valuation where it takes the hands; the reference evaluator names the winners,
    and decides alone for jokers, odd card counts, or with no fast valuation installed."""
    fast: dict[int, int] | None = None
    if _fast_values is not None and all(c.rank is not None for cards in hands.values() for c in cards):
        try:
            fast = {seat: _fast_values(name, cards, board) for seat, cards in hands.items()}
        except (ValueError, IndexError, KeyError):
            fast = None
    if fast is None:
        winners, values = best_hands(name, dict(hands.items()), board)
        return winners, {s: v for s, v in values.items() if s in winners and v is not None}
    top = max(fast.values())
    if top <= 0:
        return [], {}
    winners = sorted(seat for seat, v in fast.items() if v == top)
    if not named:
        return winners, {}
    values = {seat: best_of(name, hands[seat], board) for seat in winners}
    return winners, {s: v for s, v in values.items() if v is not None}


_CITATIONS = {
    ("tda", "button"): "TDA 18-A",
    ("tda", "stud"): "TDA 18-B",
    ("tda", "stud-low"): "TDA 18-B",
    ("tda", "hilo"): "TDA 18-C",
    ("tda", "hilo-stud"): "TDA 18-C",
    ("tda", "scoop"): "TDA 18-D",
    ("tda", "scoop-stud"): "TDA 18-D",
    ("robert", "button"): "RRoP s3 Ties 5(a)",
    ("robert", "stud"): "RRoP s3 Ties 5(b), s10 Seven-Card Stud High-Low 10",
    ("robert", "stud-low"): "RRoP s3 Ties 5(b), s10 Seven-Card Stud High-Low 10",
    ("robert", "hilo"): "RRoP s3 Ties 5(c)",
    ("robert", "hilo-stud"): "RRoP s3 Ties 5(c), s10 Seven-Card Stud High-Low 9",
    ("robert", "scoop"): "RRoP s3 Ties 5(c)",
    ("robert", "scoop-stud"): "RRoP s3 Ties 5(c), s10 Seven-Card Stud High-Low 9",
}


def _cite(profile: str, case: str) -> str:
    return f" ({_CITATIONS[profile, case]})"
