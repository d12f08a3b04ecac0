"""The daemon: sources -> one engine owner -> outputs.

* **Sources** are plug-ins (:mod:`controller.sources`) built from the config by name: the
  antenna board (``serial``: link -> zones -> fusion), the dealer's panel (``gpio``), NFC readers
  (``nfc``), the camera (``camera``); plus the dealer's console over MQTT requests.  The daemon
  knows none of them by type.
* **One owner** holds table state: a lock, taken to apply one event at a time.  Each event is
  journaled before it is applied (:class:`TableService`); its outputs go to the MQTT publisher
  and to every source's ``after`` (the panel's LED and buzzer) before the lock is let go.  Cards
  from the antennas are applied on the serial thread itself, under that lock (no thread hand-off
  on the path a dealer waits on); everything else is queued to an owner thread that takes the
  same lock.
* A restart replays the journal (even after ``kill -9``) and republishes whatever the
  broker never acknowledged (the journal keeps the delivered cursor).
* In a room, the floor's reports of what it stored reach the table over its Mosquitto bridge;
  :class:`~controller.app.floor_ack.FloorAck` resends the events a dying room node lost
  (docs/scale.md).
* systemd: READY once serving, WATCHDOG only while the owner, MQTT and every source's loops
  are alive, STOPPING on SIGTERM.

``backends={name: stand_in}`` gives a source a stand-in device, so the demo and the tests run
the very same daemon on an emulator, gpiozero's mock pins and a scripted NFC frontend.
"""

from __future__ import annotations

import functools
import json
import logging
import queue
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from controller.app.config import CoreConfig
from controller.app.floor_ack import FloorAck
from controller.app.floor_orders import FloorOrders
from controller.app.publisher import Publisher, count_published
from controller.app.sdnotify import Notifier, watchdog_interval
from controller.app.sealer import Sealer
from controller.journal import Journal, JournalError, JournalFullError
from controller.mqtt.contract import RequestError, Topics, parse_request, request_transaction, response_payload
from controller.mqtt.link import MqttLink, MqttSettings
from controller.rules.cards import Card
from controller.rules.decks import DeckRegistry
from controller.rules.engine import HandEngine
from controller.rules.events import (
    Acknowledge,
    Act,
    CallClock,
    CallMisdeal,
    ChangeGame,
    ConfirmDeals,
    DealerSignIn,
    Event,
    Looked,
    NewHand,
    Put,
    SeatPlayer,
    SetBroadcastDelay,
    SetButton,
    SetLevel,
    SetStack,
    SitIn,
    SitOut,
    StartDraw,
    UnseatPlayer,
)
from controller.rules.rotations import ROTATIONS, Rotation, RotationError, rotation_event
from controller.rules.table import Table
from controller.service import Output, Rejected, TableService
from controller.service.results import AlertRaised, HandBegan, HandEnded, TableChange
from controller.session_stats import SessionStats
from controller.sources import Source, SourceContext, SourceError, in_start_order, plugin_names

log = logging.getLogger("controller.app.daemon")

#: The retained ``state`` snapshot follows a change this much later, one snapshot for a burst
#: of changes (as zigbee2mqtt's ``debounce``): the event that a display reacts to goes out
#: first, and encoding the whole table does not hold up its delivery.
STATE_DEBOUNCE = 0.005
_WAKE = object()  # an inbox item that only makes the owner thread look at the clock


#: Seconds between two retained ``info`` messages (health, counters).
INFO_PERIOD = 60.0

#: Seconds between two looks at the readers' diagnostics: the retained ``diagnostics`` topic is
#: published when its counts changed, and at least every DIAGNOSTICS_REFRESH seconds.
DIAGNOSTICS_PERIOD = 2.0
DIAGNOSTICS_REFRESH = 60.0

#: Longest response topic accepted (bytes); MQTT allows 65535, nothing needs more than this.
MAX_RESPONSE_TOPIC = 512

#: Seconds between two tries to journal the events held while the journal could not be written.
HELD_RETRY = 0.5


@dataclass
class _Item:
    event: Event
    source: str
    future: Future | None
    posted: float
    transaction: str | None = None
    request: bool = False  # came in as an MQTT console request (checked at the request layer)


@dataclass
class _Reply:
    """Where and how to answer one console request."""

    name: str
    topic: str | None
    correlation: bytes | None
    transaction: str | None
    ack: Callable[[], None] | None = None


@dataclass(frozen=True)
class _Duplicate:
    """A request whose transaction id the journal already holds (applied once, at ``seq``)."""

    seq: int


def clean_topic(topic: str, limit: int = 80) -> str:
    """A topic as it may appear in an error message (printable, short)."""
    text = "".join(ch if ch.isprintable() and not 0xD800 <= ord(ch) <= 0xDFFF else "?" for ch in topic)
    return text if len(text) <= limit else text[:limit] + "..."


def _put_event(fields: dict[str, Any]) -> Event:
    declare = fields.get("declare")
    to = None
    if isinstance(declare, dict):
        ((declare, to),) = declare.items()
    return Put(int(fields["seat"]), tuple(int(c) for c in fields["chips"]), declare, _int_or_none(to))


def _int_or_none(value: Any) -> int | None:
    """An optional whole-number field of a request (a stack, an amount), absent as None."""
    return int(value) if value is not None else None


# Each console request (its fields validated by parse_request) as the table event it makes.
_REQUEST_EVENTS: dict[str, Callable[[dict[str, Any]], Event]] = {
    "new_hand": lambda f: NewHand(source="console"),
    "set_button": lambda f: SetButton(int(f["seat"])),
    "seat": lambda f: SeatPlayer(int(f["seat"]), str(f["name"]), bool(f.get("post", False)),
                                 _int_or_none(f.get("stack"))),
    "put": _put_event,
    "stack": lambda f: SetStack(int(f["seat"]), f.get("stack"), f.get("add")),
    "level": lambda f: SetLevel(f.get("number"), bool(f.get("advance", False))),
    "unseat": lambda f: UnseatPlayer(int(f["seat"])),
    "action": lambda f: Act(int(f["seat"]), str(f["action"]), bool(f.get("all_in", False)),
                            _int_or_none(f.get("amount"))),
    "acknowledge": lambda f: Acknowledge(f.get("alert")),
    "misdeal": lambda f: CallMisdeal(str(f["reason"])),
    "dealer": lambda f: DealerSignIn(f["dealer"], source="console"),
    "clock": lambda f: CallClock(int(f["seat"])),
    "confirm": lambda f: ConfirmDeals(tuple(str(c["to"]) for c in f["cards"]),
                                      tuple(Card.parse(c["card"]) for c in f["cards"])),
    "producer/broadcast_delay": lambda f: SetBroadcastDelay(f["delay"], source="producer"),  # docs/mqtt.md
    "change_game": lambda f: ChangeGame(str(f["game"]), f.get("rules"), f.get("structure"), f.get("event")),
    # Issue 22's requests: sitting out and in, the draw for the button, "looked" (and a rotation, below).
    "sit_out": lambda f: SitOut(int(f["seat"])),
    "sit_in": lambda f: SitIn(int(f["seat"]), bool(f.get("post", False))),
    "draw_button": lambda f: StartDraw(bool(f.get("cancel", False))),
    "looked": lambda f: Looked(int(f["seat"])),
}


def request_event(name: str, fields: dict[str, Any], rotations: Mapping[str, Rotation] | None = None) -> Event:
    """A validated console request (see :func:`parse_request`) as a table event (``rotations``: the
    ones ``request/rotation`` may name)."""
    if name == "rotation":
        try:
            return rotation_event(fields.get("name"), dict(rotations if rotations is not None else ROTATIONS))
        except RotationError as exc:
            raise RequestError(f"request/rotation: {exc}", fields.get("transaction")) from None
    make = _REQUEST_EVENTS.get(name)
    if make is None:
        raise RequestError(f"unknown request {name!r}")
    return make(fields)


class Daemon:
    """One table: journal, engine owner, MQTT, hardware sources."""

    def __init__(
        self,
        config: CoreConfig,
        *,
        registry: DeckRegistry | None = None,
        mqtt_username: str | None = None,
        mqtt_password: str | None = None,
        backends: Mapping[str, Any] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self.registry = registry or DeckRegistry()
        self.clock = clock
        #: Stand-ins for devices by source name (an emulator's port for ``serial``, a mock panel
        #: factory for ``gpio``...): the demo and the tests run the very same daemon on them.
        self.backends = dict(backends or {})
        unknown = set(self.backends) - set(plugin_names())
        if unknown:
            raise SourceError(f"no source plug-in named {sorted(unknown)}; known: {sorted(plugin_names())}")
        #: The running sources by name, in start order.
        self.sources: dict[str, Source] = {}
        #: Called with every event the owner applied and its source (after it is journaled).
        self.applied: list[Callable[[Event, str], None]] = []
        self.mqtt_username = mqtt_username or config.mqtt.username
        self.mqtt_password = mqtt_password or config.mqtt.read_password()
        self.topics = Topics(config.mqtt.base_topic, config.table.id)
        self.inbox: queue.Queue[Any] = queue.Queue()
        self._state_due: float | None = None
        # The engine owner.  Re-entrant: applying a hand start resets the RFID pipeline, which
        # runs under this same lock.
        self.owner_lock = threading.RLock()
        self._cursor = threading.Condition()
        self._cursor_seq = 0
        self.notifier = Notifier()
        self.journal: Journal | None = None
        self.service: TableService | None = None
        self.link: MqttLink | None = None
        self.publisher: Publisher | None = None
        self.floor_ack: FloorAck | None = None
        #: A tournament table follows the floor's orders for it (moves, seats: docs/room.md).
        self.floor_orders: FloorOrders | None = None
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._owner: threading.Thread | None = None
        self.owner_beat = time.monotonic()
        self.listeners: list[Callable[[list[Output]], None]] = []
        self.started = threading.Event()
        self.counters = {"owner_errors": 0, "duplicate_requests": 0, "bad_response_topics": 0, "held_events": 0,
                         "journal_faults": 0}
        # Events from the table's devices that could not be journaled (a full disk), oldest first:
        # applied in their order once the journal takes them again, never dropped, never skipped.
        self._held: deque[_Item] = deque()
        self._held_retry = 0.0
        #: Why the journal cannot be written right now (None: it can).
        self.journal_fault: str | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Daemon:
        cfg = self.config
        # Sources, paho's thread and the owner thread share the GIL: a short switch interval keeps
        # a thread that wakes for I/O from waiting long behind one that is busy.
        sys.setswitchinterval(0.0005)
        self.journal = Journal(cfg.journal.path, sync=cfg.journal.sync)
        self.service = service = TableService(Table(**cfg.table_kwargs()), journal=self.journal, clock=self.clock)
        stats = SessionStats()  # broadcast/stats goes on from the journal (count_published)
        upto = self.journal.published_seq
        count = functools.partial(count_published, stats, self.service, upto)
        hands: dict[int, int | None] = {}  # seq -> the hand of what the broker never had (republished below)
        finals: dict[int, dict] = {}  # seq -> the public state a republished hand ended in (its overlay's last)

        def each(outputs: list[Output]) -> None:
            count(outputs)
            for out in outputs:
                if out.seq > upto:
                    hands[out.seq] = service.hand_id if service.engine is not None else None
                    if out.kind == "hand_end":
                        finals[out.seq] = service.public_state()

        replayed = self.service.replay(self.journal.entries(), each=each)
        log.info("journal replayed", extra={"events": self.journal.last_seq, "hand_id": self.service.hand_id,
                                             "table_id": cfg.table.id})
        m = cfg.mqtt
        tls = m.tls
        settings = MqttSettings(
            url=f"{'mqtts' if m.secure else 'mqtt'}://{m.host}:{m.effective_port}",
            username=self.mqtt_username, password=self.mqtt_password,
            client_id=controller_client_id(cfg.table.id, self.mqtt_username, self.mqtt_password),
            keepalive=min(m.keepalive, 30),
            ca_file=str(tls.ca_file) if tls and tls.ca_file else None,
            certfile=str(tls.certfile) if tls and tls.certfile else None,
            keyfile=str(tls.keyfile) if tls and tls.keyfile else None,
            persistent=True,  # console requests sent while the daemon is down wait on the broker
        )
        self.link = MqttLink(settings, self.topics.availability,
                             request_filter=(self.topics.requests, self.topics.producer_requests),
                             on_request=self._on_request, on_delivered=self._delivered, manual_ack=True,
                             on_refused=self._refuse_request)
        self.link.request_name = self._request_name
        # In a room, the floor reports what it stored (floor/<table>/stored, bridged in); what it lacks
        # is resent.  A table in no room runs none of it.
        if cfg.room is not None:
            self.floor_ack = FloorAck(self.link, settings, self.topics.root, grace=cfg.room.resend_grace)
            log.info("in a room: resending what its floor reports missing", extra={"room": cfg.room.name})
        self.publisher = Publisher(self.link, self.topics, cfg.table.id, self._journaled_delay(), clock=self.clock,
                                   on_event=self.floor_ack.record if self.floor_ack is not None else None,
                                   delay_range=(cfg.broadcast.min_delay, cfg.broadcast.max_delay), stats=stats)
        self.link.keep_order(self.topics.root + "/broadcast/")  # nothing on air before what was held before it
        self.publisher.sealer = Sealer(self.link, self.topics, cfg.table.id, self.journal)
        published = self.journal.published_seq
        unsent = [o for o in replayed if o.seq > published]
        if unsent:
            log.info("republishing what the broker never acknowledged", extra={"outputs": len(unsent)})
        self.publisher.republish_stats(self.service, published, unsent)
        # Under the hand each was made in: a kill -9 just after a new hand began leaves the hand
        # before it unacknowledged, and the service has moved on (its board is no board of this one).
        self.publisher.publish(unsent, self.service, hands=hands, final_views=finals)
        self.publisher.publish_delay(self.journal.last_seq, "journal" if self.service.broadcast_delay is not None
                                     else "config")
        self.link.start()
        if self.floor_ack is not None:
            self.floor_ack.start()
        if cfg.table.event == "tournament":
            self.floor_orders = FloorOrders(self, settings, cfg.table.id).start()
        if cfg.mqtt.discovery:
            for topic, payload in discovery_messages(cfg, self.topics):
                self.link.publish(topic, payload, retain=True)
        t = threading.Thread(target=self._store_cursor, name="journal-cursor", daemon=True)
        t.start()
        self._threads.append(t)
        self._start_sources()
        self._owner = threading.Thread(target=self._run, name="engine-owner", daemon=True)
        self._owner.start()
        self.started.set()
        self.publish_info()
        t = threading.Thread(target=self._diagnostics_loop, name="diagnostics", daemon=True)
        t.start()
        self._threads.append(t)
        status = f"table {cfg.table.id}: hand {self.service.hand_id}"
        if not self.registry.decks:
            # Loud: every tag will read as unknown and every card as an irregularity.
            log.error("NO DECK ENROLLED: every card will be an unknown tag; enrol one with "
                      "`tablectl enroll --deck A ...` (INSTALL.md step 2)", extra={"table_id": cfg.table.id})
            status += " - NO DECK ENROLLED"
        elif cfg.table.deck not in self.registry.decks:
            log.error("deck %r (table.deck) is not enrolled; enrolled: %s", cfg.table.deck,
                      ", ".join(sorted(self.registry.decks)), extra={"table_id": cfg.table.id})
            status += f" - deck {cfg.table.deck} not enrolled"
        self.notifier.ready(status)
        return self

    def stop(self) -> None:
        if self._stop.is_set():
            return
        self.notifier.stopping()
        self._stop.set()
        with self._cursor:
            self._cursor.notify_all()
        self.inbox.put(None)
        if self._owner is not None:
            self._owner.join(5)
        for name, src in reversed(self.sources.items()):
            try:
                src.stop()
            except Exception:
                log.exception("source %s failed to stop", name)
        for t in self._threads:
            t.join(2)
        if self.publisher is not None:
            self.publisher.close()
        if self.floor_ack is not None:
            self.floor_ack.stop()
        if self.floor_orders is not None:
            self.floor_orders.stop()
        if self.link is not None:
            self.link.stop()
        self._write_cursor()
        if self.journal is not None:
            self.journal.close()

    def __enter__(self) -> Daemon:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def run_forever(self) -> int:
        """``tablectl run``: serve until SIGTERM/SIGINT, feeding the systemd watchdog."""
        stop = threading.Event()

        def _signal(signum, frame):  # noqa: ARG001
            log.info("signal %s: stopping", signum)
            stop.set()

        signal.signal(signal.SIGTERM, _signal)
        signal.signal(signal.SIGINT, _signal)
        if not self.started.is_set():
            self.start()
        period = watchdog_interval() or 2.0
        next_info = time.monotonic() + INFO_PERIOD
        while not stop.wait(period):
            if self.healthy():
                self.notifier.watchdog()
            else:
                log.warning("unhealthy: watchdog not fed", extra={"health": self.health()})
            if time.monotonic() >= next_info:
                next_info = time.monotonic() + INFO_PERIOD
                self.publish_info()
        self.stop()
        return 0

    # ------------------------------------------------------------------ inputs
    def post(self, event: Event, source: str = "") -> None:
        """Hardware threads: hand an event to the owner and return at once."""
        self.inbox.put(_Item(event, source, None, time.monotonic()))

    def post_once(self, event: Event, source: str, transaction: str) -> Future:
        """Hand an event to the owner with a transaction id (a floor's order it carries out): journaled
        with the id and applied once, however often it is posted; the future holds the outputs, a
        duplicate's seq, or the refusal."""
        fut: Future = Future()
        self.inbox.put(_Item(event, source, fut, time.monotonic(), transaction, request=True))
        return fut

    def apply_now(self, event: Event, source: str = "") -> None:
        """Apply on the caller's thread, under the owner lock (the RFID pipeline: a card is
        journaled, applied and published before the serial thread reads the next frame)."""
        with self.owner_lock:
            self._apply(_Item(event, source, None, time.monotonic()))

    def submit(self, event: Event, source: str = "console", timeout: float = 10.0) -> list[Output]:
        """Apply an event through the owner thread and wait: returns the outputs or raises
        :class:`Rejected` (nothing changed)."""
        fut: Future = Future()
        self.inbox.put(_Item(event, source, fut, time.monotonic()))
        return fut.result(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.owner_beat = now = time.monotonic()
            due = self._state_due
            try:
                item = self.inbox.get(timeout=0.25 if due is None else max(0.0, due - now))
            except queue.Empty:
                item = _WAKE
            if item is None:
                break
            try:
                if self._held:
                    self._retry_held()
                if item is not _WAKE:
                    with self.owner_lock:
                        self._apply(item)
                self._publish_state_if_due()
            except BaseException as exc:  # noqa: BLE001 - the owner thread outlives any one event
                self._owner_failed(item, exc)
        try:
            self._publish_state_if_due(force=True)
        except Exception:
            log.exception("could not publish the last state")

    def _owner_failed(self, item: Any, exc: BaseException) -> None:
        """Whatever escaped (a logging handler, a publisher bug...): answer the waiting request,
        never let it take the owner thread down."""
        self.counters["owner_errors"] += 1
        try:
            log.error("owner loop: %s while applying %s", type(exc).__name__, getattr(getattr(item, "event", None),
                                                                                       "kind", item))
        except Exception:  # noqa: BLE001, S110 - even the error report may fail; the loop goes on
            pass
        future = getattr(item, "future", None)
        if future is not None and not future.done():
            future.set_exception(exc if isinstance(exc, Exception) else RuntimeError(str(exc)))

    def _publish_state_if_due(self, force: bool = False) -> None:
        due = self._state_due
        if due is None or (not force and time.monotonic() < due):
            return
        with self.owner_lock:
            if self._state_due is not None and self.publisher is not None and self.service is not None:
                self._state_due = None
                self.publisher.publish_state(self.service)

    def _apply(self, item: _Item, retry: bool = False) -> bool:
        """Journal and apply one event (the owner lock is held).  False when it could not be
        journaled and is held for later (:meth:`_journal_failed`)."""
        assert self.service is not None and self.publisher is not None
        try:
            if self._held and not retry:
                # Behind events that wait for the journal: the table's order is kept.
                raise JournalFullError(self.journal_fault or "events are waiting for the journal")
            if item.request and item.future is not None:
                duplicate = self._precheck_console(item)
                if duplicate is not None:
                    item.future.set_result(duplicate)
                    return True
            outputs = self.service.submit(item.event, source=item.source, transaction=item.transaction)
        except JournalError as exc:
            self._journal_failed(item, exc, front=retry)
            return False
        except Rejected as exc:
            log.info("rejected %s: %s", item.event.kind, exc, extra={"source": item.source})
            if item.future is not None:
                item.future.set_exception(exc)
            return True
        except Exception as exc:  # never lose the owner thread to one bad event
            log.exception("failed to apply %s", item.event.kind)
            if item.future is not None:
                item.future.set_exception(exc)
            return True
        try:
            self.publisher.publish(outputs, self.service, state=False)
        except Exception:  # journaled and applied: a publishing bug must not stop the table
            log.exception("failed to publish the outputs of %s", item.event.kind)
        if self._state_due is None:
            self._state_due = time.monotonic() + STATE_DEBOUNCE
            if threading.current_thread() is not self._owner:
                self.inbox.put(_WAKE)  # the owner thread's loop publishes it when due
        for hook in self.applied:
            hook(item.event, item.source)
        self._after(outputs)
        if item.future is not None:
            item.future.set_result(outputs)
        return True

    def set_broadcast_delay(self, delay: float | str, by: str = "daemon") -> None:
        """Change the broadcast delay while the table runs, journaled (a restart keeps it): what is
        held already never leaves sooner than the new delay allows, nothing held is dropped, and
        nothing leaves before what was queued before it (Publisher.set_delay, link.keep_order).
        The producer's request comes here too (``producer/broadcast_delay``).  Raises
        :class:`Rejected` for a value out of ``[broadcast]``'s range (nothing changed).  Waits for
        the owner thread: call it from any other thread."""
        refusal = self.config.broadcast.refusal(delay)
        if refusal is not None:
            raise Rejected(refusal)
        self.submit(SetBroadcastDelay("end_of_hand" if delay in ("end_of_hand", "hand_end") else delay, source=by))

    def _journaled_delay(self) -> float | str:
        """The delay in force at start: the journal's last change, if the config still allows it."""
        assert self.service is not None
        delay = self.service.broadcast_delay
        if delay is None:
            return self.config.broadcast.delay
        refusal = self.config.broadcast.refusal(delay)
        if refusal is not None:
            log.warning("the journaled broadcast delay is refused now (%s): the config's %s applies", refusal,
                        self.config.broadcast.delay)
            return self.config.broadcast.delay
        return delay

    def _request_name(self, topic: str) -> str:
        """``seat`` for ``<root>/request/seat``, ``producer/broadcast_delay`` for the producer's
        topic: a console's ``request/broadcast_delay`` is an unknown request, never the producer's."""
        root = self.topics.root + "/"
        rel = topic[len(root):] if topic.startswith(root) else topic
        return rel[len("request/"):] if rel.startswith("request/") else rel

    # ------------------------------------------------------------------ a journal that cannot be written
    def _journal_failed(self, item: _Item, exc: JournalError, front: bool) -> None:
        """An event the journal did not take (a full disk): nothing of it was applied.  A request
        someone waits on (the console) is refused, and may be sent again; an event from the table
        itself (a card, a button) is held, in order, and applied once the journal takes it.  The
        table says so at once: an alert on ``alert/active`` that the display shows."""
        if item.future is not None:
            item.future.set_exception(Rejected(
                f"journal full: the table cannot record anything now ({exc}); nothing changed"))
        elif front:
            self._held.appendleft(item)
        else:
            self._held.append(item)
            self.counters["held_events"] += 1
        self._held_retry = time.monotonic() + HELD_RETRY
        if self.journal_fault is None:
            self.journal_fault = str(exc)
            self.counters["journal_faults"] += 1
            log.error("JOURNAL CANNOT BE WRITTEN: %s; events are held until it can", exc,
                      extra={"table_id": self.config.table.id, "reason": "journal_full"})
            self._publish_journal_alert()

    def _retry_held(self) -> None:
        """The owner thread: journal and apply the held events, oldest first, once the journal
        takes them again; then the alert is cleared."""
        if time.monotonic() < self._held_retry:
            return
        with self.owner_lock:
            while self._held:
                if not self._apply(self._held.popleft(), retry=True):
                    return
            if self.journal_fault is not None:
                log.warning("the journal is written again: held events applied in order",
                            extra={"table_id": self.config.table.id})
                self.journal_fault = None
                self._publish_journal_alert()

    def journal_alert(self) -> dict[str, Any] | None:
        """The ``alert/active`` payload while the journal cannot be written (a fault, not a
        ruling: nothing is journaled for it, since nothing can be)."""
        if self.journal_fault is None or self.service is None or self.journal is None:
            return None
        full = "full" in self.journal_fault
        return {
            "schema": 1, "id": "journal-full", "seq": self.journal.last_seq, "ts": round(self.clock(), 3),
            "hand_id": self.service.hand_id or None, "ruling": None,
            "reason": "journal_full" if full else "journal_unwritable", "remedy": None,
            "message": ("Journal full: the table cannot record. Stop dealing and free disk space."
                        if full else "The journal cannot be written: stop dealing and call the floor."),
            "steps": ["Stop dealing until this alert clears.",
                      "Free space on the controller's disk (or fix the journal's disk).",
                      "Cards already placed are held in their order and counted when the journal is written again."],
            "citations": [], "seat": None, "card": None, "severity": "fault", "requires_ack": False,
        }

    def _publish_journal_alert(self) -> None:
        """The journal alert on ``alert/active``, or, once it clears, the table's own active alert."""
        if self.link is None or self.service is None:
            return
        alert = self.journal_alert()
        if alert is not None:
            self.link.publish(self.topics.alert, alert)
        else:
            alert = self.service.alerts[0].payload() if self.service.alerts else None
        self.link.publish(self.topics.alert_active, alert if alert is not None else b"", retain=True)
        self.publish_info()

    def _log_outputs(self, outputs: list[Output]) -> None:
        """Rulings, hands and table changes in the log, with journal fields (``journalctl -t
        tablectl HAND_ID=17``).  Only public words: an alert never names a hidden card."""
        assert self.service is not None
        tid = self.config.table.id
        for out in outputs:
            r = out.result
            if isinstance(r, AlertRaised):
                log.warning("ruling %s (%s): %s", r.reason, r.severity, r.message,
                            extra={"seq": out.seq, "hand_id": r.hand_id, "table_id": tid, "reason": r.reason,
                                   "remedy": r.remedy, "citations": "; ".join(r.citations)})
            elif isinstance(r, HandBegan):
                hand = r.started
                log.info("hand %s: %s, button %s, seats %s", self.service.hand_id, hand.game, hand.button,
                         list(hand.seats), extra={"seq": out.seq, "hand_id": self.service.hand_id, "table_id": tid})
            elif isinstance(r, HandEnded):
                winners = ", ".join(f"seat {w.seat}" + (f" ({w.hand})" if w.hand else "")
                                    for w in r.outcome.winners) or "none"
                log.info("hand %s ended: %s; winners %s", self.service.hand_id, r.outcome.result, winners,
                         extra={"seq": out.seq, "hand_id": self.service.hand_id, "table_id": tid,
                                "result": r.outcome.result})
            elif isinstance(r, TableChange):
                log.info("table: %s", " ".join(f"{k}={v}" for k, v in r.payload().items()),
                         extra={"seq": out.seq, "table_id": tid})

    def _after(self, outputs: list[Output]) -> None:
        try:
            self._log_outputs(outputs)
        except Exception:  # noqa: BLE001, S110 - applied and published: a log line cannot undo it
            pass
        for name, src in self.sources.items():
            try:
                src.after(outputs)
            except Exception:
                log.exception("source %s failed on the outputs", name)
        for listener in self.listeners:
            try:
                listener(outputs)
            except Exception:
                log.exception("listener failed")

    def _delivered(self, seq: int) -> None:
        """The broker has everything up to ``seq``.  Stored a moment later, batched: a disk
        flush per acknowledgement would compete with the journal's own.  After a crash the
        stored cursor may lag by that moment; the restart then republishes a few messages the
        broker already had (at least once; payloads carry ``seq`` so readers drop repeats)."""
        with self._cursor:
            if seq > self._cursor_seq:
                self._cursor_seq = seq
                self._cursor.notify_all()

    def _cursor_passed(self, stored: int) -> bool:
        return self._cursor_seq > stored or self._stop.is_set()

    def _store_cursor(self, every: float = 0.25) -> None:
        stored = 0
        while not self._stop.is_set():
            with self._cursor:
                self._cursor.wait_for(functools.partial(self._cursor_passed, stored))
            if self._stop.wait(every):
                break
            stored = self._write_cursor()

    def _write_cursor(self) -> int:
        seq = self._cursor_seq
        if self.journal is not None and seq:
            try:
                self.journal.mark_published(min(seq, self.journal.last_seq))
            except JournalError as exc:  # a full disk: the journal alert says so; stored once it clears
                log.warning("could not store the delivered cursor: %s", exc)
            except Exception:
                log.exception("could not store the delivered cursor")
        return seq

    # ------------------------------------------------------------------ console requests
    def _on_request(self, name: str, payload: bytes, response_topic: str | None, correlation: bytes | None,
                    ack: Callable[[], None] | None = None) -> None:
        """The link's request thread: parse, hand to the owner, answer.  An invalid request
        changes nothing.  ``ack`` tells the broker the request is done with (the session is
        persistent: a request not acknowledged before a crash is delivered again, and its
        transaction id keeps it from being applied twice)."""
        transaction = request_transaction(payload)
        reply = _Reply(name, response_topic, correlation, transaction, ack)
        if response_topic is not None and not self.topics_allow_response(response_topic):
            self.counters["bad_response_topics"] += 1
            reply.topic = None  # answered on response/<name>, never on the topic the console chose
            self._finish(reply, response_payload(transaction, False, (
                f"response topic {clean_topic(response_topic)!r} refused: responses go under "
                f"{self.topics.response}/ (no wildcards)")))
            return
        try:
            fields = parse_request(name, payload)
            event = request_event(name, fields, self.service.table.rotations if self.service is not None else None)
            refusal = self.config.broadcast.refusal(event.delay) if isinstance(event, SetBroadcastDelay) else None
            if refusal is not None:
                raise RequestError(f"{name}: {refusal}; the delay is unchanged", transaction)
        except RequestError as exc:
            self._finish(reply, response_payload(exc.transaction or transaction, False, str(exc)))
            return
        fut: Future = Future()
        fut.add_done_callback(lambda f: self._answer(f, reply))
        self.inbox.put(_Item(event, "console", fut, time.monotonic(), transaction, request=True))

    def _refuse_request(self, name: str, payload: bytes, response_topic: str | None, correlation: bytes | None,
                        reason: str) -> None:
        """A request the link refused before parsing (a retained one): answered, never applied."""
        transaction = request_transaction(payload)
        topic = response_topic if response_topic is not None and self.topics_allow_response(response_topic) else None
        self._respond(_Reply(name, topic, correlation, transaction), response_payload(transaction, False, reason))

    def topics_allow_response(self, topic: str) -> bool:
        """A response topic the controller may publish on: ``<root>/response`` or below it, no
        wildcard, no empty level, nothing the MQTT spec forbids (docs/mqtt.md)."""
        base = self.topics.response
        if topic != base and not topic.startswith(base + "/"):
            return False
        if any(ch in topic for ch in "+#\0") or "//" in topic or topic.endswith("/"):
            return False
        try:
            return len(topic.encode("utf-8")) <= MAX_RESPONSE_TOPIC
        except UnicodeEncodeError:
            return False

    def _answer(self, fut: Future, reply: _Reply) -> None:
        exc = fut.exception()
        if exc is not None:
            self._finish(reply, response_payload(reply.transaction, False, str(exc) or type(exc).__name__))
            return
        outputs = fut.result()
        if isinstance(outputs, _Duplicate):
            result: dict[str, Any] = {"seq": outputs.seq, "outputs": [], "duplicate": True}
        else:
            result = {"seq": outputs[0].seq if outputs else None, "outputs": [o.kind for o in outputs]}
        self._finish(reply, response_payload(reply.transaction, True, result=result))

    def _finish(self, reply: _Reply, payload: dict) -> None:
        try:
            self._respond(reply, payload)
        finally:
            if reply.ack is not None:
                reply.ack()

    def _respond(self, reply: _Reply, payload: dict) -> None:
        """zigbee2mqtt's convention: ``request/<name>`` is answered on ``response/<name>``, or on
        the MQTT v5 response topic (checked: only under ``response/``) with its correlation data."""
        if self.link is None:
            return
        if reply.topic:
            self.link.respond(reply.topic, reply.correlation, payload)
        else:
            self.link.respond(self.topics.response + "/" + reply.name, reply.correlation, payload)

    def _precheck_console(self, item: _Item) -> _Duplicate | None:
        """The request-validation layer, under the owner lock: a transaction already journaled is
        answered again without applying it twice; an action out of turn is refused."""
        assert self.service is not None and self.journal is not None
        if item.transaction:
            seq = self.journal.transaction_seq(item.transaction)
            if seq is not None:
                self.counters["duplicate_requests"] += 1
                return _Duplicate(seq)
        ev = item.event
        if isinstance(ev, Act):
            engine = self.service.engine
            refusal = engine.refusal(ev, in_turn=True) if engine is not None else None
            if refusal is not None:
                raise Rejected(refusal)
        return None

    # ------------------------------------------------------------------ sources
    def _start_sources(self) -> None:
        """Every source plug-in the config enables (or a backend stands in for), in start order."""
        def engine() -> HandEngine | None:
            return self.service.engine if self.service is not None else None

        for name, plugin in in_start_order([*self.config.sources_named(), *self.backends]).items():
            section = self.config.source(name)
            backend = self.backends.get(name)
            if not plugin.enabled(section, backend):
                continue
            ctx = SourceContext(config=self.config, registry=self.registry, post=self.post, apply_now=self.apply_now,
                                owner_lock=self.owner_lock, stopping=self._stop, engine=engine,
                                peers=dict(self.sources), backend=backend)
            src = plugin.build(ctx, section)
            src.start()
            self.sources[name] = src
            log.info("source started", extra={"source": name})

    # ------------------------------------------------------------------ info
    def info(self) -> dict[str, Any]:
        """The retained ``info`` payload: version, a config summary (no secret), health."""
        from controller import __version__

        cfg = self.config
        return {
            "schema": 1, "ts": round(self.clock(), 3), "version": __version__, "table_id": cfg.table.id,
            "config": {
                "size": cfg.table.size, "game": cfg.table.game, "structure": cfg.table.effective_structure,
                "rules": cfg.table.rules, "event": cfg.table.event, "deck": cfg.table.deck,
                "broadcast_delay": cfg.broadcast.delay, "journal_sync": cfg.journal.sync,
                "sources": sorted(self.sources),
            },
            "healthy": self.healthy() if self.started.is_set() else None,
            "health": self.health(),
        }

    def publish_info(self) -> None:
        if self.link is not None:
            try:
                self.link.publish(self.topics.root + "/info", self.info(), retain=True)
            except Exception:
                log.exception("could not publish info")

    # ------------------------------------------------------------------ diagnostics
    def diagnostics(self) -> dict[str, Any]:
        """The ``diagnostics`` payload (diagnostics.schema.json): the antenna board's per-antenna
        reads, misses, collisions, dead readers and scan cycle, and the camera's state."""
        rfid, camera = self.sources.get("serial"), self.sources.get("camera")
        cam = None
        if camera is not None:
            h = camera.health()
            cam = {"running": bool(h.get("loop_alive")), "failures": int(h.get("failures") or 0)}
        board = getattr(rfid, "diagnostics_payload", None)  # the antenna board's source (firmware_bridge/source.py)
        return {"schema": 1, "ts": round(self.clock(), 3), "table_id": self.config.table.id,
                "rfid": board() if board is not None else None, "camera": cam}

    def _diagnostics_loop(self) -> None:
        """Publish ``diagnostics`` (retained) when a count changed, and every DIAGNOSTICS_REFRESH s."""
        last: Any = None
        sent = 0.0
        while not self._stop.wait(DIAGNOSTICS_PERIOD):
            try:
                payload = self.diagnostics()
                counts = json.dumps(_counts_only(payload), sort_keys=True)
                if self.link is not None and (counts != last or time.monotonic() - sent >= DIAGNOSTICS_REFRESH):
                    self.link.publish(self.topics.diagnostics, payload, retain=True)
                    last, sent = counts, time.monotonic()
            except Exception:
                log.exception("could not publish diagnostics")

    # ------------------------------------------------------------------ health
    def health(self) -> dict[str, Any]:
        now = time.monotonic()
        out: dict[str, Any] = {
            "owner_alive": bool(self._owner and self._owner.is_alive()),
            "owner_beat_age": round(now - self.owner_beat, 3),
            "inbox": self.inbox.qsize(),
            "decks": sorted(self.registry.decks),
            "counters": dict(self.counters),
            "journal": {"fault": self.journal_fault, "held": len(self._held)},
        }
        if self.link is not None:
            out["mqtt"] = {"connected": self.link.connected, "backlog": self.link.backlog,
                           "outbox_age": round(now - self.link.last_loop, 3),
                           "network_age": round(now - self.link.net_beat, 3),
                           "link_alive": self.link.alive,
                           "counters": dict(self.link.counters)}
        for name, src in self.sources.items():
            out[name] = {**src.health(), "healthy": src.healthy()}
        return out

    def healthy(self) -> bool:
        """The watchdog's test: every loop is turning (not: every peer is reachable)."""
        h = self.health()
        if not h["owner_alive"] or h["owner_beat_age"] > 5:
            return False
        mqtt = h.get("mqtt")
        if mqtt is not None and (mqtt["outbox_age"] > 5 or mqtt["network_age"] > 5 or not mqtt["link_alive"]):
            return False
        return all(h[name]["healthy"] for name in self.sources)


def _counts_only(payload: dict[str, Any]) -> dict[str, Any]:
    """A diagnostics payload less what changes by itself (clock, ages): what says it changed."""
    out = {k: v for k, v in payload.items() if k != "ts"}
    rfid = out.get("rfid")
    if rfid:
        out["rfid"] = {**rfid, "link": {k: v for k, v in rfid["link"].items() if k != "last_heartbeat_age"},
                       "antennas": [{k: v for k, v in a.items() if k != "last_read_s"} for a in rfid["antennas"]],
                       "scan": {k: v for k, v in rfid["scan"].items() if k not in ("cycles", "cycle_ms")}}
    return out


def controller_client_id(table_id: str, username: str | None, password: str | None) -> str:
    """The controller's MQTT client id: ``tablectl-<table>-<12 hex>``, the suffix derived from its
    login (stable across restarts, so the persistent session is found again).  Mosquitto lets any
    login connect with any client id and drops the older connection; an id no other login can
    know keeps a display or console login from taking the controller's session over."""
    import hashlib

    if not password:
        return f"tablectl-{table_id}"
    digest = hashlib.sha256(f"{username}\0{password}\0{table_id}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"tablectl-{table_id}-{digest[:12]}"


def discovery_messages(config: CoreConfig, topics: Topics) -> list[tuple[str, dict[str, Any]]]:
    """Home Assistant MQTT discovery: the table's public, cheap entities (online, active alert,
    game, hand number), each read from a public topic (never a secret one)."""
    from controller import __version__

    tid = config.table.id
    node = f"poker_table_{tid}".replace("-", "_")
    prefix = config.mqtt.discovery_prefix
    device = {"identifiers": [node], "name": f"Poker table {tid}", "manufacturer": "poker-table-controller",
              "model": f"{config.table.size}-seat table", "sw_version": __version__}
    common = {"availability_topic": topics.availability, "payload_available": "online",
              "payload_not_available": "offline", "device": device}
    entities = [
        ("binary_sensor", "online", {"name": "Online", "state_topic": topics.availability, "payload_on": "online",
                                     "payload_off": "offline", "device_class": "connectivity"}),
        # Read off the retained state (published at start, its `alert` null when none is up): the
        # sensor says "none" from the first moment, and a cleared alert is JSON null there, where
        # alert/active's empty payload is no JSON for the attributes.
        ("sensor", "alert", {"name": "Active alert", "state_topic": topics.state, "icon": "mdi:alert",
                             "value_template": "{{ value_json.alert.reason if value_json.alert else 'none' }}",
                             "json_attributes_topic": topics.state,
                             "json_attributes_template": "{{ (value_json.alert or {}) | tojson }}"}),
        ("sensor", "game", {"name": "Game", "state_topic": topics.state, "icon": "mdi:cards-playing",
                            "value_template": "{{ value_json.table.game }}"}),
        ("sensor", "hand_number", {"name": "Hand number", "state_topic": topics.state, "icon": "mdi:counter",
                                   "value_template": "{{ value_json.table.hand_number }}",
                                   "state_class": "total_increasing"}),
    ]
    out = []
    for component, obj, fields in entities:
        # default_entity_id (domain.slug) replaces object_id, which Home Assistant stops honouring in 2026.4.
        payload = {**fields, **common, "unique_id": f"{node}_{obj}", "default_entity_id": f"{component}.{node}_{obj}"}
        if component == "binary_sensor":
            payload.pop("availability_topic")
            payload.pop("payload_available")
            payload.pop("payload_not_available")
        out.append((f"{prefix}/{component}/{node}/{obj}/config", payload))
    return out
