"""The daemon's MQTT link and publisher against a real Mosquitto: what leaves at once, what
waits a moment, and in which order."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest

from controller.app.daemon import STATE_DEBOUNCE, Daemon
from controller.demo.config import demo_config
from controller.mqtt.broker import Broker
from controller.mqtt.link import MqttLink, MqttSettings
from controller.rules.cards import Card
from controller.rules.events import Deal, NewHand, SeatPlayer, SetButton
from tests.mqtt_util import Client, require_mosquitto, wait_until

pytestmark = pytest.mark.usefixtures("_mosquitto")


@pytest.fixture(scope="module")
def _mosquitto() -> None:
    require_mosquitto()


@pytest.fixture
def broker() -> Iterator[Broker]:
    with Broker.start() as b:
        yield b


def _link(broker: Broker) -> MqttLink:
    link = MqttLink(MqttSettings(url=f"mqtt://127.0.0.1:{broker.port}", client_id="link-test"), "t/availability")
    link.start()
    assert link.connected_event.wait(10)
    wait_until(lambda: link.wait_idle(0.1), what="availability acknowledged")
    return link


def test_a_message_is_handed_to_paho_on_the_publishing_thread(broker: Broker) -> None:
    """No outbox thread in between: when ``publish`` returns, paho has the message."""
    link = _link(broker)
    sub = Client(broker, None, None, name="sub").connected()
    sub.subscribe("t/#")
    try:
        before = link.counters["published"]
        link.publish("t/event/card", {"seq": 1}, seq=0)
        assert link.counters["published"] == before + 1  # synchronously, on this thread
        sub.wait_for("t/event/card")
        assert json.loads(sub.payloads("t/event/card")[0]) == {"seq": 1}
        assert link.wait_idle(5) and link.backlog == 0
    finally:
        sub.close()
        link.stop()


def test_the_packet_is_written_on_the_publishing_thread(broker: Broker) -> None:
    """Plain TCP: the publishing thread writes the packet itself (paho's queue is empty when
    ``publish`` returns); with TLS the writes stay on paho's thread."""
    link = _link(broker)
    try:
        assert link.inline_write
        for i in range(20):
            link.publish("t/event/card", {"seq": i})
            assert len(link.client._out_packet) == 0  # noqa: SLF001 - written, not waiting for paho's thread
        assert link.wait_idle(5)
    finally:
        link.stop()
    assert not MqttLink(MqttSettings(url="mqtts://127.0.0.1:8883"), "t/availability").inline_write


def test_publishing_from_many_threads_keeps_each_threads_order(broker: Broker) -> None:
    link = _link(broker)
    sub = Client(broker, None, None, name="sub").connected()
    sub.subscribe("t/#")
    try:
        def burst(k: int) -> None:
            for i in range(200):
                link.publish(f"t/burst/{k}", {"i": i})

        threads = [threading.Thread(target=burst, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wait_until(lambda: sum(len(sub.payloads(f"t/burst/{k}")) for k in range(4)) == 800, what="800 messages")
        for k in range(4):
            assert [json.loads(p)["i"] for p in sub.payloads(f"t/burst/{k}")] == list(range(200))
        assert link.wait_idle(5)
    finally:
        sub.close()
        link.stop()


def test_delayed_messages_wait_for_their_time(broker: Broker) -> None:
    link = _link(broker)
    sub = Client(broker, None, None, name="sub").connected()
    sub.subscribe("t/#")
    try:
        link.publish("t/later", b"x", delay=0.4)
        link.publish("t/now", b"y")
        sub.wait_for("t/now")
        assert not sub.got("t/later")
        sub.wait_for("t/later")
    finally:
        sub.close()
        link.stop()


def test_the_card_leaves_before_the_snapshots(tmp_path, broker: Broker) -> None:
    """A dealt card's event goes out first; the retained state and the hole cards (whole-table
    snapshots) follow a moment later, once for a burst of changes."""
    config = demo_config("t1", size=4, journal=tmp_path / "j.sqlite",
                                 mqtt_url=f"mqtt://127.0.0.1:{broker.port}", broadcast_delay=0)
    d = Daemon(config).start()
    sub = Client(broker, None, None, name="sub").connected()
    try:
        assert d.link is not None and d.link.connected_event.wait(10)
        root = d.topics.root
        for seat in range(1, 5):
            d.submit(SeatPlayer(seat, f"p{seat}"))
        d.submit(SetButton(4))
        d.submit(NewHand())
        sub.subscribe(f"{root}/#")
        wait_until(lambda: sub.got(d.topics.state), what="retained state")
        start = len(sub.messages)
        outputs = d.submit(Deal(1, Card.parse("Ah"), source="rfid"))
        seq = outputs[0].seq

        def after(topic: str) -> list[dict]:
            return [json.loads(m.payload) for m in sub.messages[start:] if m.topic == topic and m.payload]

        wait_until(lambda: any(s["seq"] == seq for s in after(d.topics.state)), what="state with the card")
        wait_until(lambda: any(h["seq"] == seq for h in after(d.topics.private_holecards)), what="hole cards")
        # the snapshots that carry the card (a slow machine may still deliver the new hand's own
        # debounced snapshot after ``start``: it is older than the card, so it does not count)
        seen = [(m.topic, json.loads(m.payload)) for m in sub.messages[start:] if m.payload]
        topics = [topic if body.get("seq", -1) >= seq else None for topic, body in seen]
        assert topics.index(d.topics.event("card")) < topics.index(d.topics.state)
        assert topics.index(d.topics.event("card")) < topics.index(d.topics.private_holecards)
        assert [h["seats"] for h in after(d.topics.private_holecards)] == [{"1": ["Ah"], "2": [], "3": [], "4": []}]
        state = [s for s in after(d.topics.state) if s["seq"] == seq][0]
        assert state["hand"]["seats"]["1"]["cards"] == 1
        assert STATE_DEBOUNCE < 0.05  # a moment, not a visible lag
    finally:
        sub.close()
        d.stop()
