"""Chips at the table: stacks carried hand to hand, pushes ruled on through the service, the legal
range in console errors, stacks and levels between hands only, all journaled and replayed."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.app.config import validate_config
from controller.journal import Journal
from controller.mqtt.contract import event_payload, state_payload, validate
from controller.rules.cards import Card
from controller.rules.events import Act, BoardCards, Burn, Deal, NewHand, Put, SeatPlayer, SetButton, SetLevel, SetStack
from controller.rules.table import Table
from controller.service import Rejected, TableService

C = Card.parse
CLOCK = [1_000.0]


def _service(journal: Journal | None = None, **table: object) -> TableService:
    kw = {"size": 6, "rules": "tda", "event": "tournament", "stakes": {"blinds": [200, 400]},
          "starting_stack": 10_000} | table
    svc = TableService(Table(**kw), journal=journal, clock=lambda: CLOCK[0])
    for seat in (1, 2, 3):
        svc.submit(SeatPlayer(seat, f"p{seat}"))
    svc.submit(SetButton(3))
    return svc


def _deal(svc: TableService, cards: str) -> None:
    for card in cards.split():
        seat = svc.engine.next_seat
        svc.submit(Deal(seat, C(card)))


def _check_contract(svc: TableService, outputs) -> None:
    state = svc.public_state()
    validate("state", state_payload(seq=1, ts=0.0, table_id="t", table=state["table"], hand_id=state["hand_id"],
                                    hand=state["hand"]))
    for o in outputs:
        if o.kind in ("hand_end", "action", "hand_start"):
            validate("event", event_payload(o.kind, seq=1, ts=0.0, hand_id=svc.hand_id, **o.payload))


def test_a_hand_with_chips_pays_the_pot_and_the_stacks_carry_into_the_next_hand() -> None:
    svc = _service()
    out = svc.submit(NewHand())
    assert svc.engine.setup.chips.stacks == {1: 10_000, 2: 10_000, 3: 10_000}
    _deal(svc, "Ah Kd 7c As Kh 2d")
    chips = svc.public_state()["hand"]["chips"]
    assert chips["pot"] == 600 and chips["to_call"] == 400 and chips["min_raise"] == 800
    players = svc.public_state()["table"]["players"]
    assert {s: p["stack"] for s, p in players.items()} == {"1": 9_800, "2": 9_600, "3": 10_000}  # behind
    out += svc.submit(Act(3, "raise", amount=1_200))
    out += svc.submit(Act(1, "call"))
    assert svc.public_state()["hand"]["chips"]["last_action"]["text"] == "Seat 1 calls 1,200"
    out += svc.submit(Act(2, "fold"))
    out += svc.submit(Burn(C("3s")))
    out += svc.submit(BoardCards((C("Qc"), C("Jd"), C("9h"))))
    out += svc.submit(Act(1, "bet", amount=2_000))
    out += svc.submit(Act(3, "fold"))
    end = next(o for o in out if o.kind == "hand_end")
    assert end.payload["result"] == "uncontested"
    assert end.payload["payouts"] == {"1": 2_000 + 1_200 + 1_200 + 400}
    assert end.payload["pots"] == [{"amount": 2_800, "eligible": [1], "winners": [1]}]
    _check_contract(svc, out)
    players = svc.public_state()["table"]["players"]
    assert {s: p["stack"] for s, p in players.items()} == {"1": 11_600, "2": 9_600, "3": 8_800}
    svc.submit(NewHand())
    assert svc.engine.setup.chips.stacks == {1: 11_600, 2: 9_600, 3: 8_800}


def test_a_silent_push_is_ruled_on_with_the_tda_50_percent_standard() -> None:
    svc = _service(starting_stack=20_000)
    svc.submit(NewHand())
    _deal(svc, "Ah Kd 7c As Kh 2d")
    svc.submit(Act(3, "call"))
    svc.submit(Act(1, "call"))
    svc.submit(Act(2, "check"))
    svc.submit(Burn(C("3s")))
    svc.submit(BoardCards((C("Qc"), C("Jd"), C("9h"))))
    svc.submit(Act(1, "bet", amount=1_000))
    out = svc.submit(Put(2, (1_000, 100, 100, 100, 100)))  # "fourteen hundred" facing 1000: a call
    alert = next(o.payload for o in out if o.kind == "alert")
    assert alert["reason"] == "short_raise" and alert["remedy"] == "treated_as_call"
    assert "TDA 42-A" in alert["citations"]
    action = next(o.payload for o in out if o.kind == "action")
    assert action["action"] == "call" and action["amount"] == 1_000
    validate("alert", alert)
    chips = svc.public_state()["hand"]["chips"]
    assert chips["stacks"]["2"] == 20_000 - 400 - 1_000 and chips["to_call"] == 1_000


def test_console_amounts_outside_the_legal_range_are_refused_with_the_range() -> None:
    svc = _service()
    svc.submit(NewHand())
    _deal(svc, "Ah Kd 7c As Kh 2d")
    with pytest.raises(Rejected, match=r"outside the legal range \(seat 3: to call 400; bet or raise to 800..10,000\)"):
        svc.submit(Act(3, "raise", amount=500))
    with pytest.raises(Rejected, match="has 10,000 in all"):
        svc.submit(Act(3, "raise", amount=12_000))
    with pytest.raises(Rejected, match="check is not legal"):
        svc.submit(Act(3, "check"))
    with pytest.raises(Rejected, match="cannot be pushed"):
        svc.submit(Put(3, (20_000,)))
    assert svc.engine.chips.pot == 600  # nothing changed


def test_stacks_change_between_hands_only_and_replay_from_the_journal(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as journal:
        svc = _service(journal)
        svc.submit(SetStack(2, add=5_000))
        svc.submit(SeatPlayer(5, "late", stack=3_000))
        svc.submit(NewHand())
        with pytest.raises(Rejected, match="between hands only"):
            svc.submit(SetStack(1, stack=1))
        assert svc.engine.setup.chips.stacks[2] == 15_000 and svc.engine.setup.chips.stacks[5] == 3_000
        state = svc.public_state()
        again = TableService(Table(size=6, rules="tda", event="tournament", stakes={"blinds": [200, 400]},
                                   starting_stack=10_000), clock=lambda: CLOCK[0])
        again.replay(journal.entries())
        assert again.public_state() == state


def test_levels_take_effect_with_the_next_hand_never_mid_hand() -> None:
    levels = [{"blinds": [100, 200], "minutes": 20}, {"blinds": [200, 400], "ante": 50, "minutes": 20},
              {"blinds": [300, 600], "bb_ante": 600, "minutes": 20}]
    CLOCK[0] = 1_000.0
    svc = _service(levels=levels)
    svc.submit(NewHand())
    level = svc.public_state()["table"]["level"]
    assert level["number"] == 1 and level["blinds"] == [100, 200] and level["ends_at"] == 1_000.0 + 1_200
    assert level["next"]["number"] == 2
    svc.submit(SetLevel(advance=True))  # asked mid-hand: the hand keeps its blinds
    assert svc.engine.setup.chips.blinds == (100, 200)
    assert svc.public_state()["table"]["level"]["number"] == 1
    _deal(svc, "Ah Kd 7c As Kh 2d")
    svc.submit(Act(3, "fold"))
    svc.submit(Act(1, "fold"))
    svc.submit(NewHand())
    assert svc.engine.setup.chips.blinds == (200, 400) and svc.engine.setup.chips.ante == 50
    _deal(svc, "Ah Kd 7c As Kh 2d")
    for _ in range(2):
        svc.submit(Act(svc.engine.to_act, "fold"))
    CLOCK[0] = 1_000.0 + 1_300 + 1_200  # level 2 ran out while the hand was played
    svc.submit(NewHand())
    assert svc.engine.setup.chips.bb_ante == 600
    _check_contract(svc, [])
    with pytest.raises(Rejected, match="past the last level"):
        svc.submit(SetLevel(advance=True))


def test_config_levels_and_stakes_reach_the_table() -> None:
    cfg = validate_config({
        "table": {"id": "t", "game": "holdem", "rules": "tda", "event": "tournament"},
        "stakes": {"small_blind": 100, "big_blind": 200, "starting_stack": 20_000},
        "levels": [{"small_blind": 100, "big_blind": 200, "minutes": 30},
                   {"small_blind": 200, "big_blind": 400, "bb_ante": 400, "minutes": 30}],
    })
    table = Table(**cfg.table_kwargs())
    assert table.starting_stack == 20_000 and table.levels[1] == {"blinds": [200, 400], "bb_ante": 400, "minutes": 30}
    with pytest.raises(ValueError, match="levels.0.big_blind: required"):
        validate_config({"table": {"id": "t"}, "levels": [{"small_blind": 100}]})
