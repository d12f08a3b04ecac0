"""Chips over MQTT with a real Mosquitto and the daemon: amounts entered as requests, a silent
push ruled on (TDA 42-A) on the display's alert, the chips in the public state, hand_end payouts."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest

from controller.app.daemon import Daemon
from controller.demo.config import demo_config
from controller.mqtt.broker import Broker
from controller.mqtt.contract import Topics, validate
from controller.rules.cards import Card
from controller.rules.events import BoardCards, Burn, Deal
from tests.mqtt_util import Client, new_passwords, require_mosquitto, shipped_broker, wait_until

require_mosquitto()

T = Topics("poker", "t1")


@pytest.fixture
def rig(tmp_path) -> Iterator[tuple[Daemon, Broker, dict[str, str]]]:
    passwords = new_passwords()
    with shipped_broker(passwords, websockets=False) as broker:
        cfg = demo_config("t1", size=6, rules="tda", journal=tmp_path / "j.sqlite",
                          mqtt_url=f"mqtt://127.0.0.1:{broker.port}", starting_stack=20_000)
        cfg = cfg.model_copy(update={"stakes": cfg.stakes.model_copy(update={"small_blind": 200, "big_blind": 400})})
        d = Daemon(cfg, mqtt_username="controller", mqtt_password=passwords["controller"])
        d.start()
        assert d.link is not None and d.link.connected_event.wait(10)
        yield d, broker, passwords
        d.stop()


def test_amounts_pushes_and_payouts_over_mqtt(rig) -> None:
    daemon, broker, passwords = rig
    console = Client(broker, "console", passwords["console"], name=f"console-{uuid.uuid4().hex[:6]}")
    display = Client(broker, "display", passwords["display"], name=f"display-{uuid.uuid4().hex[:6]}")
    wait_until(lambda: bool(console.connacks and display.connacks), what="clients connected")
    display.subscribe("#")
    console.subscribe(T.response + "/#")

    def request(name: str, payload: dict) -> dict:
        # Answered on response/<name> (zigbee2mqtt's convention, docs/mqtt.md).
        tx = uuid.uuid4().hex
        console.c.publish(T.request(name), json.dumps(payload | {"transaction": tx}).encode(), qos=1)
        topic = T.response + "/" + name
        wait_until(lambda: any(json.loads(p).get("transaction") == tx for p in console.payloads(topic)),
                   what=f"response to {name}")
        return next(r for p in console.payloads(topic) if (r := json.loads(p)).get("transaction") == tx)

    for seat in (1, 2, 3):
        assert request("seat", {"seat": seat, "name": f"p{seat}", "stack": 20_000 + 1_000 * seat})["ok"]
    assert request("set_button", {"seat": 3})["ok"]
    assert request("new_hand", {})["ok"]
    for seat, card in zip((1, 2, 3, 1, 2, 3), ("Ah", "Kd", "7c", "As", "Kh", "2d"), strict=True):
        daemon.submit(Deal(seat, Card.parse(card), source="rfid"))
    bad = request("action", {"seat": 3, "action": "raise", "amount": 500})
    assert not bad["ok"] and "bet or raise to 800..23,000" in bad["error"]
    for payload in ({"seat": 3, "action": "call"}, {"seat": 1, "action": "call"}, {"seat": 2, "action": "check"}):
        assert request("action", payload)["ok"]
    daemon.submit(Burn(Card.parse("3s")))
    daemon.submit(BoardCards(tuple(Card.parse(c) for c in ("Qc", "Jd", "9h")), source="rfid"))
    assert request("action", {"seat": 1, "action": "bet", "amount": 1_000})["ok"]
    # Seat 2 silently pushes 1,400 facing 1,000: TDA 42-A, a call.
    assert request("put", {"seat": 2, "chips": [1_000, 100, 100, 100, 100]})["ok"]
    wait_until(lambda: any(json.loads(p).get("reason") == "short_raise" for p in display.payloads(T.alert) if p),
               what="the TDA 42-A ruling on the display")
    alert = next(json.loads(p) for p in display.payloads(T.alert) if p and json.loads(p)["reason"] == "short_raise")
    assert alert["remedy"] == "treated_as_call" and "TDA 42-A" in alert["citations"]

    def chips() -> dict | None:
        states = display.json(T.state)
        return states[-1]["hand"]["chips"] if states and states[-1]["hand"] else None

    wait_until(lambda: (chips() or {}).get("pot") == 1_200 + 2_000, what="the pot after the push")
    assert chips()["stacks"] == {"1": 19_600, "2": 20_600, "3": 22_600} and chips()["to_call"] == 1_000
    assert request("stack", {"seat": 1, "add": 5_000})["ok"] is False  # mid-hand: refused
    assert request("action", {"seat": 3, "action": "fold"})["ok"]
    daemon.submit(Burn(Card.parse("4s")))
    daemon.submit(BoardCards((Card.parse("2c"),), source="rfid"))
    assert request("action", {"seat": 1, "action": "bet", "amount": 2_000})["ok"]
    assert request("action", {"seat": 2, "action": "fold"})["ok"]
    wait_until(lambda: any(p for p in display.payloads(T.event("hand_end"))), what="hand_end")
    end = json.loads(next(p for p in display.payloads(T.event("hand_end")) if p))
    validate("event", end)
    assert end["payouts"] == {"1": 3_200 + 2_000}  # the pot, and the uncalled bet back
    assert end["pots"] == [{"amount": 3_200, "eligible": [1], "winners": [1]}]
    wait_until(lambda: display.json(T.state)[-1]["table"]["players"]["1"]["stack"] == 21_000 - 1_400 + 3_200,
               what="the stack carried to the table")
    assert request("stack", {"seat": 1, "add": 5_000})["ok"]  # between hands: a rebuy
    for message in display.messages:
        if message.topic == T.state and message.payload:
            validate("state", json.loads(message.payload))
    console.close()
    display.close()
