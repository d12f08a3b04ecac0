"""Engine behaviour beyond the scenario files: derived state, secrecy, codes, profiles."""

from __future__ import annotations

import re

import pytest

from controller.rules.cards import Card
from controller.rules.engine import HandEngine, SetupError
from controller.rules.events import Act, BoardCards, Burn, Deal, HandSetup, Report
from controller.rules.scenario import check_file
from tests.conftest import OWN_SCENARIOS, conformance_files, shared_conformance


def _format_codes() -> tuple[set[str], set[str]]:
    live = shared_conformance()
    if live is None:
        pytest.skip("../shared/conformance is not beside this checkout")
    text = (live / "FORMAT.md").read_text()
    reasons_part = text.split("## Reason codes", 1)[1].split("## Remedy codes", 1)[0]
    remedies_part = text.split("## Remedy codes", 1)[1]
    reasons = set()
    for line in reasons_part.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 3 and cells[1] in ("misdeal", "void", "irregularity"):
            reasons.update(re.findall(r"`(\w+)`", cells[2]))
    remedies = {m for line in remedies_part.splitlines() for m in re.findall(r"^\| `(\w+)` \|", line)}
    return reasons, remedies


def test_every_format_code_is_produced_by_a_scenario() -> None:
    reasons, remedies = _format_codes()
    assert len(reasons) >= 23 and len(remedies) >= 13
    got_reasons, got_remedies = set(), set()
    for path in conformance_files() + sorted(OWN_SCENARIOS.glob("*.yaml")):
        for r in check_file(path).rulings:
            got_reasons.add(r.reason)
            got_remedies.add(r.remedy)
    assert reasons - got_reasons == set()
    assert remedies - got_remedies == set()


def _holdem(**kw) -> HandEngine:
    setup = HandSetup(game="holdem", rules=kw.pop("rules", "robert"), seats=kw.pop("seats", (1, 2, 3, 4)),
                      button=kw.pop("button", 4), **kw)
    return HandEngine(setup)


def c(text: str) -> Card:
    return Card.parse(text)


def test_snapshot_tracks_next_seat_to_act_and_board_without_hole_cards() -> None:
    e = _holdem()
    assert e.snapshot()["next_seat"] == 1
    cards = ["Ah", "Kd", "Qs", "Jc", "Th", "9d", "8s", "7c"]
    for i, card in enumerate(cards):
        e.apply(Deal((i % 4) + 1, c(card)))
    snap = e.snapshot()
    assert snap["next_seat"] is None and snap["to_act"] == 3 and snap["street"] == "preflop"
    assert snap["small_blind"] == 1 and snap["big_blind"] == 2
    assert all(s["cards"] == 2 for s in snap["seats"].values())
    text = repr(snap)
    assert not any(card in text for card in cards), "hole cards must never reach the public snapshot"
    assert e.hole_cards()[1] == ["Ah", "Th"]
    for seat, action in ((3, "call"), (4, "call"), (1, "call"), (2, "check")):
        e.apply(Act(seat, action))
    assert e.snapshot()["phase"] == "board" and e.to_act is None
    e.apply(Burn(c("2c")))
    e.apply(BoardCards((c("2d"), c("3d"), c("4d"))))
    snap = e.snapshot()
    assert snap["board"] == ["2d", "3d", "4d"] and snap["burns"] == 1 and snap["to_act"] == 1
    assert snap["substantial_action"] is True


def test_exposed_card_is_public() -> None:
    e = _holdem()
    e.apply(Deal(1, c("Ah")))
    e.apply(Deal(2, c("Kd")))
    e.apply(Deal(3, c("Qs"), face="up"))
    assert e.snapshot()["seats"]["3"]["up"] == ["Qs"]
    assert e.rulings[-1].reason == "exposed_card" and e.rulings[-1].remedy == "replace_after_deal"


def test_rulings_carry_citations_message_and_steps_per_profile() -> None:
    for rules, cite in (("robert", "RRoP s3 Misdeals 1(h)"), ("tda", "TDA 33-A-2")):
        e = _holdem(rules=rules, event="tournament" if rules == "tda" else "cash")
        (r,) = e.apply(Deal(3, c("Ah")))
        assert r.ruling == "misdeal" and r.reason == "first_card_wrong_seat"
        assert cite in r.citations
        assert "3" in r.message and "{" not in r.message
        assert r.steps, "a misdeal says what to do"
    assert e.over


def test_substantial_action_differs_between_profiles() -> None:
    results = {}
    for rules in ("robert", "tda"):
        e = _holdem(rules=rules, seats=(1, 2, 3, 4, 5, 6), button=6)
        for i in range(12):
            e.apply(Deal(i % 6 + 1, Card("23456789TJQKA"[i], "cdhs"[i % 4])))
        e.apply(Act(3, "fold"))
        e.apply(Act(4, "fold"))
        results[rules] = (e.substantial_action, e.apply(Report("button_out_of_position"))[0].ruling)
    assert results["robert"] == (True, "irregularity")
    assert results["tda"] == (False, "misdeal")


def test_tda_three_actions_or_chips() -> None:
    e = _holdem(rules="tda", seats=(1, 2, 3, 4, 5, 6), button=6)
    for i in range(12):
        e.apply(Deal(i % 6 + 1, Card("23456789TJQKA"[i], "cdhs"[i % 4])))
    e.apply(Act(3, "fold"))
    e.apply(Act(4, "call"))
    assert e.substantial_action  # two actions, one with chips (TDA 34-A)


def test_out_of_turn_action_does_not_count_or_move_the_turn() -> None:
    e = _holdem(rules="tda")
    for i in range(8):
        e.apply(Deal(i % 4 + 1, Card("23456789TJQKA"[i], "cdhs"[i % 4])))
    assert e.to_act == 3
    e.apply(Act(1, "call"))  # out of turn
    assert e.to_act == 3 and e.actions == 0


def test_button_out_of_position_from_previous_button() -> None:
    setup = HandSetup(game="holdem", rules="robert", seats=(1, 2, 3, 4), button=1, previous_button=4)
    e = HandEngine(setup)
    (r,) = e.apply(Deal(1, c("Ah")))  # dealt as if the button were still on seat 4
    assert r.reason == "button_out_of_position"
    e = HandEngine(setup)
    (r,) = e.apply(Deal(3, c("Ah")))
    assert r.reason == "first_card_wrong_seat"


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"seats": (1,)}, "at least two"),
        ({"seats": (1, 1, 2)}, "repeated"),
        ({"seats": (1, 12)}, "outside"),
        ({"button": None}, "button"),
        ({"small_blind": 5, "blinds_given": True}, "not dealt in"),
    ],
)
def test_bad_setup_is_a_clear_error(kw: dict, message: str) -> None:
    with pytest.raises(SetupError, match=message):
        _holdem(**kw)


def test_heads_up_button_is_small_blind_and_acts_first_preflop() -> None:
    e = _holdem(seats=(3, 7), button=7)
    assert (e.small_blind, e.big_blind) == (7, 3)
    assert e.next_seat == 3


def test_all_in_players_skip_betting_and_board_runs_out() -> None:
    e = _holdem(seats=(1, 2, 3), button=3)
    for i in range(6):
        e.apply(Deal(i % 3 + 1, Card("23456789TJQKA"[i], "cdhs"[i % 4])))
    e.apply(Act(3, "raise", all_in=True))
    e.apply(Act(1, "call", all_in=True))
    e.apply(Act(2, "fold"))
    assert e.phase.value == "board" and e.to_act is None
    e.apply(BoardCards((c("Ac"), c("Ad"), c("As"))))
    e.apply(BoardCards((c("Kc"),)))
    e.apply(BoardCards((c("Kd"),)))
    assert e.phase.value == "done" and not e.rulings


def test_fold_to_one_player_ends_hand() -> None:
    e = _holdem()
    for i in range(8):
        e.apply(Deal(i % 4 + 1, Card("23456789TJQKA"[i], "cdhs"[i % 4])))
    for seat in (3, 4, 1):
        e.apply(Act(seat, "fold"))
    assert e.phase.value == "done" and e.winner == 2


def test_showdown_cards_speak() -> None:
    e = _holdem(seats=(1, 2), button=2)
    for seat, card in ((1, "Ah"), (2, "Kd"), (1, "As"), (2, "Kh")):
        e.apply(Deal(seat, c(card)))
    e.apply(Act(2, "call"))
    e.apply(Act(1, "check"))
    for board in (("2c", "7d", "9s"), ("Jc",), ("3h",)):
        e.apply(BoardCards(tuple(c(x) for x in board)))
        e.apply(Act(1, "check"))
        e.apply(Act(2, "check"))
    award = e.showdown(pot=100)
    assert award is not None and award.shares == {1: 100}
    assert "Aces" in award.describe()


def test_no_decision_left_when_everyone_else_is_all_in() -> None:
    e = _holdem(seats=(1, 2), button=2)  # heads-up: 2 is button and small blind, 1 the big blind
    for seat, card in ((1, "Ah"), (2, "Kd"), (1, "As"), (2, "Kh")):
        e.apply(Deal(seat, c(card)))
    assert e.to_act == 2
    e.apply(Act(2, "call", all_in=True))  # calls all in: the big blind has nothing to call
    assert e.to_act is None and e.phase.value == "board"
    e = _holdem(seats=(1, 2), button=2)
    for seat, card in ((1, "Ah"), (2, "Kd"), (1, "As"), (2, "Kh")):
        e.apply(Deal(seat, c(card)))
    e.apply(Act(2, "raise", all_in=True))  # a raise all in: the big blind must still decide
    assert e.to_act == 1


def test_end_hand_before_showdown_awards_nothing() -> None:
    from controller.rules.events import EndHand

    e = _holdem()
    for i in range(8):
        e.apply(Deal(i % 4 + 1, Card("23456789TJQKA"[i], "cdhs"[i % 4])))
    e.apply(EndHand())
    assert e.phase.value == "done" and e.showdown() is None
