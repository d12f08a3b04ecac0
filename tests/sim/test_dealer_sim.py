"""The dealer simulator's own consistency, and its turn-order model against the conformance files.

These tests do not touch the engine: they check that the generator deals real, distinct
cards in the right quantities, writes only valid FORMAT steps, bets realistically, and
that its independent model of turn order agrees with every ``to_act`` in the shared
conformance scenarios (which cite the rulebooks).
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from controller.rules.cards import Card, standard_deck
from controller.rules.events import event_from_dict
from controller.sim.dealer import (
    BOARD_GAMES,
    CORRUPTIONS,
    DRAW_GAMES,
    GAMES,
    HOLE_CARDS,
    PROFILES,
    STUD_GAMES,
    Table,
    TurnModel,
    best_showing_seat,
    bring_in_seat,
    corrupt,
    expected_to_act,
    legal_hand,
    replay_to_act,
    session,
    to_yaml,
)
from tests.conftest import conformance_files, scenario_params

STEP_KEYS = {"deal", "burn", "board", "stub", "muck", "aside", "boxed", "expose", "act", "discard", "report"}
HEADER_KEYS = {
    "name",
    "source",
    "game",
    "structure",
    "rules",
    "event",
    "table_size",
    "seats",
    "button",
    "small_blind",
    "big_blind",
    "deck",
}


def _hands(n: int, seed: int = 7, **kw: Any) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [legal_hand(rng, **kw) for _ in range(n)]


def _step_event(step: dict[str, Any]) -> dict[str, Any]:
    """Translate a FORMAT step into the events module's JSON form, to reuse its shape checks."""
    ((key, val),) = step.items()
    if key == "deal":
        return {
            "kind": "deal",
            "seat": val["to"],
            "card": val["card"],
            **({"face": val["face"]} if "face" in val else {}),
        }
    if key in ("burn", "muck", "aside", "boxed"):
        return {"kind": key, "card": val}
    if key in ("board", "stub"):
        return {"kind": key, "cards": val}
    if key == "act":
        return {"kind": "act", **val}
    if key == "discard":
        return {"kind": "discard", **val}
    if key == "expose":
        return {"kind": "expose", **val}
    return {"kind": "report", "reason": val}


# --------------------------------------------------------------------------- shape


@pytest.mark.parametrize("game", GAMES)
def test_hands_are_valid_format_scenarios(game: str) -> None:
    for hand in _hands(60, seed=hash(game) % 1000, game=game):
        assert set(hand) - {"steps", "expect"} <= HEADER_KEYS
        assert hand["game"] == game
        assert hand["expect"]["rulings"] == []
        table = Table.from_scenario(hand)
        assert 2 <= len(table.seats) <= table.table_size <= 10
        assert all(1 <= s <= table.table_size for s in table.seats)
        for step in hand["steps"]:
            assert len(step) == 1 and set(step) <= STEP_KEYS
            event_from_dict(_step_event(step))  # raises on a malformed step
        for st in hand["expect"]["state"]:
            assert 1 <= st["after"] <= len(hand["steps"])
            assert st["to_act"] in table.seats


def test_cards_are_real_and_distinct() -> None:
    deck = {c.face for c in standard_deck()}
    for hand in _hands(400, seed=3):
        seen: list[str] = []
        for step in hand["steps"]:
            ((key, val),) = step.items()
            if key == "deal":
                seen.append(val["card"])
            elif key == "burn":
                seen.append(val)
            elif key == "board":
                seen += val
        assert len(seen) == len(set(seen)), hand["name"]
        assert set(seen) <= deck
        assert all(Card.parse(c).deck == "A" for c in seen)


def _cards_per_seat(hand: dict[str, Any]) -> Counter:
    return Counter(s["deal"]["to"] for s in hand["steps"] if "deal" in s)


@pytest.mark.parametrize("game", sorted(BOARD_GAMES | DRAW_GAMES))
def test_button_game_counts(game: str) -> None:
    for hand in _hands(80, seed=11, game=game):
        steps = hand["steps"]
        n = len(hand["seats"])
        start = [s["deal"]["to"] for s in steps[: HOLE_CARDS[game] * n]]
        assert Counter(start) == {s: HOLE_CARDS[game] for s in hand["seats"]}
        assert all("deal" in s for s in steps[: HOLE_CARDS[game] * n])
        if game in BOARD_GAMES:
            board = [c for s in steps if "board" in s for c in s["board"]]
            assert len(board) <= 5
            assert [len(s["board"]) for s in steps if "board" in s] == [3, 1, 1][
                : len([s for s in steps if "board" in s])
            ]
            burns = [i for i, s in enumerate(steps) if "burn" in s]
            assert all("board" in steps[i + 1] for i in burns)  # every street burns once
        else:
            for i, s in enumerate(steps):
                if "discard" in s:
                    k = s["discard"]["count"]
                    assert 0 <= k <= 4
                    follow = steps[i + 1 : i + 1 + k]
                    assert all("deal" in f and f["deal"]["to"] == s["discard"]["seat"] for f in follow)
            if any("discard" in s for s in steps):
                first_discard = next(i for i, s in enumerate(steps) if "discard" in s)
                assert "burn" in steps[first_discard - 1]  # one burn before the draw


@pytest.mark.parametrize("game", sorted(STUD_GAMES))
def test_stud_counts_and_folded_players_get_no_cards(game: str) -> None:
    for hand in _hands(80, seed=13, game=game):
        folded: set[int] = set()
        per_seat: Counter = Counter()
        for step in hand["steps"]:
            if "act" in step and step["act"]["action"] == "fold":
                folded.add(step["act"]["seat"])
            if "deal" in step:
                seat = step["deal"]["to"]
                assert seat not in folded
                per_seat[seat] += 1
                assert "face" not in step["deal"]  # legal deals use the proper face
        assert all(3 <= per_seat[s] <= 7 for s in hand["seats"])


def test_betting_is_realistic() -> None:
    """No check facing a bet, no bet after a bet, bring-in only first on third street."""
    for hand in _hands(600, seed=17):
        table = Table.from_scenario(hand)
        m = TurnModel(table)
        for step in hand["steps"]:
            if "act" in step:
                act = step["act"]
                assert act["seat"] == m.to_act, hand["name"]
                facing = m.facing(act["seat"])
                if act["action"] == "check":
                    assert not facing
                if act["action"] == "bet":
                    assert m.level == 0
                if act["action"] == "raise":
                    assert m.level > 0
                if act["action"] == "bring_in":
                    assert table.stud and m.level == 0
            m.apply(step)


def test_every_game_profile_and_variant_is_covered() -> None:
    hands = list(session(random.Random(5), 1500))
    assert {h["game"] for h in hands} == set(GAMES)
    assert {h["rules"] for h in hands} == set(PROFILES)  # robert, tda, highland: the one list of profiles
    assert {h["event"] for h in hands} == {"cash", "tournament"}
    assert {h["structure"] for h in hands if h["game"] in BOARD_GAMES} == {"no_limit", "pot_limit", "limit"}
    button = [h for h in hands if h["game"] not in STUD_GAMES]
    assert any(len(h["seats"]) == 2 for h in hands)
    assert any(h["button"] not in h["seats"] for h in button)  # dead button
    assert any(h.get("small_blind", 0) is None and h.get("big_blind") is not None for h in button)
    assert any("small_blind" in h and h["small_blind"] is None and h["big_blind"] is None for h in button)
    actions = Counter(s["act"]["action"] for h in hands for s in h["steps"] if "act" in s)
    assert set(actions) == {"fold", "check", "call", "bet", "raise", "complete", "bring_in"}
    assert any(s["act"].get("all_in") for h in hands for s in h["steps"] if "act" in s)
    assert any(sum("discard" in s for s in h["steps"]) for h in hands)
    assert any(len([s for s in h["steps"] if "board" in s]) == 3 for h in hands)
    assert any(h["steps"][-1].get("act", {}).get("action") == "fold" for h in hands)  # ended early


# --------------------------------------------------------------------------- turn order vs conformance


def _load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


# One-deal scenarios (sessions, with ``hands:``, are checked in tests/rules/test_sessions.py), each
# file parsed once to sort it (collection runs in both workers: parsing each file three times cost
# ~1.5 s of CPU in each).
_ONE_DEAL = {p: s for p in conformance_files() if p.suffix == ".yaml" and "hands" not in (s := _load(p))}
CLEAN = [p for p, s in _ONE_DEAL.items() if not s.get("expect", {}).get("rulings")]
IRREGULAR = [p for p, s in _ONE_DEAL.items() if s.get("expect", {}).get("rulings")]


@pytest.mark.parametrize("path", scenario_params(CLEAN, "turns"))
def test_turn_model_agrees_with_clean_conformance(path: Path) -> None:
    scenario = _load(path)
    got = replay_to_act(scenario)
    for st in scenario["expect"].get("state", []):
        if "to_act" in st:  # a state check may hold only chip figures
            assert got[st["after"] - 1] == st["to_act"], f"{path.stem} after {st['after']}"
    # the generator's own expectations for this deal, where it emits them, agree as well
    for st in expected_to_act(scenario):
        want = {s["after"]: s["to_act"] for s in scenario["expect"].get("state", []) if "to_act" in s}
        if st["after"] in want:
            assert want[st["after"]] == st["to_act"]


@pytest.mark.parametrize("path", scenario_params(IRREGULAR, "turns"))
def test_turn_model_follows_remedy_paths(path: Path) -> None:
    """The model also follows the conformance remedy paths (extra card, exposed card, ...)."""
    scenario = _load(path)
    got = replay_to_act(scenario)
    for st in scenario["expect"].get("state", []):
        if "to_act" in st:
            assert got[st["after"] - 1] == st["to_act"], f"{path.stem} after {st['after']}"


def test_conformance_files_were_found() -> None:
    assert len(CLEAN) >= 5


# --------------------------------------------------------------------------- rules of the model


def test_bring_in_by_suit_and_razz_high_card() -> None:
    c = Card.parse
    assert bring_in_seat("stud", {1: c("3d"), 2: c("3c"), 3: c("Ah")}) == 2  # clubs lowest
    assert bring_in_seat("stud8", {1: c("2s"), 2: c("Ac")}) == 1  # ace is high
    assert bring_in_seat("razz", {1: c("Kh"), 2: c("Ks"), 3: c("Qc")}) == 2  # spades highest
    assert bring_in_seat("razz", {1: c("Ac"), 2: c("2c")}) == 2  # ace is low


def test_best_showing_hand() -> None:
    c = Card.parse

    def cards(text: str) -> list[Card]:
        return [c(t) for t in text.split()]

    assert best_showing_seat("stud", {1: cards("Ah Kh"), 2: cards("2c 2d")}) == 2  # pair beats ace-king
    assert best_showing_seat("stud", {1: cards("9c Tc Jc Qc"), 2: cards("3c 3d")}) == 2  # no straights on board
    assert best_showing_seat("stud", {4: cards("Kd 7c"), 2: cards("Ks 7h")}) == 2  # tie: lowest seat
    assert best_showing_seat("razz", {1: cards("Kh 2c"), 2: cards("Qd 4c")}) == 2
    assert best_showing_seat("razz", {1: cards("3c 3d"), 2: cards("Kd Qc")}) == 2  # pairs count against


def test_heads_up_button_posts_small_blind_and_acts_first() -> None:
    table = Table.from_scenario({"game": "holdem", "rules": "tda", "seats": [3, 7], "button": 7})
    assert (table.small_blind, table.big_blind) == (7, 3)
    assert table.deal_order() == [3, 7]


def test_dead_small_blind_action_starts_after_big_blind() -> None:
    hand = {
        "game": "holdem",
        "rules": "robert",
        "seats": [1, 3, 5, 6],
        "button": 6,
        "small_blind": None,
        "big_blind": 1,
        "steps": [
            {"deal": {"to": s, "card": c}}
            for s, c in zip([1, 3, 5, 6] * 2, ["2c", "3c", "4c", "5c", "6c", "7c", "8c", "9c"], strict=True)
        ],
    }
    assert replay_to_act(hand)[-1] == 3


def test_antes_only_draw_high_opener_acts_first_after_draw() -> None:
    seats = [1, 2, 3]
    deal = [{"deal": {"to": s, "card": c.face}} for s, c in zip(seats * 5, standard_deck()[:15], strict=True)]
    steps = deal + [
        {"act": {"seat": 1, "action": "check"}},
        {"act": {"seat": 2, "action": "bet"}},
        {"act": {"seat": 3, "action": "call"}},
        {"act": {"seat": 1, "action": "call"}},
        {"burn": "As"},
        {"discard": {"seat": 1, "count": 0}},
        {"discard": {"seat": 2, "count": 0}},
        {"discard": {"seat": 3, "count": 0}},
    ]
    hand = {
        "game": "draw_high",
        "rules": "robert",
        "seats": seats,
        "button": 3,
        "small_blind": None,
        "big_blind": None,
        "steps": steps,
    }
    assert replay_to_act(hand)[14] == 1  # antes only: left of the button
    assert replay_to_act(hand)[-1] == 2  # the opener (RRoP s12)
    hand["game"] = "lowball_27"
    assert replay_to_act(hand)[-1] == 1  # lowball: left of the button


# --------------------------------------------------------------------------- YAML and corruptions


def test_yaml_round_trip(tmp_path: Path) -> None:
    rng = random.Random(23)
    for i, hand in enumerate(session(rng, 30)):
        text = to_yaml(hand)
        path = tmp_path / f"{hand['name']}.yaml"
        path.write_text(text)
        assert yaml.safe_load(path.read_text()) == hand, i
        bad = corrupt(random.Random(i), hand)
        if bad is not None:
            assert yaml.safe_load(to_yaml(bad)) == bad


@pytest.mark.parametrize("kind", CORRUPTIONS)
def test_corruptions_are_well_formed(kind: str) -> None:
    rng = random.Random(kind)
    made = 0
    for _ in range(400):
        hand = legal_hand(rng)
        bad = corrupt(rng, hand, kind)
        if bad is None:
            continue
        made += 1
        rulings = bad["expect"]["rulings"]
        assert rulings and all(1 <= r["after"] <= len(bad["steps"]) for r in rulings)
        assert [r["after"] for r in rulings] == sorted(r["after"] for r in rulings)
        if rulings[-1]["ruling"] in ("misdeal", "void"):
            assert rulings[-1]["after"] == len(bad["steps"])  # the deal stops there
        for r in rulings:
            assert ("remedy" in r) == (r["ruling"] == "irregularity")
        for step in bad["steps"]:
            event_from_dict(_step_event(step))
        if made >= 25:
            break
    assert made > 0, kind


# --------------------------------------------------------------------------- sessions and issue 13 corruptions


def test_legal_session_is_a_format_session_that_round_trips_through_yaml() -> None:
    from controller.rules.scenario import Session, run_session
    from controller.sim.dealer import legal_session

    data = legal_session(random.Random(5), hands=8, event="cash")
    assert set(data) >= {"name", "source", "game", "rules", "event", "table_size", "seats", "button", "hands"}
    assert all(set(h) <= {"before", "steps", "expect"} and h["expect"]["rulings"] == [] for h in data["hands"])
    text = to_yaml(data)
    again = yaml.safe_load(text)
    assert again == data
    assert run_session(Session.from_dict(again)).passed


def test_turn_model_binds_an_out_of_turn_action_when_the_turn_comes() -> None:
    """RRoP s3 Betting and Raising 10; TDA 39-A: the model skips the out-of-turn seat until its
    turn, then its action binds (a fold binds at once)."""
    table = Table.from_scenario({"game": "holdem", "rules": "tda", "seats": [1, 2, 3, 4, 5], "button": 5})
    m = TurnModel(table)
    for i in range(10):
        m.apply({"deal": {"to": i % 5 + 1, "card": ["2c", "3c", "4c", "5c", "6c", "7c", "8c", "9c", "Tc", "Jc"][i]}})
    assert m.to_act == 3
    m.apply({"act": {"seat": 5, "action": "call"}})  # out of turn
    assert m.to_act == 3
    m.apply({"act": {"seat": 3, "action": "fold"}})
    m.apply({"act": {"seat": 4, "action": "fold"}})
    assert m.to_act == 1  # seat 5's call bound when the turn reached it
    assert (5, "call") in m.actions


@pytest.mark.parametrize("kind", ["premature_card", "action_out_of_turn", "burn_error"])
def test_issue_13_corruptions_apply_and_name_their_rule(kind: str) -> None:
    rng = random.Random(11)
    made = 0
    for _ in range(60):
        game = rng.choice(["stud", "razz", "stud8"]) if kind != "action_out_of_turn" else rng.choice(GAMES)
        bad = corrupt(rng, legal_hand(rng, game=game), kind)
        if bad is None:
            continue
        made += 1
        (ruling,) = bad["expect"]["rulings"]
        assert ruling["reason"] == kind and ruling["ruling"] == "irregularity"
    assert made >= 30
