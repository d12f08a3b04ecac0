"""Issue 22: mixed games in the config (``[[rotations]]``, ``[table] rotation``), checked like every
other section: each problem names its key, and a rotation the table starts in is one that exists."""

from __future__ import annotations

import tomllib

from controller.app.config import validate_config
from controller.rules.rotations import ROTATIONS
from controller.rules.table import Table
from tests.app.test_config import EXAMPLE, example, problems

HOLD_STUD = {"name": "hold-stud", "hands": 4, "games": [
    {"game": "holdem", "structure": "limit",
     "stakes": {"small_blind": 1, "big_blind": 2, "small_bet": 2, "big_bet": 4}},
    {"game": "stud", "stakes": {"ante": 1, "bring_in": 1, "small_bet": 2, "big_bet": 4}}]}


def test_the_examples_commented_rotation_loads() -> None:
    text = EXAMPLE.read_text()
    block = text[text.index("# [[rotations]]"):text.index("[antennas]")]
    data = example() | tomllib.loads("\n".join(line[2:] for line in block.splitlines() if line.startswith("# ")))
    data["table"]["rotation"] = "hold-stud"
    cfg = validate_config(data)
    kw = cfg.table_kwargs()
    assert set(kw["rotations"]) == {"hold-stud", *ROTATIONS}
    assert kw["rotation"].name == "hold-stud" and [g.game for g in kw["rotation"].games] == ["holdem", "stud"]
    table = Table(**kw)
    for s in (1, 2, 3):
        table.seat(s, f"p{s}")
    setup = table.next_setup()
    assert (setup.game, setup.structure, setup.chips.limits) == ("holdem", "limit", (2, 4))


def test_rotation_problems_name_their_key() -> None:
    data = example() | {"rotations": [HOLD_STUD, HOLD_STUD]}
    data["table"]["rotation"] = "eights"
    got = problems(data)
    assert "rotations.1.name: rotation 'hold-stud' is listed twice" in got
    assert any(p.startswith("rotations.table.rotation: no rotation 'eights'") for p in got), got
    bad = {"name": "x", "games": [{"game": "stud", "stakes": {"ante": 1, "small_bet": 2, "big_bet": 4}}]}
    assert problems(example() | {"rotations": [bad]}) == [
        "rotations.0.games.0.stakes.bring_in: required for stud (limit)"]
    assert problems(example() | {"rotations": [{"name": "y", "per_level": True, "games": ["holdem"]}]})[0] \
        .startswith("rotations.0.games.0")
    assert problems(example() | {"rotations": [{"name": "z", "per_level": True, "games": [{"game": "omaha"}]}]}) \
        == ["rotations.0.per_level: a rotation per level needs [[levels]]"]
