"""Hand evaluators: hand-picked cases per game, properties, and agreement with PokerKit.

PokerKit is an independent implementation; agreeing with it on the ORDER of thousands of
random hands (and on every pair within a sample) is the main evidence that the rankings are
right.  Names and the joker have no PokerKit counterpart and are checked by hand.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from itertools import combinations

import pokerkit
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules.cards import Card, parse_cards, standard_deck
from controller.rules.evaluate import EVALUATORS, SPECS, HandError, HandValue, best_hands, best_of

DECK = standard_deck()
JOKER = Card.parse("joker")


def value(name: str, hole: str, board: str = "") -> HandValue | None:
    return best_of(name, parse_cards(hole), parse_cards(board))


def must(name: str, hole: str, board: str = "") -> HandValue:
    result = value(name, hole, board)
    assert result is not None
    return result


# ---------------------------------------------------------------- high


@pytest.mark.parametrize(
    ("better", "worse"),
    [
        ("As Ks Qs Js Ts", "9s 8s 7s 6s 5s"),  # royal beats a lower straight flush
        ("5h 4h 3h 2h Ah", "Kc Kd Kh Ks Ac"),  # steel wheel is a straight flush
        ("6c 5d 4h 3s 2c", "5c 4d 3h 2s Ac"),  # six-high straight beats the wheel
        ("5c 4d 3h 2s Ac", "Ac Ad As Kc Qd"),  # the wheel is a straight
        ("Kc Kd Ks 2c 2d", "Qc Qd Qs Ac Ad"),  # full house: trips first
        ("Qc Qd Qs Ac Ad", "Qc Qd Qs Jc Jd"),
        ("2c 3c 4c 5c 7c", "Ac Kd Qh Js Tc"),  # any flush beats any straight
        ("Ac Ad 4c 4d 2s", "Kc Kd Qs Qh Js"),
        ("Ac Ad 4c 4d 3s", "Ac Ad 4c 4d 2s"),  # two pair kicker
        ("9c 9d 8s 7h 3c", "9c 9d 8s 7h 2c"),
        ("Ac Qd 9s 7h 3c", "Ac Qd 9s 7h 2c"),
        ("Ac Kd Qs Jh 9c", "Kc Qd Js Th 8c"),
    ],
)
def test_high_order(better: str, worse: str) -> None:
    assert must("high", better) > must("high", worse)


@pytest.mark.parametrize(
    ("hole", "board", "name", "short"),
    [
        ("Ah Kh", "Qh Jh Th 2c 3d", "Royal Flush", "Royal Flush"),
        ("5c 4d", "3h 2s Ac Kd Kc", "Straight, Five high", "Straight"),
        ("Kc Kd", "Ks 5h 5d 2c 3c", "Full House, Kings over Fives", "Full House"),
        ("Kc Kd", "Ks Kh 5d 2c 3c", "Four of a Kind, Kings", "Four of a Kind"),
        ("Kc 7d", "Ks 7h 5d 2c 3c", "Two Pair, Kings and Sevens", "Two Pair"),
        ("Jc Jd", "9s 7h 5d 2c 3c", "Pair of Jacks", "Pair"),
        ("8c 8d", "8s 7h 5d 2c 3c", "Three of a Kind, Eights", "Three of a Kind"),
        ("Ac 9d", "8s 7h 5d 2c 3c", "Ace high", "Ace high"),
        ("Ac 9c", "8c 7h 5c 2c 3d", "Flush, Ace high", "Flush"),
        ("9c 8c", "7c 6c 5c 2h 3d", "Straight Flush, Nine high", "Straight Flush"),
    ],
)
def test_high_names(hole: str, board: str, name: str, short: str) -> None:
    result = must("high", hole, board)
    assert (result.name, result.short, str(result)) == (name, short, name)
    assert len(result.cards) == 5


def test_high_cards_are_the_five_that_play() -> None:
    result = must("high", "Kc Kd", "Ks 5h 5d 2c 3c")
    assert [c.face for c in result.cards] == ["Ks", "Kd", "Kc", "5h", "5d"]
    wheel = must("high", "5c 4d", "3h 2s Ac Kd Qc")
    assert [c.face for c in wheel.cards] == ["5c", "4d", "3h", "2s", "Ac"]


def test_suits_never_break_a_tie() -> None:
    # RRoP s3 Ties 1: equal values are equal even with different suits, and hash alike.
    a, b = must("high", "Ac Kd Qs Jh 9c"), must("high", "Ad Ks Qh Jc 9d")
    assert a == b and hash(a) == hash(b) and not a < b and not b < a


def test_best_of_seven_uses_the_board() -> None:
    # Hold'em: the board plays (both tie with the board's straight).
    assert must("high", "2c 3d", "Ts Jh Qd Kc Ac") == must("high", "2h 4d", "Ts Jh Qd Kc Ac")


# ---------------------------------------------------------------- omaha


def test_omaha_needs_two_hole_cards_for_a_flush() -> None:
    assert must("omaha_high", "Ah Kc Qc Jc", "2h 5h 8h 9h Td").short != "Flush"
    assert must("omaha_high", "Ah Kh Qc Jc", "2h 5h 8h 9c Td").name == "Flush, Ace high"


def test_omaha_cannot_play_the_board() -> None:
    # A royal flush on the board is not the player's hand: exactly three board cards play.
    result = must("omaha_high", "2c 3d 7s 8s", "Ah Kh Qh Jh Th")
    assert result.short != "Royal Flush"
    assert sum(c.face in {"2c", "3d", "7s", "8s"} for c in result.cards) == 2


def test_omaha_four_of_a_kind_on_board_is_not_quads() -> None:
    # Quads on the board: a player can use at most three of them.
    assert must("omaha_high", "Ac Ad 2c 3c", "Kc Kd Kh Ks 7d").name == "Full House, Kings over Aces"


def test_omaha_single_hole_card_makes_no_straight() -> None:
    assert must("omaha_high", "9c Kd Kh 2s", "5c 6d 7h 8s Qd").short != "Straight"
    assert must("omaha_high", "9c Td Kh 2s", "5c 6d 7h 8s Qd").name == "Straight, Ten high"


# ---------------------------------------------------------------- ace-to-five


@pytest.mark.parametrize(
    ("better", "worse"),
    [
        ("5h 4h 3h 2h Ah", "6c 4d 3h 2s Ac"),  # the steel wheel is simply the best low
        ("6c 4d 3h 2s Ac", "6c 5d 4h 3s 2c"),  # 6-4 beats 6-5
        ("7c 6d 5h 4s 3c", "8c 4d 3h 2s Ac"),  # a straight is just a 7-low
        ("Kc Qd Js Th 8c", "Ac Ad 2c 3h 4s"),  # any unpaired hand beats any pair
        ("Ac Ad Kc Qh Js", "2c 2d 3c 4h 5s"),  # the ace is low: aces are the best pair
        ("2c 2d 3c 3h Ks", "Ac Ad Ah 2c 3s"),  # two pair beats trips
        ("Ac Ad Ah 2c 3s", "2c 2d 2h Ac As"),  # trips beat a full house
    ],
)
def test_low_a5_order(better: str, worse: str) -> None:
    assert must("low_a5", better) > must("low_a5", worse)


@pytest.mark.parametrize(
    ("evaluator", "cards", "name", "short"),
    [
        ("low_a5", "8c 6d 5h 3s 2c", "8-6-5-3-2 low", None),
        ("low_a5", "7c 5d 4h 2s Ac", "7-5-4-2-A low", "Seven-Five low"),
        ("low_a5", "Kc Kd 5s 4h 2c", "Pair of Kings (K-K-5-4-2)", None),
        ("low_27", "7c 5d 4h 3s 2c", "7-5-4-3-2 low", "Seven-Five low"),
        ("low_27", "Ac 5d 4h 3s 2c", "A-5-4-3-2 low", None),  # the ace is high in deuce-to-seven
        ("low_27", "6c 5d 4h 3s 2c", "Straight, Six high", None),
        ("low_27", "7c 5c 4c 3c 2c", "Flush, Seven high", None),
    ],
)
def test_low_names(evaluator: str, cards: str, name: str, short: str | None) -> None:
    """How a low is called: in full (``name``) and, where checked, as the table says it (``short``)."""
    value = must(evaluator, cards)
    assert value.name == name
    if short is not None:
        assert value.short == short


def test_razz_best_five_of_seven() -> None:
    result = must("low_a5", "Kc Kd 7h 5s 4c", "3d Ad")
    assert result.name == "7-5-4-3-A low"


@pytest.mark.parametrize(
    ("hand", "name"),
    [
        ("joker 2c 3d 4h 5s", "5-4-3-2-A low"),  # joker is the ace
        ("joker Ac 2d 3h 4s", "5-4-3-2-A low"),  # joker is the five
        ("joker 2c 3d 4h Kc", "K-4-3-2-A low"),  # only the lowest absent rank
        ("joker Ac 2c 3c 4c", "5-4-3-2-A low"),  # flushes don't count
        ("joker 4c 4d 7h 8s", "Pair of Fours (4-4-8-7-A)"),  # it can't pair, and can't undo a pair
    ],
)
def test_low_a5_joker_is_lowest_absent_card(hand: str, name: str) -> None:
    # RRoP s11 Ace-to-Five Lowball 1.
    result = must("low_a5", hand)
    assert result.name == name
    assert JOKER in result.cards


def test_low_a5_joker_equals_the_card_it_stands_for() -> None:
    assert must("low_a5", "joker 2c 3d 4h 8s") == must("low_a5", "Ac 2c 3d 4h 8s")
    assert must("low_a5", "joker Ac 3d 4h 8s") == must("low_a5", "Ac 2c 3d 4h 8s")


# ---------------------------------------------------------------- eight or better


@pytest.mark.parametrize(
    "cards",
    [
        "9c 7d 5h 4s 2c Kd Kh",  # a nine low does not qualify
        "Ac Ad 2c 2d 3h 3s 4c",  # only four distinct low ranks
        "8c 8d 7h 7s 6c 6d Kh",
    ],
)
def test_eight_or_better_fails(cards: str) -> None:
    assert value("low_a5_8", cards) is None


def test_eight_or_better_qualifies() -> None:
    assert must("low_a5_8", "8c 7d 6h 5s 4c Kd Kh").name == "8-7-6-5-4 low"
    assert must("low_a5_8", "Ac 2c 3c 4c 5c 9d 9h").name == "5-4-3-2-A low"
    assert must("low_a5_8", "Ac Ad 2c 2d 3h 4s 8c").name == "8-4-3-2-A low"


def test_omaha_low_two_hole_cards_exactly() -> None:
    # Four low cards on the board plus one low hole card: no low in Omaha (RRoP s6 Omaha).
    assert value("omaha_low_a5_8", "5h Kd Qs Jc", "Ah 2c 3d 4s Kc") is None
    assert must("low_a5_8", "5h Kd Qs Jc", "Ah 2c 3d 4s Kc").name == "5-4-3-2-A low"
    # Five low cards on the board and no two low hole cards: no low either.
    assert value("omaha_low_a5_8", "Ac Kd Qs Jc", "2h 3c 4d 5s 6c") is None


def test_omaha_low_counterfeited() -> None:
    # The deuce on the river pairs seat 1's deuce: seat 2's A-4 makes the wheel.
    board = "3h 5s 8d Kc 2s"
    seat1, seat2 = must("omaha_low_a5_8", "Ac 2d Qs Qh", board), must("omaha_low_a5_8", "Ad 4c Js Jh", board)
    assert seat1.name == "8-5-3-2-A low" and seat2.name == "5-4-3-2-A low"
    assert seat2 > seat1
    # Holding A-2-3 does not help when two of the board's low cards are duplicates.
    assert value("omaha_low_a5_8", "Ac 2d 3c Kd", "2h 3s Kh Qs Jd") is None


def test_omaha_low_and_high_may_use_different_cards() -> None:
    hole, board = parse_cards("Ac 2c Kh Kd"), parse_cards("Ks 7h 6h 4d Qc")
    high = best_of("omaha_high", hole, board)
    low = best_of("omaha_low_a5_8", hole, board)
    assert high is not None and low is not None
    assert high.name == "Three of a Kind, Kings" and low.name == "7-6-4-2-A low"


# ---------------------------------------------------------------- deuce-to-seven


@pytest.mark.parametrize(
    ("better", "worse"),
    [
        ("7c 5d 4h 3s 2c", "7c 6d 4h 3s 2c"),  # the nuts
        ("8c 5d 4h 3s 2c", "8c 6d 4h 3s 2c"),
        ("Kc 5d 4h 3s 2c", "Ac 5d 4h 3s 2c"),  # A-5-4-3-2 is ace-high, loses to king-high
        ("Ac 5d 4h 3s 2c", "2c 2d 3h 4s 5c"),  # ... but beats any pair
        ("Kc Kd 4h 3s 2c", "Ac Ad 4h 3s 2c"),  # aces are the worst pair
        ("Ac Kd Qh Js 9c", "7c 6d 5h 4s 3c"),  # straights count against you
        ("Ac Kd Qh Js 9c", "7c 5c 4c 3c 2c"),  # and so do flushes
        ("2c 2d Kh Ks Ac", "3c 3d 3h 4s 5c"),  # two pair beats trips
    ],
)
def test_low_27_order(better: str, worse: str) -> None:
    assert must("low_27", better) > must("low_27", worse)


def test_low_27_picks_the_lowest_five_of_seven() -> None:
    # 7-6-5-4-3 would be a straight: the best five skip the six and play 7-5-4-3-2.
    assert must("low_27", "7c 6d 5h 4s 3c", "2d Kh").name == "7-5-4-3-2 low"


# ---------------------------------------------------------------- the bug at draw high


@pytest.mark.parametrize(
    ("hand", "name"),
    [
        ("joker Ac Ad Ah As", "Five Aces"),  # RRoP s12 The Joker 4
        ("joker Ah Kh 7h 2h", "Flush, Ace high"),
        ("joker Kh Qh Jh Th", "Royal Flush"),
        ("joker 9h 8h 7h 6h", "Straight Flush, Ten high"),
        ("joker 2c 3d 4h 5s", "Straight, Six high"),
        ("joker Kc Qd Jh Ts", "Straight, Ace high"),
        ("joker Kc Kd 7h 7s", "Two Pair, Kings and Sevens"),  # not wild: no full house
        ("joker Ac Ad Kh Ks", "Full House, Aces over Kings"),
        ("joker Ac 9d 7h 2s", "Pair of Aces"),
        ("joker Kc 9d 7h 2s", "Ace high"),  # an ace, not a pair of kings
        ("Kc 9d 7h 3s 2s", "King high"),
    ],
)
def test_high_joker(hand: str, name: str) -> None:
    assert must("high_joker", hand).name == name


def test_high_joker_flush_takes_highest_absent_card() -> None:
    # RRoP s12 The Joker 3: As Ks joker 7s 4s is A-K-Q-7-4.
    assert must("high_joker", "As Ks 7s 4s joker") == must("high", "As Ks Qs 7s 4s")
    assert must("high_joker", "joker Ac Ad Ah As") > must("high", "As Ks Qs Js Ts")


def test_high_joker_without_joker_is_high() -> None:
    rng = random.Random(7)
    for _ in range(200):
        cards = rng.sample(DECK, 7)
        assert best_of("high_joker", cards, []) == best_of("high", cards, [])


# ---------------------------------------------------------------- errors and helpers


@pytest.mark.parametrize("name", sorted(SPECS))
def test_joker_only_where_in_use(name: str) -> None:
    # RRoP s3 Irregularities 8: elsewhere a joker is a scrap of paper, never a card.
    if SPECS[name].jokers:
        assert JOKER in must(name, "joker Ac Ad Kc", "2c 3d 4h").cards
    else:
        with pytest.raises(HandError):
            value(name, "joker Ac Ad Kc", "2c 3d 4h")


def test_too_few_cards() -> None:
    with pytest.raises(HandError):
        value("high", "Ac Kd", "2c 3d")
    with pytest.raises(HandError):
        value("omaha_high", "Ac Kd 4c 4d", "2c 3d")


def test_unknown_evaluator() -> None:
    with pytest.raises(KeyError, match="known"):
        value("badugi", "Ac 2d 3h 4s")


def test_registry_is_uniform() -> None:
    assert (
        set(EVALUATORS)
        == set(SPECS)
        == {
            "high",
            "high_joker",
            "omaha_high",
            "low_a5",
            "low_a5_8",
            "omaha_low_a5_8",
            "low_27",
        }
    )
    hole, board = parse_cards("Ac 2d 3h 4s"), parse_cards("5c 6d 7h 8s 9c")
    for name, evaluator in EVALUATORS.items():
        result = evaluator(hole, board)
        assert result is None or (isinstance(result, HandValue) and len(result.cards) == 5), name


def test_best_hands_reports_ties_and_no_qualifier() -> None:
    board = parse_cards("Ts Jh Qd Kc Ac")
    hands = {1: parse_cards("2c 3d"), 4: parse_cards("2h 4d"), 6: parse_cards("9c 9d")}
    winners, values = best_hands("high", hands, board)
    assert winners == [1, 4, 6] and set(values) == {1, 4, 6}
    winners, values = best_hands("omaha_low_a5_8", {2: parse_cards("Kc Kd Qc Qd")}, board)
    assert winners == [] and values == {2: None}


# ---------------------------------------------------------------- properties (hypothesis)

ANY_FIVE = ["high", "high_joker", "low_a5", "low_a5_8", "low_27"]
card_sets = st.lists(st.sampled_from(DECK), min_size=7, max_size=7, unique=True)


def _suit_swap(cards: Sequence[Card], perm: Sequence[int]) -> list[Card]:
    suits = "cdhs"
    return [Card(c.rank, suits[perm[suits.index(c.suit)]], c.deck) for c in cards]


@settings(max_examples=150, deadline=None)
@given(
    cards=card_sets,
    perm=st.permutations(range(4)),
    name=st.sampled_from(sorted(EVALUATORS)),
    rnd=st.randoms(),
)
def test_value_ignores_card_order_and_suit_names(cards, perm, name, rnd) -> None:
    hole, board = cards[:4], cards[4:]
    base = best_of(name, hole, board)
    shuffled_hole, shuffled_board = hole[:], board[:]
    rnd.shuffle(shuffled_hole)
    rnd.shuffle(shuffled_board)
    assert best_of(name, shuffled_hole, shuffled_board) == base
    assert best_of(name, _suit_swap(hole, perm), _suit_swap(board, perm)) == base


@settings(max_examples=150, deadline=None)
@given(cards=card_sets, name=st.sampled_from(ANY_FIVE))
def test_best_of_seven_is_the_max_over_fives(cards, name) -> None:
    best = best_of(name, cards, [])
    fives = [best_of(name, list(five), []) for five in combinations(cards, 5)]
    qualified = [v for v in fives if v is not None]
    assert best == (max(qualified) if qualified else None)
    if best is not None:
        assert best_of(name, list(best.cards), []) == best  # the reported five make the value


@settings(max_examples=200, deadline=None)
@given(cards=card_sets)
def test_eight_or_better_qualifies_iff_five_low_ranks(cards) -> None:
    low_ranks = {c.low for c in cards if c.low <= 8}
    assert (best_of("low_a5_8", cards, []) is None) == (len(low_ranks) < 5)


@settings(max_examples=100, deadline=None)
@given(cards=st.lists(st.sampled_from(DECK), min_size=4, max_size=4, unique=True))
def test_low_a5_joker_is_never_worse_than_any_real_card(cards) -> None:
    with_joker = best_of("low_a5", [*cards, JOKER], [])
    assert with_joker is not None
    for card in DECK:
        if card not in cards:
            alternative = best_of("low_a5", [*cards, card], [])
            assert alternative is not None and alternative <= with_joker


# ---------------------------------------------------------------- agreement with PokerKit


def _pk(cards: Sequence[Card]) -> str:
    return "".join(c.face for c in cards)


def _pk_value(cls: type[pokerkit.Hand], hole: Sequence[Card], board: Sequence[Card]) -> pokerkit.Hand | None:
    return cls.from_game_or_none(_pk(hole), _pk(board))


def _sign(a, b) -> int:
    """-1, 0, 1 comparing values where None (no qualifying hand) is the worst."""
    if a is None or b is None:
        return (a is not None) - (b is not None)
    return (a > b) - (a < b)


# evaluator, PokerKit hand class, hole cards per player, board cards, players per deal, deals
AGREEMENT = [
    ("high", pokerkit.StandardHighHand, 2, 5, 8, 150),  # hold'em, eight-handed
    ("high", pokerkit.StandardHighHand, 7, 0, 6, 150),  # seven-card stud
    ("high", pokerkit.StandardHighHand, 5, 0, 10, 80),  # draw high
    ("omaha_high", pokerkit.OmahaHoldemHand, 4, 5, 8, 80),
    ("low_a5", pokerkit.RegularLowHand, 7, 0, 6, 150),  # razz
    ("low_a5", pokerkit.RegularLowHand, 5, 0, 10, 80),  # ace-to-five lowball
    ("low_a5_8", pokerkit.EightOrBetterLowHand, 7, 0, 6, 150),  # stud/8
    ("omaha_low_a5_8", pokerkit.OmahaEightOrBetterLowHand, 4, 5, 8, 80),
    ("low_27", pokerkit.StandardLowHand, 5, 0, 10, 80),  # deuce-to-seven single draw
    ("low_27", pokerkit.StandardLowHand, 7, 0, 6, 150),  # deuce-to-seven with seven cards
]


@pytest.mark.parametrize(("name", "pk_class", "n_hole", "n_board", "players", "deals"), AGREEMENT)
def test_agrees_with_pokerkit(
    name: str, pk_class: type[pokerkit.Hand], n_hole: int, n_board: int, players: int, deals: int
) -> None:
    """Every pair of hands at each random deal is ordered as PokerKit orders it, the five
    cards we report make PokerKit's best value, and over all hands of all deals the two
    orders agree (sorted by our value, PokerKit's must be sorted with the same ties)."""
    rng = random.Random(f"{name}-{n_hole}-{n_board}")
    evaluate: Callable = EVALUATORS[name]
    everything: list[tuple[HandValue | None, pokerkit.Hand | None]] = []
    pairs = 0
    for _ in range(deals):
        cards = rng.sample(DECK, players * n_hole + n_board)
        board = cards[players * n_hole :]
        seats = []
        for p in range(players):
            hole = cards[p * n_hole : (p + 1) * n_hole]
            ours, theirs = evaluate(hole, board), _pk_value(pk_class, hole, board)
            assert (ours is None) == (theirs is None), (hole, board)
            if ours is not None:
                assert pk_class(_pk(ours.cards)) == theirs, (hole, board, ours.name)
            seats.append((ours, theirs))
        for (a, pa), (b, pb) in combinations(seats, 2):
            assert _sign(a, b) == _sign(pa, pb), (board, a, b, pa, pb)
            pairs += 1
        everything += seats
    assert pairs >= 2000
    ranked = [(a, pa) for a, pa in everything if a is not None]
    ranked.sort(key=lambda pair: pair[0])
    for (a, pa), (b, pb) in zip(ranked, ranked[1:], strict=False):
        assert _sign(a, b) == _sign(pa, pb), (a, b, pa, pb)


@settings(max_examples=200, deadline=None)
@given(cards=st.lists(st.sampled_from(DECK), min_size=10, max_size=10, unique=True))
def test_agrees_with_pokerkit_on_five_card_pairs(cards) -> None:
    """Hypothesis explores five-card pairs (close calls shrink to minimal examples)."""
    for name, pk_class in [
        ("high", pokerkit.StandardHighHand),
        ("low_a5", pokerkit.RegularLowHand),
        ("low_a5_8", pokerkit.EightOrBetterLowHand),
        ("low_27", pokerkit.StandardLowHand),
    ]:
        a, b = cards[:5], cards[5:]
        ours = _sign(best_of(name, a, []), best_of(name, b, []))
        assert ours == _sign(_pk_value(pk_class, a, []), _pk_value(pk_class, b, [])), name
