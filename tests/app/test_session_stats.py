"""Issue 27, what a producer expects: session statistics per player (VPIP, PFR, hands won) on
``broadcast/stats``, with the broadcast delay, counted from what the service published.

Hands played by hand through the service and the publisher: the numbers are the ones a person
counts off the actions (a blind is not voluntary; a call preflop is VPIP, a raise is PFR too;
a bet after the flop is neither), a misdeal counts for nobody, and a player keeps his numbers
when he changes seats (keyed by name).
"""

from __future__ import annotations

from controller.app.publisher import END_OF_HAND, Publisher
from controller.mqtt.contract import Topics, validate
from controller.rules.cards import Card
from controller.rules.events import Acknowledge, Act, BoardCards, CallMisdeal, Deal, NewHand, SeatPlayer, SetButton
from controller.rules.table import Table
from controller.service import TableService
from controller.session_stats import SessionStats
from tests.fakes import PublishLog as Link


def _deal(pub: Publisher, svc: TableService, cards: dict[int, list[str]]) -> None:
    for i in range(2):
        for seat, two in cards.items():
            pub.publish(svc.submit(Deal(seat, Card.parse(two[i]))), svc)


def _hand(pub: Publisher, svc: TableService) -> None:
    """Button 3: seat 1 small blind, 2 big blind, 3 first.  3 raises, 1 calls, 2 folds (the big
    blind is no VPIP); on the flop 1 bets and 3 folds: seat 1 wins without a showdown."""
    pub.publish(svc.submit(NewHand()), svc)
    _deal(pub, svc, {1: ["Ah", "As"], 2: ["Kd", "Kc"], 3: ["Qs", "Qh"]})
    for seat, action, amount in ((3, "raise", 6), (1, "call", None), (2, "fold", None)):
        pub.publish(svc.submit(Act(seat, action, amount=amount)), svc)
    pub.publish(svc.submit(BoardCards(tuple(Card.parse(c) for c in ("2c", "7d", "9h")))), svc)
    for seat, action, amount in ((1, "bet", 6), (3, "fold", None)):
        pub.publish(svc.submit(Act(seat, action, amount=amount)), svc)


def _three_seated() -> TableService:
    """Ann, Bob and Chen in seats 1-3 of a six-seat table with 1,000 each, the button on seat 3."""
    svc = TableService(Table(size=6, starting_stack=1000))
    for seat, name in ((1, "Ann"), (2, "Bob"), (3, "Chen")):
        svc.submit(SeatPlayer(seat, name))
    svc.submit(SetButton(3))
    return svc


def test_vpip_pfr_and_hands_won_after_each_hand_with_the_delay() -> None:
    link, svc = Link(), _three_seated()
    pub = Publisher(link, Topics("poker", "t"), "t", broadcast_delay=4, live_equity=False)
    _hand(pub, svc)
    assert svc.engine is not None and svc.engine.over
    (stats, kw), = link.on("broadcast/stats")
    validate("broadcast_stats", stats)
    assert kw["delay"] == 4.0 and kw["retain"] is True
    assert stats["hands"] == 1 and stats["seats"] == {"1": "Ann", "2": "Bob", "3": "Chen"}
    assert stats["players"] == {"Ann": {"hands": 1, "vpip": 1.0, "pfr": 0.0, "won": 1},
                                "Bob": {"hands": 1, "vpip": 0.0, "pfr": 0.0, "won": 0},
                                "Chen": {"hands": 1, "vpip": 1.0, "pfr": 1.0, "won": 0}}
    # A misdeal: nobody's numbers move, nothing new is published.
    pub.publish(svc.submit(NewHand()), svc)
    pub.publish(svc.submit(CallMisdeal()), svc)
    pub.publish(svc.submit(Acknowledge()), svc)
    assert len(link.on("broadcast/stats")) == 1
    # The redeal (TDA 33-C: the same seats), everybody folding to the big blind: counted for each.
    pub.publish(svc.submit(NewHand()), svc)
    order = list(svc.engine.order)
    _deal(pub, svc, {s: c for s, c in zip(order, (["2h", "3h"], ["4d", "5d"], ["6s", "8s"]), strict=True)})
    while not svc.engine.over:
        pub.publish(svc.submit(Act(svc.engine.to_act, "fold")), svc)
    stats, _ = link.on("broadcast/stats")[-1]
    validate("broadcast_stats", stats)
    assert stats["hands"] == 2 and all(p["hands"] == 2 for p in stats["players"].values())
    assert svc.engine.winner == 3  # the big blind (the misdeal moved the button to 1)
    assert stats["players"]["Chen"] == {"hands": 2, "vpip": 0.5, "pfr": 0.5, "won": 1}
    assert sum(p["won"] for p in stats["players"].values()) == 2
    pub.close()


def test_with_the_end_of_hand_delay_the_stats_leave_when_the_hand_is_over() -> None:
    link, svc = Link(), _three_seated()
    pub = Publisher(link, Topics("poker", "t"), "t", broadcast_delay=END_OF_HAND)
    _hand(pub, svc)
    (stats, kw), = link.on("broadcast/stats")
    assert kw["delay"] == 0.0 and stats["players"]["Ann"]["won"] == 1
    pub.close()


def test_a_player_keeps_his_numbers_in_another_seat() -> None:
    stats = SessionStats()
    stats.hand_start([1, 2], {1: "Ann", 2: "Bob"})
    stats.street()
    stats.action(1, "raise")
    stats.action(2, "fold")
    assert stats.hand_end("uncontested", [1])
    stats.hand_start([5, 2], {5: "Ann", 2: "Bob"})
    stats.street()
    stats.action(2, "call")
    stats.action(5, "check")
    stats.street()
    stats.action(5, "bet")  # after the flop: neither VPIP nor PFR
    stats.action(2, "raise")
    assert stats.hand_end("showdown", [2])
    body = stats.payload({5: "Ann", 2: "Bob"})
    assert body["players"] == {"Ann": {"hands": 2, "vpip": 0.5, "pfr": 0.5, "won": 1},
                               "Bob": {"hands": 2, "vpip": 0.5, "pfr": 0.0, "won": 1}}
    assert body["seats"] == {"2": "Bob", "5": "Ann"}


def test_a_daemon_killed_and_restarted_goes_on_from_the_same_statistics(tmp_path) -> None:
    """Issue 27: the statistics are rebuilt from the journal at start.  A real ``tablectl run``
    process on a real Mosquitto, driven by the console's requests (the dealer's confirmed cards):
    two hands, ``kill -9``, a restart, a third hand; ``broadcast/stats`` then counts all three, as
    a count of the three hands by hand says."""
    import json
    import os
    import signal
    import subprocess
    import sys
    import uuid

    from tests.mqtt_util import (
        Client,
        new_passwords,
        require_mosquitto,
        seat_four,
        shipped_broker,
        wait_until,
        write_table_config,
    )

    require_mosquitto()
    passwords = new_passwords()
    t = Topics("poker", "st1")
    with shipped_broker(passwords, websockets=False) as broker:
        config = write_table_config(tmp_path, broker, passwords["controller"], table="st1",
                                    stakes="\n[stakes]\nsmall_blind = 1\nbig_blind = 2\nstarting_stack = 1000\n")
        cmd = [sys.executable, "-m", "controller.cli", "run", "--config", str(config), "--log", "json"]

        def start() -> subprocess.Popen:
            return subprocess.Popen(cmd, env=dict(os.environ, PYTHONUNBUFFERED="1"), stdout=subprocess.DEVNULL,
                                    stderr=open(tmp_path / "log", "a"))

        console = Client(broker, "console", passwords["console"], name=f"console-{uuid.uuid4().hex[:6]}").connected()
        console.subscribe(t.response + "/#")
        console.subscribe(t.availability)
        overlay = Client(broker, "overlay", passwords["overlay"], name=f"overlay-{uuid.uuid4().hex[:6]}").connected()
        overlay.subscribe(t.broadcast("stats"))

        def request(name: str, payload: dict) -> None:
            tx = uuid.uuid4().hex
            console.publish(t.request(name), json.dumps({**payload, "transaction": tx}))

            def answer():
                with console.lock:
                    found = [json.loads(m.payload) for m in console.messages if m.topic.startswith(t.response)]
                return next((a for a in found if a.get("transaction") == tx), None)

            wait_until(lambda: answer() is not None, timeout=15, what=f"the answer to {name}")
            assert answer()["ok"], (name, payload, answer())

        def stats() -> list[dict]:
            with overlay.lock:
                return [json.loads(m.payload) for m in overlay.messages
                        if m.topic == t.broadcast("stats") and m.payload]

        def hand(order: list[int], cards: list[str], actions: list[tuple]) -> None:
            request("new_hand", {})
            pitched = zip(order * 2, cards, strict=True)
            request("confirm", {"cards": [{"to": f"seat:{s}", "card": c} for s, c in pitched]})
            for seat, action, *amount in actions:
                request("action", {"seat": seat, "action": action, **({"amount": amount[0]} if amount else {})})

        def online() -> int:
            with console.lock:
                return sum(m.payload == b"online" for m in console.messages if m.topic == t.availability)

        proc = start()
        try:
            wait_until(lambda: online() >= 1, timeout=20, what="the daemon online")
            seat_four(request)
            # Hand 1 (button 4): 3 raises, everyone folds to him.
            hand([1, 2, 3, 4], ["Ah", "Kd", "Qs", "Jc", "Th", "9d", "8s", "7c"],
                 [(3, "raise", 6), (4, "fold"), (1, "fold"), (2, "fold")])
            # Hand 2 (button 1): 4 calls, 1 raises, all fold to 1.
            hand([2, 3, 4, 1], ["2h", "3d", "4s", "5c", "6h", "7d", "8h", "9c"],
                 [(4, "call"), (1, "raise", 8), (2, "fold"), (3, "fold"), (4, "fold")])
            wait_until(lambda: stats() and stats()[-1]["hands"] == 2, timeout=15, what="hand 2 counted")
            before = stats()[-1]
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
            seen, published = online(), len(stats())
            proc = start()
            wait_until(lambda: online() > seen, timeout=20, what="the daemon back online")
            # At start it publishes the statistics it rebuilt from the journal: the same as before.
            wait_until(lambda: len(stats()) > published, timeout=15, what="the statistics after the restart")
            again = stats()[-1]
            assert (again["hands"], again["players"], again["seats"]) == (2, before["players"], before["seats"])
            # Hand 3 (button 2): a walk for the big blind, 4.
            hand([3, 4, 1, 2], ["As", "Ks", "Qh", "Jd", "Ts", "9h", "8d", "7s"],
                 [(1, "fold"), (2, "fold"), (3, "fold")])
            wait_until(lambda: stats()[-1]["hands"] == 3, timeout=15, what="hand 3 counted after the restart")
            after = stats()[-1]
        finally:
            proc.kill()
            proc.wait(10)
            console.close()
            overlay.close()
    validate("broadcast_stats", after)
    assert before["players"]["p3"] == {"hands": 2, "vpip": 0.5, "pfr": 0.5, "won": 1}
    # Counted by hand: 1 played hand 2 (raise, won), 3 hand 1 (raise, won), 4 called hand 2 and won
    # hand 3's walk, 2 played nothing.
    third = round(1 / 3, 4)
    assert after["players"] == {"p1": {"hands": 3, "vpip": third, "pfr": third, "won": 1},
                                "p2": {"hands": 3, "vpip": 0.0, "pfr": 0.0, "won": 0},
                                "p3": {"hands": 3, "vpip": third, "pfr": third, "won": 1},
                                "p4": {"hands": 3, "vpip": third, "pfr": 0.0, "won": 1}}, after["players"]
