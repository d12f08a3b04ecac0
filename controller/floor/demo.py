"""``tablectl floor --demo``: a room to look at, on one machine.

* default: one Mosquitto (the shipped config and ACL), a few simulated tables dealing on it, the
  floor reading it straight into SQLite (the one-machine room);
* ``--room``: the room's tier on loopback, as :mod:`controller.floor.room` runs it for the tests:
  a 3-node NATS JetStream cluster over TLS, PostgreSQL, each table with its own Mosquitto bridged
  to the cluster, the floor as a durable JetStream consumer.

The tables are :class:`~controller.floor.sim.TableScript` dealers (the daemon's service and
publisher, dealer_sim's hands with the occasional mistake); Ctrl-C stops everything.
"""

from __future__ import annotations

import secrets
import signal
import tempfile
import threading
from pathlib import Path
from typing import Any

from controller.floor.rig import ACL, CONF, BridgedTable
from controller.floor.service import FloorService
from controller.floor.sim import Dealer, TableScript
from controller.floor.sources import NatsSettings
from controller.mqtt.broker import Broker
from controller.mqtt.contract import Topics
from controller.mqtt.link import MqttLink, MqttSettings


def run_demo(*, tables: int = 4, room: bool = False, http_port: int = 8090, pace: float = 1.0,
             out: Any = print) -> int:
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    stack: list[Any] = []
    try:
        ids = [f"t{i}" for i in range(1, tables + 1)]
        if room:
            from controller.floor.room import NatsCluster, Postgres

            out("starting PostgreSQL and a 3-node NATS JetStream cluster on loopback ...")
            pg = Postgres().start()
            stack.append(pg)
            passwords = {t: secrets.token_urlsafe(10) for t in ids}
            cluster = NatsCluster(passwords).start()
            stack.append(cluster)
            assert cluster.pki is not None
            floor = FloorService(db=pg.url, http_port=http_port, nats=NatsSettings(
                cluster.servers, "floor", cluster.floor_password, ca=str(cluster.pki.ca))).start()
            stack.append(floor)
            floor.source.connected.wait(30)
            for i, t in enumerate(ids):
                rig = BridgedTable(t, cluster, passwords[t], pace=pace, seed=i).start()
                stack.append(rig)
                rig.deal()
            out(f"cluster     {', '.join(cluster.servers)}  (MQTT for the bridges: "
                f"{', '.join(f'{h}:{p}' for h, p in cluster.mqtt_addresses)})")
            out(f"database    {pg.url}")
        else:
            users = {"controller": secrets.token_urlsafe(9), "floor": secrets.token_urlsafe(9)}
            broker = Broker.start(users=users, acl_text=ACL, config_template=CONF)
            stack.append(broker)
            db = Path(tempfile.mkdtemp(prefix="tablectl-floor-")) / "floor.db"
            floor = FloorService(db=f"sqlite:///{db}", mqtt=(broker.host, broker.port), mqtt_user="floor",
                                 mqtt_password=users["floor"], http_port=http_port).start()
            stack.append(floor)
            for i, t in enumerate(ids):
                link = MqttLink(MqttSettings(url=broker.url, username="controller", password=users["controller"],
                                             client_id=f"demo-{t}"), availability_topic=Topics("poker", t).availability)
                link.start()
                stack.append(link)
                dealer = Dealer(TableScript(t, link, seed=i), pace=pace, gap=pace * 4).start()
                stack.append(dealer)
            out(f"broker      {broker.url}  (the floor reads it as 'floor')")
            out(f"database    {db}")
        out(f"floor page  {floor.url}")
        out(f"tables      {', '.join(ids)} (simulated dealers, the occasional mistake). Ctrl-C stops.")
        done.wait()
    except KeyboardInterrupt:
        pass
    finally:
        for thing in reversed(stack):
            try:
                thing.stop()
            except Exception:  # stopping the rest matters more
                pass
    return 0
