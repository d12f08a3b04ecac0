"""An action taken out of turn, as the displays, the broadcast overlay, the session statistics and
the floor's hand history read it.

The out-of-turn action binds and is counted in chips only once the turn reaches its seat (RRoP s3
Betting and Raising 10; TDA 39-A), which happens on another seat's event: seat 1 calls out of turn,
then seat 3 (to act) folds.  That one event is two actions, published in the order they took
effect, each under its own seat: seat 3's fold, then seat 1's call.  Played through the service
and the publisher (what goes out on ``event/action``), and through the PHH export PokerKit replays.
"""

from __future__ import annotations

import json

import pokerkit

from controller.app.publisher import Publisher
from controller.floor.sources import Ingestor
from controller.floor.store import Store
from controller.journal import HandRecord
from controller.mqtt.contract import Topics, validate
from controller.phh import export_hand
from controller.rules.cards import Card
from controller.rules.engine import HandEngine
from controller.rules.events import Act, Deal, HandSetup, NewHand, SeatPlayer, SetButton
from controller.rules.stakes import Stakes
from controller.rules.table import Table
from controller.service import TableService
from tests.fakes import PublishLog as Link


def _actions(link: Link) -> list[tuple[int, str, int | None, str | None]]:
    out = []
    for msg, _ in link.on("event/action"):
        validate("event", msg)
        out.append((msg["seat"], msg["action"], msg["amount"], msg.get("text")))
    return out


def test_a_held_action_counted_on_another_seats_event_is_published_under_its_own_seat() -> None:
    """Button 3: seat 1 small blind (1), seat 2 big blind (2), seat 3 first to act."""
    link = Link()
    svc = TableService(Table(size=6, stakes={"blinds": [1, 2]}, starting_stack=1000))
    for seat, name in ((1, "Ann"), (2, "Bob"), (3, "Chen")):
        svc.submit(SeatPlayer(seat, name))
    svc.submit(SetButton(3))
    pub = Publisher(link, Topics("poker", "t"), "t", broadcast_delay=0, live_equity=False)
    pub.publish(svc.submit(NewHand()), svc)
    for i, card in enumerate(["Ah", "Kd", "Qs", "As", "Kc", "Qh"]):
        pub.publish(svc.submit(Deal(i % 3 + 1, Card.parse(card))), svc)
    assert svc.engine is not None and svc.engine.to_act == 3
    pub.publish(svc.submit(Act(1, "call")), svc)  # sensed out of turn: held, binding if unchanged
    held = _actions(link)
    assert held == [(1, "call", None, None)]  # the action as the event named it, not yet counted
    pub.publish(svc.submit(Act(3, "fold")), svc)  # seat 3 folds; the turn reaches seat 1: the call binds
    assert _actions(link)[len(held):] == [(3, "fold", None, "Seat 3 folds"), (1, "call", 2, "Seat 1 calls 2")]
    assert svc.engine.to_act == 2 and 3 in svc.engine.folded
    pub.close()
    # the floor keeps both (one seq, two seats), and a redelivery of either changes nothing
    store = Store.open(":memory:")
    events = [(t, json.dumps(p).encode()) for t, p, _ in link.sent if "/event/" in t and isinstance(p, dict)]
    Ingestor(store).handle(events + events[-2:])
    stored = store.query("SELECT seq, sub, payload FROM events WHERE kind = 'action' ORDER BY id")
    assert [(r["sub"], json.loads(r["payload"])["action"]) for r in stored] == [("1", "call"), ("3", "fold"),
                                                                                  ("1", "call")]
    assert stored[1]["seq"] == stored[2]["seq"]


def test_the_phh_export_writes_both_actions_in_the_order_they_took_effect() -> None:
    """The hand history the floor keeps: seat 3's fold and seat 1's bound raise both written, and
    PokerKit replays the text to the engine's final stacks."""
    setup = HandSetup(game="holdem", rules="robert", seats=(1, 2, 3), button=3,
                      chips=Stakes(stacks={1: 100, 2: 100, 3: 100}, blinds=(1, 2)))
    events = [Deal(i % 3 + 1, Card.parse(card)) for i, card in enumerate(["Ah", "Kd", "Qs", "As", "Kc", "Qh"])]
    events += [Act(1, "raise", amount=6), Act(3, "fold"), Act(2, "fold")]  # seat 1 raises out of turn
    engine = HandEngine(setup)
    for ev in events:
        engine.apply(ev)
    assert engine.over and engine.winner == 1 and engine.settle() is not None
    text = export_hand(HandRecord(1, setup, 1, len(events), {}), events)
    hh = pokerkit.HandHistory.loads(text)
    assert [a for a in hh.actions if not a.startswith("d ")] == ["p3 f", "p1 cbr 6", "p2 f"]  # p1..p3: seats 1..3
    final = engine.chips.final_stacks()
    assert list(list(hh)[-1].stacks) == [final[s] for s in engine.order] == [102, 98, 100]
