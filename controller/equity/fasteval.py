"""Fast hand evaluation for equities: NumPy lookup tables, many hands per call.

:mod:`controller.rules.evaluate` is the reference (clear, slow, names every hand); this module
answers the same question - which hand is better - for millions of hands a second, which
is what exact equities need.  Values are plain integers per evaluator, LARGER IS BETTER,
equal values split; ``0`` means "no qualifying low" for the eight-or-better evaluators.
:func:`value_key` turns a value back into the key :class:`controller.rules.evaluate.HandValue`
would carry, so the two modules can be checked against each other.

How it works ("rank sum + flush" decomposition):

* A card is a code ``4 * rank + suit`` (``rank`` 0..12 for 2..A, ``suit`` 0..3 for c, d, h, s:
  the order of :func:`controller.rules.cards.standard_deck`).
* Every card has an additive 32-bit key: a rank part, chosen so that the sum over any
  multiset of up to seven ranks (at most four of a rank) identifies the multiset, plus a suit
  part whose sum over up to seven cards tells which suit, if any, has five cards.  A hand's
  key is the plain SUM of its cards' keys, so the board's sum is computed once and each
  player's hole sum is added to it.
* The rank sum indexes a pattern table (49,205 seven-card rank multisets; 6,175 five-card
  ones) and the pattern's value per evaluator is precomputed (best five of the seven).
* The suit part says whether five cards share a suit; only then the 13-bit rank mask of that
  suit (from a second additive key, one bit per card) indexes a flush table.  With at most
  seven cards a flush always beats whatever the other cards make (no room for a full house).
* Omaha: the six hole pairs and ten board triples give 60 five-card sums per hand,
  evaluated in one gather and max-reduced.

API: :func:`evaluate_batch` (many hands per call, card codes or Card objects),
:func:`evaluate` (one hand of Card objects), :func:`pot_shares` (who gets what of the pot,
high-low quarters included), :func:`value_key` / :func:`value_count`, :func:`encode` /
:func:`decode`, and the low-level :func:`values_from_sums5` / :func:`values_from_sums7` that
:mod:`controller.equity.odds` feeds with broadcast sums.  Evaluators: ``high`` (5 to 7 cards, any
five), ``omaha_high`` (two hole cards and three board cards), ``low_a5`` (razz, ace-to-five),
``low_a5_8`` and ``omaha_low_a5_8`` (eight-or-better), ``low_27`` (deuce-to-seven: five
cards by table, more through their five-card subsets).  Jokers are not taken: the joker
hands of ace-to-five lowball go through :mod:`controller.rules.evaluate` or a substitution.

Tables are built lazily on first use (about half a second for all of them, no file I/O;
about 37 MB, most of it the six- and seven-card rank-sum tables) and kept for the life of
the process; importing this module costs only NumPy.
"""

from __future__ import annotations

import array
import math
import threading
from collections.abc import Callable, Iterable, Sequence
from itertools import combinations, combinations_with_replacement
from typing import Any

import numpy as np

from controller.errors import PokerTableError
from controller.rules.cards import RANKS, SUITS, Card

EVALUATORS = ("high", "omaha_high", "low_a5", "low_a5_8", "omaha_low_a5_8", "low_27")
# Base ranking of each evaluator (the Omaha ones rank five cards like their any-five twins).
_BASE = {
    "high": "high",
    "omaha_high": "high",
    "low_a5": "a5",
    "low_a5_8": "a5_8",
    "omaha_low_a5_8": "a5_8",
    "low_27": "27",
}
OMAHA = frozenset({"omaha_high", "omaha_low_a5_8"})
_SUIT_BLIND = frozenset({"a5", "a5_8"})  # ace-to-five lows ignore straights and flushes

# Rank keys whose sums identify rank multisets (at most four of a rank): for five cards and
# for up to seven cards.  They are checked when the tables are built.
RANK_KEYS_5 = (0, 1, 5, 22, 94, 312, 992, 2422, 5624, 12522, 19998, 43258, 79415)
RANK_KEYS_7 = (0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181)
# Suit keys whose sums over five, six or seven cards tell which suit has five or more.
SUIT_KEYS = (0, 1, 8, 57)
SUIT_SHIFT = 23  # the suit sum (<= 399 for seven cards) sits above the rank sum (< 2**23)
RANK_MASK = (1 << SUIT_SHIFT) - 1

_CODES = np.arange(52)
_RANK_OF = _CODES // 4
_SUIT_OF = _CODES % 4
_SUIT_PART = np.array(SUIT_KEYS, np.uint32)[_SUIT_OF] << np.uint32(SUIT_SHIFT)
KEY5 = (np.array(RANK_KEYS_5, np.uint32)[_RANK_OF] + _SUIT_PART).astype(np.uint32)
KEY7 = (np.array(RANK_KEYS_7, np.uint32)[_RANK_OF] + _SUIT_PART).astype(np.uint32)
BITS = (np.uint64(1) << (16 * _SUIT_OF + _RANK_OF).astype(np.uint64)).astype(np.uint64)  # one bit per card


class FastEvalError(PokerTableError, ValueError):
    """Cards this evaluator cannot take (a joker, a duplicate, too few cards)."""


# ---------------------------------------------------------------- card codes


_CODE_OF: dict[tuple[str | None, str | None], int] = {
    (r, s): 4 * i + j for i, r in enumerate(RANKS) for j, s in enumerate(SUITS)
}


def card_code(card: Card) -> int:
    """``4 * rank + suit`` with rank 0..12 for 2..A and suit 0..3 for c, d, h, s."""
    code = _CODE_OF.get((card.rank, card.suit))
    if code is None:
        raise FastEvalError("the joker has no card code; use controller.rules.evaluate for joker hands")
    return code


def encode(cards: Iterable[Card]) -> np.ndarray:
    """Card codes (int8) of ``cards``, in order."""
    return np.array([card_code(c) for c in cards], dtype=np.int8)


def decode(codes: Iterable[int]) -> list[Card]:
    """Cards (deck ``A``) of card codes."""
    return [Card(RANKS[int(c) // 4], SUITS[int(c) % 4]) for c in codes]


# ---------------------------------------------------------------- five-card class keys
# Keys in the exact format of controller.rules.evaluate's HandValue.key (larger is better), built
# here independently from rank lists so the two implementations check each other.

_STRAIGHT_FLUSH, _FLUSH, _STRAIGHT = 8, 5, 4
_SHAPE_CATEGORY = {(4, 1): 7, (3, 2): 6, (3, 1, 1): 3, (2, 2, 1): 2, (2, 1, 1, 1): 1, (1, 1, 1, 1, 1): 0}


def _groups(ranks: Sequence[int]) -> list[tuple[int, int]]:
    counts: dict[int, int] = {}
    for r in ranks:
        counts[r] = counts.get(r, 0) + 1
    return sorted(((n, r) for r, n in counts.items()), reverse=True)


def _conventional_key(high_ranks: Sequence[int], flush: bool, wheel: bool) -> tuple[int, ...]:
    """(category, tie-breaks) of five ace-high ranks (2..14): the conventional high order."""
    distinct = sorted(set(high_ranks))
    if len(distinct) == 5:
        top = None
        if distinct[-1] - distinct[0] == 4:
            top = distinct[-1]
        elif wheel and distinct == [2, 3, 4, 5, 14]:
            top = 5
        if top is not None:
            return (_STRAIGHT_FLUSH if flush else _STRAIGHT, top)
    groups = _groups(high_ranks)
    tiebreak = tuple(r for _, r in groups)
    if flush:
        return (_FLUSH, *tiebreak)
    return (_SHAPE_CATEGORY[tuple(n for n, _ in groups)], *tiebreak)


def _class_key(base: str, ranks: Sequence[int], flush: bool) -> tuple[int, ...] | None:
    """Key of five cards given rank indexes 0..12 (2..A) for one base ranking."""
    high = [r + 2 for r in ranks]
    if base == "high":
        return _conventional_key(high, flush, wheel=True)
    if base == "27":
        return tuple(-x for x in _conventional_key(high, flush, wheel=False))
    low = [1 if r == 14 else r for r in high]  # ace-to-five: the ace is low, no straights or flushes
    groups = _groups(low)
    badness = (_SHAPE_CATEGORY[tuple(n for n, _ in groups)], *(r for _, r in groups))
    if base == "a5_8" and not (badness[0] == 0 and badness[1] <= 8):
        return None
    return tuple(-x for x in badness)


# ---------------------------------------------------------------- tables


def combination_indexes(n: int, k: int) -> np.ndarray:
    """All k-subsets of range(n) as rows of an (C(n, k), k) int array, in lexicographic order."""
    if k == 0:
        return np.zeros((1, 0), dtype=np.int16)
    if k > n:
        return np.zeros((0, k), dtype=np.int16)
    rows = np.arange(n - k + 1, dtype=np.int16)[:, None]
    for j in range(1, k):
        last = rows[:, -1].astype(np.int64)
        counts = (n - k + j) - last  # choices for column j after `last`, leaving room for the rest
        starts = np.cumsum(counts) - counts
        offsets = np.arange(int(counts.sum())) - np.repeat(starts, counts)
        column = (np.repeat(last + 1, counts) + offsets).astype(np.int16)
        rows = np.concatenate([np.repeat(rows, counts, axis=0), column[:, None]], axis=1)
    return rows


def _rank_multisets(n: int) -> np.ndarray:
    """Sorted rank multisets of size n (at most four of a rank) as rows, in a fixed order."""
    rows = np.array(list(combinations_with_replacement(range(13), n)), dtype=np.int16)
    ok = np.ones(len(rows), dtype=bool)
    for i in range(n - 4):
        ok &= rows[:, i] != rows[:, i + 4]
    return rows[ok]


class _Tables:
    """Every lookup table; built once per process under a lock, each part on first need."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.parts: dict[object, object] = {}

    def get(self, name: object, build: Callable[[], object]) -> object:
        value = self.parts.get(name)
        if value is None:
            with self.lock:
                value = self.parts.get(name)
                if value is None:
                    value = build()
                    self.parts[name] = value
        return value


_TABLES = _Tables()


def _flush_suit(n: int) -> np.ndarray:
    """Suit sum of n cards (n = 5, 6, 7) -> the suit (0..3) holding five or more, or -1."""

    def build() -> np.ndarray:
        table = np.full(512, -1, dtype=np.int8)
        seen = np.zeros(512, dtype=bool)
        for suits in combinations_with_replacement(range(4), n):
            total = sum(SUIT_KEYS[s] for s in suits)
            flush = next((s for s in range(4) if suits.count(s) >= 5), -1)
            if seen[total] and table[total] != flush:  # pragma: no cover - the constants are fixed
                raise RuntimeError(f"suit keys do not identify flushes of {n} cards")
            seen[total] = True
            table[total] = flush
        return table

    return _TABLES.get(("flush_suit", n), build)  # type: ignore[return-value]


def _patterns(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(rank multisets of size n, table from rank sum to the multiset's row)."""

    def build() -> tuple[np.ndarray, np.ndarray]:
        multisets = _rank_multisets(n)
        keys = np.array(RANK_KEYS_5 if n <= 5 else RANK_KEYS_7, np.int64)
        sums = keys[multisets].sum(axis=1)
        if len(np.unique(sums)) != len(sums):  # pragma: no cover - the constants are fixed
            raise RuntimeError(f"rank keys do not identify {n}-card rank multisets")
        dtype = np.int32 if n <= 5 else np.uint16
        table = np.zeros(int(sums.max()) + 1, dtype=dtype)
        table[sums] = np.arange(len(multisets), dtype=dtype)
        return multisets, table

    return _TABLES.get(("patterns", n), build)  # type: ignore[return-value]


def _classes(base: str) -> tuple[list, dict]:
    """Every five-card class key of a base ranking, worst first, and key -> value (1..)."""

    def build() -> tuple[list, dict]:
        multisets, _ = _patterns(5)
        keys = set()
        for row in multisets.tolist():
            keys.add(_class_key(base, row, False))
            if len(set(row)) == 5:
                keys.add(_class_key(base, row, True))
        ordered = sorted(k for k in keys if k is not None)
        return ordered, {k: i + 1 for i, k in enumerate(ordered)}

    return _TABLES.get(("classes", base), build)  # type: ignore[return-value]


def _values5(base: str) -> np.ndarray:
    """Value of each five-card pattern: rows 0..M-1 without a flush, M..2M-1 with one."""

    def build() -> np.ndarray:
        multisets, _ = _patterns(5)
        _, index = _classes(base)
        size = len(multisets)
        values = np.zeros(2 * size, dtype=np.int32)
        for i, row in enumerate(multisets.tolist()):
            key = _class_key(base, row, False)
            values[i] = 0 if key is None else index[key]
            if len(set(row)) == 5:
                key = _class_key(base, row, base not in _SUIT_BLIND)
                values[size + i] = 0 if key is None else index[key]
        return values

    return _TABLES.get(("values5", base), build)  # type: ignore[return-value]


def _flag5() -> np.ndarray:
    """Suit part of a five-card sum -> offset into :func:`_direct5` (L for a flush, else 0)."""

    def build() -> np.ndarray:
        return np.where(_flush_suit(5) >= 0, len(_patterns(5)[1]), 0).astype(np.uint32)

    return _TABLES.get("flag5", build)  # type: ignore[return-value]


def _direct5(base: str) -> np.ndarray:
    """Five-card value (int16) straight from the rank sum: [no flush | flush] halves of L each.

    One gather instead of two, and small enough (1.4 MB) to stay in cache.
    """

    def build() -> np.ndarray:
        multisets, table = _patterns(5)
        values = _values5(base)
        plain = values[: len(multisets)][table]
        if base in _SUIT_BLIND:
            return plain.astype(np.int16)
        return np.concatenate([plain, values[len(multisets) :][table]]).astype(np.int16)

    return _TABLES.get(("direct5", base), build)  # type: ignore[return-value]


def _best_of_subsets(base: str, rank_rows: np.ndarray, flush: bool) -> np.ndarray:
    """Best five-card value over every 5-subset of each row of ranks (n >= 5 columns)."""
    _, table5 = _patterns(5)
    values5 = _values5(base)
    offset = len(_patterns(5)[0]) if flush else 0
    keys = np.array(RANK_KEYS_5, np.int64)
    best = np.zeros(len(rank_rows), dtype=np.int32)
    for subset in combinations(range(rank_rows.shape[1]), 5):
        sums = keys[rank_rows[:, subset]].sum(axis=1)
        best = np.maximum(best, values5[table5[sums] + offset])
    return best


def _values_n(base: str, n: int) -> np.ndarray:
    """Value of each n-card rank pattern (no flush): the best five of the n ranks."""

    def build() -> np.ndarray:
        if base == "27":
            raise AssertionError("deuce-to-seven with more than five cards goes through subsets")
        multisets, _ = _patterns(n)
        return _best_of_subsets(base, multisets, flush=False).astype(np.int16)

    return _TABLES.get(("values", base, n), build)  # type: ignore[return-value]


def _flush_values() -> np.ndarray:
    """High value of the best straight flush or flush in a 13-bit rank mask (0 for < 5 bits)."""

    def build() -> np.ndarray:
        table = np.zeros(8192, dtype=np.int32)
        masks = np.arange(8192)
        popcount = np.array([bin(m).count("1") for m in range(8192)])
        for size in range(5, 14):
            chosen = masks[popcount == size]
            rows = np.array([[r for r in range(13) if m >> r & 1] for m in chosen.tolist()], dtype=np.int16)
            table[chosen] = _best_of_subsets("high", rows, flush=True)
        return table.astype(np.int16)

    return _TABLES.get("flush_values", build)  # type: ignore[return-value]


def warm(evaluators: Iterable[str] = EVALUATORS) -> None:
    """Build the tables of ``evaluators`` now rather than on first use."""
    for name in evaluators:
        base = _base(name)
        _direct5(base)
        _flag5()
        if name not in OMAHA and base != "27":
            for n in (6, 7):
                _patterns(n)
                _values_n(base, n)
                _flush_suit(n)
            if base == "high":
                _flush_values()


# ---------------------------------------------------------------- evaluation on key sums


def _base(evaluator: str) -> str:
    try:
        return _BASE[evaluator]
    except KeyError:
        raise FastEvalError(f"unknown evaluator {evaluator!r}; known: {', '.join(EVALUATORS)}") from None


def key_sums(table: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Sum over the last axis of ``table[codes]``, fast for short rows: (..., n) -> (...)."""
    codes = np.asarray(codes)
    shape = codes.shape[:-1]
    n = codes.shape[-1]
    if n == 0:
        return np.zeros(shape, dtype=table.dtype)
    columns = np.ascontiguousarray(np.moveaxis(codes, -1, 0), dtype=np.int8).reshape(n, -1)
    total = np.take(table, columns[0], mode="wrap")
    for row in columns[1:]:
        total += np.take(table, row, mode="wrap")
    return total.reshape(shape)


BLOCK = 1 << 16  # elements per step inside one call: temporaries stay in cache


def values_from_sums5(evaluator: str, sums: np.ndarray) -> np.ndarray:
    """Values (int16) of five-card hands given their summed :data:`KEY5` (any array shape)."""
    base = _base(evaluator)
    direct = _direct5(base)
    flag = None if base in _SUIT_BLIND else _flag5()
    flat = np.ascontiguousarray(sums).reshape(-1)
    out = np.empty(flat.size, dtype=np.int16)
    mask, shift = np.uint32(RANK_MASK), np.uint32(SUIT_SHIFT)
    for start in range(0, flat.size, BLOCK):
        part = flat[start : start + BLOCK]
        index = part & mask
        if flag is not None:
            index += np.take(flag, part >> shift)
        np.take(direct, index, out=out[start : start + BLOCK])
    return out.reshape(np.shape(sums))


def values_from_sums7(
    evaluator: str,
    n: int,
    sums: np.ndarray,
    bits_at: Callable[[tuple[np.ndarray, ...]], np.ndarray] | None = None,
) -> np.ndarray:
    """Values (int16) of ``n``-card hands (n = 6 or 7, any five play) given their summed :data:`KEY7`.

    ``bits_at(index)`` returns the summed :data:`BITS` of the hands at ``index`` (a tuple
    from ``np.nonzero``): it is only called for the few hands that hold a flush, so callers
    that sum keys by broadcasting (board + hole) never build the bits for every hand.
    """
    base = _base(evaluator)
    if evaluator in OMAHA or base == "27" or n not in (6, 7):
        raise FastEvalError(f"{evaluator} has no {n}-card key table")
    _, table = _patterns(n)
    values = np.take(_values_n(base, n), np.take(table, sums & np.uint32(RANK_MASK)))
    if base == "high":
        suit = np.take(_flush_suit(n), sums >> np.uint32(SUIT_SHIFT))
        hit = np.nonzero(suit >= 0)
        if hit[0].size:
            if bits_at is None:
                raise FastEvalError("a flush needs bits_at")
            shift = (16 * suit[hit].astype(np.uint64)).astype(np.uint64)
            masks = (np.asarray(bits_at(hit), dtype=np.uint64) >> shift) & np.uint64(0x1FFF)
            values[hit] = np.take(_flush_values(), masks.astype(np.intp))
    return values


# ---------------------------------------------------------------- batch API


def _codes(cards, name: str) -> np.ndarray:
    array = np.asarray(cards)
    if array.dtype == object or (array.size and not np.issubdtype(array.dtype, np.integer)):
        rows = np.atleast_2d(np.asarray(cards, dtype=object))
        array = np.array([[card_code(c) for c in row] for row in rows], dtype=np.int8).reshape(rows.shape)
    array = np.atleast_2d(array)
    if array.ndim != 2:
        raise FastEvalError(f"{name}: expected an (N, n) array of card codes")
    if array.size and (array.min() < 0 or array.max() > 51):
        raise FastEvalError(f"{name}: card codes are 0..51")
    return array.astype(np.int8, copy=False)


def subset_sums(codes: np.ndarray, k: int, table: np.ndarray = KEY5) -> np.ndarray:
    """Summed keys of every k-subset of the last axis's n cards: (..., n) -> (C(n, k), ...).

    Subsets come first so that the best-of reduction over them runs along the first axis.
    """
    keys = np.moveaxis(np.take(table, np.asarray(codes, dtype=np.intp)), -1, 0)
    subsets = combination_indexes(keys.shape[0], k).astype(np.intp)
    out = keys[subsets[:, 0]]
    for column in range(1, k):
        out += keys[subsets[:, column]]
    return out


def evaluate_batch(evaluator: str, cards, board=None) -> np.ndarray:
    """Values of many hands in one call: an (N,) int32 array, larger is better.

    ``cards`` is an (N, n) array of card codes (or of Card objects), or one hand of n codes.
    ``board`` (optional) is (N, b), or one row of b codes shared by every hand.  For the
    any-five evaluators the hand is ``cards + board`` (five or more cards); for ``omaha_high``
    and ``omaha_low_a5_8`` exactly two of ``cards`` and three of ``board`` play.  Duplicated
    cards within a hand are not checked (the caller's job, for speed).
    """
    base = _base(evaluator)
    hole = _codes(cards, "cards")
    shared = None if board is None else _codes(board, "board")
    if shared is not None and shared.shape[0] != hole.shape[0]:
        if shared.shape[0] != 1:
            raise FastEvalError("board: one row per hand, or one row for all")
        shared = np.broadcast_to(shared, (hole.shape[0], shared.shape[1]))
    out = np.empty(len(hole), dtype=np.int32)
    if evaluator in OMAHA:
        if shared is None or hole.shape[1] < 2 or shared.shape[1] < 3:
            raise FastEvalError("Omaha needs at least two hole cards and three board cards")
        step = max(1, BLOCK // (math.comb(hole.shape[1], 2) * math.comb(shared.shape[1], 3)))
        for start in range(0, len(hole), step):
            pairs = subset_sums(hole[start : start + step], 2)  # (pairs, N)
            triples = subset_sums(shared[start : start + step], 3)  # (triples, N)
            sums = pairs[:, None, :] + triples[None, :, :]
            values = values_from_sums5(evaluator, sums)
            out[start : start + step] = values.reshape(-1, values.shape[-1]).max(axis=0)
        return out
    codes = hole if shared is None else np.concatenate([hole, shared], axis=1)
    n = codes.shape[1]
    if n < 5:
        raise FastEvalError(f"{n} cards cannot make a five-card hand")
    step = BLOCK if n <= 7 else max(1, BLOCK // math.comb(n, 5))
    for start in range(0, len(codes), step):
        part = codes[start : start + step]
        if n == 5:
            values = values_from_sums5(evaluator, key_sums(KEY5, part))
        elif n in (6, 7) and base != "27":
            def flush_sums(hit: Any, part: Any = part) -> Any:
                return key_sums(BITS, part[hit[0]])

            values = values_from_sums7(evaluator, n, key_sums(KEY7, part), flush_sums)
        else:
            values = values_from_sums5(evaluator, subset_sums(part, 5)).max(axis=0)
        out[start : start + step] = values
    return out


def pot_shares(high: np.ndarray, low: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each hand's share of the pot at many showdowns: values (P, ...) -> (share, high part, low part).

    Players are on the FIRST axis (so the reductions over them are elementwise and fast).
    One evaluator: the best ``high`` values split the pot.  High-low (``low`` given, 0 = no
    qualifying low): the best high splits half and the best qualifying low the other half,
    or the high takes it all when no low qualifies; ties split each half (quarters).
    """
    high = np.asarray(high)
    winners = high == high.max(axis=0)
    count = winners.sum(axis=0, dtype=np.int16)
    if low is None:
        share = winners / count
        return share, share, np.zeros_like(share)
    low = np.asarray(low)
    best_low = low.max(axis=0)
    qualifies = best_low > 0
    low_winners = (low == best_low) & qualifies
    low_count = np.maximum(low_winners.sum(axis=0, dtype=np.int16), 1)
    high_part = winners * (np.where(qualifies, 0.5, 1.0) / count)
    low_part = low_winners * (0.5 / low_count)
    return high_part + low_part, high_part, low_part


def evaluate(evaluator: str, hole: Sequence[Card], board: Sequence[Card] = ()) -> int:
    """Value of one hand from Card objects (see :func:`evaluate_batch`)."""
    cards = encode(hole)[None, :]
    shared = encode(board)[None, :] if len(board) else None
    if shared is None and evaluator in OMAHA:
        raise FastEvalError("Omaha needs board cards")
    return int(evaluate_batch(evaluator, cards, shared)[0])


_PY_KEY5 = [int(k) for k in KEY5]
_PY_KEY7 = [int(k) for k in KEY7]
_PY_BITS = [int(b) for b in BITS]


def evaluate_codes(evaluator: str, hole: Sequence[int], board: Sequence[int] = ()) -> int:
    """Value of ONE hand from card codes, with plain Python sums over the same tables: no NumPy
    call per hand, so a showdown of a few hands costs microseconds (the engine's pot awards).
    Same values as :func:`evaluate_batch`."""
    base = _base(evaluator)
    if evaluator in OMAHA:
        if len(hole) < 2 or len(board) < 3:
            raise FastEvalError("Omaha needs at least two hole cards and three board cards")
        pairs = [_PY_KEY5[a] + _PY_KEY5[b] for a, b in combinations(hole, 2)]
        triples = [_PY_KEY5[a] + _PY_KEY5[b] + _PY_KEY5[c] for a, b, c in combinations(board, 3)]
        direct = _py_direct5(base)
        if base in _SUIT_BLIND:
            return max(direct[(p + t) & RANK_MASK] for p in pairs for t in triples)
        flag = _py_flag5()
        return max(direct[((p + t) & RANK_MASK) + flag[(p + t) >> SUIT_SHIFT]] for p in pairs for t in triples)
    codes = [*hole, *board]
    n = len(codes)
    if n < 5:
        raise FastEvalError(f"{n} cards cannot make a five-card hand")
    if n == 5:
        return _value5(base, sum(map(_PY_KEY5.__getitem__, codes)))
    if n in (6, 7) and base != "27":
        total = sum(map(_PY_KEY7.__getitem__, codes))
        _, table = _patterns(n)
        value = int(_values_n(base, n)[table[total & RANK_MASK]])
        if base == "high":
            suit = int(_flush_suit(n)[total >> SUIT_SHIFT])
            if suit >= 0:
                mask = (sum(map(_PY_BITS.__getitem__, codes)) >> (16 * suit)) & 0x1FFF
                value = int(_flush_values()[mask])
        return value
    return max(_value5(base, sum(map(_PY_KEY5.__getitem__, five))) for five in combinations(codes, 5))


def card_values(evaluator: str, hole: Sequence[Card], board: Sequence[Card] = ()) -> int:
    """:func:`evaluate_codes` of Card objects: what the pot awards install
    (``controller.rules.showdown.install_fast_values``)."""
    if evaluator not in EVALUATORS:
        raise FastEvalError(f"unknown evaluator {evaluator!r}")
    return evaluate_codes(evaluator, [card_code(c) for c in hole], [card_code(c) for c in board])


def _value5(base: str, total: int) -> int:
    index = total & RANK_MASK
    if base not in _SUIT_BLIND:
        index += _py_flag5()[total >> SUIT_SHIFT]
    return _py_direct5(base)[index]


def _py_direct5(base: str) -> array.array:
    """:func:`_direct5` as a plain array: one hand's lookups without NumPy scalars (same 1.4 MB)."""
    return _TABLES.get(("py_direct5", base), lambda: array.array("h", _direct5(base).tobytes()))  # type: ignore[return-value]


def _py_flag5() -> array.array:
    return _TABLES.get("py_flag5", lambda: array.array("I", _flag5().astype(np.uint32).tobytes()))  # type: ignore[return-value]


def value_key(evaluator: str, value: int) -> tuple[int, ...] | None:
    """The :class:`controller.rules.evaluate.HandValue` key of a value (None: no qualifying low)."""
    ordered, _ = _classes(_base(evaluator))
    value = int(value)
    if value == 0:
        return None
    if not 1 <= value <= len(ordered):
        raise FastEvalError(f"{value} is not a value of {evaluator}")
    return ordered[value - 1]


def value_count(evaluator: str) -> int:
    """How many distinct values (hand classes) an evaluator has, not counting 0."""
    return len(_classes(_base(evaluator))[0])
