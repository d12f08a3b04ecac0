"""``tablectl floor``'s command line: the floor service (:mod:`.service`) or a demo room (:mod:`.demo`)."""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path
from typing import Any

from controller.extras import require
from controller.floor.service import FloorService
from controller.floor.sources import NatsSettings
from controller.floor.store import redact


def _read(path: str | None) -> str | None:
    return Path(path).read_text().strip() if path else None


def add_parser(sub: Any) -> None:
    """``tablectl floor``'s arguments (cli.py wires this in)."""
    p = sub.add_parser("floor", help="the floor service: every table's hands, alerts and dealers in one page")
    p.add_argument("--db", default=None, help="sqlite:///path.db or postgresql://... (default: the state "
                   "folder's floor.db)")
    p.add_argument("--mqtt", default="127.0.0.1:1883", help="one machine: the Mosquitto to read (host:port)")
    p.add_argument("--mqtt-user", default=None, help="one machine: the broker login (the ACL's `floor` user)")
    p.add_argument("--mqtt-password-file", default=None, help="one machine: a file holding that login's password")
    p.add_argument("--nats", default=None, help="a room: NATS servers, comma-separated (tls://host:4222,...)")
    p.add_argument("--nats-user", default=None, help="a room: the floor's NATS user")
    p.add_argument("--nats-password-file", default=None, help="a room: a file holding that user's password")
    p.add_argument("--nats-mqtt", default=None, help="a room: the nodes' MQTT listeners, comma-separated "
                   "(host:8883,...): the floor's orders to the tables go there at QoS 1")
    p.add_argument("--ca", default=None, help="the room's CA certificate (TLS to NATS)")
    p.add_argument("--cert", default=None, help="client certificate (if the cluster asks for one)")
    p.add_argument("--key", default=None, help="the client certificate's private key")
    p.add_argument("--replicas", type=int, default=3, help="the stream's replicas (the cluster's size)")
    p.add_argument("--base", default="poker", help="the tables' base topic")
    p.add_argument("--http-host", default="127.0.0.1", help="where the floor page listens")
    p.add_argument("--http-port", type=int, default=8090, help="the floor page's port")
    p.add_argument("--demo", action="store_true", help="a room to look at: simulated tables and their floor")
    p.add_argument("--room", action="store_true", help="--demo: on a 3-node NATS cluster and PostgreSQL")
    p.add_argument("--tables", type=int, default=4, help="--demo: how many tables")
    p.set_defaults(func=cmd_floor)


def cmd_floor(args: argparse.Namespace) -> int:
    from controller.app.logs import setup_logging

    setup_logging("auto")
    if args.room or args.nats:
        require("nats", "room", "tablectl floor with NATS")
    if args.room or (args.db or "").startswith("postgres"):
        require("psycopg", "room", "tablectl floor with PostgreSQL")
    if args.demo:
        from controller.floor.demo import run_demo

        return run_demo(tables=args.tables, room=args.room, http_port=args.http_port)
    if args.db is None:
        from controller.app.paths import state_dir

        args.db = "sqlite:///" + str(state_dir() / "floor.db")
    nats = None
    if args.nats:
        nats = NatsSettings(servers=args.nats.split(","), user=args.nats_user,
                            password=_read(args.nats_password_file), ca=args.ca, cert=args.cert, key=args.key,
                            replicas=args.replicas, base=args.base,
                            mqtt=[(h, int(p)) for h, _, p in (a.rpartition(":") for a in
                                                               (args.nats_mqtt or "").split(",") if a)])
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
