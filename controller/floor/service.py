"""``tablectl floor``: the floor service (a source, the store, the page server).

One machine (the default): read the table(s)' Mosquitto directly, keep the room in SQLite::

    tablectl floor                                   # 127.0.0.1:1883, the state folder's floor.db, :8090

A room to look at (simulated tables; ``--room`` on a 3-node NATS cluster and PostgreSQL)::

    tablectl floor --demo [--room]

A room: a durable consumer on the JetStream cluster, PostgreSQL::

    tablectl floor --nats tls://n1:4222,tls://n2:4222,tls://n3:4222 --ca /etc/poker-room/ca.pem \\
        --nats-user floor --nats-password-file /etc/poker-room/floor.pass \\
        --db postgresql://floor@db/floor
"""

from __future__ import annotations

import argparse
import logging
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.floor.server import FloorApi, FloorServer
from controller.floor.sources import Ingestor, MqttSource, NatsSettings, NatsSource
from controller.floor.store import Store, redact

log = logging.getLogger("controller.floor")


@dataclass
class FloorService:
    """Store + one source + the page server; ``start()``/``stop()`` (also a context manager)."""

    db: str
    nats: NatsSettings | None = None
    mqtt: tuple[str, int] | None = None
    mqtt_user: str | None = None
    mqtt_password: str | None = None
    http_host: str = "127.0.0.1"
    http_port: int = 0
    base: str = "poker"
    client_id: str = "tablectl-floor"
    store: Store | None = None
    ingestor: Ingestor | None = None
    source: Any = None
    server: FloorServer | None = None
    read_store: Store | None = None
    _stopped: threading.Event = field(default_factory=threading.Event)

    def start(self) -> FloorService:
        self.store = Store.open(self.db)
        # The page's queries get their own connection: a long report never holds up ingestion.
        self.read_store = Store.open(self.db)
        self.ingestor = Ingestor(self.store, base=self.base)
        if self.nats is not None:
            self.source = NatsSource(self.ingestor, self.nats).start()
        else:
            host, port = self.mqtt or ("127.0.0.1", 1883)
            self.source = MqttSource(self.ingestor, host, port, username=self.mqtt_user,
                                     password=self.mqtt_password, client_id=self.client_id, base=self.base).start()
        self.server = FloorServer(FloorApi(self.read_store, self.ingestor, self.source), self.ingestor.hub,
                                  self.http_host,
                                  self.http_port)
        return self

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url + "/floor/"

    @property
    def api(self) -> FloorApi:
        assert self.read_store is not None
        return FloorApi(self.read_store, self.ingestor)

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
        if self.source is not None:
            self.source.stop()
        for s in (self.store, self.read_store):
            if s is not None:
                s.close()
        self._stopped.set()

    def __enter__(self) -> FloorService:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _read(path: str | None) -> str | None:
    return Path(path).read_text().strip() if path else None


def add_parser(sub: Any) -> None:
    """``tablectl floor``'s arguments (cli.py wires this in)."""
    p = sub.add_parser("floor", help="the floor service: every table's hands, alerts and dealers in one page")
    p.add_argument("--db", default=None, help="sqlite:///path.db or postgresql://... (default: the state "
                   "folder's floor.db)")
    p.add_argument("--mqtt", default="127.0.0.1:1883", help="one machine: the Mosquitto to read (host:port)")
    p.add_argument("--mqtt-user", default=None)
    p.add_argument("--mqtt-password-file", default=None)
    p.add_argument("--nats", default=None, help="a room: NATS servers, comma-separated (tls://host:4222,...)")
    p.add_argument("--nats-user", default=None)
    p.add_argument("--nats-password-file", default=None)
    p.add_argument("--ca", default=None, help="the room's CA certificate (TLS to NATS)")
    p.add_argument("--cert", default=None, help="client certificate (if the cluster asks for one)")
    p.add_argument("--key", default=None)
    p.add_argument("--replicas", type=int, default=3, help="the stream's replicas (the cluster's size)")
    p.add_argument("--base", default="poker", help="the tables' base topic")
    p.add_argument("--http-host", default="127.0.0.1")
    p.add_argument("--http-port", type=int, default=8090)
    p.add_argument("--demo", action="store_true", help="a room to look at: simulated tables and their floor")
    p.add_argument("--room", action="store_true", help="--demo: on a 3-node NATS cluster and PostgreSQL")
    p.add_argument("--tables", type=int, default=4, help="--demo: how many tables")
    p.set_defaults(func=cmd_floor)


def cmd_floor(args: argparse.Namespace) -> int:
    from controller.logs import setup_logging

    setup_logging("auto")
    if args.demo:
        from controller.floor.demo import run_demo

        return run_demo(tables=args.tables, room=args.room, http_port=args.http_port)
    if args.db is None:
        from controller.paths import state_dir

        args.db = "sqlite:///" + str(state_dir() / "floor.db")
    nats = None
    if args.nats:
        nats = NatsSettings(servers=args.nats.split(","), user=args.nats_user,
                            password=_read(args.nats_password_file), ca=args.ca, cert=args.cert, key=args.key,
                            replicas=args.replicas, base=args.base)
    host, _, port = args.mqtt.rpartition(":")
    svc = FloorService(db=args.db, nats=nats, mqtt=(host or "127.0.0.1", int(port)), mqtt_user=args.mqtt_user,
                       mqtt_password=_read(args.mqtt_password_file), http_host=args.http_host,
                       http_port=args.http_port, base=args.base).start()
    print(f"floor: {svc.url}  (store {redact(args.db)}, reading "
          f"{'NATS ' + args.nats if nats else 'MQTT ' + args.mqtt})", flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    svc.stop()
    return 0
