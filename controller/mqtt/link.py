"""The daemon's MQTT connection: paho-mqtt v2 callbacks, MQTT v5, an outbox that loses nothing.

Design:

* The outbox is guarded by one lock.  :meth:`MqttLink.publish` hands a message to paho
  at once, on the caller's thread, when the broker is connected and nothing is queued
  ahead of it, and (plain TCP) writes it to the socket there too (a card's event must not
  wait for a thread hand-off; see :class:`InlineWriteClient`).  A small outbox
  thread does the rest: acknowledgements (in batches), reconnects, delayed messages.
  paho's callbacks (its network thread) never take our lock, they only post notes and
  acknowledged ids into queues, so holding it across ``client.publish`` cannot deadlock
  against paho's own mutexes.
* Every message waits in the outbox until the broker acknowledges it (QoS 1).  While the
  broker is away messages queue up; on reconnect the unacknowledged ones are sent again
  in order (at least once: payloads carry ``seq`` so a reader can drop repeats), and the
  latest retained message of every retained topic is republished.
* ``delivered_seq`` is the journal sequence up to which everything has been acknowledged;
  the daemon stores it so that after a restart it republishes what the broker never got.
* Messages may carry a release time (the broadcast delay): they stay in a heap until then.
* The will is ``offline`` on the availability topic; ``online`` is published retained on
  every connect.
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import queue
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

log = logging.getLogger("controller.mqtt")

ACK_BATCH = 0.05  # seconds between two looks at the broker's acknowledgements


@dataclass(frozen=True, slots=True)
class MqttSettings:
    url: str = "mqtt://127.0.0.1:1883"
    username: str | None = None
    password: str | None = None
    client_id: str = ""
    keepalive: int = 15
    ca_file: str | None = None
    certfile: str | None = None
    keyfile: str | None = None
    min_reconnect: float = 0.5
    max_reconnect: float = 10.0

    @property
    def host_port(self) -> tuple[str, int, bool]:
        u = urlparse(self.url)
        tls = u.scheme == "mqtts"
        return u.hostname or "127.0.0.1", u.port or (8883 if tls else 1883), tls


@dataclass(order=True)
class Message:
    release: float
    order: int
    topic: str = field(compare=False)
    payload: bytes = field(compare=False)
    qos: int = field(default=1, compare=False)
    retain: bool = field(default=False, compare=False)
    seq: int = field(default=0, compare=False)
    properties: Any = field(default=None, compare=False)


Request = tuple[str, bytes, str | None, bytes | None]  # name, payload, response topic, correlation data


class InlineWriteClient(mqtt.Client):
    """paho's client, whose socket may also be written by the thread that publishes.

    With ``loop_start`` paho writes on its network thread: a publish from another thread
    wakes that thread and waits for it to get the GIL, while the publishing thread is still
    busy (a quarter to half a millisecond on the path from a card to the dealer's display).
    Here every write goes through :meth:`loop_write` under one lock, paho's own thread
    included (paho 2.x writes only through ``self.loop_write()``, and the packet queue is
    popped inside it), so the publishing thread sends its packet at once and the two never
    interleave or reorder packets.

    Plain TCP only: an SSL socket must not be written on one thread while another reads it,
    so with TLS every write stays on paho's thread (:attr:`MqttLink.inline_write`).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._write_lock = threading.RLock()

    def loop_write(self) -> mqtt.MQTTErrorCode:
        with self._write_lock:
            return super().loop_write()


class MqttLink:
    """Publish with an outbox; deliver console requests to ``on_request``."""

    def __init__(
        self,
        settings: MqttSettings,
        availability_topic: str,
        request_filter: str | None = None,
        on_request: Callable[[str, bytes, str | None, bytes | None], None] | None = None,
        on_delivered: Callable[[int], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.availability_topic = availability_topic
        self.request_filter = request_filter
        self.on_request = on_request
        self.on_delivered = on_delivered
        self.clock = clock
        self._notes: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        # Acknowledged message ids, collected by paho's thread and taken in batches by the outbox
        # thread (every ACK_BATCH seconds): an acknowledgement is no one's hurry, and waking a
        # thread for each would compete with the next card for the CPU.
        self._acked: deque[int] = deque()
        self._lock = threading.Lock()
        self._order = itertools.count()
        self._pending: deque[Message] = deque()
        self._delayed: list[Message] = []
        self._inflight: dict[int, Message] = {}
        self._retained: dict[str, Message] = {}
        self._connected = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.connected_event = threading.Event()
        self.delivered_seq = 0
        self._max_seq = 0
        self.counters = {"published": 0, "acked": 0, "resent": 0, "connects": 0, "disconnects": 0}
        self.last_loop = time.monotonic()
        self.client = self._make_client()

    # ------------------------------------------------------------------ paho
    def _make_client(self) -> mqtt.Client:
        s = self.settings
        client = InlineWriteClient(callback_api_version=CallbackAPIVersion.VERSION2, client_id=s.client_id,
                                   protocol=mqtt.MQTTv5)
        if s.username:
            client.username_pw_set(s.username, s.password)
        host, port, tls = s.host_port
        self.inline_write = not tls
        if tls:
            client.tls_set(ca_certs=s.ca_file, certfile=s.certfile, keyfile=s.keyfile,
                           cert_reqs=ssl.CERT_REQUIRED)
        client.will_set(self.availability_topic, b"offline", qos=1, retain=True)
        client.reconnect_delay_set(min_delay=max(1, int(s.min_reconnect)), max_delay=max(1, int(s.max_reconnect)))
        client.max_inflight_messages_set(100)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        client.on_message = self._on_message
        return client

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            log.warning("mqtt connect refused: %s", reason_code)
            return
        if self.request_filter:
            client.subscribe(self.request_filter, qos=1)
        self._notes.put(("connected", None))

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        self._notes.put(("disconnected", str(reason_code)))

    def _on_publish(self, client, userdata, mid, reason_code, properties) -> None:
        self._acked.append(mid)

    def _on_message(self, client, userdata, message) -> None:
        if self.on_request is None:
            return
        props = getattr(message, "properties", None)
        response = getattr(props, "ResponseTopic", None) if props else None
        correlation = getattr(props, "CorrelationData", None) if props else None
        name = message.topic.rsplit("/", 1)[-1]
        try:
            self.on_request(name, bytes(message.payload), response, correlation)
        except Exception:  # a bad request must never kill paho's thread
            log.exception("request handler failed for %s", message.topic)

    # ------------------------------------------------------------------ public
    def start(self) -> MqttLink:
        host, port, _ = self.settings.host_port
        self.client.connect_async(host, port, keepalive=self.settings.keepalive)
        self.client.loop_start()
        self._thread = threading.Thread(target=self._run, name="mqtt-outbox", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 3.0) -> None:
        """Publish ``offline``, drain what can be drained, disconnect."""
        if self._thread is None:
            return
        self.publish(self.availability_topic, b"offline", retain=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._connected and (self._pending or self._inflight):
            time.sleep(0.02)
        self._stop.set()
        self._notes.put(("stop", None))
        self._thread.join(timeout)
        try:
            self.client.disconnect()
        finally:
            self.client.loop_stop()
        self._thread = None

    def publish(self, topic: str, payload: bytes | str | dict | None, *, qos: int = 1, retain: bool = False,
                seq: int = 0, delay: float = 0.0, properties: Any = None) -> None:
        """Queue a message; thread-safe.  ``payload`` None/b'' on a retained topic clears it."""
        if isinstance(payload, dict):
            data = json.dumps(payload, separators=(",", ":")).encode()
        elif isinstance(payload, str):
            data = payload.encode()
        else:
            data = payload or b""
        msg = Message(self.clock() + delay if delay else 0.0, next(self._order), topic, data, qos, retain, seq,
                      properties)
        if msg.release:
            with self._lock:
                heapq.heappush(self._delayed, msg)
            self._notes.put(("wake", None))  # the outbox thread's next timeout may be sooner now
            return
        with self._lock:
            self._enqueue(msg)
            if self._thread is not None:
                self._flush()
                delivered = self._advance_delivered()
            else:
                delivered = None
        self._report_delivered(delivered)

    def respond(self, response_topic: str, correlation: bytes | None, payload: dict) -> None:
        props = None
        if correlation is not None:
            props = Properties(PacketTypes.PUBLISH)
            props.CorrelationData = correlation
        self.publish(response_topic, payload, qos=1, properties=props)

    @property
    def connected(self) -> bool:
        return self._connected

    @property
    def backlog(self) -> int:
        return len(self._pending) + len(self._inflight)

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until everything queued so far is acknowledged (tests, shutdown)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._connected and not self._pending and not self._inflight and self._notes.empty():
                return True
            time.sleep(0.01)
        return False

    # ------------------------------------------------------------------ outbox thread
    def _run(self) -> None:
        while not self._stop.is_set():
            self.last_loop = time.monotonic()
            timeout = ACK_BATCH
            with self._lock:
                if self._delayed:
                    timeout = max(0.0, min(timeout, self._delayed[0].release - self.clock()))
            notes: list[tuple[str, Any]] = []
            try:
                notes.append(self._notes.get(timeout=timeout))
            except queue.Empty:
                pass
            # Drain whatever else arrived, to batch acknowledgements.
            while True:
                try:
                    notes.append(self._notes.get_nowait())
                except queue.Empty:
                    break
            with self._lock:
                while self._acked:
                    msg = self._inflight.pop(self._acked.popleft(), None)
                    if msg is not None:
                        self.counters["acked"] += 1
                for kind, value in notes:
                    self._handle(kind, value)
                self._release_due()
                self._flush()
                delivered = self._advance_delivered()
            self._report_delivered(delivered)

    def _handle(self, kind: str, value: Any) -> None:
        """One note from paho's callbacks (the lock is held)."""
        if kind == "connected":
            self._connected = True
            self.connected_event.set()
            self.counters["connects"] += 1
            self._requeue_inflight()
            # Republish every retained topic's latest value (retained state after an outage).
            queued = {id(m) for m in self._pending}
            online = Message(0.0, next(self._order), self.availability_topic, b"online", 1, True, 0)
            again = [m for m in self._retained.values() if id(m) not in queued and m.topic != self.availability_topic]
            self._pending.extendleft(reversed([online, *again]))
        elif kind == "disconnected":
            if self._connected:
                self.counters["disconnects"] += 1
                log.warning("mqtt disconnected: %s", value)
            self._connected = False
            self.connected_event.clear()
            self._requeue_inflight()

    def _enqueue(self, msg: Message) -> None:
        if msg.retain:
            self._retained[msg.topic] = msg
        self._max_seq = max(self._max_seq, msg.seq)
        self._pending.append(msg)

    def _release_due(self) -> None:
        now = self.clock()
        while self._delayed and self._delayed[0].release <= now:
            self._enqueue(heapq.heappop(self._delayed))

    def _requeue_inflight(self) -> None:
        if self._inflight:
            again = sorted(self._inflight.values(), key=lambda m: m.order)
            self.counters["resent"] += len(again)
            self._inflight.clear()
            self._pending.extendleft(reversed(again))

    def _flush(self) -> None:
        """Hand queued messages to paho, in order, and write them out on this thread when the
        connection allows it (:class:`InlineWriteClient`; the lock is held)."""
        handed = False
        while self._connected and self._pending:
            msg = self._pending[0]
            info = self.client.publish(msg.topic, msg.payload, qos=msg.qos, retain=msg.retain,
                                       properties=msg.properties)
            if info.rc != mqtt.MQTT_ERR_SUCCESS:
                if info.rc == mqtt.MQTT_ERR_NO_CONN:
                    self._connected = False
                break
            self._pending.popleft()
            handed = True
            self.counters["published"] += 1
            if msg.qos > 0:
                self._inflight[info.mid] = msg
        if handed and self.inline_write:
            self.client.loop_write()  # a failed write surfaces on paho's thread, which reconnects

    def _advance_delivered(self) -> int | None:
        """The new delivered cursor, if it moved (the lock is held)."""
        cursor = self._max_seq
        for waiting in (self._pending, self._inflight.values(), self._delayed):
            for m in waiting:
                if m.seq and m.seq - 1 < cursor:
                    cursor = m.seq - 1
        if cursor > self.delivered_seq:
            self.delivered_seq = cursor
            return cursor
        return None

    def _report_delivered(self, cursor: int | None) -> None:
        """Tell the daemon (outside the lock: it may write to disk)."""
        if cursor is not None and self.on_delivered is not None:
            try:
                self.on_delivered(cursor)
            except Exception:
                log.exception("on_delivered failed")
