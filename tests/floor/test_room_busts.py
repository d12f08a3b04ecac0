"""A bust read from a real daemon's hand end (issue 23): Mosquitto with the shipped config and ACL, a
tournament table's daemon, the floor service.

Two short stacks go all in and lose at one table. The daemon publishes the hand's end with each seat's
chips when it began and once the pot was pushed; the floor reads the two players out, places them by
their chips at the start (RRoP s15 35), and tells the table, whose daemon lets them go (RRoP s15 20).
The same hand end delivered again, to the floor and to a restarted floor, counts once.
"""

from __future__ import annotations

import json
import secrets
import tomllib
from pathlib import Path

import paho.mqtt.client as mqtt

from controller.floor.rig import Recorder
from controller.rules.cards import Card
from controller.rules.events import Act, BoardCards, Burn, Deal, NewHand, SetButton, SetStack
from tests.mqtt_util import new_passwords, shipped_broker, start_daemon, wait_until

STRUCTURE = tomllib.loads((Path(__file__).resolve().parents[2] / "examples" / "tournament.toml").read_text())


def test_the_floor_reads_busts_from_a_daemons_hand_end_once(tmp_path: Path) -> None:
    from controller.floor.service import FloorService

    passwords = new_passwords(("controller", "floor", "admin"))
    db = f"sqlite:///{tmp_path / 'floor.db'}"
    with shipped_broker(passwords, websockets=False) as broker:
        daemon = start_daemon(tmp_path / "t1.sqlite", broker, passwords, table="t1", size=9, event="tournament",
                              starting_stack=5000)
        floor = FloorService(db=db, mqtt=(broker.host, broker.port), mqtt_user="floor",
                             mqtt_password=passwords["floor"]).start()
        ends = Recorder(broker, "admin", passwords["admin"], ["poker/t1/event/hand_end"])
        try:
            assert daemon.floor_orders is not None and daemon.floor_orders.connected.wait(10)
            wait_until(lambda: floor.source.connected.is_set(), 10, "the floor online")
            d = floor.director
            d.request("tournament.create", {"structure": STRUCTURE, "seed": 2})
            for name in ("ann", "bob", "cy", "dee"):
                d.request("tournament.register", {"name": name})
            d.request("tournament.start", {"tables": ["t1"]})
            tour = d.tournament
            names = lambda: {s: p.name for s, p in daemon.service.table.players.items()}  # noqa: E731
            wait_until(lambda: names() == tour.planned("t1"), 10, "t1 seated as drawn")
            big, short, shorter, folder = sorted(names())
            daemon.submit(SetStack(short, stack=600))
            daemon.submit(SetStack(shorter, stack=300))
            daemon.submit(SetButton(folder))
            daemon.submit(NewHand())
            engine = daemon.service.engine
            hole = {big: ("Ah", "Ad"), short: ("8s", "3h"), shorter: ("7c", "2d"), folder: ("9c", "4d")}
            for i in range(2):
                for seat in list(engine.order):
                    daemon.submit(Deal(seat, Card.parse(hole[seat][i])))
            while engine.to_act is not None:  # the short stacks all in, the big stack calls, one folds
                seat = engine.to_act
                daemon.submit(Act(seat, "fold") if seat == folder else Act(seat, "call", all_in=seat != big))
            daemon.submit(Burn(Card.parse("Ks")))
            daemon.submit(BoardCards(tuple(Card.parse(c) for c in ("Qc", "Jd", "5h"))))
            for card in ("Kc", "Th"):
                daemon.submit(Burn(Card.parse("2s")))
                daemon.submit(BoardCards((Card.parse(card),)))
            assert engine.over
            out = {short: names()[short], shorter: names()[shorter]}
            wait_until(lambda: not any(tour.players[n].active for n in out.values()), 10, "the busts read")
            # RRoP s15 35: the one who began with 600 finishes above the one who began with 300
            assert (tour.players[out[short]].place, tour.players[out[shorter]].place) == (3, 4)
            busts = [x for x in tour.decisions if x.kind == "bust"]
            assert all(x.citations == ("RRoP s15 35", "RRoP s15 20") for x in busts)
            # RRoP s15 20: the table lets them go (the hand is over), journaled as the floor's
            wait_until(lambda: set(names()) == {big, folder}, 10, "the players out leave their seats")
            # the hand end delivered again: to the floor, then to a restarted floor
            (topic, payload, _), = ends.all()
            end = json.loads(payload)
            assert end["started"] == {str(big): 5000, str(short): 600, str(shorter): 300, str(folder): 5000}
            assert end["stacks"][str(short)] == end["stacks"][str(shorter)] == 0
            copy = _publisher(broker, passwords["controller"])
            # (waited for once handled: stored and read by the director, which then journals nothing new)
            before = floor.ingestor.counters.handled
            copy.publish(topic, payload, qos=1).wait_for_publish(5)
            wait_until(lambda: floor.ingestor.counters.handled > before, 10, "the copy handled at the floor")
            assert len(tour.active()) == 2 and [x.kind for x in tour.decisions].count("bust") == 2
            floor.stop()
            floor = FloorService(db=db, mqtt=(broker.host, broker.port), mqtt_user="floor",
                                 mqtt_password=passwords["floor"]).start()
            wait_until(lambda: floor.source.connected.is_set(), 10, "the restarted floor online")
            before = floor.ingestor.counters.handled
            copy.publish(topic, payload, qos=1).wait_for_publish(5)
            wait_until(lambda: floor.ingestor.counters.handled > before, 10, "the copy handled at the restarted floor")
            again = floor.director.tournament
            assert len(again.active()) == 2 and again.players[out[short]].place == 3
            logged = [e for e in floor.director.store.room_log("room") if e["op"] == "tournament.hand_end"]
            assert len(logged) == 1 and logged[0]["body"]["hand_id"] == end["hand_id"]
            assert [x.kind for x in again.decisions].count("bust") == 2
            copy.disconnect()
            copy.loop_stop()
        finally:
            ends.close()
            floor.stop()
            daemon.stop()


def _publisher(broker, password: str) -> mqtt.Client:
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"copy-{secrets.token_hex(3)}",
                    protocol=mqtt.MQTTv311)
    c.username_pw_set("controller", password)
    c.connect("127.0.0.1", broker.port)
    c.loop_start()
    return c
