"""``next_seat`` (the seat due the next card) is the engine's, not FORMAT.md's: the strict loader
rejects it in a scenario file, so our own scenarios' checks of it live here."""

from __future__ import annotations

import pytest

from controller.rules.engine import HandEngine
from controller.rules.scenario import Scenario
from tests.conftest import OWN_SCENARIOS

CASES = [
    # TDA 33-B: the button skipped on the first round takes its card right after its second.
    ("holdem_button_two_consecutive_tda", 6, 4),
    # RRoP s5 Hold'em 1: the exposed card is replaced once the deal is complete.
    ("holdem_dealer_exposes_card", 9, 3),
    # RRoP s3 Irregularities 8: a joker is a scrap of paper; the next card takes its place.
    ("holdem_joker_scrap", 2, 2),
    # RRoP s11 NL lowball 2(a): a six exposed before the draw is replaced after the deal.
    ("lowball_a5_nolimit_exposed_six_replaced", 15, 3),
]


@pytest.mark.parametrize(("name", "after", "seat"), CASES)
def test_next_seat_after_step(name: str, after: int, seat: int) -> None:
    scenario = Scenario.load(OWN_SCENARIOS / f"{name}.yaml")
    engine = HandEngine(scenario.setup)
    for event in scenario.events[:after]:
        engine.apply(event)
    assert engine.snapshot()["next_seat"] == seat
