"""The daemon's MQTT connection: paho-mqtt v2 callbacks, MQTT v5, an outbox that loses nothing.

Design:

* paho runs in its documented *external event loop* mode (``on_socket_open``/``close``,
  ``on_socket_register_write``/``unregister_write``, ``loop_read``/``loop_write``/``loop_misc``):
  our own ``mqtt-network`` thread selects on the socket, reads, writes what is waiting, keeps
  the connection alive and reconnects.  Nothing of paho's private state is touched; one I/O
  lock keeps two threads from ever writing the socket at once.
* The outbox is guarded by one lock.  :meth:`MqttLink.publish` hands a message to paho
  at once, on the caller's thread, when the broker is connected and nothing is queued
  ahead of it, and (plain TCP) writes it to the socket there too (``loop_write`` under the
  I/O lock: a card's event must not wait for a thread hand-off).  A small outbox thread
  does the rest: acknowledgements (in batches), delayed messages, replays after a reconnect.
  paho's callbacks never take the outbox lock, they only post notes, acknowledged ids and
  requests into queues, so the I/O lock and the outbox lock never wait on each other.
* Every message waits in the outbox until the broker acknowledges it (QoS 1).  While the
  broker is away messages queue up; on reconnect the unacknowledged ones are sent again
  in order (at least once: payloads carry ``seq`` so a reader can drop repeats), and the
  latest retained message of every retained topic is republished.  A message paho refuses
  (a topic it rejects) is dropped and counted, never left at the head of the queue.
* ``delivered_seq`` is the journal sequence up to which everything has been acknowledged;
  the daemon stores it so that after a restart it republishes what the broker never got.
* Messages may carry a release time (the broadcast delay): they stay in a heap until then.
* The will is ``offline`` on the availability topic; ``online`` is published retained on
  every connect.
* The session is persistent (``clean_start`` false, a session expiry): requests sent while
  the daemon is down wait on the broker; with ``manual_ack`` a request is acknowledged only
  once the daemon has answered it, so one in flight at a crash is delivered again.
* A request published with the retain flag is refused, never applied, and cleared from the
  broker (an empty retained message on its topic): a retained request would otherwise be
  delivered again at every reconnect and every restart.  The subscription asks for
  ``retainAsPublished`` (so the flag is seen) and ``retainHandling`` 2 (no retained message is
  ever sent at subscribe time, even one this link could not clear).
* While the broker is away the network thread retries with a backoff, but it never sleeps
  longer than ``NET_TICK`` at a time and beats at every turn: the watchdog sees a link that
  waits, not one that hangs (a connect attempt itself is bounded by ``CONNECT_TIMEOUT``).
* Sockets get ``TCP_NODELAY``: a request, a card's event, an acknowledgement are small
  packets that must not wait for Nagle's algorithm.
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import math
import queue
import select
import socket
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
from paho.mqtt.subscribeoptions import SubscribeOptions

log = logging.getLogger("controller.mqtt")

ACK_BATCH = 0.05  # seconds between two looks at the broker's acknowledgements
SESSION_EXPIRY = 7 * 24 * 3600  # seconds the broker keeps the session (and queued requests) while we are away
NET_TICK = 1.0  # the network thread wakes at least this often (keepalive, reconnects)
CONNECT_TIMEOUT = 3.0  # seconds one connect attempt may take (a broker host that does not answer)
#: Why a retained request is refused (the response's error).
RETAINED_REFUSAL = ("a request must not be retained: it would be applied again at every reconnect; "
                    "publish it without the retain flag")


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
    persistent: bool = False  # a persistent session (needs a client id)

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
    held_since: float = field(default=0.0, compare=False)  # when a delayed message was queued
    due: float = field(default=0.0, compare=False)  # first due: a later change of delay never frees it sooner


Request = tuple[str, bytes, str | None, bytes | None]  # name, payload, response topic, correlation data


def set_nodelay(sock: Any) -> None:
    """TCP_NODELAY on a TCP socket (no-op on anything else)."""
    try:
        if getattr(sock, "family", None) in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError as exc:  # pragma: no cover - a socket that refuses it still works
        log.debug("TCP_NODELAY not set: %s", exc)


def subscriber(settings: MqttSettings, client_id: str, topic: str, on_message: Callable[..., None], *,
               clean_session: bool = True) -> mqtt.Client:
    """A plain MQTT 3.1.1 connection beside the link, with the table's login and TLS: subscribes ``topic``
    (QoS 1) at every connect, reconnects after 0.5 to 10 s.  Connected once its caller starts its loop."""
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=clean_session,
                         protocol=mqtt.MQTTv311)
    if settings.username:
        client.username_pw_set(settings.username, settings.password)
    host, port, tls = settings.host_port
    if tls:
        client.tls_set(ca_certs=settings.ca_file, certfile=settings.certfile, keyfile=settings.keyfile,
                       cert_reqs=ssl.CERT_REQUIRED)

    def on_connect(c: Any, u: Any, f: Any, rc: Any, p: Any = None) -> None:
        if not rc.is_failure:
            c.subscribe(topic, qos=1)

    client.on_connect = on_connect
    client.on_message = on_message
    client.reconnect_delay_set(0.5, 10)  # type: ignore[arg-type]  # paho takes float seconds
    client.connect_async(host, port, keepalive=30)
    return client


class MqttLink:
    """Publish with an outbox; deliver console requests to ``on_request``."""

    def __init__(
        self,
        settings: MqttSettings,
        availability_topic: str,
        request_filter: str | tuple[str, ...] | None = None,
        on_request: Callable[..., None] | None = None,
        on_delivered: Callable[[int], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        manual_ack: bool = False,
        on_refused: Callable[[str, bytes, str | None, bytes | None, str], None] | None = None,
    ) -> None:
        self.settings = settings
        self.availability_topic = availability_topic
        self.request_filter = request_filter
        #: A request's name from its topic (default: the last level; the daemon tells a producer's
        #: request from a console's by more than that).
        self.request_name: Callable[[str], str] = lambda topic: topic.rsplit("/", 1)[-1]
        self.on_request = on_request
        self.on_delivered = on_delivered
        #: Told of a request refused before ``on_request`` (a retained one): name, payload,
        #: response topic, correlation data, the reason.
        self.on_refused = on_refused
        self.clock = clock
        # With manual_ack, on_request gets a fifth argument: a callable that acknowledges the
        # request to the broker (call it once the request is answered).
        self.manual_ack = manual_ack
        self._notes: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._requests: queue.SimpleQueue[Any] = queue.SimpleQueue()
        # Acknowledged message ids, collected by the network thread and taken in batches by the
        # outbox thread (every ACK_BATCH seconds): an acknowledgement is no one's hurry, and waking a
        # thread for each would compete with the next card for the CPU.
        self._acked: deque[int] = deque()
        self._lock = threading.Lock()
        self._io_lock = threading.RLock()  # every loop_read/loop_write/loop_misc/reconnect
        self._local = threading.local()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._order = itertools.count()
        self._pending: deque[Message] = deque()
        self._delayed: list[Message] = []
        self._inflight: dict[int, Message] = {}
        self._retained: dict[str, Message] = {}
        self._in_order: dict[str, float] = {}  # keep_order's prefixes -> the latest release queued under each
        self._connected = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._net: threading.Thread | None = None
        self._req_thread: threading.Thread | None = None
        self._reconnect_delay = settings.min_reconnect
        self._subscribing: set[int] = set()  # request filters' SUBSCRIBE mids not yet acknowledged
        self.connected_event = threading.Event()
        self.delivered_seq = 0
        self._max_seq = 0
        self.counters = {"published": 0, "acked": 0, "resent": 0, "connects": 0, "disconnects": 0, "dropped": 0,
                         "requests": 0, "retained_requests": 0}
        self.last_loop = time.monotonic()
        self.net_beat = time.monotonic()
        self.client = self._make_client()

    # ------------------------------------------------------------------ paho
    def _make_client(self) -> mqtt.Client:
        s = self.settings
        client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, client_id=s.client_id,
                             protocol=mqtt.MQTTv5, manual_ack=self.manual_ack)
        if s.username:
            client.username_pw_set(s.username, s.password)
        host, port, tls = s.host_port
        self.inline_write = not tls
        if tls:
            client.tls_set(ca_certs=s.ca_file, certfile=s.certfile, keyfile=s.keyfile,
                           cert_reqs=ssl.CERT_REQUIRED)
        client.will_set(self.availability_topic, b"offline", qos=1, retain=True)
        client.max_inflight_messages_set(100)
        client.connect_timeout = CONNECT_TIMEOUT
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        client.on_subscribe = self._on_subscribe
        client.on_message = self._on_message
        client.on_socket_open = lambda c, u, sock: set_nodelay(sock)
        client.on_socket_register_write = self._on_register_write
        return client

    def _on_register_write(self, client, userdata, sock) -> None:
        """paho has bytes to send.  The publishing thread writes them itself (plain TCP, inside
        :meth:`_flush`); anything else wakes the network thread."""
        if not (self.inline_write and getattr(self._local, "flushing", False)):
            self._wake()

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"\0")
        except (BlockingIOError, OSError):
            pass

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            log.warning("mqtt connect refused: %s", reason_code)
            return
        self._reconnect_delay = self.settings.min_reconnect
        filters = (self.request_filter,) if isinstance(self.request_filter, str) else self.request_filter or ()
        # "Connected" (``connected_event``) only once the broker acknowledged the request filters: a
        # request sent the moment after would otherwise reach a broker that does not yet route it here.
        self._subscribing = set()
        for request_filter in filters:
            _rc, mid = client.subscribe(request_filter, options=SubscribeOptions(
                qos=1, noLocal=True, retainAsPublished=True, retainHandling=SubscribeOptions.RETAIN_DO_NOT_SEND))
            if mid is not None:
                self._subscribing.add(mid)
        if not self._subscribing:
            self._notes.put(("connected", None))

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties) -> None:
        refused = [str(rc) for rc in reason_codes if rc.is_failure]
        if refused:  # the session still publishes; requests will not reach it (the broker's ACL)
            log.warning("mqtt subscription %s refused: %s", mid, ", ".join(refused))
        if mid in self._subscribing:
            self._subscribing.discard(mid)
            if not self._subscribing:
                self._notes.put(("connected", None))

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        self._notes.put(("disconnected", str(reason_code)))

    def _on_publish(self, client, userdata, mid, reason_code, properties) -> None:
        self._acked.append(mid)

    def _on_message(self, client, userdata, message) -> None:
        # Handled on the request thread: never on the network thread, which holds the I/O lock.
        self._requests.put(message)

    def _serve_requests(self) -> None:
        while True:
            message = self._requests.get()
            if message is None:
                return
            try:
                self._handle_request(message)
            except Exception:  # a bad request must never stop the request thread
                log.exception("request handler failed for %r", getattr(message, "topic", None))

    def _handle_request(self, message: Any) -> None:
        self.counters["requests"] += 1
        props = getattr(message, "properties", None)
        response = getattr(props, "ResponseTopic", None) if props else None
        correlation = getattr(props, "CorrelationData", None) if props else None
        name = self.request_name(message.topic)
        acked = threading.Event()

        def ack() -> None:
            if self.manual_ack and message.qos > 0 and not acked.is_set():
                acked.set()
                self.client.ack(message.mid, message.qos)

        if getattr(message, "retain", False):
            if not message.payload:  # someone clearing a retained request: nothing to answer
                ack()
                return
            self.counters["retained_requests"] += 1
            log.warning("refused a retained request on %r; clearing it", message.topic)
            self._clear_retained(message.topic)
            try:
                if self.on_refused is not None:
                    self.on_refused(name, bytes(message.payload), response, correlation, RETAINED_REFUSAL)
            finally:
                ack()
            return
        if self.on_request is None:
            ack()
            return
        try:
            if self.manual_ack:
                self.on_request(name, bytes(message.payload), response, correlation, ack)
            else:
                self.on_request(name, bytes(message.payload), response, correlation)
        except Exception:
            ack()
            raise

    def _clear_retained(self, topic: str) -> None:
        """An empty retained message on ``topic`` (the broker forgets the retained request).  Not
        remembered as this link's own retained state: it is sent once, not at every reconnect."""
        msg = Message(0.0, next(self._order), topic, b"", 1, True, 0)
        with self._lock:
            self._pending.append(msg)
            if self._thread is not None:
                self._flush()

    # ------------------------------------------------------------------ network thread
    def _run_network(self) -> None:
        """select() on the socket; read, write, keep alive; reconnect with a backoff."""
        client = self.client
        while not self._stop.is_set():
            self.net_beat = time.monotonic()
            sock = client.socket()
            if sock is None:
                if not self._connect_once():
                    self._backoff(self._reconnect_delay)
                    self._reconnect_delay = min(self._reconnect_delay * 2, self.settings.max_reconnect)
                continue
            try:
                pending = isinstance(sock, ssl.SSLSocket) and sock.pending() > 0
                writers = [sock] if client.want_write() else []
                readable, _, _ = select.select([sock, self._wake_r], writers, [], 0 if pending else NET_TICK)
            except (OSError, ValueError):  # closed under us: the next turn reconnects
                readable = []
            if self._wake_r in readable:
                try:
                    while self._wake_r.recv(4096):
                        pass
                except (BlockingIOError, OSError):
                    pass
            with self._io_lock:
                if client.socket() is not sock:
                    continue
                if sock in readable or pending:
                    client.loop_read()
                if client.want_write():
                    client.loop_write()
                client.loop_misc()

    def _backoff(self, delay: float) -> None:
        """Wait ``delay`` seconds before the next connect attempt, beating at least every
        ``NET_TICK``: a thread waiting out a broker outage is alive, and says so."""
        deadline = time.monotonic() + delay
        while not self._stop.is_set():
            self.net_beat = now = time.monotonic()
            if now >= deadline:
                return
            self._stop.wait(min(NET_TICK, deadline - now))

    def _connect_once(self) -> bool:
        with self._io_lock:
            try:
                rc = self.client.reconnect()
            except (OSError, ssl.SSLError, ValueError) as exc:
                log.debug("mqtt connect failed: %s", exc)
                return False
        return rc == mqtt.MQTT_ERR_SUCCESS

    # ------------------------------------------------------------------ public
    def start(self) -> MqttLink:
        host, port, _ = self.settings.host_port
        props = None
        clean_start: Any = mqtt.MQTT_CLEAN_START_FIRST_ONLY
        if self.settings.persistent and self.settings.client_id:
            props = Properties(PacketTypes.CONNECT)
            props.SessionExpiryInterval = SESSION_EXPIRY
            clean_start = False
        self.client.connect_async(host, port, keepalive=self.settings.keepalive, clean_start=clean_start,
                                  properties=props)
        self._thread = threading.Thread(target=self._run, name="mqtt-outbox", daemon=True)
        self._thread.start()
        self._req_thread = threading.Thread(target=self._serve_requests, name="mqtt-requests", daemon=True)
        self._req_thread.start()
        self._net = threading.Thread(target=self._run_network, name="mqtt-network", daemon=True)
        self._net.start()
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
        self._requests.put(None)
        self._wake()
        self._thread.join(timeout)
        if self._net is not None:
            self._net.join(timeout)
        if self._req_thread is not None:
            self._req_thread.join(timeout)
        with self._io_lock:
            try:
                self.client.disconnect()
                if self.client.socket() is not None:
                    self.client.loop_write()  # the DISCONNECT packet; paho closes the socket after it
            except OSError:
                pass
        self._thread = None
        for s in (self._wake_r, self._wake_w):
            s.close()

    @property
    def alive(self) -> bool:
        """Every thread of the link is running (the watchdog's test)."""
        return all(t is not None and t.is_alive() for t in (self._thread, self._net, self._req_thread))

    def publish(self, topic: str, payload: bytes | str | dict | None, *, qos: int = 1, retain: bool = False,
                seq: int = 0, delay: float = 0.0, properties: Any = None) -> None:
        """Queue a message; thread-safe.  ``payload`` None/b'' on a retained topic clears it."""
        if isinstance(payload, dict):
            data = json.dumps(payload, separators=(",", ":")).encode()
        elif isinstance(payload, str):
            data = payload.encode()
        else:
            data = payload or b""
        now = self.clock()
        msg = Message(now + delay if delay else 0.0, next(self._order), topic, data, qos, retain, seq,
                      properties, now)
        if msg.release:
            with self._lock:
                ordered = next((p for p in self._in_order if topic.startswith(p)), None)
                if ordered is not None:  # never before what was queued before it (keep_order)
                    msg.release = self._in_order[ordered] = max(msg.release, self._in_order[ordered])
                msg.due = msg.release
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

    def keep_order(self, prefix: str) -> None:
        """Delayed messages under ``prefix`` leave in the order they were queued: one queued with a
        shorter delay waits for those queued before it (the broadcast chain: a later snapshot holds
        an earlier one's cards, so a shortened delay must not open them sooner than promised; a
        message held until :meth:`release_held` holds back every later one under ``prefix``)."""
        with self._lock:
            self._in_order[prefix] = 0.0
            self._reorder()

    def _reorder(self) -> None:
        """The latest release under each ordered prefix, again (the lock is held; after
        :meth:`hold_back` or :meth:`release_held` moved some)."""
        for prefix in self._in_order:
            self._in_order[prefix] = max((m.release for m in self._delayed if m.topic.startswith(prefix)), default=0.0)

    def hold_back(self, prefix: str, delay: float) -> int:
        """A longer broadcast delay, for what is already held: each delayed message under
        ``prefix`` leaves no sooner than ``delay`` after it was queued (``math.inf``: not before
        :meth:`release_held`).  Never earlier than it was due; returns how many were postponed."""
        postponed = 0
        with self._lock:
            for m in self._delayed:
                if m.topic.startswith(prefix) and m.held_since + delay > m.release:
                    m.release = m.held_since + delay
                    postponed += 1
            heapq.heapify(self._delayed)
            self._reorder()
        self._notes.put(("wake", None))
        return postponed

    def release_held(self, prefix: str, delay: float = 0.0) -> int:
        """Messages under ``prefix`` held by :meth:`hold_back` (``math.inf``) leave ``delay`` after
        they were queued, or now if that has passed (the end of the hand they waited for), and
        never before they were first due (a delay lengthened to the hand's end, then shortened)."""
        released = 0
        with self._lock:
            now = self.clock()
            last = 0.0  # in the order they were queued (keep_order): never before an earlier one
            for m in sorted((m for m in self._delayed if m.topic.startswith(prefix)), key=lambda m: m.order):
                if m.release == math.inf:
                    m.release = max(now, m.held_since + delay, m.due if m.due != math.inf else 0.0, last)
                    released += 1
                last = max(last, m.release)
            heapq.heapify(self._delayed)
            self._reorder()
        self._notes.put(("wake", None))
        return released

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
        connection allows it (plain TCP; the lock is held).  A message paho refuses outright (a
        topic it rejects) is dropped, so that one bad message can never block the ones behind it."""
        handed = False
        self._local.flushing = True
        try:
            while self._connected and self._pending:
                msg = self._pending[0]
                try:
                    info = self.client.publish(msg.topic, msg.payload, qos=msg.qos, retain=msg.retain,
                                               properties=msg.properties)
                except (ValueError, TypeError) as exc:
                    self._pending.popleft()
                    self.counters["dropped"] += 1
                    log.error("mqtt: dropped a message paho refuses (%s): %r", exc, msg.topic)
                    continue
                if info.rc != mqtt.MQTT_ERR_SUCCESS:
                    if info.rc == mqtt.MQTT_ERR_NO_CONN:
                        self._connected = False
                    break
                self._pending.popleft()
                handed = True
                self.counters["published"] += 1
                if msg.qos > 0:
                    self._inflight[info.mid] = msg
        finally:
            self._local.flushing = False
        if handed:
            if self.inline_write:
                with self._io_lock:
                    if self.client.want_write():
                        self.client.loop_write()  # a failed write surfaces on the network thread
            else:
                self._wake()

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
