"""The room on a real cluster (slow tier): Debian's nats-server (3 nodes, JetStream R3, MQTT
over TLS, per-table credentials), Debian's PostgreSQL, tables bridged by their own Mosquitto.

* one node killed (the tables' entry node or the stream's leader) and the floor service killed
  (``kill -9``) mid-session: every hand of every table in PostgreSQL exactly once (the floor's
  ``floor/stored`` reports make the tables resend what a dying node lost);
* a table's uplink cut for 60 s: its display never stops, its hands arrive afterwards;
* a table's credentials cannot publish as another table (nor log in as a NATS client);
* no hole card reaches the room before its broadcast delay.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import secrets
import shutil
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from controller.floor.room import NatsCluster, Postgres, RoomError
from controller.floor.sources import STREAM, NatsSettings, connect_nats, wait_for
from tests.floor.room_util import BridgedTable, FloorProcess, LightTable, NetCut, event_keys, floor_rows
from tests.mqtt_util import require_mosquitto

require_mosquitto()
pytestmark = pytest.mark.slow

CARD = re.compile(r"(?<![A-Za-z0-9])([2-9TJQKA][hdcs])(?![A-Za-z0-9])")


def _need(binary: str) -> None:
    if shutil.which(binary) is None and not Path(f"/usr/sbin/{binary}").exists():
        import os

        if os.environ.get("CI"):
            pytest.fail(f"{binary} is missing: scripts/bootstrap installs it", pytrace=False)
        pytest.skip(f"{binary} not installed")


@pytest.fixture(scope="module")
def postgres() -> Iterator[Postgres]:
    _need("nats-server")
    try:
        pg = Postgres().start()
    except RoomError as exc:
        pytest.skip(str(exc))
    yield pg
    pg.stop()


def new_database(pg: Postgres) -> str:
    import psycopg

    name = "floor_" + secrets.token_hex(4)
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return pg.url.rsplit("/", 1)[0] + "/" + name


def stream_leader(cluster: NatsCluster) -> int:
    """The index of the node leading the room's stream."""
    assert cluster.pki is not None

    async def leader() -> str:
        nc = await connect_nats(NatsSettings(cluster.servers, "floor", cluster.floor_password, ca=str(cluster.pki.ca)))
        try:
            info = await nc.jetstream(timeout=10).stream_info(STREAM)
            return info.cluster.leader
        finally:
            await nc.close()

    name = asyncio.run(leader())
    return next(i for i, n in enumerate(cluster.nodes) if n.name == name)


def stream_events(cluster: NatsCluster) -> dict[str, int]:
    """Event messages the room's stream holds per table (resends and redeliveries included)."""
    assert cluster.pki is not None

    async def count() -> dict[str, int]:
        nc = await connect_nats(NatsSettings(cluster.servers, "floor", cluster.floor_password, ca=str(cluster.pki.ca)))
        try:
            info = await nc.jetstream(timeout=10).stream_info(STREAM, subjects_filter="poker.*.event.>")
            out: dict[str, int] = {}
            for subject, n in (info.state.subjects or {}).items():
                out[subject.split(".")[1]] = out.get(subject.split(".")[1], 0) + n
            return out
        finally:
            await nc.close()

    return asyncio.run(count())


def check_exactly_once(db: str, table_id: str, published: list[tuple[str, bytes, float]]) -> int:
    """The floor holds every event the table published, once; one hand row per hand start."""
    want = event_keys(published)
    rows = floor_rows(db, "SELECT hand_id, seq, kind, sub FROM events WHERE table_id = ?", (table_id,))
    got = [(r["hand_id"], r["seq"], r["kind"], r["sub"]) for r in rows]
    assert len(got) == len(set(got))
    assert set(got) == want, f"{table_id}: missing {sorted(want - set(got))[:5]}, extra {sorted(set(got) - want)[:5]}"
    starts = sum(1 for k in want if k[2] == "hand_start")
    hands = floor_rows(db, "SELECT COUNT(*) AS n, COUNT(ended) AS e FROM hands WHERE table_id = ?", (table_id,))[0]
    assert hands["n"] == starts and hands["e"] == starts
    rulings = floor_rows(db, "SELECT COUNT(*) AS n FROM rulings WHERE table_id = ?", (table_id,))[0]["n"]
    assert rulings == sum(1 for k in want if k[2] == "ruling")
    return starts


def test_node_and_floor_killed_mid_session_nothing_lost_nothing_doubled(postgres: Postgres, tmp_path: Path) -> None:
    passwords = {t: secrets.token_urlsafe(10) for t in ("b1", "b2", "s1", "s2")}
    db = new_database(postgres)
    with NatsCluster(passwords) as cluster:
        floor = FloorProcess(cluster, db, tmp_path).start()
        tables: list = []  # stopped in `finally`, however far the start got
        try:
            for i, t in enumerate(("b1", "b2")):
                tables.append(BridgedTable(t, cluster, passwords[t], seed=i).start())
            for i, t in enumerate(("s1", "s2")):
                tables.append(LightTable(t, cluster, passwords[t], seed=10 + i).start())
            bridged, light = tables[:2], tables[2:]
            for t in tables:
                t.deal()
            time.sleep(4)
            # The node every table enters by (0) or the stream's leader: a message in flight between the
            # two when either dies is lost to the room (the MQTT acknowledgement comes before the stream
            # stored it), and the floor's end-to-end acknowledgement makes the table resend it.
            entry, leader = 0, stream_leader(cluster)
            victim = random.choice([entry, leader])
            print(f"killing node {victim} (entry node {entry}, stream leader {leader})")
            cluster.kill(victim)
            time.sleep(3)
            floor.kill()  # kill -9, mid-batch for all it knows
            time.sleep(3)
            floor.start()
            time.sleep(2)
            cluster.restart(victim)
            time.sleep(3)
            for t in tables:
                t.finish()
            total = {t.table_id: t.script.hand_starts for t in tables}
            assert all(n >= 5 for n in total.values()), total

            def settled() -> bool:
                rows = floor_rows(db, "SELECT table_id, COUNT(ended) AS n FROM hands GROUP BY table_id")
                return {r["table_id"]: r["n"] for r in rows} == total

            try:
                wait_for(settled, 60, "every hand on the floor")
            except TimeoutError:
                rows = floor_rows(db, "SELECT table_id, COUNT(*) AS n, COUNT(ended) AS e FROM hands GROUP BY table_id")
                raise AssertionError(f"published {total}, on the floor {rows}; floor log: "
                                     f"{floor.log.read_text()[-1500:]}") from None
            resenders = {t.table_id: t.ack.resender if t in bridged else t.link.resender for t in tables}
            # What the stream would lack without the resends: published + resent - held (bridge redeliveries
            # after a reconnect make this an underestimate), for the record (docs/scale.md).
            held = stream_events(cluster)
            sent = {t.table_id: t.script.events_published for t in tables}
            print("resent:", {k: r.resent for k, r in resenders.items()}, "published:", sent, "in the stream:", held,
                  "short by:", {k: sent[k] + resenders[k].resent - held.get(k, 0) for k in sent})
            assert all(r.reports > 0 for r in resenders.values()), "every table hears the floor's reports"
            for t in bridged:
                check_exactly_once(db, t.table_id, [m for m in t.truth.all() if "/event/" in m[0]])
            for t in light:
                check_exactly_once(db, t.table_id, [m for m in t.sent if "/event/" in m[0]])
        finally:
            for t in tables:
                t.stop()
            floor.stop()


def test_a_table_cut_off_for_60_s_keeps_dealing_and_catches_up(postgres: Postgres, tmp_path: Path) -> None:
    passwords = {"c1": secrets.token_urlsafe(10)}
    db = new_database(postgres)
    with NatsCluster(passwords) as cluster:
        net = NetCut(cluster.mqtt_addresses)
        floor = FloorProcess(cluster, db, tmp_path).start()
        table = BridgedTable("c1", cluster, passwords["c1"], addresses=net.addresses, pace=0.3).start()
        try:
            table.deal()
            wait_for(lambda: floor_rows(db, "SELECT COUNT(*) AS n FROM hands")[0]["n"] >= 1, 30, "a first hand")
            net.cut()
            cut_at = time.time()
            before = table.script.hand_starts
            time.sleep(60)
            restored_at = time.time()
            during = table.script.hand_starts - before
            assert during >= 3, "the table kept dealing while cut off"
            # Nothing from the cut reached the room while it lasted.
            late = floor_rows(db, "SELECT COUNT(*) AS n FROM events WHERE ts > ? AND ts < ?", (cut_at + 1, restored_at))
            assert late[0]["n"] == 0
            # The table's own display never stopped: its messages kept coming all along.
            shown = sorted(ts for topic, _, ts in table.display.all() if cut_at <= ts <= restored_at)
            gaps = [b - a for a, b in zip([cut_at, *shown], [*shown, restored_at], strict=True)]
            assert shown and max(gaps) < 10, max(gaps)
            net.restore()
            table.finish()
            starts = table.script.hand_starts
            wait_for(lambda: floor_rows(db, "SELECT COUNT(ended) AS n FROM hands")[0]["n"] == starts, 60,
                     "the cut-off hands on the floor")
            check_exactly_once(db, "c1", [m for m in table.truth.all() if "/event/" in m[0]])
        finally:
            table.stop()
            floor.stop()
            net.close()


def test_a_table_may_publish_only_as_itself(postgres: Postgres) -> None:
    passwords = {"p1": secrets.token_urlsafe(10), "p2": secrets.token_urlsafe(10)}
    with NatsCluster(passwords) as cluster:
        assert cluster.pki is not None
        host, port = cluster.mqtt_addresses[1]
        got: list[tuple[str, bytes]] = []

        async def watch(seconds: float) -> None:
            nc = await connect_nats(NatsSettings(cluster.servers, "floor", cluster.floor_password,
                                                 ca=str(cluster.pki.ca)))
            async def cb(m):
                got.append((m.subject, m.data))

            await nc.subscribe("poker.>", cb=cb)
            await nc.flush()
            await asyncio.sleep(seconds)
            await nc.close()

        def client(user: str, password: str, tls: bool = True) -> tuple[mqtt.Client, list]:
            results: list = []
            c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"x-{secrets.token_hex(3)}",
                            protocol=mqtt.MQTTv311)
            c.username_pw_set(user, password)
            if tls:
                c.tls_set(ca_certs=str(cluster.pki.ca), cert_reqs=ssl.CERT_REQUIRED)
            c.on_connect = lambda c_, u, f, rc, p=None: results.append(("connect", rc.is_failure))
            c.on_disconnect = lambda *a: results.append(("disconnect",))
            c.connect_async(host, port)
            c.loop_start()
            return c, results

        import threading

        watcher = threading.Thread(target=lambda: asyncio.run(watch(6)))
        watcher.start()
        time.sleep(1.5)
        me, events = client("table-p1", passwords["p1"])
        wait_for(lambda: ("connect", False) in events, 10, "p1 connected")
        forged = json.dumps({"schema": 1, "seq": 1, "ts": time.time(), "hand_id": 9, "kind": "burn", "count": 1})
        me.publish("poker/p1/event/burn", forged, qos=1).wait_for_publish(5)
        me.publish("poker/p2/event/burn", forged, qos=1)  # as another table: refused
        # Only the floor says what it stored: a table may not forge its own report.
        me.publish("poker/p1/floor/stored", b'{"table_id": "p1"}', qos=1)
        # ...and a table reads its own report only.
        subacks: list = []
        me.on_subscribe = lambda c, u, mid, codes, p=None: subacks.append([code.is_failure for code in codes])
        me.subscribe([("poker/p1/floor/stored", 0), ("poker/p2/floor/stored", 0)])
        wait_for(lambda: bool(subacks), 10, "the SUBACK")
        assert subacks == [[False, True]]
        # The floor's director (docs/room.md): a table reads the level, its own orders and its own level
        # request, no other table's; it may not ask a level of itself.
        me.subscribe([("floor/room/level", 0), ("floor/room/table/p1", 0), ("poker/p1/request/level", 0),
                      ("floor/room/table/p2", 0), ("poker/p2/request/level", 0), ("floor/room/#", 0)])
        wait_for(lambda: len(subacks) == 2, 10, "the second SUBACK")
        assert subacks[1] == [False, False, False, True, True, True]
        me.publish("poker/p1/request/level", b'{"number": 9}', qos=1)
        time.sleep(1)
        me.loop_stop()
        wrong, wrong_events = client("table-p2", "not-the-password")
        plain, plain_events = client("table-p2", passwords["p2"], tls=False)
        time.sleep(2)
        for c in (wrong, plain):
            c.loop_stop()
        watcher.join()
        subjects = [s for s, _ in got]
        assert "poker.p1.event.burn" in subjects
        assert "poker.p2.event.burn" not in subjects
        assert "poker.p1.floor.stored" not in subjects
        assert "poker.p1.request.level" not in subjects
        assert ("connect", False) not in wrong_events and ("connect", False) not in plain_events

        async def nats_login() -> None:
            import nats

            async def quiet(exc: Exception) -> None:
                pass

            settings = NatsSettings(cluster.servers[:1], "table-p1", passwords["p1"], ca=str(cluster.pki.ca))
            nc = await nats.connect(servers=settings.servers, user=settings.user, password=settings.password,
                                    tls=settings.tls(), allow_reconnect=False, max_reconnect_attempts=0,
                                    connect_timeout=2, error_cb=quiet)
            await nc.close()

        with pytest.raises(Exception, match="(?i)authorization"):
            asyncio.run(asyncio.wait_for(nats_login(), 10))


def test_no_hole_card_reaches_the_room_before_its_broadcast_delay(postgres: Postgres) -> None:
    delay = 1.5
    passwords = {"h1": secrets.token_urlsafe(10)}
    with NatsCluster(passwords) as cluster:
        assert cluster.pki is not None
        room: list[tuple[str, bytes, float]] = []

        async def watch(seconds: float) -> None:
            nc = await connect_nats(NatsSettings(cluster.servers, "floor", cluster.floor_password,
                                                 ca=str(cluster.pki.ca)))

            async def cb(m):
                room.append((m.subject, m.data, time.time()))

            await nc.subscribe("poker.>", cb=cb)
            await nc.flush()
            await asyncio.sleep(seconds)
            await nc.close()

        import threading

        watcher = threading.Thread(target=lambda: asyncio.run(watch(14)))
        watcher.start()
        time.sleep(1)
        table = BridgedTable("h1", cluster, passwords["h1"], pace=0.05, broadcast_delay=delay).start()
        try:
            table.deal()
            time.sleep(9)
            table.finish()
        finally:
            watcher.join()
            table.stop()
        local = table.truth.all()
        private = {}
        for topic, data, ts in local:
            if topic.endswith("/private/holecards"):
                # the daemon's own stamp of the moment it had the cards (never later than our
                # subscriber's arrival, which a loaded machine can delay past the delay itself)
                body = json.loads(data)
                private[body["seq"]] = min(ts, float(body["ts"]))
        assert private and table.script.hand_starts >= 3
        assert room, "the room heard the table"
        assert not any(".private." in s or s.endswith(".state") or ".request." in s for s, _, _ in room)
        public: dict[int, set[str]] = {}
        hand = None
        checked = 0
        for subject, data, arrived in room:
            if subject.endswith(".availability") or not data:
                continue
            p = json.loads(data)
            if ".broadcast." in subject:
                if subject.endswith(".holecards"):
                    assert arrived - private[p["seq"]] >= delay - 0.05, "a hole card left before its delay"
                    checked += 1
                continue
            if subject.endswith(".hand_start"):
                hand = p["hand_id"]
                public[hand] = set()
            seen = public.setdefault(p.get("hand_id", hand), set())
            if p.get("kind") == "card" and p.get("card"):
                seen.add(p["card"].split("@")[0])
            if p.get("kind") == "board":
                seen.update(c.split("@")[0] for c in p["cards"])
            if p.get("kind") == "hand_end" and p.get("shown"):
                seen.update(c.split("@")[0] for cards in p["shown"].values() for c in cards)
            tokens = set(CARD.findall(data.decode()))
            assert tokens <= seen, f"{subject} names {tokens - seen} before it is public"
        assert checked > 0
