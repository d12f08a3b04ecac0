"""The table's half of the end-to-end acknowledgement with a room's floor (docs/scale.md).

:class:`FloorAck` is the publisher's collaborator on a table in a room (a ``[room]`` section in its
config): the publisher tells it each ``event/<kind>`` message it sent (:meth:`FloorAck.record`), which a
:class:`~controller.mqtt.resend.Resender` keeps.  A small MQTT client of its own (the controller's login,
its own client id) reads ``floor/<table>/stored``, where the table's Mosquitto bridge puts the room's
``<base>/<table>/floor/stored`` (the controller may read it, no local login may write it); what the
floor lacks is published again on ``<base>/<table>/resend/event/<kind>``, a topic no display reads
and that the bridge forwards to the room as ``event/<kind>``.  The floor's store is idempotent, so a
resend of something it had after all changes nothing.

A table in no room runs no FloorAck (no second MQTT connection, nothing kept); in a room whose
floor is away the messages it keeps meanwhile are bounded (:attr:`Resender.limit`).
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

from controller.mqtt.link import MqttSettings, subscriber
from controller.mqtt.resend import Resender, local_stored_topic

log = logging.getLogger("controller.floor_ack")


class FloorAck:
    """What a table in a room keeps of its events, the floor's report subscriber, and the resends.

    ``link`` is the table's own :class:`~controller.mqtt.link.MqttLink` (resends go out on it)."""

    def __init__(self, link: Any, settings: MqttSettings, root: str, *, grace: float = 5.0) -> None:
        self.link = link
        self.root = root  # <base>/<table>
        self.table_id = root.rsplit("/", 1)[-1]
        self.resender = Resender(self._resend, grace=grace)
        self.settings = settings
        self.client: Any = None

    # ------------------------------------------------------------------ the publisher's side
    def record(self, topic: str, payload: Any) -> None:
        """The publisher sent ``payload`` on ``topic`` (now, not delayed): keep it if it is one of the
        table's events."""
        if topic.startswith(self.root + "/event/"):
            self.resender.record(topic, payload)

    def _resend(self, topic: str, payload: bytes) -> None:
        suffix = topic[len(self.root) + 1:]
        self.link.publish(f"{self.root}/resend/{suffix}", payload, qos=1)

    # ------------------------------------------------------------------ the report's subscriber
    def start(self) -> FloorAck:
        client = subscriber(self.settings, f"floor-ack-{self.table_id}-{secrets.token_hex(3)}",
                            local_stored_topic(self.table_id), self._on_message)
        client.loop_start()
        self.client = client
        return self

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        try:
            n = self.resender.on_report(bytes(message.payload), self.table_id)
        except Exception:  # a report must never stop the subscriber
            log.exception("floor report not understood")
            return
        if n:
            log.info("resending what the floor lacks", extra={"messages": n})

    def stop(self) -> None:
        if self.client is not None:
            self.client.disconnect()
            self.client.loop_stop()
            self.client = None
