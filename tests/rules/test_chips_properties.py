"""Property tests for chips: random legal betting in every game and structure under both
profiles conserves chips and raises no ruling; a single wrong amount raises the ruling the rules
call for.  The hands and the expected rulings come from controller.sim.dealer's own chip model
(:class:`SimChips`), an independent reading of the betting rules."""

from __future__ import annotations

import random

import pytest

from controller.rules.engine import HandEngine, Phase
from controller.rules.scenario import Scenario, run_scenario
from controller.sim.dealer import AMOUNT_CORRUPTIONS, GAMES, Table, TurnModel, corrupt_amount, legal_hand

STRUCTURES = {g: (("limit",) if g in ("stud", "razz", "stud8") else ("no_limit", "pot_limit", "limit")) for g in GAMES}
CASES = [(g, s, p) for g in GAMES for s in STRUCTURES[g] for p in ("robert", "tda")]
HANDS = 12


@pytest.mark.parametrize(("game", "structure", "rules"), CASES, ids=lambda v: str(v))
def test_random_legal_betting_conserves_chips_and_rules_nothing(game: str, structure: str, rules: str) -> None:
    rng = random.Random(f"{game}-{structure}-{rules}")
    settled = 0
    for _ in range(HANDS):
        hand = legal_hand(rng, game=game, rules=rules, structure=structure, chips=True)
        scenario = Scenario.from_dict(hand)
        engine = HandEngine(scenario.setup)
        model = TurnModel(Table.from_scenario(hand))
        total = sum(hand["stacks"].values())
        assert engine.chips is not None
        for i, (step, event) in enumerate(zip(hand["steps"], scenario.events, strict=True), 1):
            if "act" in step and model.chips is not None and engine.to_act == step["act"]["seat"]:
                # the engine's legal range agrees with the independent model's
                snap = engine.snapshot()["chips"]
                call, lo, hi = model.chips.range(step["act"]["seat"])
                assert (snap["to_call"], snap["min_raise"], snap["max_raise"]) == (call, lo, hi), (hand["name"], i)
            rulings = engine.apply(event)
            model.apply(step)
            assert not rulings, (hand["name"], i, [r.reason for r in rulings])
            chips = engine.chips
            assert chips.pot + sum(chips.stacks.values()) == total, (hand["name"], i)
        if engine.phase is Phase.DONE:
            payouts = engine.settle()
            if payouts is not None:
                settled += 1
                assert sum(engine.chips.final_stacks().values()) == total, hand["name"]
        result = run_scenario(scenario)
        assert result.passed, (hand["name"], result.failures)
    assert settled >= HANDS // 2


@pytest.mark.parametrize("kind", AMOUNT_CORRUPTIONS)
def test_single_wrong_amount_raises_its_ruling(kind: str) -> None:
    rng = random.Random(kind)
    done = 0
    for n in range(400):
        game = GAMES[n % len(GAMES)]
        structure = rng.choice(STRUCTURES[game])
        hand = legal_hand(rng, game=game, structure=structure, chips=True)
        bad = corrupt_amount(rng, hand, kind)
        if bad is None:
            continue
        result = run_scenario(Scenario.from_dict(bad))
        assert result.passed, (bad["name"], bad["steps"][-1], result.failures)
        done += 1
        if done >= 15:
            break
    assert done >= 5, f"only {done} hands could take a {kind} corruption"
