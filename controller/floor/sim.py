"""Simulated tables for the floor's tests and benchmark, speaking the table's own contract.

A :class:`TableScript` is a dealer at a table: random legal hands from
:mod:`controller.sim.dealer` (a share of them with one dealer mistake, so there are misdeals
and irregularities to rule on), fed through the daemon's own :class:`TableService` and
:class:`Publisher`, with dealers signing in and rotating.  What it publishes is exactly what a
daemon publishes; where it goes depends on the link:

* a full table: the daemon's :class:`~controller.mqtt.link.MqttLink` to the table's own
  Mosquitto, bridged to the room by Mosquitto (``systemd/room/mosquitto-bridge.conf``);
* a lightweight table (:class:`RoomLink`): straight to a NATS node's MQTT listener with the
  table's credentials, only the topics the bridge would forward (:data:`BRIDGED`), QoS 1 in a
  persistent session, failing over to the next node when one is lost; it reads the floor's
  ``floor/stored`` reports itself and resends what the floor lacks of the events the room
  acknowledged (:class:`~controller.mqtt.resend.Resender`), as a full table's
  :class:`~controller.app.floor_ack.FloorAck` does.
"""

from __future__ import annotations

import json
import random
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.app.publisher import END_OF_HAND, Publisher
from controller.mqtt.contract import Topics
from controller.mqtt.resend import STORED_TOPIC, Resender
from controller.rules.events import DealerSignIn, Event, StartHand
from controller.rules.table import Table
from controller.service import EVENT_OUTPUTS, OutputKind, Rejected, TableService

#: What a table's bridge forwards to the room (``topic ... out 1`` lines of
#: ``systemd/room/mosquitto-bridge.conf``; a test keeps the two in step).
BRIDGED = ("availability", "event/#", "alert", "alert/active", "broadcast/hand_end", "broadcast/holecards",
           "diagnostics")
#: Service outputs that become one ``event/<kind>`` message each (an alert becomes ``event/ruling``).
PUBLISHED_EVENTS = frozenset(EVENT_OUTPUTS) | {OutputKind.CARD, OutputKind.ALERT}
DEALERS = ("Ana", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana")


def bridged(path: str) -> bool:
    """Does the bridge forward this topic (below ``<base>/<table>/``)?"""
    for pattern in BRIDGED:
        if pattern.endswith("/#") and (path == pattern[:-2] or path.startswith(pattern[:-1])):
            return True
        if path == pattern:
            return True
    return False


class TableScript:
    """A dealer's session at one table, event by event (see the module's docstring)."""

    def __init__(self, table_id: str, link: Any, *, seed: int = 0, mistakes: float = 0.15, base: str = "poker",
                 dealers: Sequence[str] = DEALERS, rotate_every: int = 12, clock: Callable[[], float] = time.time,
                 broadcast_delay: float | str = END_OF_HAND,
                 on_event: Callable[[str, dict[str, Any]], None] | None = None):
        self.table_id = table_id
        self.rng = random.Random(seed)
        self.mistakes = mistakes
        self.dealers = list(dealers)
        self.rotate_every = rotate_every
        self.service = TableService(Table(size=10), clock=clock)
        self.topics = Topics(base, table_id)
        self.publisher = Publisher(link, self.topics, table_id, broadcast_delay=broadcast_delay, clock=clock,
                                   live_equity=False, on_event=on_event)
        self.hands = 0
        self.hand_starts = 0
        self.rulings = 0
        self.events = 0
        self.events_published = 0  # event/<kind> messages sent (what the floor stores, once each)

    def submit(self, event: Event) -> bool:
        try:
            outputs = self.service.submit(event, source="sim")
        except Rejected:
            return False
        self.events += 1
        self.hand_starts += sum(1 for o in outputs if o.kind == OutputKind.HAND_START)
        self.rulings += sum(1 for o in outputs if o.kind == OutputKind.ALERT)
        self.events_published += sum(1 for o in outputs if o.kind in PUBLISHED_EVENTS)
        self.publisher.publish(outputs, self.service)
        return True

    def steps(self) -> Iterator[Event]:
        """The next hand's events (a sign-in first when the dealers rotate)."""
        from controller.rules.scenario import Scenario
        from controller.sim import dealer as dealer_sim

        if self.hands % self.rotate_every == 0:
            yield DealerSignIn(self.rng.choice(self.dealers), badge=f"{self.rng.getrandbits(32):08x}", source="nfc")
        self.hands += 1
        while True:
            hand = dealer_sim.legal_hand(self.rng, game=self.rng.choice(("holdem", "holdem", "omaha", "stud")))
            if self.rng.random() < self.mistakes:
                hand = dealer_sim.corrupt(self.rng, hand) or hand
            try:
                scenario = Scenario.from_dict(hand)
            except Exception:  # a corruption the scenario loader refuses: deal another
                continue
            break
        yield StartHand(scenario.setup)
        yield from scenario.events
        if self.service.engine is not None and not self.service.engine.over:
            from controller.rules.events import EndHand

            yield EndHand()


class RoomLink:
    """A lightweight table's link: the bridged topics, straight to the room's MQTT listeners."""

    def __init__(self, table_id: str, password: str, addresses: Sequence[tuple[str, int]], ca: str | Path | None,
                 base: str = "poker", username: str | None = None, grace: float = 5.0) -> None:
        import paho.mqtt.client as mqtt

        self.table_id = table_id
        self.prefix = f"{base}/{table_id}/"
        self.resender = Resender(self._resend, grace=grace)
        self._unacked: dict[int, tuple[str, bytes | str]] = {}
        self._lock = threading.Lock()
        self.addresses = list(addresses)
        self._i = 0
        self.connected = threading.Event()
        self.published = 0
        self.acked = 0
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"table-{table_id}",
                                  clean_session=False, protocol=mqtt.MQTTv311)
        self.client.username_pw_set(username or f"table-{table_id}", password)
        if ca:
            self.client.tls_set(ca_certs=str(ca), cert_reqs=ssl.CERT_REQUIRED)
        self.client.max_queued_messages_set(0)
        self.client.max_inflight_messages_set(100)
        self.client.reconnect_delay_set(0.25, 2)  # type: ignore[arg-type]  # paho takes float seconds
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_report
        self.client.on_disconnect = self._on_disconnect
        self.client.on_publish = self._on_publish
        self.client.will_set(self.prefix + "availability", "offline", qos=1, retain=True)
        host, port = self.addresses[0]
        self.client.connect_async(host, port, keepalive=10)
        self.client.loop_start()

    def _on_report(self, client: Any, userdata: Any, msg: Any) -> None:
        self.resender.on_report(bytes(msg.payload), self.table_id)

    def _on_connect(self, client: Any, userdata: Any, flags: Any, rc: Any, properties: Any = None) -> None:
        if rc.is_failure:
            return
        client.subscribe(self.prefix + STORED_TOPIC, qos=0)  # QoS 1 would need $MQTT.sub.> rights
        self.connected.set()

    def _resend(self, topic: str, data: bytes) -> None:
        self.client.publish(topic, data, qos=1)
        self.published += 1

    def _on_publish(self, client: Any, userdata: Any, mid: int, *args: Any) -> None:
        self.acked += 1
        with self._lock:
            msg = self._unacked.pop(mid, None)
        if msg is not None:
            self.resender.record(*msg)

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, rc: Any, properties: Any = None) -> None:
        self.connected.clear()
        # The next node: a lost node's clients move on (their session lives in the cluster).
        self._i = (self._i + 1) % len(self.addresses)
        host, port = self.addresses[self._i]
        client._host, client._port = host, port  # noqa: SLF001 - paho keeps the address it reconnects to here

    def publish(self, topic: str, payload: bytes | str | dict | None, *, qos: int = 1, retain: bool = False,
                seq: int = 0, delay: float = 0.0, properties: Any = None) -> None:
        if not topic.startswith(self.prefix) or not bridged(topic[len(self.prefix):]):
            return
        if isinstance(payload, dict):
            payload = json.dumps(payload, separators=(",", ":"))
        info = self.client.publish(topic, payload or b"", qos=1, retain=retain)
        self.published += 1
        if "/event/" in topic:
            with self._lock:  # kept once the room acknowledged it: only then can the room lose it
                self._unacked[info.mid] = (topic, payload or b"")

    def online(self) -> None:
        self.client.publish(self.prefix + "availability", "online", qos=1, retain=True)
        self.published += 1

    @property
    def pending(self) -> int:
        return self.published - self.acked

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@dataclass
class Dealer:
    """Runs a :class:`TableScript` in a thread at a pace: ``pace`` seconds between moves (jittered),
    ``gap`` between hands; stops after ``hands`` hands or on :meth:`stop`."""

    script: TableScript
    pace: float = 1.0
    gap: float = 3.0
    hands: int = 0
    on_event: Callable[[TableScript], None] | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> Dealer:
        self._thread = threading.Thread(target=self._run, name=f"dealer-{self.script.table_id}", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        rng = random.Random(self.script.table_id)
        self._stop.wait(rng.uniform(0, self.gap))  # the tables do not start in step
        while not self._stop.is_set() and (not self.hands or self.script.hands < self.hands):
            for event in self.script.steps():
                if self._stop.wait(self.pace * rng.uniform(0.5, 1.5)):
                    break
                self.script.submit(event)
                if self.on_event:
                    self.on_event(self.script)
            else:
                self._stop.wait(self.gap)
                continue
            break
        # A hand cut off by stop() is closed, as a dealer would push the pot.
        engine = self.script.service.engine
        if engine is not None and not engine.over:
            from controller.rules.events import EndHand

            self.script.submit(EndHand())

    def stop(self) -> None:
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def done(self) -> bool:
        return self._thread is not None and not self._thread.is_alive()
