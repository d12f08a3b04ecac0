"""Live equities reach the broadcast topic, off the engine's thread, in the contract's shape."""

from __future__ import annotations

import time

from controller.app.publisher import Publisher
from controller.mqtt.contract import Topics, validate
from controller.rules.cards import Card
from controller.rules.events import BoardCards, Deal, NewHand, SeatPlayer, SetButton
from controller.rules.table import Table
from controller.service import TableService


class Recorder:
    def __init__(self) -> None:
        self.sent: list[tuple[str, object, dict]] = []

    def publish(self, topic, payload, **kw) -> None:
        self.sent.append((topic, payload, kw))

    def on(self, suffix: str) -> list:
        return [(p, kw) for t, p, kw in self.sent if t.endswith(suffix)]


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
