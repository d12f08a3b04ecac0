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

import json
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from controller.floor.director import Director
from controller.floor.orders import RoomOrders
from controller.floor.server import FloorApi, FloorServer
from controller.floor.sources import Ingestor, MqttSource, NatsSettings, NatsSource
from controller.floor.store import Store

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
    director: Director | None = None
    #: a room's orders to its tables at QoS 1 (when the nodes' MQTT listeners are known)
    orders: RoomOrders | None = None
    _stopped: threading.Event = field(default_factory=threading.Event)

    def start(self) -> FloorService:
        self.store = Store.open(self.db)
        # The page's queries get their own connection: a long report never holds up ingestion.
        self.read_store = Store.open(self.db)
        self.ingestor = Ingestor(self.store, base=self.base)
        # The director first: a tournament table's first hand_start already finds it listening.
        self.director = Director(self.store, self._announce, base=self.base).restore()
        self.ingestor.observers.append(self.director.observe)
        if self.nats is not None:
            if self.nats.mqtt:
                self.orders = RoomOrders(self.nats).start()
            self.source = NatsSource(self.ingestor, self.nats).start()
        else:
            host, port = self.mqtt or ("127.0.0.1", 1883)
            self.source = MqttSource(self.ingestor, host, port, username=self.mqtt_user,
                                     password=self.mqtt_password, client_id=self.client_id, base=self.base).start()
        self.server = FloorServer(FloorApi(self.read_store, self.ingestor, self.source, self.director),
                                  self.ingestor.hub, self.http_host, self.http_port)
        threading.Thread(target=self._tick, name="floor-clock", daemon=True).start()
        return self

    def _tick(self) -> None:
        """The tournament clock's heartbeat: a new level reaches the tables within a second."""
        while not self._stopped.wait(1.0):
            if self.director is not None:
                try:
                    self.director.tick()
                except Exception:  # a publish during a broker outage: the next second tries again
                    log.exception("floor clock tick")

    def _announce(self, topic: str, payload: dict[str, Any]) -> None:
        """A director's decision: to the floor page's live stream, and to the tables over MQTT."""
        assert self.ingestor is not None
        self.ingestor.hub.publish({"type": "room", "topic": topic, "decision": payload})
        if isinstance(self.source, NatsSource):  # a room: through NATS, to each table's bridge
            if self.orders is not None and topic.startswith("floor/room/table/"):
                self.orders.publish(topic, json.dumps(payload).encode())  # QoS 1: kept for a bridge away
            else:
                self.source.publish(topic, json.dumps(payload).encode())
            return
        client = getattr(self.source, "client", None)
        if client is not None:  # one machine: the tables' own Mosquitto
            # the level is retained: a display that starts later shows it at once
            client.publish(topic, json.dumps(payload), qos=1, retain=topic == "floor/room/level")

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url + "/floor/"

    @property
    def api(self) -> FloorApi:
        assert self.read_store is not None
        return FloorApi(self.read_store, self.ingestor)

    def stop(self) -> None:
        for part in (self.server, self.source, self.orders):
            if part is not None:
                part.stop()
        for s in (self.store, self.read_store):
            if s is not None:
                s.close()
        self._stopped.set()

    def __enter__(self) -> FloorService:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
