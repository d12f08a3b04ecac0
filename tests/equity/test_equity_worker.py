"""Live equities reach the broadcast topic, off the engine's thread, in the contract's shape."""

from __future__ import annotations

import time

from controller.app.publisher import Publisher
from controller.mqtt.contract import Topics, validate
from controller.rules.cards import Card
from controller.rules.events import BoardCards, Deal, NewHand, SeatPlayer, SetButton
from controller.rules.table import Table
from controller.service import TableService
from tests.fakes import PublishLog as Recorder


def _wait(cond, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_equity_published_with_delay_after_the_deal_and_the_flop() -> None:
    link = Recorder()
    svc = TableService(Table(size=6))
    for seat in (1, 2, 3):
        svc.submit(SeatPlayer(seat, f"p{seat}"))
    svc.submit(SetButton(3))
    pub = Publisher(link, Topics("poker", "t"), "t", broadcast_delay=3)
    try:
        pub.publish(svc.submit(NewHand()), svc)
        for seat, card in ((1, "Ah"), (2, "Kd"), (3, "Qs")):
            pub.publish(svc.submit(Deal(seat, Card.parse(card))), svc)
        assert not link.on("broadcast/equity")  # mid-deal: nothing yet
        for seat, card in ((1, "As"), (2, "Kh"), (3, "Qc")):
            pub.publish(svc.submit(Deal(seat, Card.parse(card))), svc)
        _wait(lambda: link.on("broadcast/equity"))
        payload, kw = link.on("broadcast/equity")[-1]
        validate("broadcast_equity", payload)
        assert kw["delay"] == 3.0 and kw["retain"] is True
        assert payload["method"] == "exact" and payload["seats"]["1"]["equity"] > 0.6
        assert abs(sum(s["equity"] for s in payload["seats"].values()) - 1) < 0.01
        for seat in (3, 1, 2):
            from controller.rules.events import Act

            pub.publish(svc.submit(Act(seat, "call" if seat != 2 else "check")), svc)
        n = len(link.on("broadcast/equity"))
        pub.publish(svc.submit(BoardCards(tuple(Card.parse(c) for c in ("Qd", "7h", "2c")))), svc)
        _wait(lambda: len(link.on("broadcast/equity")) > n)
        flop, _ = link.on("broadcast/equity")[-1]
        assert flop["seats"]["3"]["equity"] > 0.5  # trip queens lead on the flop
        assert flop["seats"]["3"]["hand"].startswith("Three of a Kind")
    finally:
        pub.close()


def test_no_live_equity_with_the_end_of_hand_delay() -> None:
    link = Recorder()
    svc = TableService(Table(size=6))
    for seat in (1, 2):
        svc.submit(SeatPlayer(seat, f"p{seat}"))
    svc.submit(SetButton(2))
    pub = Publisher(link, Topics("poker", "t"), "t")  # end_of_hand
    pub.publish(svc.submit(NewHand()), svc)
    for seat, card in ((1, "Ah"), (2, "Kd"), (1, "As"), (2, "Kh")):
        pub.publish(svc.submit(Deal(seat, Card.parse(card))), svc)
    time.sleep(0.3)
    assert not link.on("broadcast/equity")
    pub.close()


def _draw_hand_ending_pat(game: str = "jacks_or_better") -> dict:
    """A simulated draw hand whose draw is completed by a player standing pat (no card follows)."""
    import random

    from controller.rules.events import Act as _Act
    from controller.rules.events import Deal as _Deal
    from controller.rules.events import Discard
    from controller.rules.scenario import Scenario
    from controller.sim import dealer as dealer_sim

    for seed in range(1, 3000):
        hand = dealer_sim.legal_hand(random.Random(seed), game=game, rules="robert", event="cash")
        events = Scenario.from_dict(hand).events
        last = max((i for i, e in enumerate(events) if isinstance(e, Discard)), default=None)
        if last is None or events[last].count != 0 or last + 1 >= len(events):
            continue
        if isinstance(events[last + 1], _Act) and not any(isinstance(e, _Deal) for e in events[last:]):
            return hand
    raise AssertionError("no draw hand completed by a pat player")


def test_equity_follows_the_draw_when_a_pat_player_completes_it() -> None:
    """Issue 15 item 2: a draw completed by a pat player changes no card, yet the hands are now
    final: the equity switches from the pre-draw strengths to the showdown, names current."""
    from controller.rules.events import Discard, Muck, StartHand
    from controller.rules.scenario import Scenario

    hand = _draw_hand_ending_pat()
    scenario = Scenario.from_dict(hand)
    link = Recorder()
    svc = TableService(Table(size=scenario.setup.table_size))
    pub = Publisher(link, Topics("poker", "t"), "t", broadcast_delay=2)
    try:
        pub.publish(svc.submit(StartHand(scenario.setup)), svc)
        for event in scenario.events:
            pub.publish(svc.submit(event), svc)
            if isinstance(event, Discard) and event.count:  # the muck reader identifies the discards
                for held in [h.card for h in svc.engine.hands[event.seat]][: event.count]:
                    pub.publish(svc.submit(Muck(held, source="rfid")), svc)
            if svc.engine.street.draw and svc.engine.phase.value == "bet":
                break
            if svc.engine.phase.value == "bet" and not link.on("broadcast/equity"):  # the deal is out
                _wait(lambda: link.on("broadcast/equity"))
        _wait(lambda: link.on("broadcast/equity") and link.on("broadcast/equity")[-1][0]["method"] == "exact")
        payload, _ = link.on("broadcast/equity")[-1]
        validate("broadcast_equity", payload)
        from controller.equity.odds import hand_strength

        for seat, entry in payload["seats"].items():
            cards = [h.card for h in svc.engine.hands[int(seat)] if not h.scrap]
            assert len(cards) == 5 and entry["hand"] == hand_strength(payload["game"], cards).name
            assert entry["equity"] is not None
        before = [p for p, _ in link.on("broadcast/equity") if p["method"] == "hand_strength"]
        assert before and all(e["win"] is None for p in before for e in p["seats"].values())  # no 0.0% before the draw
    finally:
        pub.close()
