"""Issue 24: what the service hands the publisher is typed (controller/service/results.py).

Every output carries a frozen record of one of the result types, its ``kind`` is its type's, and
its ``payload()`` is the body the written contract validates (docs/mqtt.md): the publisher and
the readers branch on the types; only the wire sees the dicts.  The MQTT bytes were compared
before and after the change (the closing note says how); these tests keep the shapes honest.
"""

from __future__ import annotations

import dataclasses
import random
import typing

import pytest

from controller.mqtt.contract import card_event, event_payload, validate
from controller.rules.cards import Card
from controller.rules.events import (
    Acknowledge,
    CallClock,
    Deal,
    DealerSignIn,
    SeatPlayer,
    SetBroadcastDelay,
    SetStack,
    SitIn,
    SitOut,
    StartDraw,
    StartHand,
    UnseatPlayer,
)
from controller.rules.operations import CardDealt
from controller.rules.scenario import Scenario
from controller.rules.table import Table
from controller.service import EVENT_OUTPUTS, Output, OutputKind, Rejected, TableService
from controller.service.results import (
    AlertRaised,
    AlertsCleared,
    ButtonDrawn,
    ButtonMoved,
    DelayChanged,
    HandBegan,
    HandEnded,
    PlayerLeft,
    PlayerSat,
    Result,
    SatIn,
    SatOut,
    StackSet,
    TableChange,
)
from controller.sim import dealer as dealer_sim

RESULT_TYPES = typing.get_args(Result)


def _submit(svc: TableService, event) -> list[Output]:
    try:
        return svc.submit(event)
    except Rejected:
        return []


def _check(out: Output, hand_id: int) -> None:
    r = out.result
    assert isinstance(r, RESULT_TYPES) and dataclasses.is_dataclass(r)
    assert type(r).__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert out.kind is OutputKind(r.kind) and out.payload == r.payload()
    assert out.secret == (out.kind is OutputKind.HOLECARDS)
    if isinstance(r, CardDealt):
        validate("event", card_event(seq=out.seq, ts=0.0, hand_id=hand_id, seat=r.seat, face="up" if r.up else "down",
                                     card=r.card, source=r.source, exposed=r.exposed))
    elif out.kind in EVENT_OUTPUTS:
        validate("event", event_payload(out.kind, seq=out.seq, ts=0.0, hand_id=hand_id, **out.payload))
    elif isinstance(r, AlertRaised):
        validate("alert", out.payload)
        assert (r.id, r.severity, r.reason, list(r.citations)) == \
            (r.body["id"], r.body["severity"], r.body["reason"], r.body["citations"])


def test_every_output_of_simulated_hands_is_a_frozen_typed_result_the_contract_validates() -> None:
    rng = random.Random(24)
    seen: set[type] = set()
    ended: list[HandEnded] = []
    for i in range(12):
        hand = dealer_sim.legal_hand(rng, game=dealer_sim.GAMES[i % len(dealer_sim.GAMES)], chips=i % 2 == 0)
        hand = dealer_sim.corrupt(rng, hand) if i % 3 == 0 else hand
        scenario = Scenario.from_dict(hand or dealer_sim.legal_hand(rng, game="holdem"))
        svc = TableService(Table(size=scenario.setup.table_size))
        for event in (DealerSignIn("Dana", badge="b1", source="nfc"), StartHand(scenario.setup), *scenario.events,
                      Acknowledge()):
            for out in _submit(svc, event):
                _check(out, svc.hand_id or 1)
                seen.add(type(out.result))
                if isinstance(out.result, HandEnded):
                    ended.append(out.result)
    assert {HandBegan, HandEnded, AlertRaised, AlertsCleared} <= seen
    with pytest.raises(dataclasses.FrozenInstanceError):
        ended[-1].settlement = None  # type: ignore[misc]


def test_the_table_around_the_hand_is_typed_too() -> None:
    svc = TableService(Table(size=6))
    results: list[Result] = []
    for event in (SeatPlayer(1, "Ann"), SeatPlayer(2, "Bob"), SeatPlayer(3, "Cy"), SetStack(1, stack=700),
                  SitOut(3), SitIn(3, post=True), UnseatPlayer(3), SetBroadcastDelay(12.5), CallClock(1),
                  StartDraw(), Deal(1, Card.parse("2c")), Deal(2, Card.parse("Kd"))):
        for out in _submit(svc, event):
            _check(out, 1)
            results.append(out.result)
    kinds = [type(r) for r in results]
    assert kinds.count(PlayerSat) == 3 and kinds.count(PlayerLeft) == 1
    assert StackSet(1, 700) in results and SatOut(3) in results and SatIn(3, True) in results
    assert DelayChanged(12.5, "producer") in results
    assert all(r.kind is OutputKind.TABLE for r in results if isinstance(r, TableChange))
    draws = [r for r in results if isinstance(r, ButtonDrawn)]
    assert draws[0].started and not draws[-1].started and draws[-1].winner == 2  # the king wins the button
    assert ButtonMoved(2, by_draw=True) in results
    assert ButtonMoved(2, by_draw=True).payload() == {"change": "button", "seat": 2, "draw": True}
