"""PokerKit agreement: the real hands of pokerkit's own test suite (2023 WSOP Events #43 and #54,
installed with pokerkit), replayed through the engine with their stacks, forced bets and amounts,
end with PokerKit's final stacks in every game the engine models.

The hands are collected by running pokerkit's tests with ``HandHistory.from_game_state`` recorded:
each test builds its hand, checks its own final stacks, then writes the hand history we read.
"""

from __future__ import annotations

import importlib
import unittest
from collections import Counter
from typing import Any

import pytest

from controller.phh_import import GAMES, PhhUnsupported, scenario_from_phh
from controller.rules.scenario import Scenario, run_scenario

pokerkit = pytest.importorskip("pokerkit")
MODULES = ("pokerkit.tests.test_wsop.test_2023_43_5", "pokerkit.tests.test_wsop.test_2023_54_4")
# PokerKit variants with no game here, and why.
NOT_MODELLED = {"F2L3D": "deuce-to-seven triple draw: the engine deals single-draw lowball only"}


def _pokerkit_hands() -> list[tuple[str, Any, list[int]]]:
    from pokerkit.notation import HandHistory

    captured: list[tuple[str, Any, list[int]]] = []
    original = HandHistory.__dict__["from_game_state"]
    current: list[str] = []

    def record(cls, game, state, *args, **kwargs):
        hh = original.__func__(cls, game, state, *args, **kwargs)
        captured.append((current[0], hh, list(state.stacks)))
        return hh

    HandHistory.from_game_state = classmethod(record)
    try:
        for name in MODULES:
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
            for test in unittest.TestLoader().loadTestsFromModule(module):
                for case in test:  # type: ignore[union-attr]
                    current[:] = [case.id().rsplit(".", 1)[-1]]
                    result = unittest.TestResult()
                    case.run(result)
                    assert result.wasSuccessful(), (case.id(), result.errors, result.failures)
    finally:
        HandHistory.from_game_state = original
    return captured


HANDS = _pokerkit_hands()


def test_pokerkit_test_suite_has_real_hands_of_every_modelled_game() -> None:
    variants = Counter(hh.variant for _, hh, _ in HANDS)
    assert len(HANDS) >= 90, variants
    assert set(variants) - set(NOT_MODELLED) <= set(GAMES), variants
    assert {GAMES[v][0] for v in variants if v in GAMES} == {"holdem", "omaha", "omaha8", "stud", "stud8", "razz",
                                                            "lowball_27"}


# Every modelled hand with the discards seen, and again unseen when it has a draw (the cases that do
# not apply are not generated, so nothing skips).
CASES = [pytest.param(t, h, final, muck, id=f"{t}-{h.variant}-{'discards-seen' if muck else 'discards-unseen'}")
         for t, h, final in HANDS if h.variant not in NOT_MODELLED
         for muck in (True, False) if muck or "sd" in " ".join(h.actions)]


@pytest.mark.parametrize(("test_id", "hh", "final", "muck_reader"), CASES)
def test_engine_ends_with_pokerkit_final_stacks(test_id: str, hh: Any, final: list[int], muck_reader: bool) -> None:
    try:
        data = scenario_from_phh(hh, name=test_id, muck_reader=muck_reader)
    except PhhUnsupported as exc:  # pragma: no cover - every modelled variant converts
        pytest.fail(str(exc))
    data["expect"]["final_stacks"] = {seat: chips for seat, chips in enumerate(final, 1)}
    result = run_scenario(Scenario.from_dict(data))
    assert result.passed, result.failures
