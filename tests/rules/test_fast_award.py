"""The pot awards read hands with fasteval's one-hand path: the same values as its batch path,
and the same winners as the reference evaluator (controller.rules.evaluate)."""

from __future__ import annotations

import random

import pytest

from controller.equity import fasteval
from controller.rules.cards import standard_deck
from controller.rules.evaluate import best_hands

CASES = [("high", 2, 5), ("high", 7, 0), ("high", 5, 0), ("high", 6, 0), ("omaha_high", 4, 5),
         ("omaha_low_a5_8", 4, 5), ("low_a5", 5, 0), ("low_a5_8", 7, 0), ("low_27", 5, 0), ("low_27", 7, 0)]


@pytest.mark.parametrize(("evaluator", "hole", "board"), CASES)
def test_one_hand_path_equals_the_batch_path_and_the_reference_winners(evaluator: str, hole: int, board: int) -> None:
    rng = random.Random(f"{evaluator}{hole}{board}")
    deck = standard_deck()
    for _ in range(150):
        cards = rng.sample(deck, 3 * hole + board)
        shared = cards[3 * hole:]
        hands = {seat: cards[i * hole:(i + 1) * hole] for i, seat in enumerate((1, 4, 7))}
        code = fasteval.card_code
        fast = {s: fasteval.evaluate_codes(evaluator, [code(c) for c in h], [code(c) for c in shared])
                for s, h in hands.items()}
        batch = fasteval.evaluate_batch(evaluator, [hands[s] for s in (1, 4, 7)], shared or None)
        assert [fast[s] for s in (1, 4, 7)] == [int(v) for v in batch]
        winners, _ = best_hands(evaluator, hands, shared)
        top = max(fast.values())
        assert winners == ([s for s in (1, 4, 7) if fast[s] == top] if top > 0 else [])
