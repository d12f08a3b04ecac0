"""FORMAT's one-value steps (``burn: Ah``, ``board: [..]``, ``report: reason``...) are the events of
the same kind with that value as their one field (controller.rules.scenario.SCALAR_STEPS)."""

from __future__ import annotations

import pytest

from controller.rules.cards import Card
from controller.rules.events import EVENT_TYPES, BoardCards, Burn, Report, Stub
from controller.rules.scenario import SCALAR_STEPS, ScenarioError, step_event

C = Card.parse
VALUES = {"card": ("Ah", C("Ah")), "cards": (["Ah", "Kd", "2c"], (C("Ah"), C("Kd"), C("2c"))),
          "reason": ("string_bet", "string_bet")}


@pytest.mark.parametrize("step", sorted(SCALAR_STEPS))
def test_a_one_value_step_is_its_kinds_event(step: str) -> None:
    field = SCALAR_STEPS[step]
    written, value = VALUES[field]
    event = step_event({step: written}, 1)
    assert type(event) is EVENT_TYPES[step] and event.kind == step
    assert getattr(event, field) == value


def test_one_card_alone_is_a_board_of_one_and_values_are_read_as_text() -> None:
    assert step_event({"board": "Ah"}, 1) == BoardCards((C("Ah"),))
    assert step_event({"stub": ["Ah"]}, 1) == Stub((C("Ah"),))
    assert step_event({"burn": "Ah@B"}, 1, "B") == Burn(C("Ah@B", "B"))
    assert step_event({"report": 7}, 1) == Report("7")


@pytest.mark.parametrize(("step", "error"), [
    ({"burn": "Zz"}, r"^step 3 \(burn\): burn\.card: not a card: 'Zz'"),
    ({"board": ["Ah", "Qq"]}, r"^step 3 \(board\): board\.cards: not a card: 'Qq'"),
    ({"stub": []}, r"^step 3 \(stub\): stub needs at least one card$"),
    ({"muck": ["Ah"]}, r"^step 3 \(muck\): muck\.card: not a card"),
])
def test_a_bad_value_names_its_step(step: dict, error: str) -> None:
    with pytest.raises(ScenarioError, match=error):
        step_event(step, 3)
