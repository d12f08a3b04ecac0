"""The room's moving parts for the floor's tests and ``tablectl bench floor``: bridged tables (their
own Mosquitto, the daemon's publishing path, a display and a ground-truth recorder on it),
lightweight tables straight on the room, the floor service as its own process (so it can be
``kill -9``-ed), and the exactly-once check against what the tables published."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

from controller.app.floor_ack import FloorAck
from controller.floor.ingest import event_sub
from controller.floor.room import NatsCluster, table_broker
from controller.floor.sim import Dealer, RoomLink, TableScript
from controller.mqtt.broker import Broker, free_port
from controller.mqtt.contract import Topics
from controller.mqtt.link import MqttLink, MqttSettings
from controller.processes import stop_process

REPO = Path(__file__).resolve().parents[2]
CONF = (REPO / "systemd" / "mosquitto" / "poker-table.conf").read_text()
ACL = (REPO / "systemd" / "mosquitto" / "acl").read_text()


class Recorder:
    """A paho client on a table's own broker recording (topic, payload, arrival time)."""

    def __init__(self, broker: Broker, user: str, password: str, topics: list[str]) -> None:
        self.messages: list[tuple[str, bytes, float]] = []
        self.lock = threading.Lock()
        self.ready = threading.Event()
        self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"rec-{user}-{secrets.token_hex(3)}")
        self.c.username_pw_set(user, password)

        def on_connect(c, u, f, rc, p=None):
            c.subscribe([(t, 1) for t in topics])

        self.c.on_connect = on_connect
        self.c.on_subscribe = lambda *a: self.ready.set()
        self.c.on_message = self._on_message
        self.c.connect(broker.host, broker.port)
        self.c.loop_start()
        assert self.ready.wait(5), "recorder did not subscribe"

    def _on_message(self, c, u, m) -> None:
        with self.lock:
            self.messages.append((m.topic, bytes(m.payload), time.time()))

    def all(self) -> list[tuple[str, bytes, float]]:
        with self.lock:
            return list(self.messages)

    def close(self) -> None:
        self.c.disconnect()
        self.c.loop_stop()


def event_keys(messages: list[tuple[str, bytes, float]]) -> set[tuple[int, int, str, str]]:
    """(hand_id, seq, kind, sub) of every event a table published: what the floor must hold once."""
    keys = set()
    for topic, data, _ in messages:
        if "/event/" not in topic:
            continue
        p = json.loads(data)
        keys.add((int(p["hand_id"]), int(p["seq"]), p["kind"], event_sub(p["kind"], p)))
    return keys


class _Table:
    """What both kinds of table do: deal (in the dealer's thread), then finish and drain their link."""

    dealer: Dealer

    def deal(self) -> None:
        self.dealer.start()

    def finish(self) -> None:
        self.dealer.stop()
        self.dealer.join(10)
        self._drain()

    def _drain(self) -> None:
        raise NotImplementedError


@dataclass
class BridgedTable(_Table):
    """A table's own Mosquitto (shipped config and ACL) bridged to the room, the daemon's publishing
    path dealing on it, a display and a ground-truth recorder on the table's broker."""

    table_id: str
    cluster: NatsCluster
    room_password: str
    addresses: list[tuple[str, int]] | None = None
    pace: float = 0.05
    seed: int = 1
    broadcast_delay: float | str = "end_of_hand"
    users: dict[str, str] = field(default_factory=lambda: {u: secrets.token_urlsafe(8)
                                                           for u in ("controller", "display", "admin")})

    def start(self) -> BridgedTable:
        self.broker = table_broker(self.table_id, self.users, ACL, self.cluster, room_password=self.room_password,
                                   config_template=CONF, addresses=self.addresses)
        self.link = MqttLink(MqttSettings(url=self.broker.url, username="controller",
                                          password=self.users["controller"], client_id=f"ctl-{self.table_id}"),
                             availability_topic=Topics("poker", self.table_id).availability)
        self.link.start()
        assert self.link.connected_event.wait(5)
        # The daemon's half of the floor's end-to-end acknowledgement: resends what the floor lacks.
        self.ack = FloorAck(self.link, MqttSettings(url=self.broker.url, username="controller",
                                                    password=self.users["controller"],
                                                    client_id=f"ctl-{self.table_id}"),
                            Topics("poker", self.table_id).root).start()
        self.truth = Recorder(self.broker, "admin", self.users["admin"], [f"poker/{self.table_id}/#"])
        self.display = Recorder(self.broker, "display", self.users["display"], [f"poker/{self.table_id}/#"])
        self.script = TableScript(self.table_id, self.link, seed=self.seed, mistakes=0.2, on_event=self.ack.record,
                                  broadcast_delay=self.broadcast_delay)
        self.dealer = Dealer(self.script, pace=self.pace, gap=self.pace * 4)
        return self

    def _drain(self) -> None:
        assert self.link.wait_idle(10)

    def stop(self) -> None:
        self.dealer.stop()
        for r in (self.truth, self.display):
            r.close()
        self.ack.stop()
        self.link.stop()
        self.broker.stop()


@dataclass
class LightTable(_Table):
    """A lightweight table straight on the room's MQTT listeners (what a bridge would forward)."""

    table_id: str
    cluster: NatsCluster
    password: str
    pace: float = 0.05
    seed: int = 1

    def start(self) -> LightTable:
        assert self.cluster.pki is not None
        self.link = RoomLink(self.table_id, self.password, self.cluster.mqtt_addresses, self.cluster.pki.ca)
        assert self.link.connected.wait(10)
        self.link.online()
        self.sent: list[tuple[str, bytes, float]] = []
        link = self.link
        sent = self.sent

        class Tap:
            def publish(self, topic, payload, **kw):
                data = json.dumps(payload).encode() if isinstance(payload, dict) else (payload or b"")
                sent.append((topic, data, time.time()))
                link.publish(topic, payload, **kw)

        self.script = TableScript(self.table_id, Tap(), seed=self.seed, mistakes=0.2)
        self.dealer = Dealer(self.script, pace=self.pace, gap=self.pace * 4)
        return self

    def _drain(self) -> None:
        deadline = time.monotonic() + 30
        while self.link.pending > 0 and time.monotonic() < deadline:
            time.sleep(0.1)

    def stop(self) -> None:
        self.dealer.stop()
        self.link.stop()


class ChildProcess:
    """A process the rig started (``proc``): killed as a crash would (SIGKILL), or stopped (SIGTERM,
    then SIGKILL after 10 s)."""

    proc: subprocess.Popen | None = None

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc, 10)
            self.proc = None


class FloorProcess(ChildProcess):
    """``tablectl floor`` as its own process (so a test can ``kill -9`` it)."""

    def __init__(self, cluster: NatsCluster, db: str, folder: Path, http_port: int | None = None) -> None:
        assert cluster.pki is not None
        self.http_port = http_port or free_port()
        pw = folder / "floor.pass"
        pw.write_text(cluster.floor_password)
        self.args = [sys.executable, "-m", "controller.cli", "floor", "--nats", ",".join(cluster.servers),
                     "--nats-user", "floor", "--nats-password-file", str(pw), "--ca", str(cluster.pki.ca),
                     "--nats-mqtt", ",".join(f"{h}:{p}" for h, p in cluster.mqtt_addresses),
                     "--db", db, "--http-port", str(self.http_port)]
        self.log = folder / "floor.log"

    def start(self) -> FloorProcess:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.args, stdout=log, stderr=log)
        # Ready once its durable consumer is on the room's stream (which it creates on first start:
        # what the tables publish before the stream exists is not kept).
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/api/health", timeout=1) as r:
                    if json.load(r).get("connected"):
                        return self
            except OSError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"the floor did not start: {self.log.read_text()[-2000:]}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"


def floor_rows(store_url: str, sql: str, params: tuple = ()) -> list[dict[str, Any]]:
    from controller.floor.store import Store

    store = Store.open(store_url)
    try:
        return store.query(sql, params)
    finally:
        store.close()


def tally(db: str, table_id: str, published: list[tuple[str, bytes, float]]) -> dict[str, Any]:
    """What the floor holds of a table against what the table published: nothing lost, nothing doubled."""
    want = event_keys([m for m in published if "/event/" in m[0]])
    rows = floor_rows(db, "SELECT hand_id, seq, kind, sub FROM events WHERE table_id = ?", (table_id,))
    got = [(r["hand_id"], r["seq"], r["kind"], r["sub"]) for r in rows]
    hands = floor_rows(db, "SELECT COUNT(*) AS n FROM hands WHERE table_id = ?", (table_id,))[0]["n"]
    return {"published": len(want), "stored": len(got), "missing": len(want - set(got)),
            "extra": len(set(got) - want), "doubled": len(got) - len(set(got)),
            "hands_published": sum(1 for k in want if k[2] == "hand_start"), "hands_stored": int(hands),
            "missing_sample": sorted(want - set(got))[:3]}
