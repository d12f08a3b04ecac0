"""`tablectl bench table`: the whole path on the reader model runs and accounts for every card
(numbers belong to the benchmark; this checks behaviour only)."""

from __future__ import annotations

import pytest

from controller.bench.table import floor_read_ms, run_bench


def test_one_read_of_a_7_byte_tag_has_a_floor() -> None:
    assert 5.0 < floor_read_ms() < 50.0  # at least the 5 ms ISO settle time


@pytest.mark.slow
def test_a_dealt_hand_on_28_model_readers_loses_no_card_and_makes_none_up() -> None:
    r = run_bench(hands=1, slow_tags=0.1)
    assert r["readers"] == 28 and r["hole"]["n"] == 20
    assert r["lost_hole_cards"] == 0 and r["phantom_hole_cards"] == 0
    assert r["flop"]["n"] == 1 and r["flops_missing"] == 0
    assert r["leaves_missing"] == 0
