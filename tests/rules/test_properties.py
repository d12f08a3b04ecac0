"""Property tests: the engine against the dealer simulator's independent reading of the rules.

Legal deals (random tables, games, profiles, betting) must raise no ruling and meet every
``to_act`` the simulator's own turn model predicts; each single corruption must raise
exactly the rulings the rulebooks call for (see ``controller.sim.dealer``).  A failure
prints the scenario as YAML, ready to drop into ``tests/scenarios/`` as a regression case.
"""

from __future__ import annotations

import random
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from controller.rules.scenario import Scenario, run_scenario
from controller.sim.dealer import (
    BOARD_GAMES,
    BUTTON_GAMES,
    CORRUPTIONS,
    DRAW_GAMES,
    EVENTS,
    GAMES,
    PROFILES,
    STUD_GAMES,
    corrupt,
    legal_hand,
    session,
    to_yaml,
)

SEEDS = st.integers(min_value=0, max_value=2**63 - 1)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Which games each corruption can apply to (it returns None elsewhere).
_KINDS_BY_GAMES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (tuple(sorted(BUTTON_GAMES)), ("extra_card", "two_extra_cards", "early_card_exposed", "exposed_card",
                                   "two_exposed_cards", "button_out_of_position")),
    (tuple(sorted(STUD_GAMES)), ("stud_holecard_exposed", "stud_both_holecards_exposed", "premature_card",
                                 "burn_error")),
    (tuple(sorted(BOARD_GAMES)), ("premature_flop", "premature_turn", "premature_river", "four_card_flop")),
    (tuple(sorted(DRAW_GAMES)), ("exposed_on_draw",)),
    (tuple(g for g in GAMES if g != "lowball_a5"), ("joker",)),
)
KIND_GAMES: dict[str, tuple[str, ...]] = {kind: games for games, kinds in _KINDS_BY_GAMES for kind in kinds}


def _run(hand: dict[str, Any]) -> Any:
    return run_scenario(Scenario.from_dict(hand))


def _explain(hand: dict[str, Any], result: Any) -> str:
    got = [f"after {r.after}: {r.ruling} {r.reason} {r.remedy}" for r in result.rulings]
    return "\n".join(
        [
            *result.failures,
            f"error: {getattr(result, 'error', None)}",
            f"rulings: {got}",
            "--- scenario ---",
            to_yaml(hand),
        ]
    )


@SETTINGS
@given(seed=SEEDS, game=st.sampled_from(GAMES), rules=st.sampled_from(PROFILES), event=st.sampled_from(EVENTS))
def test_legal_hand_raises_nothing(seed: int, game: str, rules: str, event: str) -> None:
    hand = legal_hand(random.Random(seed), game=game, rules=rules, event=event)
    result = _run(hand)
    assert result.passed and not result.rulings, _explain(hand, result)


def test_ten_thousand_legal_hands() -> None:
    """Bulk run: every game, both profiles, both events; zero rulings, every to_act met."""
    rng = random.Random(20240601)
    bad: list[str] = []
    checked = 0
    start = time.perf_counter()
    for hand in session(rng, 10_000):
        result = _run(hand)
        checked += len(hand["expect"]["state"])
        if not result.passed or result.rulings:
            bad.append(_explain(hand, result))
    elapsed = time.perf_counter() - start
    assert checked > 50_000
    assert not bad, f"{len(bad)} of 10000 legal hands failed ({elapsed:.1f}s); first:\n{bad[0]}"


def _corrupted(seed: int, kind: str, game: str, rules: str) -> dict[str, Any] | None:
    rng = random.Random(seed)
    for _ in range(40):
        hand = legal_hand(rng, game=game, rules=rules)
        bad = corrupt(rng, hand, kind)
        if bad is not None:
            return bad
    return None


@pytest.mark.parametrize("kind", CORRUPTIONS)
@SETTINGS
@given(seed=SEEDS, data=st.data(), rules=st.sampled_from(PROFILES))
def test_corruption_raises_expected_rulings(kind: str, seed: int, data: st.DataObject, rules: str) -> None:
    game = data.draw(st.sampled_from(KIND_GAMES.get(kind, GAMES)), label="game")
    bad = _corrupted(seed, kind, game, rules)
    assume(bad is not None)
    assert bad is not None
    result = _run(bad)
    assert result.passed, _explain(bad, result)
