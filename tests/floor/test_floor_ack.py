"""The end-to-end acknowledgement's two halves without servers: the floor's reports of what its
store holds (:class:`StoredTracker`, on a real SQLite store) and the table's :class:`Resender`."""

from __future__ import annotations

import json
import time

from controller.floor.sim import TableScript
from controller.floor.sources import Ingestor
from controller.floor.store import Store
from controller.floor.stored import StoredTracker
from controller.mqtt.resend import StoredReport


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Capture:
    def __init__(self) -> None:
        self.msgs: list[tuple[str, bytes]] = []

    def publish(self, topic, payload, **kw) -> None:
        data = json.dumps(payload, separators=(",", ":")).encode() if isinstance(payload, dict) else (payload or b"")
        self.msgs.append((topic, data))


def session(hands: int = 6, seed: int = 4) -> list[tuple[str, bytes]]:
    cap = Capture()
    script = TableScript("t1", cap, seed=seed, mistakes=0.3)
    for _ in range(hands):
        for event in script.steps():
            script.submit(event)
    return [m for m in cap.msgs if "/event/" in m[0]]


def table_and_floor(grace: float = 5.0):
    from controller.mqtt.resend import Resender

    clock = Clock()
    sent: list[tuple[str, bytes]] = []
    resender = Resender(lambda t, d: sent.append((t, d)), grace=grace, clock=clock)
    store = Store.open(":memory:")
    tracker = StoredTracker(store, every=0, heartbeat=0, clock=clock)
    return clock, sent, resender, Ingestor(store, stored=tracker), tracker


def test_a_message_lost_in_the_middle_is_resent_once_and_then_confirmed() -> None:
    clock, sent, resender, floor, tracker = table_and_floor()
    msgs = session()
    lost = msgs[len(msgs) // 2]
    for m in msgs:
        resender.record(*m)
    floor.handle([m for m in msgs if m is not lost])
    (report,) = tracker.due()
    assert resender.on_report(report.payload(), "t1") == 0, "nothing is resent inside the grace period"
    clock.now += 6
    assert resender.on_report(report.payload(), "t1") >= 1
    assert lost in sent and len({json.loads(d)["seq"] for _, d in sent}) <= 16, "at most its chunk is resent"
    floor.handle(sent)
    (report,) = tracker.due()
    clock.now += 100
    sent.clear()
    assert resender.on_report(report.payload(), "t1") == 0 and not sent
    rows = floor.store.query("SELECT COUNT(*) AS n FROM events")[0]["n"]
    assert rows == len({(json.loads(d)["seq"], t) for t, d in msgs}), "every event once"


def test_a_lost_last_message_is_resent_once_the_floor_is_caught_up_and_has_stood_still() -> None:
    clock, sent, resender, floor, tracker = table_and_floor()
    msgs = session(hands=2)
    for m in msgs:
        resender.record(*m)
    top = max(json.loads(d)["seq"] for _, d in msgs)
    lost = [m for m in msgs if json.loads(m[1])["seq"] == top]  # the last move's events
    floor.handle([m for m in msgs if m not in lost])
    clock.now += 6
    assert resender.on_report(tracker.due(pending=5)[0].payload(), "t1") == 0, "the floor may not have read it yet"
    assert resender.on_report(tracker.due(pending=0)[0].payload(), "t1") == 0, "the floor's newest just moved"
    clock.now += 6
    assert resender.on_report(tracker.due(pending=0)[0].payload(), "t1") == len(lost) and sent == lost
    # Sent again only after a doubling back-off, however often the floor reports.
    assert resender.on_report(tracker.due(pending=0)[0].payload(), "t1") == 0
    clock.now += 11
    assert resender.on_report(tracker.due(pending=0)[0].payload(), "t1") == len(lost)


def test_a_restarted_floor_reports_what_its_store_held_and_reports_are_checked() -> None:
    clock, sent, resender, floor, _ = table_and_floor()
    msgs = session(hands=3)
    floor.handle(msgs)
    again = StoredTracker(floor.store, every=0, heartbeat=0, clock=clock)
    again.load_known()
    (report,) = again.due()
    top = max(json.loads(d)["seq"] for _, d in msgs)
    assert report.through == top and sum(report.counts) == len(msgs)
    for m in msgs:
        resender.record(*m)
    clock.now += 60
    assert resender.on_report(report.payload(), "t1") == 0
    assert resender.on_report(report.payload(), "t2") == 0, "another table's report is ignored"
    for bad in (b"", b"[]", b'{"table_id": "t1"}', json.dumps({"table_id": "t1", "through": 9, "from": 0,
                                                                 "counts": [1, 2]}).encode()):
        assert StoredReport.parse(bad) is None


def test_without_a_floor_nothing_is_resent_and_what_is_kept_is_bounded() -> None:
    clock, sent, resender, _, _ = table_and_floor()
    resender.limit = 50
    for m in session(hands=4):
        resender.record(*m)
    clock.now += 1000
    assert resender.unconfirmed <= 50 + 2 and not sent


def test_a_batch_that_ends_inside_a_sequence_is_not_a_loss_while_the_floor_reads_on() -> None:
    clock, sent, resender, floor, tracker = table_and_floor()
    msgs = session(hands=3)
    seqs = [json.loads(d)["seq"] for _, d in msgs]
    cut = next(i for i in range(1, len(msgs)) if seqs[i] == seqs[i - 1])  # the 2nd event of a sequence
    for m in msgs:
        resender.record(*m)
    floor.handle(msgs[:cut])
    clock.now += 60
    assert resender.on_report(tracker.due(pending=7)[0].payload(), "t1") == 0
    floor.handle(msgs[cut:])
    assert resender.on_report(tracker.due(pending=0)[0].payload(), "t1") == 0 and not sent


def test_the_daemon_resends_on_its_bridge_topic_what_the_floors_report_lacks(tmp_path) -> None:
    """The daemon's own wiring on a real Mosquitto with the shipped ACL: a report that holds nothing
    of the table (written by a stand-in for the room's bridge, the only writer the ACL has in a
    room) makes it resend its events on ``resend/event/<kind>``, byte for byte."""

    from controller.app.config import RoomSection
    from controller.app.daemon import Daemon
    from controller.demo.config import demo_config
    from controller.mqtt.contract import Topics
    from controller.rules.events import NewHand, SeatPlayer, SetButton
    from tests.mqtt_util import ACL, Client, new_passwords, shipped_broker, wait_until

    pw = new_passwords(("controller", "admin", "bridge"))
    t = Topics("poker", "t1")
    with shipped_broker(pw, websockets=False, acl=ACL + "\nuser bridge\ntopic write floor/+/stored\n") as broker:
        config = demo_config("t1", size=6, journal=tmp_path / "journal.sqlite",
                             mqtt_url=f"mqtt://127.0.0.1:{broker.port}", broadcast_delay=0)
        config = config.model_copy(update={"room": RoomSection(name="room1", resend_grace=0.2)})
        d = Daemon(config, mqtt_username="controller", mqtt_password=pw["controller"])
        d.start()
        try:
            assert d.floor_ack is not None and d.floor_ack.resender.grace == 0.2
            admin = Client(broker, "admin", pw["admin"], name="admin-ack")
            bridge = Client(broker, "bridge", pw["bridge"], name="bridge-ack")
            wait_until(lambda: bool(admin.connacks) and bool(bridge.connacks), what="connected")
            admin.subscribe(t.root + "/#")
            for seat in (1, 2, 3):
                d.submit(SeatPlayer(seat, f"p{seat}"))
            d.submit(SetButton(3))
            d.submit(NewHand())
            wait_until(lambda: admin.got(t.event("hand_start")), what="the hand's start")
            nothing = StoredReport.build("t1", {}, pending=0).payload()
            wait_until(lambda: d.floor_ack.client is not None and d.floor_ack.client.is_connected(), what="ack client")
            time.sleep(0.3)
            bridge.publish("floor/t1/stored", nothing)
            time.sleep(0.3)
            bridge.publish("floor/t1/stored", nothing)  # the floor's newest has stood still: resend
            resent_topic = t.root + "/resend/event/hand_start"
            wait_until(lambda: admin.got(resent_topic), what="the resent hand start")
            with admin.lock:
                first = [m.payload for m in admin.messages if m.topic == t.event("hand_start")]
                again = [m.payload for m in admin.messages if m.topic == resent_topic]
            assert again[:1] == first[:1]
        finally:
            d.stop()
