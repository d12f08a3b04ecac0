"""The table evaluator agrees with the reference evaluator, PokerKit, eval7, treys and phevaluator.

Agreement is on ORDER: over a large random sample, sorting the hands by our value must sort
them by the other implementation's value too, with exactly the same ties.  eval7, treys and
phevaluator are optional (installed for the benchmark): their tests skip when missing.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pokerkit
import pytest

from controller.equity import fasteval as fe
from controller.rules.cards import parse_cards, standard_deck
from controller.rules.evaluate import EVALUATORS

DECK = standard_deck()
FACES = [c.face for c in DECK]


def deals(count: int, size: int, seed: int) -> np.ndarray:
    """(count, size) distinct random card codes per row."""
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((count, 52)), axis=1)[:, :size].astype(np.int8)


def assert_same_order(ours, theirs) -> None:
    """Sorting by ``ours`` sorts ``theirs`` (larger is better in both), with the same ties."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    order = np.lexsort((theirs, ours))
    a, b = np.diff(ours[order]), np.diff(theirs[order])
    assert np.all((a == 0) == (b == 0)), "ties differ"
    assert np.all((a > 0) == (b > 0)), "order differs"


def assert_same_order_objects(ours, theirs) -> None:
    """The same for comparable objects (PokerKit hands, None meaning no qualifying low)."""
    pairs = sorted(zip(ours, theirs, strict=True), key=lambda pair: pair[0])
    for (a, pa), (b, pb) in zip(pairs, pairs[1:], strict=False):
        if a == b:
            assert pa == pb, (a, b, pa, pb)
        else:
            assert pb is not None and (pa is None or pa < pb), (a, b, pa, pb)


# ---------------------------------------------------------------- reference evaluator


SPLITS = [  # evaluator, hole cards, board cards
    ("high", 7, 0),
    ("high", 2, 4),
    ("high", 5, 0),
    ("omaha_high", 4, 5),
    ("omaha_high", 4, 3),
    ("low_a5", 7, 0),
    ("low_a5", 5, 0),
    ("low_a5_8", 7, 0),
    ("low_a5_8", 6, 0),
    ("omaha_low_a5_8", 4, 5),
    ("low_27", 5, 0),
    ("low_27", 7, 0),
]


@pytest.mark.parametrize(("name", "n_hole", "n_board"), SPLITS)
def test_keys_match_reference_evaluator(name: str, n_hole: int, n_board: int) -> None:
    """value_key(value) is exactly the key controller.rules.evaluate gives the same cards."""
    codes = deals(600, n_hole + n_board, seed=n_hole * 10 + n_board)
    board = codes[:, n_hole:] if n_board else None
    values = fe.evaluate_batch(name, codes[:, :n_hole], board)
    for row, value in zip(codes, values, strict=True):
        cards = fe.decode(row)
        reference = EVALUATORS[name](cards[:n_hole], cards[n_hole:])
        assert fe.value_key(name, value) == (None if reference is None else reference.key), cards


def test_every_five_card_hand() -> None:
    """All 2,598,960 five-card hands: class counts and category frequencies are the textbook ones."""
    hands = fe.combination_indexes(52, 5)
    values = fe.evaluate_batch("high", hands)
    assert len(np.unique(values)) == 7462 == fe.value_count("high")
    counts = np.bincount(values)
    categories = Counter()
    for value in np.flatnonzero(counts):
        categories[fe.value_key("high", value)[0]] += int(counts[value])
    assert categories == {
        8: 40,
        7: 624,
        6: 3744,
        5: 5108,
        4: 10200,
        3: 54912,
        2: 123552,
        1: 1098240,
        0: 1302540,
    }
    lows = fe.evaluate_batch("low_a5_8", hands)
    assert fe.value_count("low_a5_8") == 56  # eight-or-better lows: C(8, 5) rank sets
    assert int((lows > 0).sum()) == 56 * 4**5
    assert len(np.unique(fe.evaluate_batch("low_a5", hands))) == 6175
    assert len(np.unique(fe.evaluate_batch("low_27", hands))) == 7462


def test_single_hand_api_and_codes() -> None:
    cards = parse_cards("As Ks Qs Js Ts 2c 3d")
    assert fe.decode(fe.encode(cards)) == cards
    assert fe.card_code(parse_cards("2c")[0]) == 0 and fe.card_code(parse_cards("As")[0]) == 51
    royal = fe.evaluate("high", cards[:2], cards[2:])
    assert royal == fe.value_count("high")
    assert fe.evaluate("omaha_high", parse_cards("As Ks 2c 3d"), parse_cards("Qs Js Ts")) == royal
    wheel = fe.evaluate("low_a5_8", parse_cards("As 2c 3d 4h 5s 9c Kd"))
    assert fe.value_key("low_a5_8", wheel) == (0, -5, -4, -3, -2, -1)
    assert fe.evaluate("low_a5_8", parse_cards("As 2c 3d 4h 9s 9c Kd")) == 0  # no low
    one = fe.evaluate_batch("high", fe.encode(cards))  # one row
    assert one.shape == (1,) and one[0] == royal
    shared = fe.evaluate_batch("high", [[51, 47], [0, 1]], fe.encode(cards[2:]))  # board shared by rows
    assert shared[0] == royal and shared[1] < royal


def test_bad_input() -> None:
    with pytest.raises(fe.FastEvalError):
        fe.card_code(parse_cards("joker")[0])
    with pytest.raises(fe.FastEvalError):
        fe.evaluate_batch("high", [[0, 1, 2, 3]])
    with pytest.raises(fe.FastEvalError):
        fe.evaluate_batch("high", [[0, 1, 2, 3, 52]])
    with pytest.raises(fe.FastEvalError):
        fe.evaluate_batch("badugi", [[0, 1, 2, 3, 4]])
    with pytest.raises(fe.FastEvalError):
        fe.evaluate_batch("omaha_high", [[0, 1, 2, 3]])


def test_combination_indexes() -> None:
    from itertools import combinations

    for n, k in [(7, 0), (7, 1), (7, 5), (10, 3), (5, 5), (3, 4)]:
        assert fe.combination_indexes(n, k).tolist() == [list(c) for c in combinations(range(n), k)]


# ---------------------------------------------------------------- PokerKit


PK = [  # evaluator, PokerKit class, hole cards, board cards, sample size
    ("high", pokerkit.StandardHighHand, 2, 5, 2500),  # hold'em
    ("high", pokerkit.StandardHighHand, 7, 0, 1500),  # stud
    ("high", pokerkit.StandardHighHand, 5, 0, 20000),  # draw
    ("omaha_high", pokerkit.OmahaHoldemHand, 4, 5, 1200),
    ("low_a5", pokerkit.RegularLowHand, 7, 0, 2000),  # razz
    ("low_a5", pokerkit.RegularLowHand, 5, 0, 20000),  # ace-to-five lowball
    ("low_a5_8", pokerkit.EightOrBetterLowHand, 7, 0, 3000),  # stud/8
    ("omaha_low_a5_8", pokerkit.OmahaEightOrBetterLowHand, 4, 5, 1500),
    ("low_27", pokerkit.StandardLowHand, 5, 0, 20000),  # deuce-to-seven
]


@pytest.mark.parametrize(("name", "pk_class", "n_hole", "n_board", "count"), PK)
def test_agrees_with_pokerkit(name: str, pk_class, n_hole: int, n_board: int, count: int) -> None:
    codes = deals(count, n_hole + n_board, seed=count + n_hole)
    board = codes[:, n_hole:] if n_board else None
    ours = fe.evaluate_batch(name, codes[:, :n_hole], board).tolist()
    faces = ["".join(FACES[c] for c in row) for row in codes.tolist()]
    theirs = [pk_class.from_game_or_none(f[: 2 * n_hole], f[2 * n_hole :]) for f in faces]
    assert_same_order_objects(ours, theirs)
    assert [v == 0 for v in ours] == [t is None for t in theirs]  # 0: no qualifying low


# ---------------------------------------------------------------- eval7, treys, phevaluator


def test_agrees_with_eval7() -> None:
    eval7 = pytest.importorskip("eval7")
    table = [eval7.Card(face) for face in FACES]
    for size in (5, 6, 7):
        codes = deals(100_000 if size == 7 else 30_000, size, seed=size)
        theirs = [eval7.evaluate([table[c] for c in row]) for row in codes.tolist()]
        assert_same_order(fe.evaluate_batch("high", codes), theirs)


def test_agrees_with_treys() -> None:
    treys = pytest.importorskip("treys")
    table = [treys.Card.new(face) for face in FACES]
    evaluator = treys.Evaluator()
    codes = deals(30_000, 7, seed=77)
    theirs = [-evaluator.evaluate([table[c] for c in row[:2]], [table[c] for c in row[2:]]) for row in codes.tolist()]
    assert_same_order(fe.evaluate_batch("high", codes[:, :2], codes[:, 2:]), theirs)


def test_agrees_with_phevaluator() -> None:
    phe = pytest.importorskip("phevaluator")
    codes = deals(50_000, 7, seed=99)
    theirs = [-phe.evaluate_cards(*row) for row in codes.tolist()]  # phevaluator ids are our codes
    assert_same_order(fe.evaluate_batch("high", codes), theirs)
    codes = deals(30_000, 9, seed=98)
    theirs = [-phe.evaluate_omaha_cards(*row[4:], *row[:4]) for row in codes.tolist()]
    assert_same_order(fe.evaluate_batch("omaha_high", codes[:, :4], codes[:, 4:]), theirs)


def test_pot_shares_split_and_quarter() -> None:
    """Players on the first axis: three showdowns (columns) of three players (rows)."""
    high = np.array([[5, 5, 1], [9, 1, 1], [3, 7, 7]]).T
    low = np.array([[4, 4, 0], [0, 0, 0], [2, 0, 2]]).T  # 0: no qualifying low
    share, high_part, low_part = (part.T for part in fe.pot_shares(high, low))
    assert share.tolist() == [[0.5, 0.5, 0.0], [1.0, 0.0, 0.0], [0.25, 0.25, 0.5]]
    assert high_part.tolist() == [[0.25, 0.25, 0.0], [1.0, 0.0, 0.0], [0.0, 0.25, 0.25]]
    assert low_part.tolist() == [[0.25, 0.25, 0.0], [0.0, 0.0, 0.0], [0.25, 0.0, 0.25]]
    share = fe.pot_shares(high)[0].T
    assert share.tolist() == [[0.5, 0.5, 0.0], [1.0, 0.0, 0.0], [0.0, 0.5, 0.5]]
