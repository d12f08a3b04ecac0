"""FORMAT.md "Strict files": a key the format does not define, at any level, fails the file with an
error naming the key and where it is; so does a state check whose ``after`` names no step of its
deal; a session's ``final_stacks`` is compared, never accepted silently."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from controller.rules.scenario import check_file

DEAL: dict[str, Any] = {
    "name": "strict_base", "source": "TDA 15-A", "game": "holdem", "rules": "tda",
    "seats": [1, 2, 3], "button": 3,
    "stacks": {1: 1000, 2: 1000, 3: 1000}, "blinds": [5, 10],
    "steps": [
        {"deal": {"to": 1, "card": "As"}}, {"deal": {"to": 2, "card": "Kd"}}, {"deal": {"to": 3, "card": "7c"}},
        {"deal": {"to": 1, "card": "Qh"}}, {"deal": {"to": 2, "card": "Kc"}}, {"deal": {"to": 3, "card": "2d"}},
        {"put": {"seat": 3, "chips": [10], "declare": "call"}},
        {"act": {"seat": 1, "action": "call", "amount": 10}},
        {"act": {"seat": 2, "action": "fold"}},
    ],
    "expect": {
        "rulings": [],
        "state": [{"after": 8, "to_act": 2, "pot": 30}],
    },
}

SESSION: dict[str, Any] = {
    "name": "strict_session", "source": "RRoP s4", "game": "holdem", "rules": "robert", "event": "cash",
    "seats": [1, 3, 5],
    "hands": [
        {"before": [{"draw": {1: "Kd", 3: "Ks", 5: "9h"}}], "expect": {"button": 3}},
        {"before": [{"seat": {"seat": 7, "post": True}}, {"sit_out": 5},
                    {"game": {"game": "omaha", "structure": "pot_limit"}}],
         "steps": [{"deal": {"to": 1, "card": "As"}}],
         "expect": {"button": 1, "rulings": [], "state": [{"after": 1, "to_act": None}]}},
    ],
}


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / f"{data['name']}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_the_base_files_pass(tmp_path: Path) -> None:
    for data in (DEAL, SESSION):
        result = check_file(_write(tmp_path, data))
        assert result.error is None, result.error


def _set(data: dict, path: tuple, key: str, value: Any) -> dict:
    out = copy.deepcopy(data)
    node: Any = out
    for p in path:
        node = node[p]
    node[key] = value
    return out


MISSPELT = [
    # (where, path to the mapping, misspelt key, what the error must name)
    ("header", (), "final_stack", "header"),
    ("expect", ("expect",), "final_stack", "expect"),
    ("ruling entry", ("expect",), "rulings", "rulings[1]"),
    ("state check", ("expect", "state", 0), "to_sho", "state[1]"),
    ("deal step", ("steps", 0, "deal"), "crad", "step 1 (deal)"),
    ("act step", ("steps", 7, "act"), "amont", "step 8 (act)"),
    ("put step", ("steps", 6, "put"), "declar", "step 7 (put)"),
]


@pytest.mark.parametrize(("level", "path", "key", "where"), MISSPELT, ids=[m[0] for m in MISSPELT])
def test_a_misspelt_key_in_a_deal_fails_the_file(tmp_path: Path, level: str, path: tuple, key: str,
                                                   where: str) -> None:
    if level == "ruling entry":
        data = _set(DEAL, path, key, [{"after": 8, "ruling": "irregularity", "reason": "under_call",
                                       "remdy": "complete_call"}])
        key = "remdy"
    else:
        data = _set(DEAL, path, key, 1)
    result = check_file(_write(tmp_path, data))
    assert not result.passed
    assert result.error is not None and repr(key) in result.error and where in result.error, result.error


SESSION_MISSPELT = [
    ("session header", (), "buton", "session header"),
    ("hand", ("hands", 0), "expct", "hand 1"),
    ("hand expect", ("hands", 0, "expect"), "big_blnd", "hand 1: expect"),
    ("hand state check", ("hands", 1, "expect", "state", 0), "to_sho", "hand 2: expect.state[1]"),
    ("seat change", ("hands", 1, "before", 0, "seat"), "pst", "hand 2: before (seat)"),
    ("game change", ("hands", 1, "before", 2, "game"), "stucture", "hand 2: before (game)"),
    ("step in a hand", ("hands", 1, "steps", 0, "deal"), "too", "hand 2: step 1 (deal)"),
]


@pytest.mark.parametrize(("level", "path", "key", "where"), SESSION_MISSPELT, ids=[m[0] for m in SESSION_MISSPELT])
def test_a_misspelt_key_in_a_session_fails_the_file(tmp_path: Path, level: str, path: tuple, key: str,
                                                     where: str) -> None:
    result = check_file(_write(tmp_path, _set(SESSION, path, key, 1)))
    assert not result.passed
    assert result.error is not None and repr(key) in result.error and where in result.error, result.error


def test_an_unknown_change_and_an_unknown_step_fail(tmp_path: Path) -> None:
    data = copy.deepcopy(SESSION)
    data["hands"][1]["before"].append({"sit_down": 4})
    result = check_file(_write(tmp_path, data))
    assert result.error is not None and "'sit_down'" in result.error
    data = copy.deepcopy(DEAL)
    data["steps"].append({"bern": "2c"})
    result = check_file(_write(tmp_path, data))
    assert result.error is not None and "'bern'" in result.error and "step 10" in result.error


@pytest.mark.parametrize("after", [0, 10, 99, None, "8"])
def test_a_state_check_after_no_step_fails(tmp_path: Path, after: Any) -> None:
    data = copy.deepcopy(DEAL)
    data["expect"]["state"] = [{"after": after, "to_act": 2}]
    result = check_file(_write(tmp_path, data))
    assert result.error is not None and "names no step" in result.error, result.error


def test_a_state_check_after_no_step_of_its_deal_fails_in_a_session(tmp_path: Path) -> None:
    data = copy.deepcopy(SESSION)
    data["hands"][1]["expect"]["state"] = [{"after": 2, "to_act": 1}]  # the deal has one step
    result = check_file(_write(tmp_path, data))
    assert result.error is not None and "hand 2" in result.error and "names no step" in result.error


def test_a_session_final_stacks_is_compared(tmp_path: Path) -> None:
    """A session states no stacks, so its hands count no chips: a final_stacks there cannot hold
    and fails the file rather than passing unchecked."""
    data = copy.deepcopy(SESSION)
    data["hands"][1]["expect"]["final_stacks"] = {1: 100, 3: 100}
    result = check_file(_write(tmp_path, data))
    assert result.error is None
    assert not result.passed
    assert any("final_stacks" in f and f.startswith("hand 2") for f in result.failures), result.failures


def test_a_wrong_final_stacks_fails_a_deal(tmp_path: Path) -> None:
    data = copy.deepcopy(DEAL)
    data["steps"] += [{"burn": "3c"}, {"board": ["4c", "5c", "6c"]}, {"act": {"seat": 1, "action": "fold"}}]
    data["expect"]["final_stacks"] = {1: 990, 2: 990, 3: 1020}
    assert check_file(_write(tmp_path, data)).passed
    data["expect"]["final_stacks"] = {1: 990, 2: 995, 3: 1015}
    result = check_file(_write(tmp_path, data))
    assert not result.passed and any("final_stacks" in f for f in result.failures)


def test_the_draw_needs_a_header_without_button(tmp_path: Path) -> None:
    data = copy.deepcopy(SESSION)
    data["button"] = 1
    result = check_file(_write(tmp_path, data))
    assert result.error is not None and "draw" in result.error
    data = copy.deepcopy(SESSION)
    del data["hands"][0]["before"]
    result = check_file(_write(tmp_path, data))
    assert result.error is not None and "'button' is required" in result.error
