"""The floor's store and ingest, on what the daemon's own service and publisher emit (no server).

A session of hands is dealt by :class:`controller.floor.sim.TableScript` (the real
``TableService`` and ``Publisher``, dealer mistakes included) into a capturing link; the floor
ingests what a bridge would forward, again and again, shuffled: every hand, event, ruling and
sign-in is stored exactly once, with its dealer.
"""

from __future__ import annotations

import csv
import io
import json
import random
import re
from pathlib import Path

import pytest

from controller.app.daemon import request_event
from controller.floor.ingest import parse, rows_for
from controller.floor.report import dealer_report, report_csv
from controller.floor.server import FloorApi
from controller.floor.sim import BRIDGED, TableScript, bridged
from controller.floor.sources import Ingestor
from controller.floor.store import Store
from controller.mqtt.contract import parse_request, validate
from controller.rules.events import CallMisdeal, DealerSignIn, NewHand, SeatPlayer
from controller.rules.table import Table
from controller.service import Rejected, TableService

REPO = Path(__file__).resolve().parents[2]


class Capture:
    """A link that keeps what the publisher sends (topic, bytes)."""

    def __init__(self) -> None:
        self.msgs: list[tuple[str, bytes]] = []

    def publish(self, topic, payload, *, qos=1, retain=False, seq=0, delay=0.0, properties=None) -> None:
        data = json.dumps(payload).encode() if isinstance(payload, dict) else (payload or b"")
        self.msgs.append((topic, data if isinstance(data, bytes) else data.encode()))


def session(table_id: str = "t1", hands: int = 25, seed: int = 5) -> tuple[TableScript, list[tuple[str, bytes]]]:
    cap = Capture()
    script = TableScript(table_id, cap, seed=seed, mistakes=0.4, rotate_every=6)
    for _ in range(hands):
        for ev in script.steps():
            script.submit(ev)
    prefix = f"poker/{table_id}/"
    return script, [(t, d) for t, d in cap.msgs if bridged(t[len(prefix):])]


def test_a_session_is_stored_once_however_often_and_in_whatever_order_it_arrives() -> None:
    script, msgs = session()
    assert script.rulings > 0, "the session should have some dealer mistakes"
    store = Store.open(":memory:")
    ing = Ingestor(store)
    ing.handle(msgs)
    first = store.counts()
    assert first["hands"] == script.hand_starts == 25
    assert first["rulings"] == script.rulings
    assert first["signins"] == 25 // 6 + 1
    events = [m for m in msgs if "/event/" in m[0]]
    assert first["events"] == len(events)
    # Redelivered, duplicated, shuffled in batches: nothing changes.
    again = msgs + msgs[: len(msgs) // 2]
    random.Random(1).shuffle(again)
    for i in range(0, len(again), 37):
        ing.handle(again[i:i + 37])
    assert store.counts() == first
    hands = store.query("SELECT * FROM hands ORDER BY start_seq")
    assert all(h["ended"] is not None and h["result"] for h in hands)  # every end settled its hand


def test_an_end_that_arrives_before_its_start_still_settles_the_hand() -> None:
    script, msgs = session(hands=3)
    store = Store.open(":memory:")
    ing = Ingestor(store)
    ends = [m for m in msgs if m[0].endswith("/hand_end") and "/event/" in m[0]]
    ing.handle(ends)
    assert store.counts()["hands"] == 0
    ing.handle(msgs)
    hands = store.query("SELECT result, end_seq FROM hands")
    assert len(hands) == 3 and all(h["result"] and h["end_seq"] for h in hands)


def test_every_hand_and_ruling_carries_the_dealer_signed_in() -> None:
    script, msgs = session(hands=20)
    store = Store.open(":memory:")
    Ingestor(store).handle(msgs)
    signins = store.query("SELECT seq, dealer FROM signins ORDER BY seq")
    for h in store.query("SELECT start_seq, dealer FROM hands"):
        expected = [s["dealer"] for s in signins if s["seq"] < h["start_seq"]][-1]
        assert h["dealer"] == expected
    rulings = store.query("SELECT seq, dealer FROM rulings")
    assert rulings
    for r in rulings:
        assert r["dealer"] == [s["dealer"] for s in signins if s["seq"] < r["seq"]][-1]


def test_the_daemon_journals_a_sign_in_and_carries_it() -> None:
    svc = TableService(Table(size=6))
    out = svc.submit(DealerSignIn("Dana", badge="04a1b2c3", source="nfc"))
    assert [o.kind for o in out] == ["dealer"] and out[0].payload["dealer"] == "Dana"
    for seat, name in ((1, "A"), (2, "B"), (3, "C")):
        svc.submit(SeatPlayer(seat, name))
    start = svc.submit(NewHand())
    assert start[0].kind == "hand_start" and start[0].payload["dealer"] == "Dana"
    with pytest.raises(Rejected):
        svc.submit(DealerSignIn("x" * 65))
    with pytest.raises(Rejected):
        svc.submit(DealerSignIn("Eve", source="telepathy"))
    # A misdeal called now is a ruling: its alert names the dealer.
    alerts = [o for o in svc.submit(CallMisdeal("called_misdeal")) if o.kind == "alert"]
    assert alerts and alerts[0].payload["dealer"] == "Dana"
    # The console's request, parsed and turned into the same event.
    fields = parse_request("dealer", b'{"dealer": "Omar"}')
    assert request_event("dealer", fields) == DealerSignIn("Omar", source="console")
    assert request_event("dealer", parse_request("dealer", b'{"dealer": null}')) == DealerSignIn(None)


def test_published_dealer_events_and_alerts_fit_the_contract() -> None:
    script, msgs = session(hands=15)
    seen = set()
    for topic, data in msgs:
        path = topic.split("/", 2)[2]
        if path.startswith("event/") or path == "alert":
            payload = json.loads(data)
            validate("event" if path.startswith("event/") else "alert", payload)
            seen.add(path)
            if path == "alert":
                assert "dealer" in payload
    assert {"event/dealer", "alert", "event/ruling"} <= seen


def test_bad_messages_are_skipped_and_secrets_never_kept() -> None:
    store = Store.open(":memory:")
    ing = Ingestor(store)
    ing.handle([("poker/t1/event/card", b"not json"), ("poker/t1/event/card", b"[1]"), ("other/x", b"{}"),
                ("poker/t1/event/card", b'{"seq": "x"}'),
                ("poker/t1/private/holecards", b'{"seq": 1, "ts": 1, "hand_id": 1, "seats": {"1": ["Ah", "Kd"]}}')])
    assert store.counts()["events"] == 0 and ing.counters.rejected == 4
    assert rows_for(parse("poker.t1.private.holecards", b'{"seq": 1, "hand_id": 1, "seats": {}}')) == []


def test_nats_subjects_and_mqtt_topics_read_the_same() -> None:
    a = parse("poker/t9/event/street", b'{"seq": 4, "ts": 1.0, "hand_id": 2, "name": "flop"}')
    b = parse("poker.t9.event.street", b'{"seq": 4, "ts": 1.0, "hand_id": 2, "name": "flop"}')
    assert a == b and a is not None and a.table_id == "t9" and a.path == "event/street"


def test_the_bridge_template_forwards_exactly_the_bridged_topics() -> None:
    conf = (REPO / "systemd" / "room" / "mosquitto-bridge.conf").read_text()
    forwarded = re.findall(r"^topic (\S+) out 1 \$\{base\}/\$\{table\}/ ", conf, re.M)
    assert tuple(forwarded) == BRIDGED
    # Resends leave as the events they repeat; what comes in: the floor's report, its level, its orders
    # for this table and a tournament's new level.
    assert re.findall(r"^topic (.+)$", conf, re.M)[len(BRIDGED):] == [
        "event/# out 1 ${base}/${table}/resend/ ${base}/${table}/",
        "stored in 0 floor/${table}/ ${base}/${table}/floor/",
        "level in 0 floor/room/ floor/room/",
        "table/${table} in 1 floor/room/ floor/room/",
        "request/level in 0 ${base}/${table}/ ${base}/${table}/"]
    assert not bridged("private/holecards") and not bridged("state") and not bridged("broadcast/state")
    assert not bridged("request/new_hand") and bridged("event/card") and bridged("broadcast/holecards")
    assert bridged("diagnostics")  # the readers' health: counts, no card (docs/diagnostics.md)


def test_the_dealer_report_and_its_csv() -> None:
    store = Store.open(":memory:")
    _, msgs = session(hands=30, seed=9)
    Ingestor(store).handle(msgs)
    hands = store.query("SELECT dealer, started, ended FROM hands")
    since, until = min(h["started"] for h in hands) - 1, max(h["started"] for h in hands) + 1
    report = dealer_report(store, since, until)
    by = {d["dealer"]: d for d in report["dealers"]}
    assert sum(d["hands"] for d in by.values()) == 30
    for name, d in by.items():
        mine = [h for h in hands if h["dealer"] == name]
        assert d["hands"] == len(mine)
        assert sum(x["hands"] for x in d["hands_per_hour"]) == len(mine)
        mean = sum(h["ended"] - h["started"] for h in mine) / len(mine)
        assert d["mean_hand_seconds"] == pytest.approx(mean, abs=0.06)
        rulings = store.query("SELECT ruling, reason FROM rulings WHERE dealer = ?", (name,))
        for reason, rate in d["misdeals_per_100"].items():
            n = sum(1 for r in rulings if r["ruling"] == "misdeal" and r["reason"] == reason)
            assert rate == pytest.approx(100 * n / len(mine), abs=0.01)
    rows = list(csv.DictReader(io.StringIO(report_csv(report))))
    assert {r["dealer"] for r in rows} == set(by)
    assert {(r["dealer"], int(r["value"])) for r in rows if r["metric"] == "hands"} == {
        (k, v["hands"]) for k, v in by.items()}


def test_a_hand_for_the_replay_has_its_events_in_order() -> None:
    store = Store.open(":memory:")
    _, msgs = session(hands=4)
    Ingestor(store).handle(msgs)
    api = FloorApi(store)
    listed = api.hands(table="t1")
    assert len(listed) == 4
    h = listed[-1]
    hand = api.hand("t1", h["hand_id"], h["start_seq"])
    assert hand is not None
    kinds = [e["kind"] for e in hand["events"]]
    assert kinds[0] == "hand_start" and kinds[-1] == "hand_end"
    seqs = [e["seq"] for e in hand["events"]]
    assert seqs == sorted(seqs)
    assert hand["holecards"], "the delayed broadcast copy of the hole cards is kept for the replay"


def test_stakes_read_from_the_chips_of_a_hand_start() -> None:
    from controller.floor.store import _stakes

    assert _stakes({"stakes": {"stacks": {"1": 100}, "blinds": [1, 2]}}) == "1/2"
    assert _stakes({"stakes": {"stacks": {}, "limits": [2, 4], "ante": 1}}) == "2/4 limit ante 1"
    assert _stakes({"stakes": {"stacks": {}, "bring_in": 2, "limits": [5, 10]}}) == "5/10 limit bring-in 2"
    assert _stakes({}) is None and _stakes({"stakes": "x"}) is None
