"""Equities: exact results match a brute-force reference built on controller.evaluate.

The reference deals every unknown card with itertools, evaluates each showdown with the
slow reference evaluators and splits each pot with exact fractions, so it shares no code
with controller.equity.odds / controller.fasteval.
"""

from __future__ import annotations

import time
from fractions import Fraction
from itertools import combinations

import pytest

from controller.equity.odds import DEFAULT_SAMPLES, EquityError, equity, hand_strength
from controller.rules.cards import Card, parse_cards, standard_deck
from controller.rules.evaluate import best_hands
from controller.rules.games import Family, get_game


def cards(text: str) -> list[Card]:
    return parse_cards(text)


def reference(game: str, hands: dict[int, list[Card]], board: list[Card] = (), dead: list[Card] = ()) -> dict:
    """Brute force: every deal, evaluated by controller.rules.evaluate, pots split in fractions."""
    spec = get_game(game)
    seats = sorted(hands)
    used = {c.face for c in [*board, *dead, *(c for h in hands.values() for c in h)]}
    deck = [c for c in standard_deck() if c.face not in used]
    size = 7 if spec.family is Family.STUD else spec.hole_cards
    needs = [size - len(hands[s]) for s in seats]
    board_need = 5 - len(board) if spec.family is Family.BOARD else 0
    if board_need + sum(needs) > len(deck):  # stud: a common seventh-street card
        needs, board_need = [n - 1 for n in needs], 1
    share = {s: Fraction(0) for s in seats}
    whole = {s: 0 for s in seats}
    quarter = {s: 0 for s in seats}
    count = 0

    def deal(rest: list[Card], index: int, dealt: list[list[Card]]):
        if index == len(seats):
            yield dealt
            return
        for pick in combinations(rest, needs[index]):
            left = [c for c in rest if c not in pick]
            yield from deal(left, index + 1, [*dealt, list(pick)])

    for extra in combinations(deck, board_need):
        rest = [c for c in deck if c not in extra]
        full_board = [*board, *extra]
        for dealt in deal(rest, 0, []):
            final = {s: [*hands[s], *d] for s, d in zip(seats, dealt, strict=True)}
            high, _ = best_hands(spec.showdown[0], final, full_board)
            low = best_hands(spec.showdown[1], final, full_board)[0] if len(spec.showdown) == 2 else []
            got = {s: Fraction(0) for s in seats}
            for s in high:
                got[s] += Fraction(1, len(high)) / (2 if low else 1)
            for s in low:
                got[s] += Fraction(1, 2 * len(low))
            for s in seats:
                share[s] += got[s]
                whole[s] += got[s] == 1
                quarter[s] += got[s] == Fraction(1, 4)
            count += 1
    return {
        "equity": {s: share[s] / count for s in seats},
        "win": {s: Fraction(whole[s], count) for s in seats},
        "quarter": {s: Fraction(quarter[s], count) for s in seats},
        "count": count,
    }


def assert_matches(result, ref, hilo: bool = False) -> None:
    assert result.method == "exact"
    assert result.outcomes == ref["count"]
    for seat, value in ref["equity"].items():
        assert result.equity[seat] == pytest.approx(float(value), abs=1e-12), seat
        assert result.win[seat] == pytest.approx(float(ref["win"][seat]), abs=1e-12), seat
        assert result.tie[seat] == pytest.approx(float(value - ref["win"][seat]), abs=1e-12), seat
        assert result.stderr[seat] == 0.0
        if hilo:
            assert result.quarter[seat] == pytest.approx(float(ref["quarter"][seat]), abs=1e-12), seat
            assert result.high[seat] + result.low[seat] == pytest.approx(result.equity[seat], abs=1e-12)
    assert sum(result.equity.values()) == pytest.approx(1.0)


CASES = [  # game, hands, board, dead
    ("holdem", {1: "Ah Kh", 2: "Qs Qd", 4: "7c 6c"}, "Kd 8c 3c 2h", ""),
    ("holdem", {1: "Ah 5d", 2: "Ac 5s"}, "Kd 8c 3c", ""),  # chopped most of the time
    ("holdem", {1: "9h 9d", 2: "Tc"}, "9s 8c 7c 2h Kd", "4h"),  # a hole card still unknown
    ("omaha", {1: "Ah Kh Qd Jd", 2: "Qs Qc Tc 9c", 3: "7h 6h 5s 4s"}, "Kd 8c 3c 2h", ""),
    ("omaha8", {1: "Ah 2h Qd Jd", 2: "As 2s Tc 9c", 3: "7h 6h 5s 4d"}, "Kd 8c 3c 4h", "9d"),  # quarters
    ("stud", {1: "As Ad 7c 8h 9s Kd", 2: "Kh Qh Jh 3c 4c Th"}, "", "2c 2d 9c"),
    ("razz", {1: "As 2d 7c 8h 9s 3d", 2: "Kh Qh 5h 3c 4c 6s"}, "", ""),
    ("stud8", {1: "As 2d 7c 8h Ks 3d", 2: "Ah 3h 5h 6c 4c Qs"}, "", "4d 5d"),
]


def _parse_case(hands: dict[int, str], board: str, dead: str):
    return {s: cards(h) for s, h in hands.items()}, cards(board), cards(dead)


@pytest.mark.parametrize(("game", "hands", "board", "dead"), CASES)
def test_exact_matches_brute_force(game: str, hands: dict[int, str], board: str, dead: str) -> None:
    parsed, board_cards, dead_cards = _parse_case(hands, board, dead)
    result = equity(game, parsed, board_cards, dead_cards)
    hilo = len(get_game(game).showdown) == 2
    assert result.hilo == hilo
    assert_matches(result, reference(game, parsed, board_cards, dead_cards), hilo)


def test_quarters_are_counted() -> None:
    """Two A-2s against a third hand on an Omaha/8 turn: low halves split, quartered."""
    parsed, board_cards, dead_cards = _parse_case(*CASES[4][1:])
    result = equity("omaha8", parsed, board_cards, dead_cards)
    assert result.quarter[1] > 0 and result.quarter[2] > 0
    assert 0 < result.low_qualifies <= 1


def test_stud_common_card() -> None:
    """Eight stud hands on sixth street leave four cards: seventh street is one common card."""
    deck = standard_deck()
    hands = {seat: deck[6 * (seat - 1) : 6 * seat] for seat in range(1, 9)}
    result = equity("stud", hands)
    assert result.common_card and result.method == "exact" and result.outcomes == 4
    assert_matches(result, reference("stud", hands))


def test_river_is_one_outcome() -> None:
    result = equity("holdem", {1: cards("Ah Kh"), 2: cards("Ad Kd")}, cards("Qh Jh Th 2c 3c"))
    assert result.outcomes == 1 and result.equity == {1: 1.0, 2: 0.0} and result.win[1] == 1.0
    result = equity("holdem", {1: cards("Ah Kc"), 2: cards("Ad Kd")}, cards("Qh Jh Ts 2c 3c"))
    assert result.equity == {1: 0.5, 2: 0.5} and result.tie == {1: 0.5, 2: 0.5}


def test_monte_carlo_agrees_with_exact() -> None:
    hands = {1: cards("Ah Kh"), 2: cards("Qs Qd"), 3: cards("7c 6c")}
    exact = equity("holdem", hands, cards("Kd 8c 3c"))
    mc = equity("holdem", hands, cards("Kd 8c 3c"), exact=False, samples=40_000, seed=7)
    assert mc.method == "monte_carlo" and mc.outcomes == 40_000
    for seat in hands:
        assert mc.stderr[seat] > 0
        assert abs(mc.equity[seat] - exact.equity[seat]) < 4.5 * mc.stderr[seat] + 1e-9
        assert mc.win[seat] + mc.tie[seat] == pytest.approx(mc.equity[seat])
    again = equity("holdem", hands, cards("Kd 8c 3c"), exact=False, samples=40_000, seed=7)
    assert again.equity == mc.equity  # a seed reproduces the run


def test_monte_carlo_stud_with_dead_cards() -> None:
    """Third street: too many deals for enumeration; dead upcards are out of the deck."""
    hands = {1: cards("As Ad 7c"), 2: cards("Kh Qh Jh"), 3: cards("5s 6s 9d")}
    result = equity("stud", hands, dead=cards("Ac Ah 2c"), seed=3)
    assert result.method == "monte_carlo" and result.outcomes == DEFAULT_SAMPLES
    assert sum(result.equity.values()) == pytest.approx(1.0)
    assert all(0 < e < 0.02 for e in result.stderr.values())
    live = equity("stud", hands, seed=3)
    assert live.equity[1] > result.equity[1]  # the other two aces are dead: fewer sets


def test_omaha_preflop_is_monte_carlo_and_hilo_fields() -> None:
    hands = {1: cards("Ah 2h Ks Kd"), 2: cards("As 3s 4d 5d")}
    result = equity("omaha8", hands, samples=5000, seed=1)
    assert result.method == "monte_carlo" and result.hilo
    for seat in hands:
        assert result.high[seat] + result.low[seat] == pytest.approx(result.equity[seat])
        assert result.scoop[seat] == result.win[seat]
    assert 0 < result.low_qualifies < 1


def test_speed_targets() -> None:
    """The overlay's budgets: any flop under 50 ms, six-handed preflop hold'em under 2 s."""
    deck = standard_deck()
    holdem = {s: deck[2 * s : 2 * s + 2] for s in range(9)}
    omaha = {s: deck[4 * s : 4 * s + 4] for s in range(9)}
    flop = deck[-3:]
    for game, hands in [("holdem", holdem), ("omaha", omaha), ("omaha8", omaha)]:
        best = min(equity(game, hands, flop).elapsed for _ in range(3))
        assert best < 0.05, game
    six = {s: deck[13 * (s % 4) + s : 13 * (s % 4) + s + 2] for s in range(6)}
    result = equity("holdem", six)
    assert result.method == "exact" and result.outcomes == 658_008
    assert result.elapsed < 2.0


def test_draw_games_report_hand_strength() -> None:
    hands = {1: cards("2c 3d 4h 5s 7c"), 2: cards("Kh Qh 5h 3c 4c")}
    before = equity("lowball_27", hands)
    assert before.method == "hand_strength" and before.equity == {}
    assert before.strength[1].name == "7-5-4-3-2 low" and before.strength[1].percentile > 0.999
    assert before.strength[1].value > before.strength[2].value
    after = equity("lowball_27", hands, after_draw=True)
    assert after.method == "exact" and after.equity == {1: 1.0, 2: 0.0}
    joker = hand_strength("lowball_a5", cards("joker 2c 3d 4h 5s"))
    wheel = hand_strength("lowball_a5", cards("Ac 2c 3d 4h 5s"))
    assert joker.value == wheel.value and joker.percentile == wheel.percentile
    assert hand_strength("jacks_or_better", cards("Ac Kc Qc Jc Tc")).percentile == pytest.approx(1 - 2 / 2598960)
    low = hand_strength("stud8", cards("Ac 2c 3d 4h 9s Kd Qd"), part=1)
    assert low.value == 0 and low.percentile is None


@pytest.mark.parametrize(
    ("game", "hands", "board", "dead"),
    [
        ("holdem", {1: "Ah Kh", 2: "Ah Qd"}, "", ""),  # duplicate
        ("holdem", {1: "Ah Kh", 2: "Qs Qd"}, "Kd 8c 3c 2h 4s 5s", ""),  # six board cards
        ("holdem", {1: "Ah Kh Qh"}, "", ""),  # three hole cards
        ("holdem", {1: "joker Kh"}, "", ""),
        ("stud", {1: "Ah Kh Qh"}, "2c 3c 4c", ""),  # stud has no board
        ("holdem", {}, "", ""),
        ("badugi", {1: "Ah Kh"}, "", ""),
    ],
)
def test_bad_input(game: str, hands: dict[int, str], board: str, dead: str) -> None:
    with pytest.raises(EquityError):
        equity(game, *_parse_case(hands, board, dead))


def test_exact_refused_when_absurd() -> None:
    hands = {1: cards("As Ad 7c"), 2: cards("Kh Qh Jh")}
    with pytest.raises(EquityError):
        equity("stud", hands, exact=True)
    start = time.perf_counter()
    assert equity("stud", hands, exact=False, samples=1000, seed=1).outcomes == 1000
    assert time.perf_counter() - start < 5


def test_partial_board_is_the_average_of_the_next_card() -> None:
    """A board being dealt card by card: equity now = mean of the equities after the next card."""
    hands = {1: cards("Ah Kh"), 2: cards("Qs Qd"), 3: cards("7c 6c")}
    board = cards("Kd 8c")
    now = equity("holdem", hands, board)
    used = {c.face for c in [*board, *(c for h in hands.values() for c in h)]}
    nexts = [equity("holdem", hands, [*board, c]) for c in standard_deck() if c.face not in used]
    for seat in hands:
        assert now.equity[seat] == pytest.approx(sum(r.equity[seat] for r in nexts) / len(nexts), abs=1e-12)


def test_unknown_hole_card_is_the_average_over_it() -> None:
    """Omaha/8 with one of seat 2's cards unread: the average over what it can be."""
    hands = {1: cards("Ah 2h Qd Jd"), 2: cards("As 3s Tc")}
    board = cards("Kd 8c 4c 5h")
    now = equity("omaha8", hands, board)
    used = {c.face for c in [*board, *(c for h in hands.values() for c in h)]}
    nexts = [equity("omaha8", {1: hands[1], 2: [*hands[2], c]}, board) for c in standard_deck() if c.face not in used]
    for seat in hands:
        for field in ("equity", "win", "quarter", "low"):
            mean = sum(getattr(r, field)[seat] for r in nexts) / len(nexts)
            assert getattr(now, field)[seat] == pytest.approx(mean, abs=1e-12), field


def test_draw_errors() -> None:
    with pytest.raises(EquityError):
        equity("draw_high", {1: cards("Ah Kh")}, after_draw=True)  # two cards make no hand
    with pytest.raises(EquityError):
        equity("draw_high", {1: cards("Ah Kh Qh Jh Th")}, cards("2c"))  # no board in draw
    with pytest.raises(EquityError):
        hand_strength("draw_high", cards("joker Kh Qh Jh Th"))  # the bug is not in the draw_high showdown


def test_bench_smoke() -> None:
    """run_bench (quick) is JSON-ready, reports missing packages and what it measured (the figures
    themselves belong to ``tablectl bench equity``, not to a test on a shared machine)."""
    import json

    from controller.bench.equity import run_bench

    result = run_bench(quick=True, packages=("eval7", "no_such_evaluator"))
    json.dumps(result)
    assert result["evaluation"]["no_such_evaluator"] == {"installed": False, "missing": True}
    assert result["evaluation"]["fasteval"]["high_7_per_s"] > 0
    for players in (2, 6, 9):
        for street in ("flop", "preflop"):
            assert result["equity"][f"holdem_{street}_{players}"]["method"] == "exact"
    assert isinstance(result["targets"]["exact_flop_under_50ms"], bool)
    assert isinstance(result["targets"]["preflop_holdem_6_exact_under_2s"], bool)
