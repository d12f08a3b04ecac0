"""The fault suite's secrecy check for the ``producer`` login (issue 26), against a real Mosquitto:
with the shipped ACL the producer's subscriber on ``#`` gets its own topics and nothing that names a
card, while the table publishes hole cards live and delayed, a board and a showdown; with an ACL
that lets the producer read more, the same check counts what it should not have seen.

The fault sessions (tests/app/test_fault_suite*.py) run the same check on the producer's subscriber
beside the real daemon (tests/app/fault_checks.py)."""

from __future__ import annotations

import json

from controller.bench.faults import PRODUCER_READS, Recorder, producer_secrecy
from controller.mqtt.contract import Topics
from tests.mqtt_util import ACL, Client, new_passwords, shipped_broker, wait_until

T = Topics("poker", "t1")
HOLE = {"seats": {"1": ["Ah", "Kd"], "2": ["7c", "7s"]}, "hand_id": 4, "seq": 9}
#: What a table publishes that the producer must not read: every one names a card.
FORBIDDEN = [
    (T.private_holecards, HOLE),
    (T.broadcast("holecards"), HOLE),
    (T.broadcast("hand_end"), {"hand_id": 4, "shown": {"1": ["Ah", "Kd"]}}),
    (T.broadcast("state"), {"board": ["2h", "9d", "Tc"]}),
    (T.state, {"board": ["2h", "9d", "Tc"]}),
    (T.event("card"), {"kind": "card", "card": "Qs", "seat": None}),
    (T.event("hand_end"), {"kind": "hand_end", "shown": {"1": ["Ah", "Kd"]}}),
    (T.response + "/console", {"ok": True, "card": "Jh"}),
    ("poker/t2/private/holecards", HOLE),
]
#: The producer's own topics (PRODUCER_READS), with what they carry: no card.
ALLOWED = [
    (T.broadcast("graphics"), {"show": ["ticker"]}),
    (T.broadcast("delay"), {"delay": 30, "by": "producer", "seq": 3}),
    (T.root + "/response/producer/broadcast_delay", {"ok": True, "delay": 30}),
]


def _session(acl: str) -> dict:
    """The table's messages on a real Mosquitto with ``acl``; the check over the producer's ``#``."""
    passwords = new_passwords(("controller", "producer"))
    with shipped_broker(passwords, websockets=False, acl=acl) as broker:
        table = Client(broker, "controller", passwords["controller"]).connected()
        producer = Recorder(broker.host, broker.port, "producer", passwords["producer"], ["#"])
        try:
            assert producer.connected.wait(10)
            table.c.publish(T.availability, "online", qos=1, retain=True)
            wait_until(lambda: any(r.topic == T.availability for r in producer.snapshot()), what="its subscription")
            for topic, payload in [*FORBIDDEN, *ALLOWED]:
                table.c.publish(topic, json.dumps(payload), qos=1)
            # one publisher, QoS 1: once its last message is in, every earlier one it may read is too
            wait_until(lambda: any(r.topic == ALLOWED[-1][0] for r in producer.snapshot()), what="the last message")
            return producer_secrecy(producer.snapshot())
        finally:
            producer.close()
            table.close()


def test_the_producer_sees_its_topics_and_no_card_through_the_shipped_acl() -> None:
    assert len(ALLOWED) + 1 == len(PRODUCER_READS)  # availability, and one message on each of the others
    got = _session(ACL)
    assert got == {"received": 1 + len(ALLOWED), "outside_its_topics": 0, "naming_a_card": 0, "examples": []}


def test_the_check_counts_what_a_wider_producer_login_would_see() -> None:
    got = _session(ACL.replace("user producer\n", "user producer\ntopic read poker/#\n", 1))
    assert got["received"] == 1 + len(ALLOWED) + len(FORBIDDEN)
    assert got["outside_its_topics"] == len(FORBIDDEN) and got["naming_a_card"] == len(FORBIDDEN), got
