"""Win percentages for the broadcast overlay, recomputed the instant a card lands.

``equity(game, hands, board, dead)`` deals every unknown card - the rest of the board, the
hole cards or stud cards still to come - either exhaustively (exact enumeration) or at
random (Monte Carlo, with a stated standard error), evaluates every showdown with the
vectorised tables of :mod:`controller.equity.fasteval`, and averages each seat's share of the pot:

* ties split the pot (a two-way tie is worth half a pot to each: ``tie`` holds those
  fractional shares, ``win`` the chance of taking the whole pot alone);
* high-low games split each outcome half high, half to the best qualifying low (the whole
  pot to the high when no low qualifies), so scoops, halves and quarters are counted as
  such (``scoop``, ``high``, ``low``, ``quarter``);
* dead cards (folded hands, exposed burn cards, stud upcards of folded players) are out of
  the deck;
* stud with more players than cards deals a common seventh-street card (RRoP s8).

``exact=None`` chooses exact enumeration when the number of evaluations fits a budget
(hold'em at any street, Omaha from the flop, stud late streets) and Monte Carlo otherwise.
Draw games before the draw have no meaningful equity (everybody draws): :func:`equity`
returns each hand's current strength there (:func:`hand_strength`), and the plain showdown
once ``after_draw=True``.

Everything here is pure computation: no I/O, and the lookup tables load lazily on first use.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from controller.equity import fasteval as fe
from controller.errors import PokerTableError
from controller.rules.cards import RANKS, SUITS, Card
from controller.rules.evaluate import HandError, best_hands, best_of
from controller.rules.games import Family, GameError, get_game

DEFAULT_SAMPLES = 50_000  # standard error <= 0.23 % of the pot per seat
# Cost (in seven-card evaluations: about 0.4 s) above which exact=None switches to Monte
# Carlo.  Preflop hold'em is at most ~4.4 M; six-handed preflop Omaha ~5.9 M.
EXACT_BUDGET = 12_000_000
_HARD_LIMIT = 100 * EXACT_BUDGET  # exact=True beyond this is refused: it would take minutes
_CHUNK = 1 << 17  # evaluations per vectorised step (bounds memory; keeps temporaries near the cache)
_OMAHA_ELEMENTS = 60  # five-card evaluations per Omaha hand (two of four hole cards x three of five)
_OMAHA_COST = 10  # ...which together cost about as much as ten seven-card evaluations


class EquityError(PokerTableError, ValueError):
    """Cards that cannot be dealt out (duplicates, jokers, too many cards, unknown game)."""


@dataclass(frozen=True, slots=True)
class HandStrength:
    """How good a hand is now, for games where equity means nothing yet (draw before the draw).

    ``percentile`` is the share of all 2,598,960 five-card hands (52-card deck) that this
    hand beats, ties counted half: 1.0 is the nuts.  None for hands of other sizes.
    """

    evaluator: str
    value: int  # fasteval value: larger is better, 0 = no qualifying low
    name: str  # as the dealer calls it (controller.rules.evaluate)
    percentile: float | None


@dataclass(frozen=True, slots=True)
class EquityResult:
    """Each seat's share of the pot, averaged over every way the unknown cards can fall.

    ``equity = win + tie`` per seat.  ``stderr`` is the standard error of each equity (0 for
    exact results).  For high-low games ``high + low = equity``: ``high``/``low`` are the
    pot fractions won through each half, ``scoop`` (= ``win``) the chance of the whole pot
    alone, ``quarter`` the chance of exactly a quarter of it, ``low_qualifies`` the chance
    that any low qualifies.
    """

    game: str
    method: str  # "exact", "monte_carlo" or "hand_strength"
    equity: dict[int, float]
    win: dict[int, float]
    tie: dict[int, float]
    stderr: dict[int, float]
    outcomes: int  # deals enumerated or sampled
    elapsed: float  # seconds
    hilo: bool = False
    high: dict[int, float] = field(default_factory=dict)
    low: dict[int, float] = field(default_factory=dict)
    scoop: dict[int, float] = field(default_factory=dict)
    quarter: dict[int, float] = field(default_factory=dict)
    low_qualifies: float | None = None
    common_card: bool = False  # stud: seventh street is a common card (not enough cards)
    strength: dict[int, HandStrength] = field(default_factory=dict)


# ---------------------------------------------------------------- hand strength


_DISTRIBUTIONS: dict[str, np.ndarray] = {}


def _distribution(evaluator: str) -> np.ndarray:
    """cumulative[v] = how many five-card hands have a value below v (52-card deck)."""
    cumulative = _DISTRIBUTIONS.get(evaluator)
    if cumulative is None:
        hands = fe.combination_indexes(52, 5)
        counts = np.bincount(fe.evaluate_batch(evaluator, hands), minlength=fe.value_count(evaluator) + 2)
        cumulative = np.concatenate([[0], np.cumsum(counts)])
        _DISTRIBUTIONS[evaluator] = cumulative
    return cumulative


def _a5_joker_substitute(cards: Sequence[Card]) -> list[Card]:
    """Ace-to-five: a joker is the lowest rank not in the hand (RRoP s11 Ace-to-Five Lowball 1)."""
    real = [c for c in cards if not c.is_joker]
    present = {c.low for c in real}
    order = ["A", *RANKS[:-1]]  # ace low
    out = list(real)
    for _ in range(len(cards) - len(real)):
        rank = next(r for r in order if Card(r, "c").low not in present)
        present.add(Card(rank, "c").low)
        out.append(Card(rank, "c"))
    return out


def hand_strength(game: str, cards: Sequence[Card], board: Sequence[Card] = (), *, part: int = 0) -> HandStrength:
    """Current strength of one hand by the game's showdown evaluator (``part`` 1: the low half)."""
    try:
        spec = get_game(game)
    except GameError as exc:
        raise EquityError(str(exc)) from None
    if not 0 <= part < len(spec.showdown):
        raise EquityError(f"{game} has {len(spec.showdown)} showdown part(s)")
    evaluator = spec.showdown[part]
    cards, board = list(cards), list(board)
    try:
        value = best_of(evaluator, cards, board)
    except HandError as exc:
        raise EquityError(str(exc)) from None
    name = value.name if value is not None else "no qualifying low"
    if any(c.is_joker for c in [*cards, *board]):
        if evaluator != "low_a5" or board:
            raise EquityError(f"a joker is not evaluated in {evaluator}")
        cards = _a5_joker_substitute(cards)
    fast = fe.evaluate(evaluator, cards, board)
    percentile = None
    if evaluator not in fe.OMAHA and len(cards) + len(board) == 5:
        cumulative = _distribution(evaluator)
        below, upto = cumulative[fast], cumulative[fast + 1]
        percentile = float((below + 0.5 * (upto - below)) / cumulative[-1])
    return HandStrength(evaluator, fast, name, percentile)


# ---------------------------------------------------------------- dealing plan


def _code(card: Card) -> int:
    if card.is_joker:
        raise EquityError("a joker cannot be dealt out here (only ace-to-five lowball uses it)")
    return RANKS.index(card.rank) * 4 + SUITS.index(card.suit)


def _assignments(sizes: Sequence[int]) -> np.ndarray:
    """Every way to split positions 0..M-1 into groups of ``sizes`` (each group ascending)."""
    total = sum(sizes)
    states: list[tuple[tuple[int, ...], tuple[int, ...]]] = [((), tuple(range(total)))]
    for size in sizes:
        grown = []
        for chosen, rest in states:
            for pick in combinations(rest, size):
                taken = set(pick)
                grown.append((chosen + pick, tuple(x for x in rest if x not in taken)))
        states = grown
    return np.array([chosen for chosen, _ in states], dtype=np.intp).reshape(len(states), total)


@dataclass(slots=True)
class _Plan:
    game: str
    evaluators: tuple[str, ...]
    omaha: bool
    seats: list[int]
    deck: np.ndarray  # codes of the cards that can still come (int8)
    board_slots: np.ndarray  # (5,) or (1,) columns of the extended deal forming the board
    hole_slots: np.ndarray  # (P, h) columns of the extended deal forming each hand
    known: np.ndarray  # codes appended to every deal after the dealt cards (int8)
    sizes: list[int]  # cards dealt: board first, then each seat
    common_card: bool = False

    @property
    def dealt(self) -> int:
        return sum(self.sizes)


def _plan(game: str, hands: dict[int, Sequence[Card]], board: Sequence[Card], dead: Sequence[Card]) -> _Plan:
    try:
        spec = get_game(game)
    except GameError as exc:
        raise EquityError(str(exc)) from None
    if not hands:
        raise EquityError("no hands")
    seats = sorted(hands)
    holes = [list(hands[s]) for s in seats]
    board, dead = list(board), list(dead)
    faces = [(c.rank, c.suit) for c in [*board, *dead, *(c for h in holes for c in h)]]
    codes = [_code(c) for c in [*board, *dead, *(c for h in holes for c in h)]]
    if len(set(faces)) != len(faces):
        raise EquityError("a card appears twice among the hands, board and dead cards")
    if spec.family is Family.BOARD:
        hole_size, board_size = spec.hole_cards, spec.board_cards
        if len(board) > board_size:
            raise EquityError(f"{game} has {board_size} board cards")
    else:
        hole_size, board_size = 7, 0
        if board:
            raise EquityError(f"{game} has no board: give each seat's up and down cards")
    for seat, hole in zip(seats, holes, strict=True):
        if len(hole) > hole_size:
            raise EquityError(f"seat {seat} has {len(hole)} cards; {game} deals {hole_size}")
    deck = np.array(sorted(set(range(52)) - set(codes)), dtype=np.int8)
    needs = [hole_size - len(h) for h in holes]
    board_need = board_size - len(board)
    common = False
    if board_need + sum(needs) > len(deck) and spec.family is Family.STUD and min(needs) >= 1:
        # RRoP s8: not enough cards for everyone on seventh street: one common card for all.
        needs = [n - 1 for n in needs]
        board_need, common = 1, True
    if board_need + sum(needs) > len(deck):
        raise EquityError(f"{board_need + sum(needs)} cards to come but only {len(deck)} left in the deck")
    # Extended deal row: [dealt board][dealt seat 1]...[dealt seat P][known board][known holes].
    dealt = board_need + sum(needs)
    known = [_code(c) for c in board]
    board_slots = list(range(board_need)) + [dealt + i for i in range(len(board))]
    hole_slots = []
    position = board_need
    for hole, need in zip(holes, needs, strict=True):
        start = dealt + len(known)
        known += [_code(c) for c in hole]
        hole_slots.append([start + i for i in range(len(hole))] + list(range(position, position + need)))
        position += need
    return _Plan(
        game=game,
        evaluators=spec.showdown,
        omaha=spec.showdown[0] in fe.OMAHA,
        seats=seats,
        deck=deck,
        board_slots=np.array(board_slots, dtype=np.intp),
        hole_slots=np.array(hole_slots, dtype=np.intp).reshape(len(seats), -1),
        known=np.array(known, dtype=np.int8),
        sizes=[board_need, *needs],
        common_card=common,
    )


# ---------------------------------------------------------------- evaluating deals


def _values(plan: _Plan, deals: np.ndarray) -> list[np.ndarray]:
    """(P, B) values per showdown evaluator for B deals (rows of dealt card codes).

    Seats come first throughout: reductions over seats and combinations then run
    elementwise over long rows, which NumPy does far faster than over short last axes.
    """
    rows = len(deals)
    extended = np.concatenate([deals, np.broadcast_to(plan.known, (rows, len(plan.known)))], axis=1)
    board = extended[:, plan.board_slots]  # (B, 5)
    dealt_holes = plan.dealt > plan.sizes[0]
    holes = (extended if dealt_holes else extended[:1])[:, plan.hole_slots].transpose(1, 0, 2)  # (P, B|1, h)
    if plan.omaha:
        pairs = fe.subset_sums(holes, 2)  # (6, P, B|1)
        triples = fe.subset_sums(board, 3)  # (10, B)
        sums = pairs[:, None, :, :] + triples[None, :, None, :]  # (6, 10, P, B)
        out = []
        for ev in plan.evaluators:
            values = fe.values_from_sums5(ev, sums)
            out.append(values.reshape(-1, *values.shape[2:]).max(axis=0))
        return out
    # Any five of seven: board sum once per deal, plus each hand's sum.
    sums = fe.key_sums(fe.KEY7, holes) + fe.key_sums(fe.KEY7, board)[None, :]

    def bits_at(hit: tuple[np.ndarray, ...]) -> np.ndarray:
        seat, deal = hit
        hole_bits = fe.key_sums(fe.BITS, holes[seat, deal if dealt_holes else 0])
        return fe.key_sums(fe.BITS, board[deal]) + hole_bits

    n = plan.board_slots.size + plan.hole_slots.shape[1]
    return [fe.values_from_sums7(ev, n, sums, bits_at) for ev in plan.evaluators]


class _Tally:
    """Running sums of each seat's share of the pot over outcomes."""

    def __init__(self, players: int, hilo: bool) -> None:
        self.hilo = hilo
        self.count = 0
        self.share = np.zeros(players)
        self.share_sq = np.zeros(players)
        self.whole = np.zeros(players)
        self.high = np.zeros(players)
        self.low = np.zeros(players)
        self.quarter = np.zeros(players)
        self.low_qualifies = 0

    def add(self, values: list[np.ndarray]) -> None:
        """Values (P, B) per evaluator for B outcomes."""
        share, high_part, low_part = fe.pot_shares(values[0], values[1] if self.hilo else None)
        if self.hilo:
            self.low += low_part.sum(axis=1)
            self.quarter += np.isclose(share, 0.25).sum(axis=1)
            self.low_qualifies += int((values[1] > 0).any(axis=0).sum())
        self.count += share.shape[1]
        self.share += share.sum(axis=1)
        self.share_sq += np.square(share).sum(axis=1)
        self.whole += (share == 1.0).sum(axis=1)
        self.high += high_part.sum(axis=1)


def _result(plan: _Plan, tally: _Tally, method: str, started: float) -> EquityResult:
    n = max(tally.count, 1)
    mean = tally.share / n
    if method == "exact" or tally.count < 2:
        stderr = np.zeros_like(mean)
    else:
        variance = np.maximum(tally.share_sq / n - mean**2, 0.0) * n / (n - 1)
        stderr = np.sqrt(variance / n)

    def per_seat(array: np.ndarray) -> dict[int, float]:
        return {seat: float(x) for seat, x in zip(plan.seats, array, strict=True)}

    win = tally.whole / n
    hilo = tally.hilo
    return EquityResult(
        game=plan.game,
        method=method,
        equity=per_seat(mean),
        win=per_seat(win),
        tie=per_seat(mean - win),
        stderr=per_seat(stderr),
        outcomes=tally.count,
        elapsed=time.perf_counter() - started,
        hilo=hilo,
        high=per_seat(tally.high / n) if hilo else {},
        low=per_seat(tally.low / n) if hilo else {},
        scoop=per_seat(win) if hilo else {},
        quarter=per_seat(tally.quarter / n) if hilo else {},
        low_qualifies=tally.low_qualifies / n if hilo else None,
        common_card=plan.common_card,
    )


# ---------------------------------------------------------------- enumeration and sampling


def exact_outcomes(plan: _Plan) -> int:
    """Number of distinct deals of the unknown cards."""
    dealt = plan.dealt
    ways = math.comb(len(plan.deck), dealt) * math.factorial(dealt)
    for size in plan.sizes:
        ways //= math.factorial(size)
    return ways


def _weight(plan: _Plan, cost: bool = False) -> int:
    """Evaluations per deal (seats x evaluators x Omaha combinations); ``cost``: in time units."""
    per_hand = (_OMAHA_COST if cost else _OMAHA_ELEMENTS) if plan.omaha else 1
    return len(plan.seats) * len(plan.evaluators) * per_hand


def _evaluator(plan: _Plan):
    """The per-chunk evaluation function for this plan."""
    if plan.omaha or plan.dealt != plan.sizes[0]:
        return lambda deals: _values(plan, deals)
    # Every hand known, only board cards to come (hold'em; stud at the river): the sums of
    # the hole cards never change, so each deal costs one board sum plus one add per seat.
    holes = plan.known[plan.hole_slots - plan.dealt]
    hole_sums = fe.key_sums(fe.KEY7, holes)
    hole_bits = fe.key_sums(fe.BITS, holes)
    known_board = plan.known[: plan.board_slots.size - plan.sizes[0]]
    n = plan.board_slots.size + plan.hole_slots.shape[1]

    def evaluate(deals: np.ndarray) -> list[np.ndarray]:
        board = np.concatenate([deals, np.broadcast_to(known_board, (len(deals), known_board.size))], axis=1)
        sums = hole_sums[:, None] + fe.key_sums(fe.KEY7, board)[None, :]  # (P, B)

        def bits_at(hit: tuple[np.ndarray, ...]) -> np.ndarray:
            seat, deal = hit
            return fe.key_sums(fe.BITS, board[deal]) + hole_bits[seat]

        return [fe.values_from_sums7(ev, n, sums, bits_at) for ev in plan.evaluators]

    return evaluate


def _run_exact(plan: _Plan, tally: _Tally) -> None:
    evaluate = _evaluator(plan)
    assignment = _assignments(plan.sizes)  # (Q, M)
    combos = fe.combination_indexes(len(plan.deck), plan.dealt)
    per_combo = len(assignment) * _weight(plan)
    step = max(1, _CHUNK // per_combo)
    for start in range(0, len(combos), step):
        cards = plan.deck[combos[start : start + step]]  # (C, M)
        deals = cards[:, assignment].reshape(len(cards) * len(assignment), plan.dealt)  # (C * Q, M)
        tally.add(evaluate(deals))


def _run_monte_carlo(plan: _Plan, tally: _Tally, samples: int, rng: np.random.Generator) -> None:
    evaluate = _evaluator(plan)
    size, dealt = len(plan.deck), plan.dealt
    step = max(1, _CHUNK // _weight(plan))
    done = 0
    while done < samples:
        rows = min(step, samples - done)
        deck = np.tile(plan.deck, (rows, 1))
        index = np.arange(rows)
        for i in range(dealt):  # partial Fisher-Yates shuffle of every row at once
            j = rng.integers(i, size, size=rows)
            picked = deck[index, j]
            deck[index, j] = deck[:, i]
            deck[:, i] = picked
        tally.add(evaluate(np.ascontiguousarray(deck[:, :dealt])))
        done += rows


# ---------------------------------------------------------------- the API


def equity(
    game: str,
    hands: dict[int, Sequence[Card]],
    board: Sequence[Card] = (),
    dead: Sequence[Card] = (),
    *,
    exact: bool | None = None,
    samples: int = DEFAULT_SAMPLES,
    seed: int | None = None,
    after_draw: bool = False,
) -> EquityResult:
    """Each seat's expected share of the pot given every card seen so far.

    ``hands`` maps each seat still in the hand to its known cards (hold'em/Omaha hole cards;
    stud up and down cards; unknown ones are dealt out like the board).  ``board`` is the
    community board so far, ``dead`` every other card known to be out of the deck.
    ``exact``: True enumerates every deal, False samples ``samples`` deals, None chooses by
    cost.  ``seed`` makes Monte Carlo reproducible.  Draw games: before the draw the result
    carries each hand's ``strength`` (method "hand_strength"); with ``after_draw=True`` it is
    the showdown of the hands as they stand.
    """
    started = time.perf_counter()
    try:
        spec = get_game(game)
    except GameError as exc:
        raise EquityError(str(exc)) from None
    if spec.family is Family.DRAW:
        return _draw_equity(game, hands, board, after_draw, started)
    plan = _plan(game, hands, board, dead)
    tally = _Tally(len(plan.seats), hilo=len(plan.evaluators) == 2)
    outcomes = exact_outcomes(plan)
    cost = outcomes * _weight(plan, cost=True)
    if exact is None:
        exact = cost <= EXACT_BUDGET or outcomes <= samples
    if exact:
        if cost > _HARD_LIMIT:
            raise EquityError(f"exact enumeration of {outcomes:,} deals is too large; use Monte Carlo")
        _run_exact(plan, tally)
        return _result(plan, tally, "exact", started)
    if samples < 1:
        raise EquityError("samples must be positive")
    _run_monte_carlo(plan, tally, samples, np.random.default_rng(seed))
    return _result(plan, tally, "monte_carlo", started)


def _draw_equity(
    game: str, hands: dict[int, Sequence[Card]], board: Sequence[Card], after_draw: bool, started: float
) -> EquityResult:
    if not hands:
        raise EquityError("no hands")
    if board:
        raise EquityError(f"{game} has no board")
    seats = sorted(hands)
    if not after_draw:
        strength = {seat: hand_strength(game, hands[seat]) for seat in seats}
        return EquityResult(game, "hand_strength", {}, {}, {}, {}, 0, time.perf_counter() - started, strength=strength)
    evaluator = get_game(game).showdown[0]
    try:
        winners, _ = best_hands(evaluator, {s: list(hands[s]) for s in seats})
    except HandError as exc:
        raise EquityError(str(exc)) from None
    share = {s: (1.0 / len(winners) if s in winners else 0.0) for s in seats}
    win = {s: (1.0 if winners == [s] else 0.0) for s in seats}
    return EquityResult(
        game,
        "exact",
        share,
        win,
        {s: share[s] - win[s] for s in seats},
        {s: 0.0 for s in seats},
        1,
        time.perf_counter() - started,
    )
