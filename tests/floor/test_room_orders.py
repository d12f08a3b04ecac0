"""The floor's orders reach a tournament table exactly once, through restarts (issue 23).

Real parts: Mosquitto with the shipped config and ACL, ``tablectl run`` as its own process (killed with
``kill -9``), the floor service; in a room a nats-server (JetStream, its MQTT listener, the shipped node
config and per-table users), PostgreSQL and the table's Mosquitto bridged by the shipped bridge config.

* A departure ordered mid-hand is kept in the daemon's journal; the daemon killed before the hand
  ends re-arms it on restart, the player gets up when the hand is over, and the floor confirms the
  move (its room page shows the player seated at his new table).
* In a room the bridge carries the orders at QoS 1: orders sent while the table's Mosquitto (the
  bridge) is down, or while the daemon is down, are carried out once each when they come back, and
  an order delivered again changes nothing (its id is a transaction the journal holds).
"""

from __future__ import annotations

import json
import secrets
import time
import tomllib
import urllib.request
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

from controller.mqtt.contract import Topics
from tests.floor.room_util import DaemonProcess, room, start_tournament
from tests.mqtt_util import new_passwords, shipped_broker, start_daemon, wait_until

STRUCTURE = tomllib.loads((Path(__file__).resolve().parents[2] / "examples" / "tournament.toml").read_text())


def _console(port: int, password: str) -> mqtt.Client:
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"console-{secrets.token_hex(3)}",
                    protocol=mqtt.MQTTv311)
    c.username_pw_set("console", password)
    c.connect("127.0.0.1", port)
    c.loop_start()
    return c


def _request(console: mqtt.Client, table: str, name: str, body: dict[str, Any]) -> None:
    console.publish(Topics("poker", table).request(name), json.dumps(body), qos=1).wait_for_publish(5)


def test_a_departure_waiting_for_the_hand_survives_kill_9_and_the_room_page_confirms_the_move(tmp_path: Path) -> None:
    from controller.floor.service import FloorService
    from controller.rules.events import UnseatPlayer

    passwords = new_passwords(("controller", "console", "floor"))
    with shipped_broker(passwords, websockets=False) as broker:
        t1 = DaemonProcess(tmp_path, "t1", broker.port, passwords["controller"],
                           starting_stack=STRUCTURE["starting_stack"]).start()
        t2 = start_daemon(tmp_path / "t2.sqlite", broker, passwords, table="t2", size=9, event="tournament",
                          starting_stack=STRUCTURE["starting_stack"])
        floor = FloorService(db=f"sqlite:///{tmp_path / 'floor.db'}", mqtt=(broker.host, broker.port),
                             mqtt_user="floor", mqtt_password=passwords["floor"]).start()
        console = _console(broker.port, passwords["console"])
        try:
            wait_until(lambda: floor.source.connected.is_set(), 10, "the floor online")
            wait_until(lambda: bool(t1.rows("SELECT 1 FROM meta")), 45, "t1's daemon up")
            assert t2.floor_orders is not None and t2.floor_orders.connected.wait(10)
            time.sleep(1.0)  # t1's order subscriber: its session subscribed (a persistent one from here on)
            d = floor.director
            tour = start_tournament(d, STRUCTURE, 12, ["t1", "t2"], seed=3)
            wait_until(lambda: t1.seats() == tour.planned("t1"), 15, "t1 seated as drawn (TDA 6)")
            wait_until(lambda: {s: p.name for s, p in t2.service.table.players.items()} == tour.planned("t2"), 10,
                       "t2 seated as drawn")
            # a hand at t1
            _request(console, "t1", "new_hand", {})
            wait_until(lambda: bool(t1.rows("SELECT 1 FROM events WHERE kind = 'new_hand'")), 10, "t1's hand")
            # two players out at t2 (its dealer lets them go): 6 against 4, t1 gives one (RRoP s15 14)
            gone = dict(sorted(tour.planned("t2").items())[:2])
            for seat in gone:
                t2.submit(UnseatPlayer(seat))
            decided = d.request("tournament.bust", {"hand": [{"table": "t2", "players": {
                n: 100 * s for s, n in gone.items()}}]})
            move = next(x for x in decided if x["kind"] == "move")
            mover, from_seat = move["player"], move["from_seat"]
            assert move["from_table"] == "t1"
            # t1 keeps the order in its journal (he plays his hand out), then dies
            wait_until(lambda: [r[0] for r in t1.rows("SELECT id FROM floor_orders")] == [move["id"]], 10,
                       "the departure kept in t1's journal")
            t1.kill()
            assert t1.seats().get(from_seat) == mover
            t1.start()  # replays its journal: the hand is still in progress, the departure is re-armed
            wait_until(lambda: t1.rows("SELECT COUNT(*) FROM events")[0][0] > 0 and _log_says(t1, "re-armed"), 45,
                       "t1 back, its orders re-armed")
            assert t1.seats().get(from_seat) == mover  # not before the hand is over
            _request(console, "t1", "misdeal", {"reason": "called_misdeal"})  # the hand ends
            wait_until(lambda: from_seat not in t1.seats(), 15, "the player gets up at t1")
            wait_until(lambda: tour.players[mover].moving_to is None, 15, "the floor's confirmation")
            assert tour.players[mover].table == "t2"
            assert t2.service.table.players[tour.players[mover].seat].name == mover
            # once: one unseat, under the order's id; nothing left waiting
            unseats = t1.rows("SELECT e.data FROM events e JOIN transactions t ON t.seq = e.seq WHERE t.tx = ?",
                              (move["id"],))
            assert [json.loads(r[0]) for r in unseats] == [{"kind": "unseat_player", "seat": from_seat}]
            assert t1.rows("SELECT COUNT(*) FROM events WHERE kind = 'unseat_player'")[0][0] == 1
            # (the order leaves floor_orders in the owner's callback, just after the event's commit)
            wait_until(lambda: t1.rows("SELECT COUNT(*) FROM floor_orders")[0][0] == 0, 10, "no order left waiting")
            # the room page's API shows the move confirmed
            with urllib.request.urlopen(floor.server.url + "/api/room", timeout=5) as r:
                room = json.load(r)
            assert any(x["kind"] == "seated" and x["player"] == mover and x["table"] == "t2"
                       for x in room["decisions"])
            assert mover in room["tournament"]["tables"]["t2"]["seats"].values()
        finally:
            console.disconnect()
            console.loop_stop()
            floor.stop()
            t2.stop()
            t1.stop()


def _listening(port: int) -> bool:
    import socket

    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def _log_says(daemon: DaemonProcess, words: str, times: int = 1) -> bool:
    return daemon.log.read_text(errors="replace").count(words) >= times


def _log_count(daemon: DaemonProcess, words: str) -> int:
    return daemon.log.read_text(errors="replace").count(words)


def test_the_bridge_carries_orders_at_qos_1_once_each_through_a_bridge_and_a_daemon_down(tmp_path: Path) -> None:
    import threading

    from controller.floor.orders import RoomOrders
    from controller.floor.rig import ACL, CONF
    from controller.floor.room import table_broker
    from controller.floor.service import FloorService
    from controller.floor.sources import NatsSettings
    from tests.floor.test_room_nats import _needs_room

    _needs_room()
    room_password = secrets.token_urlsafe(9)
    users = new_passwords(("controller", "console"))
    with room({"t1": room_password}) as (pg, cluster, stack):
        assert cluster.pki is not None
        broker = table_broker("t1", users, ACL, cluster, room_password=room_password, config_template=CONF)
        stack.callback(broker.stop)
        t1 = DaemonProcess(tmp_path, "t1", broker.port, users["controller"],
                           starting_stack=STRUCTURE["starting_stack"]).start()
        stack.callback(t1.stop)
        floor = FloorService(db=pg.url, nats=NatsSettings(
            servers=cluster.servers, user="floor", password=cluster.floor_password, ca=str(cluster.pki.ca),
            replicas=1, mqtt=cluster.mqtt_addresses)).start()
        stack.callback(floor.stop)
        assert isinstance(floor.orders, RoomOrders)
        wait_until(lambda: floor.source.connected.is_set() and floor.orders.connected.is_set(), 20, "the floor")
        wait_until(lambda: bool(t1.rows("SELECT 1 FROM meta")), 45, "t1's daemon up")
        time.sleep(1.0)  # its order subscriber's persistent session subscribed
        d = floor.director
        tour = start_tournament(d, STRUCTURE, 6, ["t1"], seed=8)
        wait_until(lambda: t1.seats() == tour.planned("t1"), 20, "t1 seated as drawn, through NATS and the bridge")

        # the table's Mosquitto (and with it the bridge) down: a late entry's seat waits in JetStream
        down = threading.Thread(target=broker.restart, kwargs={"down_for": 2.0})
        down.start()
        wait_until(lambda: not _listening(broker.port), 10, "the table's Mosquitto down")
        (late,) = [x for x in d.request("tournament.late_entry", {"name": "p06"}) if x["kind"] == "seat"]
        down.join()
        wait_until(lambda: t1.seats().get(late["seat"]) == "p06", 20, "the late entry seated once the bridge is back")

        # the daemon down: the next order waits on the table's Mosquitto for its persistent session
        t1.kill()
        (later,) = [x for x in d.request("tournament.late_entry", {"name": "p07"}) if x["kind"] == "seat"]
        time.sleep(1.0)  # through the bridge to the table's Mosquitto, where nobody takes it yet
        t1.start()
        wait_until(lambda: t1.seats().get(later["seat"]) == "p07", 45, "the second late entry seated after restart")

        # an order delivered again (a redelivery after a lost acknowledgement) changes nothing
        # (the same words may be in the log already: a restart re-arms a kept order, the bridge repeats one)
        before = _log_count(t1, "carried out already")
        floor.orders.publish("floor/room/table/t1", json.dumps(later).encode())
        wait_until(lambda: _log_says(t1, "carried out already", before + 1), 10, "the copy recognised")
        for order in (late, later):
            seq = t1.rows("SELECT seq FROM transactions WHERE tx = ?", (order["id"],))
            assert len(seq) == 1
            (data,) = t1.rows("SELECT data FROM events WHERE seq = ?", (seq[0][0],))
            assert json.loads(data[0])["name"] == order["player"]
        assert t1.rows("SELECT COUNT(*) FROM events WHERE kind = 'seat_player'")[0][0] == 8
        assert t1.seats() == tour.planned("t1") and len(tour.planned("t1")) == 8
        # an order leaves the journal's floor_orders once its event is journaled (the owner's callback,
        # just after the commit the seats above read): none is left waiting
        try:
            wait_until(lambda: t1.rows("SELECT COUNT(*) FROM floor_orders")[0][0] == 0, 10, "no order left waiting")
        except AssertionError as exc:
            raise AssertionError(f"{exc}: {t1.rows('SELECT body FROM floor_orders')}") from None


def test_the_floors_orders_client_takes_the_next_node_when_one_is_down() -> None:
    from controller.floor.orders import RoomOrders
    from controller.floor.room import NatsCluster
    from controller.floor.sources import NatsSettings
    from controller.mqtt.broker import free_port
    from tests.floor.test_room_nats import _needs_room

    _needs_room()
    with NatsCluster({"t1": secrets.token_urlsafe(9)}, size=1) as cluster:
        assert cluster.pki is not None
        down = ("127.0.0.1", free_port())  # a node whose listener refuses: the first in the list
        orders = RoomOrders(NatsSettings(servers=cluster.servers, user="floor", password=cluster.floor_password,
                                         ca=str(cluster.pki.ca), replicas=1,
                                         mqtt=[down, cluster.mqtt_addresses[0]])).start()
        try:
            assert orders.connected.wait(15)
        finally:
            orders.stop()


def test_a_tables_login_reads_no_other_tables_orders_through_the_qos_1_delivery_subjects() -> None:
    """A table's NATS user may read ``$MQTT.sub.>`` (where NATS delivers its bridge's QoS 1 subscription),
    but its MQTT login still subscribes to nothing but its own topics: another table's order stays
    that table's."""
    import ssl

    from controller.floor.room import NatsCluster
    from tests.floor.test_room_nats import _needs_room

    _needs_room()
    passwords = {"t1": secrets.token_urlsafe(9), "t2": secrets.token_urlsafe(9)}
    with NatsCluster(passwords, size=1) as cluster:
        assert cluster.pki is not None
        host, port = cluster.mqtt_addresses[0]
        got: dict[str, list[Any]] = {"t1": [], "t2": []}
        granted: list[list[int]] = []
        clients = []

        def client(user: str, password: str, clean: bool = True) -> mqtt.Client:
            c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"{user}-{secrets.token_hex(3)}",
                            clean_session=clean, protocol=mqtt.MQTTv311)
            c.username_pw_set(user, password)
            c.tls_set(ca_certs=str(cluster.pki.ca), cert_reqs=ssl.CERT_REQUIRED)
            c.connect(host, port)
            c.loop_start()
            clients.append(c)
            return c

        try:
            t2 = client("table-t2", passwords["t2"], clean=False)
            t2.on_message = lambda c, u, m: got["t2"].append(m.payload)
            t2.subscribe("floor/room/table/t2", 1)
            t1 = client("table-t1", passwords["t1"])
            t1.on_message = lambda c, u, m: got["t1"].append((m.topic, m.payload))
            t1.on_subscribe = lambda c, u, mid, rcs, p=None: granted.append([rc.value for rc in rcs])
            for topic in ("$MQTT/sub/#", "floor/room/table/t2", "#"):
                t1.subscribe(topic, 1)
            wait_until(lambda: len(granted) == 3, 10, "t1's subscriptions answered")
            assert all(rc >= 0x80 for codes in granted for rc in codes), granted  # each refused
            floor = client("floor", cluster.floor_password)
            floor.publish("floor/room/table/t2", b'{"kind": "seat"}', qos=1).wait_for_publish(5)
            wait_until(lambda: got["t2"] == [b'{"kind": "seat"}'], 10, "t2's order")
            time.sleep(0.5)
            assert got["t1"] == []
        finally:
            for c in clients:
                c.disconnect()
                c.loop_stop()
