"""The daemon end to end: a real Mosquitto (the shipped config and ACL), real paho clients,
the journal on disk, the emulator on a pty for the kill -9 test."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from controller.app.config import Config
from controller.app.daemon import Daemon
from controller.demo.config import demo_config
from controller.mqtt.broker import Broker
from controller.mqtt.contract import REQUEST_NAMES, Topics, validate
from controller.processes import stop_process
from controller.rules.cards import Card, standard_deck
from controller.rules.decks import Deck, DeckRegistry
from controller.rules.events import Act, BoardCards, Burn, Deal, NewHand, SeatPlayer, SetButton
from tests.mqtt_util import (
    Client,
    require_mosquitto,
    seat_four,
    shipped_broker,
    start_daemon,
    wait_until,
    write_table_config,
)

require_mosquitto()

TABLE = "t1"
T = Topics("poker", TABLE)


def _config(tmp_path: Path, broker: Broker, delay: int | str = 0) -> Config:
    return demo_config(TABLE, size=6, journal=tmp_path / "journal.sqlite",
                               mqtt_url=f"mqtt://127.0.0.1:{broker.port}", broadcast_delay=delay)


def _client(broker: Broker, passwords: dict[str, str], role: str, persistent: bool = False) -> Client:
    c = Client(broker, role, passwords[role], name=f"{role}-{uuid.uuid4().hex[:6]}")
    wait_until(lambda: bool(c.connacks), what=f"{role} connected")
    return c


def c(text: str) -> Card:
    return Card.parse(text)


def _seat_four(d: Daemon) -> None:
    for seat in (1, 2, 3, 4):
        d.submit(SeatPlayer(seat, f"p{seat}"))
    d.submit(SetButton(4))


def _responses(client: Client) -> list[dict]:
    """Every response the client got, on ``response/<name>`` or a response topic below it."""
    with client.lock:
        return [json.loads(m.payload) for m in client.messages
                if m.payload and (m.topic == T.response or m.topic.startswith(T.response + "/"))]


def _state(client: Client) -> dict:
    states = client.json(T.state)
    assert states, "no state received"
    return states[-1]


def test_state_events_alerts_and_secrecy(daemon: Daemon, broker, passwords) -> None:
    assert daemon.floor_ack is None  # a table in no room: no second connection, nothing kept for a floor
    display = _client(broker, passwords, "display")
    display.subscribe("#")
    _seat_four(daemon)
    daemon.submit(NewHand())
    wait_until(lambda: display.json(T.state) and _state(display)["hand"] is not None, what="hand in state")
    assert _state(display)["hand"]["next_seat"] == 1
    cards = ["Ah", "Kd", "Qs", "Jc", "Th", "9d", "8s", "7c"]
    for i, card in enumerate(cards):
        daemon.submit(Deal(i % 4 + 1, c(card), source="rfid"))
    wait_until(lambda: _state(display)["hand"]["to_act"] == 3, what="to_act 3")
    daemon.submit(Act(3, "call"))
    daemon.submit(Act(4, "call"))
    daemon.submit(Act(1, "call"))
    daemon.submit(Act(2, "check"))
    daemon.submit(Burn(c("2c")))
    daemon.submit(BoardCards((c("2d"), c("3d"), c("4d")), source="rfid"))
    wait_until(lambda: _state(display)["hand"]["board"] == ["2d", "3d", "4d"], what="flop in state")
    # Every payload follows the contract.
    for m in list(display.messages):
        if not m.payload:
            continue
        name = {T.state: "state", T.alert: "alert", T.alert_active: "alert_active"}.get(m.topic)
        if m.topic.startswith(T.root + "/event/"):
            name = "event"
        if name:
            validate(name, json.loads(m.payload))
    # The display never saw a hole card.
    text = b" ".join(m.payload for m in display.messages)
    for card in cards:
        assert card.encode() not in text, f"hole card {card} leaked to the display"
    assert not any(m.topic.startswith(T.root + "/private/") or "/broadcast/" in m.topic for m in display.messages)
    display.close()


def test_console_requests_answered_with_v5_response_topic(daemon: Daemon, broker, passwords) -> None:
    console = _client(broker, passwords, "console")
    reply_topic = T.response + "/console-test"
    console.subscribe(reply_topic)
    display = _client(broker, passwords, "display")
    display.subscribe(T.alert_active)

    def request(name: str, payload: dict | bytes, corr: bytes) -> dict:
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = reply_topic
        props.CorrelationData = corr
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        console.c.publish(T.request(name), data, qos=1, properties=props)
        wait_until(lambda: any(getattr(m.properties, "CorrelationData", None) == corr for m in console.messages),
                   what=f"response to {name}")
        msg = next(m for m in console.messages if getattr(m.properties, "CorrelationData", None) == corr)
        return json.loads(msg.payload)

    for seat in (1, 2, 3):
        assert request("seat", {"seat": seat, "name": f"p{seat}", "transaction": f"s{seat}"}, b"c%d" % seat)["ok"]
    assert request("set_button", {"seat": 3}, b"b")["ok"]
    r = request("new_hand", {}, b"n1")
    assert r["ok"], r
    bad = request("seat", {"seat": 2, "name": "taken"}, b"dup")
    assert not bad["ok"] and "taken" in bad["error"]
    bad = request("action", b"{not json", b"junk")
    assert not bad["ok"] and "JSON" in bad["error"]
    daemon.submit(Deal(3, c("Ah"), source="rfid"))  # wrong seat: misdeal alert
    wait_until(lambda: any(display.payloads(T.alert_active)), what="active alert")
    active = json.loads([p for p in display.payloads(T.alert_active) if p][-1])
    assert active["reason"] == "first_card_wrong_seat" and active["citations"]
    assert request("acknowledge", {"alert": active["id"]}, b"ack")["ok"]
    wait_until(lambda: display.payloads(T.alert_active)[-1] == b"", what="alert cleared")
    console.close()
    display.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(REQUEST_NAMES), payload=st.one_of(
    st.binary(max_size=200),
    st.dictionaries(st.sampled_from(["seat", "name", "action", "reason", "game", "alert", "amount", "all_in", "x"]),
                    st.one_of(st.integers(-5, 20), st.text(max_size=8), st.booleans(), st.none()),
                    max_size=4).map(lambda d: json.dumps(d).encode()),
))
def test_fuzzed_requests_get_errors_and_change_nothing(fuzz_daemon, name: str, payload: bytes) -> None:
    d, console = fuzz_daemon
    before = d.journal.last_seq
    tx = uuid.uuid4().hex
    try:
        data = json.loads(payload)
        if isinstance(data, dict):
            data["transaction"] = tx
            payload = json.dumps(data).encode()
    except ValueError:
        pass
    console.c.publish(T.request(name), payload, qos=1)
    wait_until(lambda: len(_responses(console)) > fuzz_daemon_seen[0], what="a response")
    fuzz_daemon_seen[0] = len(_responses(console))
    response = _responses(console)[-1]
    validate("response", response)
    if not response["ok"]:
        assert response["error"]
        assert d.journal.last_seq == before, "a rejected request must journal nothing"
    assert d._owner.is_alive()  # noqa: SLF001


fuzz_daemon_seen = [0]


@pytest.fixture(scope="module")
def fuzz_daemon(tmp_path_factory, passwords):
    tmp = tmp_path_factory.mktemp("fuzz")
    with shipped_broker(passwords) as broker:
        d = start_daemon(tmp / "journal.sqlite", broker, passwords)
        console = _client(broker, passwords, "console")
        console.subscribe(T.response + "/#")
        yield d, console
        console.close()
        d.stop()


def test_broker_outage_loses_nothing(tmp_path, broker, passwords) -> None:
    """30 s without a broker mid-hand: every event arrives afterwards and the retained state is right."""
    d = Daemon(_config(tmp_path, broker), mqtt_username="controller", mqtt_password=passwords["controller"])
    d.start()
    assert d.link.connected_event.wait(10)
    props = Properties(PacketTypes.CONNECT)
    props.SessionExpiryInterval = 600
    sub = Client(broker, "display", passwords["display"], name="display-persistent")
    sub.c.disconnect()
    sub.c.loop_stop()
    sub.c.reconnect_delay_set(min_delay=1, max_delay=1)
    sub.c.connect(broker.host, broker.port, keepalive=5, clean_start=False, properties=props)
    sub.c.loop_start()
    wait_until(lambda: bool(sub.connacks), what="subscriber connected")
    sub.subscribe(T.root + "/event/#")
    _seat_four(d)
    d.submit(NewHand())
    deals = [(1, "Ah"), (2, "Kd"), (3, "Qs"), (4, "Jc")]
    for seat, card in deals:
        d.submit(Deal(seat, c(card), source="rfid"))
    wait_until(lambda: len(sub.json(T.event("card"))) == 4, what="first round of cards")
    outage = threading.Thread(target=broker.restart, kwargs={"down_for": 30})
    outage.start()
    wait_until(lambda: not d.link.connected, timeout=15, what="daemon sees the outage")
    later = [(1, "Th"), (2, "9d"), (3, "8s"), (4, "7c")]
    for seat, card in later:
        d.submit(Deal(seat, c(card), source="rfid"))
    d.submit(Act(3, "call"))
    assert d.link.backlog > 0
    outage.join(60)
    wait_until(lambda: d.link.connected, timeout=30, what="daemon reconnects")
    wait_until(lambda: len({e["seq"] for e in sub.json(T.event("card"))}) == 8, timeout=30, what="all 8 cards")
    wait_until(lambda: any(e["seat"] == 3 for e in sub.json(T.event("action"))), timeout=30, what="the action")
    seqs = sorted({e["seq"] for e in sub.json(T.event("card"))})
    assert len(seqs) == 8
    late = _client(broker, passwords, "display")
    late.subscribe(T.state)
    wait_until(lambda: bool(late.json(T.state)), what="retained state")
    state = _state(late)
    assert state["hand"]["to_act"] == 4 and all(s["cards"] == 2 for s in state["hand"]["seats"].values())
    # The delivered cursor is stored a moment after the broker's acknowledgement (batched).
    wait_until(lambda: d.journal.published_seq == d.journal.last_seq, timeout=5, what="delivered cursor stored")
    late.close()
    sub.close()
    d.stop()


def test_kill_9_mid_hand_then_restart_gives_the_same_state(tmp_path, broker, passwords) -> None:
    from firmware_bridge.emulator import Emulator

    deck = Deck("A")
    uids = {}
    for i, card in enumerate(standard_deck()):
        uid = f"04{i:02X}77AA"
        deck.add(uid, card)
        uids[card.face] = uid
    registry = DeckRegistry([deck])
    registry.save(tmp_path / "decks.json")
    cfg = write_table_config(tmp_path, broker, passwords["controller"], table=TABLE,
                             serial='enabled = true\nport = "/dev/null"',
                             board_antennas='8 = "board:0"\n9 = "board:1"\n10 = "board:2"\n11 = "burn"\n')
    link = str(tmp_path / "ttyEMU")
    emu = Emulator(antenna_count=12, link_path=link).start()
    console = _client(broker, passwords, "console")
    console.subscribe(T.response + "/#")
    display = _client(broker, passwords, "display")
    display.subscribe(T.state)
    display.subscribe(T.availability)
    cmd = [sys.executable, "-m", "controller.cli", "run", "--config", str(cfg), "--registry",
           str(tmp_path / "decks.json"), "--serial", link, "--log", "json"]
    env = dict(os.environ, PYTHONUNBUFFERED="1")

    def start() -> subprocess.Popen:
        return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "log", "a"))

    def request(name: str, payload: dict) -> None:
        n = len(_responses(console))
        console.publish(T.request(name), json.dumps(payload).encode())
        wait_until(lambda: len(_responses(console)) > n, timeout=15, what=f"response to {name}")
        assert _responses(console)[-1]["ok"], _responses(console)[-1]

    def online_count() -> int:
        return display.payloads(T.availability).count(b"online")

    proc = start()
    try:
        wait_until(lambda: online_count() >= 1, timeout=20, what="the daemon online")
        seat_four(request)
        request("new_hand", {})
        dealt = [("Ah", 0), ("Kd", 2), ("Qs", 4), ("Jc", 6), ("Th", 1), ("9d", 3)]
        def cards_dealt() -> int:
            states = display.json(T.state)
            hand = states[-1]["hand"] if states else None
            return sum(s["cards"] for s in hand["seats"].values()) if hand else -1

        for n, (face, antenna) in enumerate(dealt, 1):
            emu.place(antenna, uids[face])
            wait_until(lambda n=n: cards_dealt() >= n, timeout=15, what=f"{face} dealt")
        before = _state(display)["hand"]
        assert before["next_seat"] == 3
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        n_states, n_online = len(display.json(T.state)), online_count()
        proc = start()
        wait_until(lambda: online_count() > n_online, timeout=20, what="the daemon back online")
        wait_until(lambda: len(display.json(T.state)) > n_states, timeout=20, what="state after restart")
        after = _state(display)["hand"]
        assert after == before
        # And the hand goes on where it stopped.
        emu.place(5, uids["8s"])
        wait_until(lambda: _state(display)["hand"]["next_seat"] == 4, timeout=15, what="next card after restart")
    finally:
        stop_process(proc, 10)
        emu.stop()
        console.close()
        display.close()
