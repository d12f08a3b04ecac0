"""Benchmark of the table evaluator and the overlay's equities (``tablectl bench equity``).

:func:`run_bench` measures, in one run on this machine:

* batch evaluations per second of :mod:`controller.equity.fasteval` (one call on a million random
  hands), and the per-call rate from Python of eval7, phevaluator, treys and PokerKit on
  the same kind of hands: those packages are only needed here and are reported as missing
  when they are not installed;
* exact hold'em equity with 2, 6 and 9 known hands on the flop and preflop, Omaha and Omaha
  hi-lo on the flop (exact) and preflop (Monte Carlo), stud, razz and stud/8 equities;
* whether the targets hold: batch seven-card evaluation at least 10x eval7's per-call rate,
  every exact flop under 50 ms, six-handed preflop hold'em under 2 s.

The result is plain JSON-ready data.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import os
import platform
import time
import warnings
from collections.abc import Callable

import numpy as np

from controller.equity import fasteval as fe
from controller.equity.odds import DEFAULT_SAMPLES, equity

COMPARED = ("eval7", "phevaluator", "treys", "pokerkit")
FACES = [f"{r}{s}" for r in "23456789TJQKA" for s in "cdhs"]  # index = card code


def _random_hands(rng: np.random.Generator, count: int, size: int) -> np.ndarray:
    """(count, size) int8 card codes, distinct within each row (partial Fisher-Yates per row)."""
    deck = np.tile(np.arange(52, dtype=np.int8), (count, 1))
    rows = np.arange(count)
    for i in range(size):
        j = rng.integers(i, 52, size=count)
        picked = deck[rows, j]
        deck[rows, j] = deck[:, i]
        deck[:, i] = picked
    return np.ascontiguousarray(deck[:, :size])


def _best_time(function: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def _rate(count: int, function: Callable[[], object], repeat: int) -> float:
    return round(count / _best_time(function, repeat), 1)


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _compared(name: str, hands7: np.ndarray, omaha: np.ndarray, repeat: int) -> dict:
    """Per-call evaluations per second of one comparison package (or that it is missing)."""
    try:
        with warnings.catch_warnings():  # eval7 imports pyparsing with deprecated names
            warnings.simplefilter("ignore")
            module = importlib.import_module(name)
    except ImportError:
        return {"installed": False, "missing": True}
    out: dict = {"installed": True, "version": _version(name), "mode": "per call from Python"}
    rows7 = hands7.tolist()
    if name == "eval7":
        table = [module.Card(f) for f in FACES]
        hands = [[table[c] for c in row] for row in rows7]
        evaluate = module.evaluate
        out["high_7_per_s"] = _rate(len(hands), lambda: [evaluate(h) for h in hands], repeat)
    elif name == "phevaluator":
        evaluate, evaluate_omaha = module.evaluate_cards, module.evaluate_omaha_cards
        out["high_7_per_s"] = _rate(len(rows7), lambda: [evaluate(*h) for h in rows7], repeat)
        rows = omaha.tolist()
        out["omaha_per_s"] = _rate(len(rows), lambda: [evaluate_omaha(*h[4:], *h[:4]) for h in rows], repeat)
    elif name == "treys":
        table = [module.Card.new(f) for f in FACES]
        pairs = [([table[c] for c in row[:2]], [table[c] for c in row[2:]]) for row in rows7]
        evaluator = module.Evaluator()
        out["high_7_per_s"] = _rate(len(pairs), lambda: [evaluator.evaluate(h, b) for h, b in pairs], repeat)
    elif name == "pokerkit":
        some = rows7[: max(1, len(rows7) // 50)]
        cards = [[next(iter(module.Card.parse(FACES[c]))) for c in row] for row in some]
        high = module.StandardHighHand.from_game
        out["high_7_per_s"] = _rate(len(cards), lambda: [high(c[:2], c[2:]) for c in cards], 1)
        rows = omaha.tolist()[: max(1, len(some) // 2)]
        cards = [[next(iter(module.Card.parse(FACES[c]))) for c in row] for row in rows]
        omaha_hand = module.OmahaHoldemHand.from_game
        out["omaha_per_s"] = _rate(len(cards), lambda: [omaha_hand(c[:4], c[4:]) for c in cards], 1)
    return out


def _fasteval(rng: np.random.Generator, batch: int, repeat: int) -> tuple[dict, np.ndarray, np.ndarray]:
    hands7 = _random_hands(rng, batch, 7)
    hands5 = np.ascontiguousarray(hands7[:, :5])
    omaha = _random_hands(rng, batch // 5, 9)
    out: dict = {"mode": "one batch call", "batch": batch}
    for label, evaluator, cards in [
        ("high_7_per_s", "high", hands7),
        ("high_5_per_s", "high", hands5),
        ("razz_7_per_s", "low_a5", hands7),
        ("low8_7_per_s", "low_a5_8", hands7),
        ("deuce_seven_5_per_s", "low_27", hands5),
    ]:
        fe.evaluate_batch(evaluator, cards[:1000])
        out[label] = _rate(len(cards), functools.partial(fe.evaluate_batch, evaluator, cards), repeat)
    hole, board = omaha[:, :4], omaha[:, 4:]
    out["omaha_per_s"] = _rate(len(omaha), lambda: fe.evaluate_batch("omaha_high", hole, board), repeat)
    out["omaha_five_card_evals_per_s"] = round(out["omaha_per_s"] * 60, 1)
    return out, hands7[:200_000], omaha[:100_000]


def _deal(rng: np.random.Generator, players: int, hole: int, board: int, dead: int = 0):
    codes = rng.permutation(52)[: players * hole + board + dead].tolist()
    cards = fe.decode(codes)
    hands = {seat + 1: cards[seat * hole : (seat + 1) * hole] for seat in range(players)}
    rest = cards[players * hole :]
    return hands, rest[:board], rest[board:]


def _equity_case(game: str, hands, board, dead, repeat: int, **options) -> dict:
    result = None
    best = float("inf")
    for _ in range(repeat):
        result = equity(game, hands, board, dead, **options)
        best = min(best, result.elapsed)
    assert result is not None
    return {
        "seconds": round(best, 5),
        "method": result.method,
        "outcomes": result.outcomes,
        "players": len(hands),
        "max_stderr": round(max(result.stderr.values()), 5),
    }


def _equities(rng: np.random.Generator, quick: bool) -> dict:
    fast, slow = (2, 1) if quick else (5, 2)
    out: dict = {}
    for players in (2, 6, 9):
        hands, board, _ = _deal(rng, players, 2, 3)
        out[f"holdem_flop_{players}"] = _equity_case("holdem", hands, board, [], fast)
        turn_hands, turn_board, _ = _deal(rng, players, 2, 4)
        out[f"holdem_turn_{players}"] = _equity_case("holdem", turn_hands, turn_board, [], fast)
        out[f"holdem_preflop_{players}"] = _equity_case("holdem", hands, [], [], slow)
    for players in (2, 6, 9):
        hands, board, _ = _deal(rng, players, 4, 3)
        out[f"omaha_flop_{players}"] = _equity_case("omaha", hands, board, [], fast)
        out[f"omaha8_flop_{players}"] = _equity_case("omaha8", hands, board, [], fast)
        out[f"omaha_preflop_{players}"] = _equity_case("omaha", hands, [], [], slow, seed=1)
    hands, _, _ = _deal(rng, 2, 4, 0)
    out["omaha_preflop_2_forced_exact"] = _equity_case("omaha", hands, [], [], 1, exact=True)
    hands, _, dead = _deal(rng, 2, 3, 0, dead=6)
    out["stud_third_2"] = _equity_case("stud", hands, [], dead, slow, seed=1)
    hands, _, dead = _deal(rng, 6, 3, 0, dead=2)
    out["stud_third_6"] = _equity_case("stud", hands, [], dead, slow, seed=1)
    hands, _, dead = _deal(rng, 2, 5, 0, dead=6)
    out["stud_fifth_2"] = _equity_case("stud", hands, [], dead, slow)
    hands, _, dead = _deal(rng, 4, 6, 0, dead=4)
    out["stud_sixth_4"] = _equity_case("stud", hands, [], dead, slow)
    hands, _, dead = _deal(rng, 4, 3, 0, dead=4)
    out["razz_third_4"] = _equity_case("razz", hands, [], dead, slow, seed=1)
    out["stud8_third_4"] = _equity_case("stud8", hands, [], dead, slow, seed=1)
    hands, _, dead = _deal(rng, 2, 5, 0, dead=4)
    out["stud8_fifth_2"] = _equity_case("stud8", hands, [], dead, slow)
    return out


def run_bench(*, quick: bool = False, seed: int = 2024, packages: tuple[str, ...] = COMPARED) -> dict:
    """Run the benchmark and return its results (JSON-ready).

    ``quick`` shrinks batches and repeats (a smoke run); ``packages`` are the evaluators
    compared (each reported as missing when it cannot be imported).
    """
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    build_start = time.perf_counter()
    fe.warm()
    build = time.perf_counter() - build_start
    batch = 200_000 if quick else 1_000_000
    repeat = 2 if quick else 3
    ours, hands7, omaha = _fasteval(rng, batch, repeat)
    if quick:
        hands7, omaha = hands7[:50_000], omaha[:20_000]
    evaluation = {"fasteval": ours}
    for name in packages:
        evaluation[name] = _compared(name, hands7, omaha, 1 if quick else 2)
    equities = _equities(rng, quick)

    eval7_rate = evaluation.get("eval7", {}).get("high_7_per_s")
    speedup = round(ours["high_7_per_s"] / eval7_rate, 1) if eval7_rate else None
    flops = [v["seconds"] for k, v in equities.items() if "_flop_" in k]
    targets = {
        "batch7_vs_eval7": speedup,
        "batch7_at_least_10x_eval7": None if speedup is None else speedup >= 10,
        "max_exact_flop_ms": round(1000 * max(flops), 2),
        "exact_flop_under_50ms": max(flops) < 0.05,
        "preflop_holdem_6_s": equities["holdem_preflop_6"]["seconds"],
        "preflop_holdem_6_exact_under_2s": equities["holdem_preflop_6"]["method"] == "exact"
        and equities["holdem_preflop_6"]["seconds"] < 2.0,
    }
    return {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "platform": platform.platform(),
        },
        "table_build_seconds": round(build, 3),
        "monte_carlo_samples": DEFAULT_SAMPLES,
        "evaluation": evaluation,
        "equity": equities,
        "targets": targets,
        "seconds": round(time.perf_counter() - started, 2),
    }


if __name__ == "__main__":  # pragma: no cover - `tablectl bench equity --json` is the entry point
    import json
    import sys

    print(json.dumps(run_bench(quick="--quick" in sys.argv), indent=2))
