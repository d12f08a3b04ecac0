"""Where the floor's messages come from: one Mosquitto, or the room's JetStream cluster.

Both acknowledge a message only after its rows are committed (at-least-once), and the
store is idempotent (exactly-once rows):

* :class:`MqttSource` (the one-machine default): a persistent MQTT session (clean session
  off, QoS 1) on the table's Mosquitto, so the broker queues what arrives while the floor
  is down; paho acknowledges a QoS 1 message when ``on_message`` returns, after the commit.
* :class:`NatsSource` (a room): a durable JetStream pull consumer (``nats-py``) on the
  room's stream; each fetched batch is one transaction, then acknowledged (ack-all).
  The consumer's position lives in the cluster (replicated like the stream), so a floor
  restart or a node's loss resumes where the last acknowledgement left off.  It also tells
  each table what the store holds (``<base>.<table>.floor.stored``, :mod:`.stored`), so the
  table resends what a dying node lost before the stream stored it.

  Each table's ``diagnostics`` (its readers' health, retained on the table's Mosquitto) has a
  stream of its own that keeps only the latest message per table (``max_msgs_per_subject`` 1,
  replicated like the room's stream): the floor reads it with an ephemeral consumer that starts
  at each table's latest, so a floor that starts or reconnects shows every table's readers at
  once, as a retained topic does on one machine.  It is a reading, not a record: no rows.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from controller.floor.ingest import FLOOR_TOPICS, Counters, Parsed, live_notes, parse, readers_summary, rows_for
from controller.floor.store import Store
from controller.floor.stored import StoredTracker

log = logging.getLogger("controller.floor")

STREAM = "POKER"
DURABLE = "floor"
#: The tables' latest ``diagnostics``, one message per table.
DIAGNOSTICS_STREAM = "POKER_DIAGNOSTICS"


def stream_subjects(base: str = "poker") -> list[str]:
    """The room stream's subjects: what the bridges forward, as NATS names them."""
    b = base.replace("/", ".")
    return [f"{b}.*.event.>", f"{b}.*.availability", f"{b}.*.broadcast.holecards"]


def diagnostics_subject(base: str = "poker") -> str:
    """The tables' ``diagnostics`` as the bridges forward it (its own stream: the latest per table)."""
    return f"{base.replace('/', '.')}.*.diagnostics"


class Hub:
    """Fan-out of live notes to the floor page's server-sent-event streams."""

    def __init__(self) -> None:
        self._subs: list[queue.Queue[dict[str, Any]]] = []
        self._lock = threading.Lock()

    def subscribe(self) -> queue.Queue[dict[str, Any]]:
        q: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=1000)
        with self._lock:
            self._subs.append(q)
        return q

    def unsubscribe(self, q: queue.Queue[dict[str, Any]]) -> None:
        with self._lock:
            if q in self._subs:
                self._subs.remove(q)

    def publish(self, note: dict[str, Any]) -> None:
        with self._lock:
            subs = list(self._subs)
        for q in subs:
            try:
                q.put_nowait(note)
            except queue.Full:  # a stalled page: it reloads what it missed from the API
                pass


@dataclass
class Ingestor:
    """Messages -> rows (one transaction per batch) -> live notes for what was new."""

    store: Store
    base: str = "poker"
    hub: Hub = field(default_factory=Hub)
    counters: Counters = field(default_factory=Counters)
    #: What the store holds per table, for the end-to-end acknowledgement (a room's floor only).
    stored: StoredTracker | None = None
    #: Called with each first delivery of a table's message, and every delivery of an ``event/hand_end``
    #: (the director follows its tournament tables).
    observers: list[Callable[[Parsed], None]] = field(default_factory=list)
    #: Each table's latest ``diagnostics``, summarised for its tile (kept in memory, not stored).
    readers: dict[str, dict[str, Any]] = field(default_factory=dict)

    def handle(self, batch: Sequence[tuple[str, bytes]]) -> int:
        rows: list[Any] = []
        spans: list[Any] = []
        parsed: list[Parsed] = []
        for name, data in batch:
            self.counters.messages += 1
            msg = parse(name, data, self.base)
            if msg is None:
                self.counters.rejected += 1
                continue
            if msg.path == "diagnostics":
                self._keep_readers(msg)
                continue
            made = rows_for(msg)
            if not made and msg.path.startswith("event/"):
                self.counters.rejected += 1  # an event without its sequence, hand or time
            spans.append((len(rows), len(made)))
            parsed.append(msg)
            rows.extend(made)
        flags = self.store.write(rows) if rows else []
        if self.stored is not None:
            self.stored.add(rows)  # committed: new or already there, the store holds them
        new = sum(flags)
        self.counters.rows_new += new
        for msg, (start, count) in zip(parsed, spans, strict=True):
            if count and flags[start]:  # the message's first row is new: a first delivery
                kind = msg.path.rsplit("/", 1)[-1]
                self.counters.kinds[kind] = self.counters.kinds.get(kind, 0) + 1
                for note in live_notes(msg):
                    self.hub.publish(note)
                for observe in self.observers:
                    observe(msg)
            elif msg.path == "availability":
                for note in live_notes(msg):
                    self.hub.publish(note)
            elif count and msg.path == "event/hand_end":
                # A hand's end again: the floor may have stored it and stopped before acting on it (the
                # broker or JetStream redelivers what was not acknowledged). The director reads each
                # hand once (controller.floor.director: Director._hand_end).
                for observe in self.observers:
                    observe(msg)
        self.counters.handled += len(batch)
        return new

    def diagnostics(self, name: str, data: bytes) -> bool:
        """A table's ``diagnostics`` from the room's diagnostics stream (not stored: the tile's readers)."""
        msg = parse(name, data, self.base)
        if msg is None or msg.path != "diagnostics":
            self.counters.rejected += 1
            return False
        return self._keep_readers(msg)

    def _keep_readers(self, msg: Parsed) -> bool:
        """The table's latest readers; a retained copy cleared (an empty payload) forgets them."""
        if msg.payload is None:
            self.readers.pop(msg.table_id, None)
            return True
        summary = readers_summary(msg.payload)
        if summary is not None:
            self.readers[msg.table_id] = summary
        return summary is not None


class MqttSource:
    """The one-machine floor: a persistent QoS 1 session on one Mosquitto."""

    def __init__(self, ingestor: Ingestor, host: str, port: int, *, username: str | None = None,
                 password: str | None = None, client_id: str = "tablectl-floor", base: str = "poker") -> None:
        import paho.mqtt.client as mqtt

        self.ingestor = ingestor
        self.connected = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=False,
                                  protocol=mqtt.MQTTv311)
        if username:
            self.client.username_pw_set(username, password)
        self.client.max_inflight_messages_set(100)
        self._filters = [f.format(base=base) for f in FLOOR_TOPICS]
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_disconnect = lambda *a: self.connected.clear()
        self.client.reconnect_delay_set(0.2, 5)  # type: ignore[arg-type]  # paho takes float seconds
        self.client.connect_async(host, port, keepalive=30)

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any = None) -> None:
        if getattr(reason, "is_failure", False):
            log.error("floor: MQTT connection refused: %s", reason)
            return
        client.subscribe([(f, 1) for f in self._filters])
        self.connected.set()

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        try:
            self.ingestor.handle([(message.topic, bytes(message.payload))])
        except Exception:
            # Not acknowledged would be better, but paho acknowledges on return: stop the session so
            # the broker keeps the message (persistent session) and redelivers it on reconnect.
            log.exception("floor: could not store %s; reconnecting", message.topic)
            client.disconnect()

    def start(self) -> MqttSource:
        self.client.loop_start()
        return self

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@dataclass
class NatsSettings:
    servers: list[str]
    user: str | None = None
    password: str | None = None
    ca: str | None = None  # the room's CA (TLS); None: plain TCP
    cert: str | None = None
    key: str | None = None
    replicas: int = 3
    base: str = "poker"
    #: the nodes' MQTT listeners (host, port): the floor's orders go out there at QoS 1
    #: (controller/floor/orders.py); none: on core NATS, which keeps nothing for a table away
    mqtt: list[tuple[str, int]] = field(default_factory=list)

    def tls(self) -> ssl.SSLContext | None:
        if not self.ca:
            return None
        ctx = ssl.create_default_context(cafile=self.ca)
        if self.cert and self.key:
            ctx.load_cert_chain(self.cert, self.key)
        return ctx


async def ensure_stream(js: Any, settings: NatsSettings) -> None:
    """Create (or bring up to date) the room's stream: file storage, replicated on ``replicas`` nodes."""
    from nats.js.api import RetentionPolicy, StorageType, StreamConfig
    from nats.js.errors import NotFoundError

    config = StreamConfig(name=STREAM, subjects=stream_subjects(settings.base), storage=StorageType.FILE,
                          retention=RetentionPolicy.LIMITS, num_replicas=settings.replicas, max_age=7 * 86400.0)
    # The readers' health: the latest message per table, as a retained topic keeps it.
    diagnostics = StreamConfig(name=DIAGNOSTICS_STREAM, subjects=[diagnostics_subject(settings.base)],
                               storage=StorageType.FILE, retention=RetentionPolicy.LIMITS, max_msgs_per_subject=1,
                               num_replicas=settings.replicas, max_age=7 * 86400.0)
    for name, cfg in ((STREAM, config), (DIAGNOSTICS_STREAM, diagnostics)):
        try:
            await js.stream_info(name)
        except NotFoundError:
            await js.add_stream(cfg)
        else:
            await js.update_stream(cfg)


async def connect_nats(settings: NatsSettings, name: str = "tablectl-floor") -> Any:
    import nats

    async def quietly(exc: Exception) -> None:  # a node lost: nats-py reconnects to the next; say it once
        log.info("NATS: %s: %s", type(exc).__name__, exc)

    return await nats.connect(servers=settings.servers, user=settings.user, password=settings.password,
                              tls=settings.tls(), name=name, max_reconnect_attempts=-1, reconnect_time_wait=0.25,
                              connect_timeout=2, allow_reconnect=True, error_cb=quietly)


class NatsSource:
    """A durable JetStream pull consumer feeding the store; runs its own asyncio loop in a thread."""

    def __init__(self, ingestor: Ingestor, settings: NatsSettings, *, batch: int = 256,
                 reports: bool = True) -> None:
        self.ingestor = ingestor
        self.settings = settings
        self.batch = batch
        if reports and ingestor.stored is None:
            ingestor.stored = StoredTracker(ingestor.store)
        self.reports_sent = 0
        self._pending = 0
        self.connected = threading.Event()
        self.errors = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._nc: Any = None
        self.published = 0
        self.diagnostics = 0  # diagnostics messages read (each table's latest, then each new one)

    def publish(self, topic: str, payload: bytes) -> bool:
        """The floor's word to the tables, from any thread: an MQTT topic published as the NATS subject
        its MQTT listener maps it to (``floor/room/table/t3`` -> ``floor.room.table.t3``), which each
        table's bridge brings in (systemd/room/mosquitto-bridge.conf). Core NATS, not the stream: it
        is an instruction, not a record (the room's log is the record). False when not connected."""
        loop, nc = self._loop, self._nc
        if loop is None or nc is None or loop.is_closed():
            log.warning("floor: not connected to NATS; %s not sent", topic)
            return False
        subject = topic.replace("/", ".")
        asyncio.run_coroutine_threadsafe(nc.publish(subject, payload), loop)
        self.published += 1
        return True

    def start(self) -> NatsSource:
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), name="floor-nats", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)

    async def _main(self) -> None:
        from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

        nc = None
        while not self._stop.is_set():
            try:
                nc = await connect_nats(self.settings)
                self._loop, self._nc = asyncio.get_running_loop(), nc
                js = nc.jetstream(timeout=5)
                await ensure_stream(js, self.settings)
                sub = await js.pull_subscribe(
                    "", durable=DURABLE, stream=STREAM,
                    config=ConsumerConfig(ack_policy=AckPolicy.ALL, deliver_policy=DeliverPolicy.ALL,
                                          ack_wait=30, max_ack_pending=20000,
                                          num_replicas=self.settings.replicas))
                if self.ingestor.stored is not None:
                    await asyncio.get_running_loop().run_in_executor(None, self.ingestor.stored.load_known)
                readers = asyncio.create_task(self._readers(js))
                self.connected.set()
                try:
                    await self._consume(sub, nc)
                finally:
                    readers.cancel()
            except Exception as exc:  # a node lost mid-call, a leader election: try again
                self.errors += 1
                log.warning("floor: JetStream consumer: %s: %s; retrying", type(exc).__name__, exc)
                await asyncio.sleep(0.5)
            finally:
                if nc is not None:
                    self._nc = None
                    try:
                        await nc.close()
                    except Exception:  # already gone
                        pass
                    nc = None

    async def _consume(self, sub: Any, nc: Any) -> None:
        import nats.errors

        loop = asyncio.get_running_loop()
        while not self._stop.is_set():
            try:
                msgs = await sub.fetch(self.batch, timeout=0.5)
            except (TimeoutError, nats.errors.TimeoutError):
                msgs = []
            if not msgs:  # (nats-py also returns an empty batch when only a status came back)
                self._pending = 0  # nothing left to read: caught up
                await self._report(nc)
                continue
            batch = [(m.subject, m.data) for m in msgs]
            # The database write blocks: off the event loop, so heartbeats and pings keep flowing.
            await loop.run_in_executor(None, self.ingestor.handle, batch)
            await msgs[-1].ack_sync(timeout=5)  # ack-all: the whole batch, after its commit
            try:
                self._pending = int(msgs[-1].metadata.num_pending)
            except (AttributeError, TypeError, ValueError):
                self._pending = 1  # unknown: the tables then resend only what lies below a gap
            await self._report(nc)

    async def _readers(self, js: Any) -> None:
        """Each table's latest ``diagnostics`` then every new one, from an ephemeral consumer (no
        acknowledgements: a reading, not a record); made again if a node's loss takes it away."""
        import nats.errors
        from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

        while not self._stop.is_set():
            try:
                sub = await js.pull_subscribe(
                    diagnostics_subject(self.settings.base), stream=DIAGNOSTICS_STREAM,
                    config=ConsumerConfig(ack_policy=AckPolicy.NONE, deliver_policy=DeliverPolicy.LAST_PER_SUBJECT,
                                          inactive_threshold=30.0, num_replicas=self.settings.replicas))
                idle = 0
                while not self._stop.is_set():
                    try:
                        msgs = await sub.fetch(64, timeout=1.0)
                    except (TimeoutError, nats.errors.TimeoutError):
                        idle += 1
                        if idle % 10 == 0:
                            await sub.consumer_info()  # still there? (NotFoundError: make it again)
                        continue
                    idle = 0
                    for m in msgs:
                        self.diagnostics += self.ingestor.diagnostics(m.subject, m.data)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the consumer's node lost: a new one starts at each table's latest
                log.info("floor: diagnostics consumer: %s: %s; again", type(exc).__name__, exc)
                await asyncio.sleep(0.5)

    async def _report(self, nc: Any) -> None:
        """Publish the due ``floor.stored`` reports (core NATS: the tables' MQTT subscriptions get them)."""
        if self.ingestor.stored is None:
            return
        base = self.settings.base.replace("/", ".")
        for report in self.ingestor.stored.due(self._pending):
            await nc.publish(f"{base}.{report.table_id}.floor.stored", report.payload())
            self.reports_sent += 1


def wait_for(cond: Any, timeout: float, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.05)
