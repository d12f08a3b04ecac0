"""Issue 17: console requests as an attacker sends them, against the shipped broker config and ACL.

Each test failed before its fix: a wildcard or chosen response topic, a display login taking
the controller's client id, requests lost during an outage or applied twice, an out-of-turn
fold, Nagle's delay on the sockets."""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid

import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from controller.mqtt.broker import Broker
from controller.mqtt.contract import Topics
from controller.rules.cards import Card
from controller.rules.events import Deal, NewHand, SeatPlayer, SetButton
from tests.mqtt_util import CONF, Client, require_mosquitto, start_daemon, wait_until

require_mosquitto()

TABLE = "t1"
T = Topics("poker", TABLE)


def _client(broker: Broker, passwords: dict[str, str], role: str) -> Client:
    c = Client(broker, role, passwords[role], name=f"{role}-{uuid.uuid4().hex[:6]}")
    wait_until(lambda: bool(c.connacks), what=f"{role} connected")
    return c


def _responses(client: Client) -> list[tuple[str, dict]]:
    with client.lock:
        return [(m.topic, json.loads(m.payload)) for m in client.messages
                if m.payload and m.topic.startswith(T.response)]


def _request(console: Client, name: str, payload: dict | bytes, response_topic: str | None = None) -> None:
    props = None
    if response_topic is not None:
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = response_topic
        props.CorrelationData = b"corr"
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    console.c.publish(T.request(name), data, qos=1, properties=props)


def _answer(console: Client, transaction: str, timeout: float = 10) -> tuple[str, dict]:
    wait_until(lambda: any(r.get("transaction") == transaction for _, r in _responses(console)), timeout=timeout,
               what=f"the response to {transaction}")
    return next((t, r) for t, r in _responses(console) if r.get("transaction") == transaction)


def test_responses_go_to_response_slash_name(daemon, broker, passwords) -> None:
    """zigbee2mqtt's convention: request/<name> is answered on response/<name>."""
    console = _client(broker, passwords, "console")
    console.subscribe(T.response + "/#")
    _request(console, "seat", {"seat": 1, "name": "Ann", "transaction": "a1"})
    topic, r = _answer(console, "a1")
    assert topic == T.response + "/seat" and r["ok"]
    console.close()


@pytest.mark.parametrize("evil", [
    "poker/t1/response/#", "poker/t1/response/+", "#", "poker/t1/state", "poker/t1/availability",
    "poker/t1/event/card", "poker/t1/alert/active", "poker/t1/broadcast/holecards", "poker/t1/broadcast/state",
    "poker/t2/response/x", "poker/t1/responses", "poker/t1/response/", "poker/t1/response//x",
])
def test_a_chosen_response_topic_is_never_trusted(daemon, broker, passwords, evil: str) -> None:
    """Issue 17.3: a wildcard made paho raise inside the flush and froze every later output; a
    chosen topic made the controller publish the console's payload where it may not write."""
    console = _client(broker, passwords, "console")
    console.subscribe(T.response + "/#")
    watcher = _client(broker, passwords, "controller")
    watcher.subscribe("#")
    _request(console, "seat", {"seat": 2, "name": "Bob", "transaction": "evil-1"}, response_topic=evil)
    topic, r = _answer(console, "evil-1")
    assert topic == T.response + "/seat" and not r["ok"] and "response topic" in r["error"]
    assert daemon.journal.last_seq == 0, "a refused request changes nothing"
    # No response went to the chosen topic (the controller's own view of the broker).
    time.sleep(0.2)
    assert not any(m.topic == evil and b'"transaction"' in m.payload for m in watcher.messages)
    # And the daemon's output is not frozen: the next request is answered, its state published.
    _request(console, "seat", {"seat": 2, "name": "Bob", "transaction": "evil-2"})
    assert _answer(console, "evil-2")[1]["ok"]
    wait_until(lambda: any(m.topic == T.state and b'"Bob"' in m.payload for m in watcher.messages),
               what="state after the refused request")
    assert daemon._owner.is_alive() and daemon.link.alive  # noqa: SLF001
    console.close()
    watcher.close()


def test_a_message_paho_refuses_is_dropped_not_stuck(daemon, broker, passwords) -> None:
    """Defence in depth: even a wildcard topic that reached the outbox cannot block it."""
    watcher = _client(broker, passwords, "display")
    watcher.subscribe(T.state)
    daemon.link.publish("poker/t1/response/#", {"x": 1})
    daemon.submit(SeatPlayer(3, "Cy"))
    wait_until(lambda: any(b'"Cy"' in p for p in watcher.payloads(T.state)), what="state after a refused message")
    assert daemon.link.counters["dropped"] == 1
    watcher.close()


def test_a_display_login_cannot_take_the_controllers_client_id(daemon, broker, passwords) -> None:
    """Issue 17.6: a display login connecting as ``tablectl-<table>`` knocked the controller
    offline.  Its id now carries a suffix derived from its own password, which no other login knows."""
    from controller.app.daemon import controller_client_id

    own = controller_client_id(TABLE, "controller", passwords["controller"])
    assert own.startswith(f"tablectl-{TABLE}-") and passwords["controller"] not in own
    assert controller_client_id(TABLE, "controller", "another") != own
    before = daemon.link.counters["disconnects"]
    for role, transport in (("display", "tcp"), ("console", "tcp"), ("display", "websockets")):
        port = broker.port if transport == "tcp" else broker.websockets_port
        thief = Client(broker, role, passwords[role], name="x", transport=transport, port=port)
        thief.c._client_id = f"tablectl-{TABLE}".encode()  # noqa: SLF001 - what an attacker's client sends
        thief.c.reconnect()
        time.sleep(0.5)
        thief.close()
    time.sleep(0.5)
    assert daemon.link.connected and daemon.link.counters["disconnects"] == before
    daemon.submit(SeatPlayer(4, "Dee"))
    assert daemon.link.wait_idle(5)


def test_requests_sent_while_the_daemon_is_down_are_applied_once(tmp_path, broker, passwords) -> None:
    """Issue 17.7: a persistent session keeps them on the broker; the transaction id keeps a
    retry from being applied twice, even after the restart."""
    d = start_daemon(tmp_path / "journal.sqlite", broker, passwords)
    d.stop()
    console = _client(broker, passwords, "console")
    console.subscribe(T.response + "/#")
    _request(console, "seat", {"seat": 1, "name": "Ann", "transaction": "down-1"})
    time.sleep(0.3)
    d = start_daemon(tmp_path / "journal.sqlite", broker, passwords)
    try:
        _, r = _answer(console, "down-1")
        assert r["ok"], r
        seq = d.journal.last_seq
        assert seq == 1
        # The console retries (it never saw an answer): applied once, answered again.
        _request(console, "seat", {"seat": 1, "name": "Ann", "transaction": "down-1"})
        wait_until(lambda: sum(1 for _, x in _responses(console) if x.get("transaction") == "down-1") == 2,
                   what="the second answer")
        again = [x for _, x in _responses(console) if x.get("transaction") == "down-1"][-1]
        assert again["ok"] and again["result"]["duplicate"] and again["result"]["seq"] == seq
        assert d.journal.last_seq == seq
    finally:
        d.stop()
    # After a restart too (the transaction is journaled with its event).
    d = start_daemon(tmp_path / "journal.sqlite", broker, passwords)
    try:
        _request(console, "seat", {"seat": 1, "name": "Ann", "transaction": "down-1"})
        wait_until(lambda: sum(1 for _, x in _responses(console) if x.get("transaction") == "down-1") == 3,
                   what="the third answer")
        assert d.journal.last_seq == seq
    finally:
        d.stop()
        console.close()


def test_a_request_sent_during_a_broker_outage_is_applied_once(daemon, broker, passwords) -> None:
    console = _client(broker, passwords, "console")
    console.subscribe(T.response + "/#")
    outage = threading.Thread(target=broker.restart, kwargs={"down_for": 2})
    outage.start()
    wait_until(lambda: not daemon.link.connected, timeout=10, what="the outage")
    _request(console, "seat", {"seat": 5, "name": "Eve", "transaction": "out-1"})  # queued by the console's client
    outage.join(30)

    def seated() -> int:
        return [e.event.kind for e in daemon.journal.entries()].count("seat_player")

    wait_until(lambda: seated() == 1, timeout=30, what="the request applied after the outage")
    # The console (a clean session) subscribes again and retries: answered, not applied twice.
    wait_until(lambda: len(console.connacks) >= 2, timeout=30, what="the console back")
    console.subscribe(T.response + "/#")
    _request(console, "seat", {"seat": 5, "name": "Eve", "transaction": "out-1"})
    # The first request's own answer may arrive now too (published once it was applied, which can be
    # after the console subscribed again): the retry's answer is the one that says duplicate.
    wait_until(lambda: any(r.get("transaction") == "out-1" and (r.get("result") or {}).get("duplicate")
                           for _, r in _responses(console)), timeout=30, what="the retry's answer")
    answers = [r for _, r in _responses(console) if r.get("transaction") == "out-1"]
    assert all(r["ok"] for r in answers) and len(answers) <= 2, answers
    assert seated() == 1
    console.close()


def test_an_out_of_turn_fold_request_is_refused(daemon, broker, passwords) -> None:
    """Issue 17.7: checked against the engine's turn order at the request layer."""
    for seat in (1, 2, 3, 4):
        daemon.submit(SeatPlayer(seat, f"p{seat}"))
    daemon.submit(SetButton(4))
    daemon.submit(NewHand())
    for i, card in enumerate(["Ah", "Kd", "Qs", "Jc", "Th", "9d", "8s", "7c"]):
        daemon.submit(Deal(i % 4 + 1, Card.parse(card), source="rfid"))
    assert daemon.service.engine.to_act == 3
    console = _client(broker, passwords, "console")
    console.subscribe(T.response + "/#")
    before = daemon.journal.last_seq
    _request(console, "action", {"seat": 1, "action": "fold", "transaction": "oot"})
    _, r = _answer(console, "oot")
    assert not r["ok"] and "out of turn" in r["error"] and "seat 3" in r["error"]
    assert daemon.journal.last_seq == before
    _request(console, "action", {"seat": 3, "action": "fold", "transaction": "in-turn"})
    assert _answer(console, "in-turn")[1]["ok"]
    console.close()


def test_sockets_have_tcp_nodelay(daemon) -> None:
    """Issue 17.9: Nagle's algorithm held small packets back (~88 ms request to response)."""
    sock = daemon.link.client.socket()
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    assert "set_tcp_nodelay true" in CONF.splitlines()
