"""Issues 26 and 27: the producer changes the broadcast delay during a stream, without losing a hand
or showing one early.

A real Mosquitto with the shipped ACL, the daemon as its controller login, and three logins outside
the table: the producer (who sends ``producer/broadcast_delay`` and reads its answers), the display
(the public commitments and ``event/hand_end``) and the overlay (``broadcast/#``).  In hand 1 the
delay is shortened mid-hand, in hand 2 lengthened mid-hand; :class:`BroadcastVerifier` then checks
the whole session from what the display and the overlay received alone, including that no key
opened an earlier snapshot's cards before that snapshot's own delay.  A restart keeps the delay
the producer set (it is journaled).  Bad values are answered with the reason and change nothing;
the console's login cannot send the producer's request at all (the broker refuses it).
"""

from __future__ import annotations

import json
import time
import uuid

import pytest

from controller.app.config import BroadcastSection
from controller.app.daemon import Daemon
from controller.demo.config import demo_config
from controller.mqtt.contract import Topics, validate
from controller.mqtt.sealed import BroadcastVerifier
from controller.rules.cards import Card
from controller.rules.events import NewHand, SeatPlayer, SetButton
from tests.app.test_sealed_broadcast import Reader, _fold_out
from tests.mqtt_util import ROLES, Client, new_passwords, require_mosquitto, wait_until

require_mosquitto()

TABLE = "t1"
T = Topics("poker", TABLE)
DELAY, SHORT, LONG = 2, 1, 4  # seconds: the config's, the producer's shorter and longer ones
TOL = 0.1  # two messages received by one reader on a loaded machine; an early key would be ~1 s early


@pytest.fixture(scope="module")
def passwords() -> dict[str, str]:
    return new_passwords((*ROLES, "producer"))


def _daemon(journal, broker, passwords) -> Daemon:
    cfg = demo_config(TABLE, size=6, journal=journal, mqtt_url=f"mqtt://127.0.0.1:{broker.port}",
                      broadcast_delay=DELAY)
    cfg = cfg.model_copy(update={"broadcast": BroadcastSection(delay=DELAY, min_delay=1, max_delay=4)})
    d = Daemon(cfg, mqtt_username="controller", mqtt_password=passwords["controller"]).start()
    assert d.link is not None and d.link.connected_event.wait(10)
    return d


class Producer:
    """The producer's login: sends ``producer/broadcast_delay``, reads its answers."""

    def __init__(self, broker, passwords) -> None:
        self.client = Client(broker, "producer", passwords["producer"], name=f"producer-{uuid.uuid4().hex[:6]}")
        self.client.connected()
        assert not self.client.subscribe(T.response + "/producer/#")[0].is_failure

    def set(self, delay) -> dict:
        tx = uuid.uuid4().hex
        body = json.dumps({"delay": delay, "transaction": tx}) if delay is not ... else json.dumps({"transaction": tx})
        rc = self.client.publish(T.producer("broadcast_delay"), body)
        assert not rc.is_failure, rc
        wait_until(lambda: self._answer(tx) is not None, what=f"the answer to delay {delay!r}")
        return self._answer(tx)

    def _answer(self, tx: str) -> dict | None:
        with self.client.lock:
            found = [json.loads(m.payload) for m in self.client.messages if m.topic.startswith(T.response)]
        return next((a for a in found if a.get("transaction") == tx), None)


def _deal(d: Daemon, cards: list[str]) -> None:
    for card in cards:  # each to the seat the dealing order says
        d.submit(_card(d, card))


def _card(d: Daemon, card: str):
    from controller.rules.events import Deal

    return Deal(d.service.engine.snapshot()["next_seat"], Card.parse(card), source="rfid")


def _sealed(chain: Reader, hand: int, delay=None) -> list[tuple[float, dict]]:
    return [(t, m) for t, m in chain.on("broadcast/sealed") if m["hand_id"] == hand
            and (delay is None or m["delay"] == delay)]


def test_the_producer_shortens_and_lengthens_the_delay_mid_hand_and_the_session_verifies(tmp_path, broker,
                                                                                        passwords) -> None:
    public = Reader(broker, passwords, "display", [T.commitment, T.event("hand_end")])
    chain = Reader(broker, passwords, "overlay", [T.root + "/broadcast/#"])
    producer = Producer(broker, passwords)
    hands = [["Ah", "Kd", "Qs", "Jc", "Th", "9d", "8s", "7c"], ["2h", "3d", "4s", "5c", "6h", "7d", "8h", "9c"]]
    d = _daemon(tmp_path / "journal.sqlite", broker, passwords)
    try:
        wait_until(lambda: chain.on("broadcast/delay"), what="the delay in force")
        assert chain.on("broadcast/delay")[-1][1]["delay"] == DELAY
        for seat in (1, 2, 3, 4):
            d.submit(SeatPlayer(seat, f"p{seat}"))
        d.submit(SetButton(4))
        # Hand 1: half dealt under 2 s, shortened to 1 s, the rest dealt under 1 s.
        d.submit(NewHand())
        _deal(d, hands[0][:4])
        wait_until(lambda: _sealed(chain, 1), what="hand 1 sealed")
        answer = producer.set(SHORT)
        assert answer["ok"], answer
        _deal(d, hands[0][4:])
        wait_until(lambda: _sealed(chain, 1, float(SHORT)), what="a hand 1 snapshot under the shorter delay")
        _fold_out(d)
        wait_until(lambda: len(chain.on("broadcast/reveal")) == 1, timeout=10, what="hand 1 on air to its end")
        # Hand 2: half dealt under 2 s (back between hands), lengthened to 4 s at once, the rest dealt.
        assert producer.set(DELAY)["ok"]
        d.submit(NewHand())
        _deal(d, hands[1][:4])
        answer = producer.set(LONG)
        answered = time.monotonic()
        assert answer["ok"], answer
        _deal(d, hands[1][4:])
        _fold_out(d)
        chain.wait_all_out(2, "both hands' salts")
    finally:
        d.stop()
        public.client.close()

    # The delay in force was announced at each change, with who set it.
    status = [m for _t, m in chain.on("broadcast/delay")]
    for m in status:
        validate("broadcast_delay", m)
    assert [(m["delay"], m["by"]) for m in status[-3:]] == [(float(SHORT), "producer"), (float(DELAY), "producer"),
                                                           (float(LONG), "producer")]
    assert status[-1]["previous"] == float(DELAY) and status[-1]["max_delay"] == 4 and status[-1]["min_delay"] == 1

    verifier = BroadcastVerifier(TABLE, tolerance=TOL)
    for t, rel, payload in sorted(public.got + chain.got):
        verifier.feed(rel, payload, t)
    report = verifier.report()
    assert report["ok"], report
    assert report["deals"] == 2 and report["opened"] == report["snapshots"] >= 4
    for hand_id, cards in enumerate(hands, start=1):  # no hand lost: what went on air is what was dealt
        shown = report["last_shown"][hand_id]
        assert sorted(c for seat in shown.values() for c in seat) == sorted(cards)

    keys = {m["seq"]: t for t, m in chain.on("broadcast/key")}
    # Hand 1: the snapshots sealed after the shortening carry 1 s, yet none opened before the 2 s
    # promised to the first snapshot (it holds the earlier cards).
    first_at, first = min(_sealed(chain, 1), key=lambda x: x[1]["seq"])
    assert first["delay"] == DELAY
    later = [m for _t, m in _sealed(chain, 1, float(SHORT))]
    assert later and all(keys[m["seq"]] >= first_at + DELAY - TOL for m in later)
    # Hand 2: the lengthening took effect at once: a key still held then left 4 s after its snapshot.
    for t, m in _sealed(chain, 2):
        assert keys[m["seq"]] <= answered or keys[m["seq"]] >= t + LONG - TOL, (m["seq"], m["delay"])
    assert any(keys[m["seq"]] > answered for _t, m in _sealed(chain, 2, float(DELAY)))
    chain.client.close()

    # Journaled: a restart keeps the producer's delay in force, and says so.
    d = _daemon(tmp_path / "journal.sqlite", broker, passwords)
    try:
        entries = [e for e in d.journal.entries() if e.event.kind == "set_broadcast_delay"]
        assert [e.event.delay for e in entries] == [SHORT, DELAY, LONG]
        assert {e.event.source for e in entries} == {"producer"}
        assert d.publisher.broadcast_delay == LONG
        late = Reader(broker, passwords, "overlay", [T.broadcast("delay")])
        wait_until(lambda: any(m["by"] == "journal" for _t, m in late.on("broadcast/delay")),
                   what="the delay announced after the restart")
        assert all(m["delay"] == float(LONG) for _t, m in late.on("broadcast/delay"))
        late.client.close()
    finally:
        d.stop()
        producer.client.close()


def test_the_outbox_keeps_the_broadcast_chain_in_order_through_every_change_of_delay() -> None:
    """The link's own rule, on a clock the test turns (nothing is sent: the link is not started)."""
    import math

    from controller.mqtt.link import MqttLink, MqttSettings

    now = [0.0]
    link = MqttLink(MqttSettings(), "p/t/availability", clock=lambda: now[0])
    link.keep_order("p/t/broadcast/")

    def due(topic: str) -> float:
        return next(m.release for m in sorted(link._delayed, key=lambda m: -m.order) if m.topic == topic)

    link.publish("p/t/broadcast/key", b"1", delay=30)  # sealed under 30 s: due at 30
    now[0] = 5.0
    link.publish("p/t/broadcast/state", b"2", delay=1)  # shortened to 1 s: still behind the first
    link.publish("p/t/event/card", b"3", delay=1)  # not under the ordered prefix
    assert due("p/t/broadcast/state") == 30 and due("p/t/event/card") == 6
    link.hold_back("p/t/broadcast/", math.inf)  # lengthened to the hand's end: all held, and what follows
    link.publish("p/t/broadcast/equity", b"4", delay=1)
    assert due("p/t/broadcast/key") == due("p/t/broadcast/equity") == math.inf
    now[0] = 10.0  # the hand ends 10 s in, the delay back to 1 s: nothing before it was first due
    link.release_held("p/t/broadcast/", 1.0)
    assert [due(t) for t in ("p/t/broadcast/key", "p/t/broadcast/state", "p/t/broadcast/equity")] == [30, 30, 30]
    now[0] = 40.0
    link.publish("p/t/broadcast/hand_end", b"5", delay=1)  # the queue drained: the short delay applies
    assert due("p/t/broadcast/hand_end") == 41


def test_a_bad_delay_is_refused_with_its_reason_and_the_console_cannot_send_it(tmp_path, broker, passwords) -> None:
    producer = Producer(broker, passwords)
    console = Client(broker, "console", passwords["console"], name=f"console-{uuid.uuid4().hex[:6]}").connected()
    console.subscribe(T.response + "/#")
    d = _daemon(tmp_path / "journal.sqlite", broker, passwords)
    try:
        cases = {"abc": "seconds", -1: "negative", 5: "max_delay", 0.5: "min_delay", True: "", ...: "delay"}
        for value, words in cases.items():
            answer = producer.set(value)
            assert answer["ok"] is False and words in answer["error"], (value, answer)
        assert d.publisher.broadcast_delay == DELAY
        # The console's login: the broker refuses its publish on the producer's topic (MQTT v5 PUBACK
        # "not authorized"); its request/broadcast_delay is no request at all.
        rc = console.publish(T.producer("broadcast_delay"), json.dumps({"delay": 4}))
        assert rc.is_failure, rc
        console.publish(T.root + "/request/broadcast_delay", json.dumps({"delay": 4, "transaction": "c1"}))
        wait_until(lambda: console.got(T.response + "/broadcast_delay"), what="the console's answer")
        with console.lock:
            answer = json.loads(next(m.payload for m in console.messages if m.topic == T.response + "/broadcast_delay"))
        assert answer["ok"] is False and "unknown request" in answer["error"], answer
        time.sleep(0.3)
        assert d.publisher.broadcast_delay == DELAY
        assert not [e for e in d.journal.entries() if e.event.kind == "set_broadcast_delay"]
        # end_of_hand is always allowed (the strictest), and the daemon's API refuses what the request does.
        assert producer.set("end_of_hand")["ok"]
        assert d.publisher.broadcast_delay == "end_of_hand"
        from controller.service import Rejected

        with pytest.raises(Rejected, match="max_delay"):
            d.set_broadcast_delay(30)
    finally:
        d.stop()
        producer.client.close()
        console.close()
