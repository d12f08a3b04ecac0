"""The floor's orders to a room's tables at QoS 1, through the NATS nodes' MQTT listeners.

A message published on core NATS reaches an MQTT subscriber at QoS 0 at most: NATS keeps nothing
for a table's bridge while it is away, and an order sent meanwhile is lost. Published by an MQTT
client at QoS 1, it is kept in the cluster's JetStream for each QoS 1 session that subscribed to it
(each table's bridge: ``cleansession false``, ``topic table/<table> in 1 floor/room/ floor/room/``),
and delivered when that bridge comes back (systemd/room/mosquitto-bridge.conf). Its id (the
director's ``<time>-<seq>-<i>``) lets the table carry it out once however often it arrives
(controller/app/floor_orders.py).

:class:`RoomOrders` is that client: the floor's NATS login, TLS with the room's CA, a persistent
session, and on a lost node the next node's listener. paho keeps what is published while it is
disconnected and sends it on reconnecting.
"""

from __future__ import annotations

import logging
import ssl
import threading
from typing import Any

from controller.floor.sources import NatsSettings

log = logging.getLogger("controller.floor.orders")


class RoomOrders:
    def __init__(self, settings: NatsSettings, client_id: str = "tablectl-floor-orders") -> None:
        import paho.mqtt.client as mqtt

        if not settings.mqtt:
            raise ValueError("the room's MQTT listeners are needed (NatsSettings.mqtt)")
        self.addresses = list(settings.mqtt)
        self._next = 0
        self.connected = threading.Event()
        self.published = 0
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=False,
                                  protocol=mqtt.MQTTv311)
        if settings.user:
            self.client.username_pw_set(settings.user, settings.password)
        if settings.ca:
            self.client.tls_set(ca_certs=settings.ca, certfile=settings.cert, keyfile=settings.key,
                                cert_reqs=ssl.CERT_REQUIRED)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_connect_fail = self._on_connect_fail
        self.client.reconnect_delay_set(0.2, 5)  # type: ignore[arg-type]  # paho takes float seconds

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any = None) -> None:
        if getattr(reason, "is_failure", False):
            log.error("floor orders: the room's MQTT listener refused the floor: %s", reason)
            return
        self.connected.set()

    def _on_disconnect(self, client: Any, *args: Any) -> None:
        """The node is lost: the next reconnect tries the next node's listener."""
        self.connected.clear()
        self._next = (self._next + 1) % len(self.addresses)
        host, port = self.addresses[self._next]
        try:
            client.host, client.port = host, port
        except RuntimeError:  # still closing: paho retries the same node, then this runs again
            pass

    def _on_connect_fail(self, client: Any, *args: Any) -> None:
        """A node down when (re)connecting: the next attempt goes to the next node's listener."""
        self._next = (self._next + 1) % len(self.addresses)
        client.connect_async(*self.addresses[self._next], keepalive=10)

    def start(self) -> RoomOrders:
        host, port = self.addresses[0]
        self.client.connect_async(host, port, keepalive=10)
        self.client.loop_start()
        return self

    def publish(self, topic: str, payload: bytes) -> None:
        """QoS 1: the cluster keeps it for every table's bridge subscribed, until that bridge has it."""
        self.client.publish(topic, payload, qos=1)
        self.published += 1

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
