"""Host side of the serial link: turns whatever the wire does into exact presence changes.

Runs in its own thread.  It opens the port with ``serial.serial_for_url`` (so
``/dev/ttyACM0``, ``/dev/pts/N`` and ``socket://host:port`` all work), handshakes,
and keeps a *presence model*: the set of ``(antenna, uid)`` the device says are on
the table.  Every output :class:`PresenceChange` is a difference of that set, which
is why duplicated or replayed reports can never produce a second change.

Ordering and loss are handled with the device's 16-bit sequence number:

* in-order frames are applied; frames ahead of the expected number wait in a small
  reorder buffer for ``reorder_window`` seconds, then the link declares a gap;
* frames behind it (duplicates, late copies) are dropped and counted;
* a gap, a heartbeat whose tag count disagrees with the model, a reopened port or a
  new boot id (device reset) all end the same way: request a full INVENTORY, and
  reconcile the model against it (emitting only the differences), then continue
  with the frames that follow the snapshot.

A stalled device (its loop stopped for a while, then one scan found several new cards) reports
those cards in antenna order, not in the order they landed.  The link sees the stall coming: a
presence frame after a silence longer than a heartbeat period opens a *stall window*; the
changes in it wait for the next heartbeat, whose ``uptime_ms`` says whether the device's own
loop stalled (a heartbeat late by its own clock).  If it did and two or more cards arrived, they
go out with ``ordered=False`` (the pipeline asks the dealer to confirm them); otherwise they go
out as they came.  Outside such a window nothing waits (issue 26, F4).

Corrupt frames are counted and logged (rate-limited) and never become a change.
A device that stops heartbeating is considered hung: the link sends REBOOT and
reopens the port, with exponential backoff, forever (unplug/replug is the same path).
``health()`` exposes what a systemd watchdog needs.
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import select
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field

import serial

from controller.errors import PokerTableError
from firmware_bridge import protocol as p
from firmware_bridge.diagnostics import ReaderDiagnostics
from firmware_bridge.firmware import bridge_proto as fw

log = logging.getLogger(__name__)

SEQ_MOD = 0x10000
SEQ_HALF = 0x8000


def seq_distance(seq: int, expected: int) -> int:
    """How far ``seq`` is ahead of ``expected`` (serial-number arithmetic); negative = behind."""
    d = (seq - expected) % SEQ_MOD
    return d - SEQ_MOD if d >= SEQ_HALF else d


class IncompatibleDeviceError(PokerTableError, RuntimeError):
    """The device speaks another protocol version; the link refuses to use it."""


@dataclass(frozen=True, slots=True)
class PresenceChange:
    """Tag ``uid`` (upper-case hex) arrived at / left ``antenna``.

    ``source`` is ``event`` (a TAG_ARRIVE/TAG_LEAVE frame, ``seq`` is its number) or
    ``inventory`` (found by reconciling a snapshot after a loss or reset).  Frames the host
    missed are first asked again (REPLAY, the device keeps a ring of recent frames), so their
    order is the table's; only when they are gone too do several arrivals come from a snapshot
    with ``ordered=False``: their order is unknown, and the pipeline asks the dealer, never guesses.
    """

    antenna: int
    uid: str
    arrived: bool
    t: float
    source: str = "event"
    seq: int | None = None
    boot_id: int | None = None
    ordered: bool = True  # False: learnt from a snapshot with other arrivals whose order is unknown


@dataclass(frozen=True, slots=True)
class LinkConfig:
    """Host timings (seconds).  Defaults suit the reference firmware's 500 ms heartbeat."""

    baudrate: int = 115200
    poll_interval: float = 0.02  # longest the thread sleeps waiting for bytes
    write_timeout: float = 0.5
    handshake_timeout: float = 1.0  # HELLO expected this long after HELLO_ACK(0)
    handshake_retries: int = 3  # then reopen the port
    heartbeat_timeout: float | None = None  # None: 4 heartbeat periods, at least 1 s
    reorder_window: float = 0.05  # how long a sequence gap may stay open before recovery
    max_reorder: int = 64
    inventory_timeout: float = 0.5  # re-request an inventory not received within this
    ack_timeout: float = 0.3
    command_retries: int = 3
    # REPLAYs of one gap before a snapshot decides: on a noisy line the replayed copies are lost too,
    # and a snapshot knows neither the order of what it finds nor a card that came and went.
    replay_tries: int = 4
    reopen_backoff_min: float = 0.05
    reopen_backoff_max: float = 5.0
    reboot_on_watchdog: bool = True
    device: p.Configure | None = None  # sent after every handshake (a reset forgets it)
    log_interval: float = 1.0  # at most one corrupt-frame warning per reason per interval
    down_after: float = 10.0  # unsynchronised this long (unplugged, refused, silent): health says down
    # The device's seconds per host second: 1 for a real board.  An emulated one runs slower (the
    # RP2040 on rp2040js: ~0.1), and a silence measured on the host's clock is then no stall of
    # its loop: the stall window (below) scales it to the device's clock.
    device_time_scale: float = 1.0


@dataclass(frozen=True, slots=True)
class LinkHealth:
    """A snapshot for monitoring; ``healthy`` is what a systemd watchdog should check."""

    state: str
    connected: bool
    synced: bool
    url: str
    boot_id: int | None
    firmware_version: str | None
    antenna_count: int | None
    last_heartbeat_age: float | None
    last_frame_age: float | None
    present: int
    counters: dict[str, int]
    recent_faults: tuple[p.Fault, ...] = ()
    error: str | None = None
    thread_alive: bool = True
    unsynced_for: float | None = None  # seconds since the link was last in sync (None: in sync)
    down_after: float = 10.0

    @property
    def healthy(self) -> bool:
        return self.synced and self.error is None

    @property
    def down(self) -> bool:
        """What a watchdog should act on: the link thread is dead, the device was refused (another
        protocol version), or no synchronised device for ``down_after`` seconds."""
        return (not self.thread_alive or self.error is not None
                or (self.unsynced_for is not None and self.unsynced_for > self.down_after))

    def to_dict(self) -> dict:
        return {
            "state": self.state,
            "connected": self.connected,
            "synced": self.synced,
            "healthy": self.healthy,
            "down": self.down,
            "thread_alive": self.thread_alive,
            "unsynced_for": None if self.unsynced_for is None else round(self.unsynced_for, 3),
            "url": self.url,
            "boot_id": self.boot_id,
            "firmware_version": self.firmware_version,
            "antenna_count": self.antenna_count,
            "last_heartbeat_age": self.last_heartbeat_age,
            "last_frame_age": self.last_frame_age,
            "present": self.present,
            "counters": dict(self.counters),
            "recent_faults": [
                {"source": f.source, "code": f.code, "detail": f.detail} for f in self.recent_faults
            ],
            "error": self.error,
        }


@dataclass(slots=True)
class _Assembly:
    key: tuple[int, int, int, int]  # boot id, snapshot, first seq, parts
    parts: dict[int, tuple[tuple[int, bytes], ...]] = field(default_factory=dict)


@dataclass(slots=True)
class _Pending:
    msg: p.Message
    sent_at: float
    tries: int = 1


class BridgeLink:
    """The link thread.  ``start()``, then consume ``changes`` (or pass ``on_change``).

    ``on_change`` and ``on_fault`` run in the link thread and must not block.
    """

    def __init__(
        self,
        url: str,
        config: LinkConfig | None = None,
        on_change: Callable[[PresenceChange], None] | None = None,
        on_fault: Callable[[p.Fault], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        diagnostics: ReaderDiagnostics | None = None,
    ) -> None:
        self.url = url
        #: Per antenna reads, collisions, dead readers and the scan cycle, from the frames (diagnostics.py).
        self.diagnostics = diagnostics or ReaderDiagnostics(clock=clock)
        self.config = config or LinkConfig()
        self.changes: queue.Queue[PresenceChange] = queue.Queue()
        self._on_change = on_change or self.changes.put
        self._on_fault = on_fault
        self._clock = clock
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._synced = threading.Event()
        self._thread: threading.Thread | None = None
        self._actions: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._port: serial.SerialBase | None = None
        self._decoder = p.FrameDecoder()
        self.counters: Counter[str] = Counter()
        self._faults: deque[p.Fault] = deque(maxlen=16)
        self._error: Exception | None = None
        self._state = "stopped"
        self._model: set[tuple[int, str]] = set()
        self._hello: p.Hello | None = None
        self._boot_id: int | None = None
        self._expected = 0
        self._buffer: dict[int, p.Message] = {}
        self._gap_since: float | None = None
        self._assembly: _Assembly | None = None
        self._need_inventory = True
        self._inventory_due: float | None = None
        self._host_seq = 0
        self._pending: dict[int, _Pending] = {}
        self._last_heartbeat: float | None = None
        self._last_frame: float | None = None
        self._handshake_deadline = 0.0
        self._handshake_tries = 0
        self._next_open = 0.0
        self._backoff = self.config.reopen_backoff_min
        self._last_log: dict[str, float] = {}
        self._unsynced_since: float | None = None
        self._replay: tuple[int, float, int] | None = None  # (first seq asked, sent at, command seq)
        self._replay_failed = False  # the ring no longer held what was missed: a snapshot decides
        self._replay_tries = 0  # REPLAYs sent for the gap being filled
        self._explained: set[tuple[int, str, bool]] = set()
        # (command seq, sent at, the snapshot's differences, the unexplained arrivals), while the
        # device replays its ring to order a snapshot's arrivals; the ring's arrivals, in order.
        self._order_replay: tuple[int, float, list, set] | None = None
        self._ring_order: dict[tuple[int, str, bool], int] = {}
        self._ring_seqs: set[int] = set()  # every frame the ring replay brought: holes mean lost ones
        self._ring_marks: dict[int, bool] = {}  # the ring's FAULT 7 (True) and HEARTBEAT (False) seqs
        self._ring_arrivals: dict[tuple[int, str, bool], int] = {}  # the ring's arrivals' seqs
        self._last_missing: int | None = None  # the last lost frame of a reconciled gap (distance)
        self._when: dict[tuple[int, str, bool], int] = {}  # an explained change's place in the gap
        # Changes made while a snapshot's differences wait for that replay: the model already holds
        # the snapshot, so they must follow its differences, or a leave could precede its arrival.
        self._held: list[PresenceChange] = []
        self._expect_wanted: tuple[int, ...] = ()
        self._expect_sent: tuple[int, ...] | None = None
        self._expect_at = 0.0
        # Stall detection: how long the line was silent before the frame being handled; the last
        # heartbeat's (uptime_ms, scan_cycles); the open stall window (opened at, changes held).
        self._silence = 0.0
        self._last_beat: tuple[int, int] | None = None
        self._stall: tuple[float, list[PresenceChange], bool] | None = None  # + stalled already known

    # -- public API -------------------------------------------------------------
    def start(self) -> BridgeLink:
        if self._thread is not None:
            raise RuntimeError("link already started")
        self._stop.clear()
        self._state = "opening"
        self._unsynced_since = self._clock()
        self._thread = threading.Thread(target=self._run, name=f"bridge-link {self.url}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self._close()
        if self._error is None:
            self._state = "stopped"

    def __enter__(self) -> BridgeLink:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_synced(self, timeout: float | None = None) -> bool:
        """Block until the model matches the device (handshake + inventory done).

        Raises :class:`IncompatibleDeviceError` if the device was refused.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._error is not None:
                raise self._error
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if self._synced.wait(0.05 if remaining is None else min(0.05, remaining)):
                return True
            if remaining is not None and remaining <= 0:
                return False

    def request_inventory(self) -> None:
        """Ask for a full snapshot and reconcile (thread-safe)."""
        self._actions.put("inventory")

    def expect(self, antennas: tuple[int, ...]) -> None:
        """Tell the device where the next cards should land (thread-safe; sent when it changes and
        re-sent every second, so a rebooted device learns it again)."""
        self._expect_wanted = tuple(antennas)[: fw.MAX_EXPECT]

    def reboot_device(self) -> None:
        """Send REBOOT (thread-safe); the link resynchronises after the device's HELLO."""
        self._actions.put("reboot")

    def presence(self) -> dict[int, frozenset[str]]:
        """The current model: antenna -> UIDs present."""
        with self._lock:
            out: dict[int, set[str]] = {}
            for antenna, uid in self._model:
                out.setdefault(antenna, set()).add(uid)
        return {a: frozenset(u) for a, u in sorted(out.items())}

    @property
    def error(self) -> Exception | None:
        return self._error

    def health(self) -> LinkHealth:
        now = self._clock()
        thread = self._thread
        synced = self._synced.is_set()
        since = self._unsynced_since
        with self._lock:
            hello = self._hello
            return LinkHealth(
                state="incompatible" if isinstance(self._error, IncompatibleDeviceError) else self._state,
                connected=self._port is not None,
                synced=self._synced.is_set(),
                url=self.url,
                boot_id=self._boot_id,
                firmware_version=".".join(map(str, hello.firmware_version)) if hello else None,
                antenna_count=hello.antenna_count if hello else None,
                last_heartbeat_age=None if self._last_heartbeat is None else now - self._last_heartbeat,
                last_frame_age=None if self._last_frame is None else now - self._last_frame,
                present=len(self._model),
                counters=dict(self.counters),
                recent_faults=tuple(self._faults),
                error=None if self._error is None else str(self._error),
                thread_alive=thread is not None and thread.is_alive(),
                unsynced_for=None if synced or since is None else now - since,
                down_after=self.config.down_after,
            )

    # -- thread -------------------------------------------------------------------
    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                now = self._clock()
                if self._port is None:
                    if now < self._next_open:
                        self._stop.wait(min(self._next_open - now, 0.1))
                        continue
                    self._open(now)
                    continue
                data = self._read()
                now = self._clock()
                if data is None:
                    continue
                if data:
                    for item in self._decoder.feed(data):
                        self._handle(item, now)
                        if self._port is None:
                            break
                if self._port is not None:
                    self._do_actions(now)
                    self._timers(now)
        except IncompatibleDeviceError as exc:
            self._error = exc
            self._state = "incompatible"
            log.error(str(exc), extra={"event": "bridge_incompatible", "url": self.url})
            self._close()
        except Exception as exc:  # a bug: make it visible in health rather than dying silently
            self._error = exc
            self._state = "failed"
            log.exception("bridge link thread crashed", extra={"event": "bridge_crash", "url": self.url})
            self._close()

    def _open(self, now: float) -> None:
        cfg = self.config
        try:
            port = serial.serial_for_url(
                self.url, baudrate=cfg.baudrate, timeout=0, write_timeout=cfg.write_timeout
            )
        except (OSError, ValueError) as exc:
            self.counters["open_failures"] += 1
            self._state = "waiting_for_device"
            self._schedule_reopen(now, f"open failed: {exc}")
            return
        with self._lock:
            self._port = port
        self.counters["opens"] += 1
        self._backoff = cfg.reopen_backoff_min
        self._decoder.reset()
        self._state = "handshake"
        self._need_inventory = True
        self._inventory_due = None
        self._assembly = None
        self._buffer.clear()
        self._gap_since = None
        self._last_heartbeat = now
        self._handshake_tries = 1
        self._handshake_deadline = now + cfg.handshake_timeout
        log.info("bridge port open", extra={"event": "bridge_open", "url": self.url})
        self._write(b"\x00")  # flush any partial frame the device's parser holds
        self._send(p.HelloAck(0), now)

    def _schedule_reopen(self, now: float, reason: str) -> None:
        log.warning(
            "bridge port unavailable, retrying in %.2fs: %s", self._backoff, reason,
            extra={"event": "bridge_reopen_wait", "url": self.url, "reason": reason,
                   "backoff": self._backoff},
        )
        self._next_open = now + self._backoff
        self._backoff = min(self._backoff * 2, self.config.reopen_backoff_max)

    def _close(self) -> None:
        with self._lock:
            port, self._port = self._port, None
        if port is not None:
            try:
                port.close()
            except (OSError, serial.SerialException):
                pass

    def _lost(self, reason: str) -> None:
        """The port failed (unplugged, hung device): close it, keep the model, reopen later."""
        if self._port is None:
            return
        self.counters["disconnects"] += 1
        self._close()
        self._synced.clear()
        if self._unsynced_since is None:
            self._unsynced_since = self._clock()
        self._state = "waiting_for_device"
        self._pending.clear()
        if self._order_replay is not None:
            self._order_replay_done(self._clock())  # its ACK will not come on a closed port
        self._schedule_reopen(self._clock(), reason)

    def _read(self) -> bytes | None:
        port = self._port
        assert port is not None
        try:
            try:
                ready, _, _ = select.select([port.fileno()], [], [], self.config.poll_interval)
            except (AttributeError, NotImplementedError, ValueError):
                ready = [True]  # a URL handler without a file descriptor: poll
                time.sleep(0.001)
            return port.read(65536) if ready else b""
        except (OSError, serial.SerialException, TypeError) as exc:
            self._lost(f"read failed: {exc}")
            return None

    def _write(self, data: bytes) -> None:
        port = self._port
        if port is None:
            return
        try:
            port.write(data)
        except (OSError, serial.SerialException, serial.SerialTimeoutException) as exc:
            self._lost(f"write failed: {exc}")

    def _send(self, msg: p.Message, now: float, track: bool = False) -> p.Message:
        msg = dataclasses.replace(msg, seq=self._host_seq)
        self._host_seq = (self._host_seq + 1) % SEQ_MOD
        if track:
            self._pending[msg.seq] = _Pending(msg, now)
        self._write(p.encode(msg))
        return msg

    def _do_actions(self, now: float) -> None:
        wanted = self._expect_wanted
        if self._synced.is_set() and (wanted != self._expect_sent or (wanted and now - self._expect_at >= 1.0)):
            self._expect_sent, self._expect_at = wanted, now
            self._send(p.Expect(wanted), now)
        while True:
            try:
                action = self._actions.get_nowait()
            except queue.Empty:
                return
            if action == "inventory":
                self._request_inventory(now, "requested")
            elif action == "reboot":
                self._send(p.Reboot(), now)

    # -- frame handling ---------------------------------------------------------
    def _handle(self, item: p.Message | p.FrameError, now: float) -> None:
        if isinstance(item, p.FrameError):
            self._corrupt(item, now)
            return
        self.counters["frames"] += 1
        self._silence = now - self._last_frame if self._last_frame is not None else 0.0
        self._last_frame = now
        if isinstance(item, p.Hello):
            self._on_hello(item, now)
            return
        if self._boot_id is None:
            self.counters["ignored_before_hello"] += 1
            return
        if isinstance(item, p.Heartbeat | p.Inventory) and item.boot_id != self._boot_id:
            first = item.seq - (item.part - 1) if isinstance(item, p.Inventory) else item.seq
            self._new_boot(item.boot_id, first % SEQ_MOD, now, via=type(item).__name__.lower())
            if isinstance(item, p.Heartbeat):
                self._request_inventory(now, "reset detected by heartbeat")
        if isinstance(item, p.Heartbeat):
            self._last_heartbeat = now
        if self._order_replay is not None and seq_distance(item.seq, self._expected) < 0:
            self._ring_seqs.add(item.seq)
            if isinstance(item, p.Heartbeat) or (isinstance(item, p.Fault) and item.code == p.FaultCode.SCAN_STALLED):
                self._ring_marks[item.seq] = isinstance(item, p.Fault)  # a stall opens a window, a beat ends it
        if (self._order_replay is not None and isinstance(item, p.TagArrive) and not isinstance(item, p.TagLeave)
                and seq_distance(item.seq, self._expected) < 0):
            # Its place in the ring is its seq, not when its copy arrived (replayed frames can be
            # reordered on the line too).
            self._ring_order[(item.antenna, item.uid.hex().upper(), True)] = seq_distance(item.seq, self._expected)
            self._ring_arrivals[(item.antenna, item.uid.hex().upper(), True)] = item.seq
            return
        if (isinstance(item, p.Ack) and self._replay is not None and item.cmd_seq == self._replay[2]
                and seq_distance(item.seq, self._expected) > 0):
            # The ACK that ends a replay waits in sequence behind the frames still missing: those
            # copies were lost too, so ask again now rather than after the ACK timeout.
            self._replay_answered(item, now)
        if isinstance(item, p.Inventory):
            first = (item.seq - (item.part - 1)) % SEQ_MOD
            if (item.boot_id == self._boot_id and not self._replay_failed and self._model
                    and seq_distance(first, self._expected) > 0):
                # Frames were missed before this snapshot: ask for them again and apply the snapshot
                # in its place in the sequence, so no arrival's order is guessed.
                self._sequenced(item, now)
                self._ask_replay(now)
                return
            self._on_inventory_part(item, now)
        else:
            self._sequenced(item, now)

    def _corrupt(self, err: p.FrameError, now: float) -> None:
        self.counters["corrupt_frames"] += 1
        self.counters[f"corrupt_{err.reason}"] += 1
        extra = {"event": "bridge_corrupt_frame", "url": self.url, "reason": err.reason, "size": err.size,
                 "detail": err.detail, "total": self.counters["corrupt_frames"]}
        if now - self._last_log.get(err.reason, -1e9) >= self.config.log_interval:
            self._last_log[err.reason] = now
            log.warning("corrupt frame dropped (%s)", err.reason, extra=extra)
        else:
            log.debug("corrupt frame dropped (%s)", err.reason, extra=extra)

    def _on_hello(self, hello: p.Hello, now: float) -> None:
        if hello.protocol_version != p.PROTOCOL_VERSION:
            # Refused, loudly, and the link keeps trying (the board may be reflashed, or the HELLO a
            # fluke): health reports the error and ``down`` until a compatible device says hello.
            fw = ".".join(map(str, hello.firmware_version))
            self._error = IncompatibleDeviceError(
                f"device at {self.url} speaks bridge protocol v{hello.protocol_version} (firmware {fw}), "
                f"this host speaks v{p.PROTOCOL_VERSION}; flash matching firmware or upgrade the host"
            )
            self.counters["incompatible_hellos"] += 1
            log.error(str(self._error), extra={"event": "bridge_incompatible", "url": self.url})
            self._backoff = self.config.reopen_backoff_max  # ask again, but not in a tight loop
            self._lost("incompatible device")
            self._state = "incompatible"
            return
        if isinstance(self._error, IncompatibleDeviceError):
            log.info("compatible device back", extra={"event": "bridge_compatible", "url": self.url})
            self._error = None
        with self._lock:
            self._hello = hello
        self._last_heartbeat = now
        if self._state == "handshake":
            self._state = "syncing"
            log.info(
                "device hello", extra={"event": "bridge_hello", "url": self.url, "boot_id": hello.boot_id,
                                       "firmware": hello.firmware_version, "antennas": hello.antenna_count},
            )
            if self.config.device is not None:
                self._send(self.config.device, now, track=True)
        if hello.boot_id != self._boot_id:
            self._new_boot(hello.boot_id, (hello.seq + 1) % SEQ_MOD, now, via="hello")
        else:
            self._sequenced(hello, now)
        if self._need_inventory and self._inventory_due is None:
            self._inventory_due = now + self.config.inventory_timeout
        self._send(p.HelloAck(hello.boot_id), now)

    def _new_boot(self, boot_id: int, next_seq: int, now: float, via: str) -> None:
        if self._boot_id is not None:
            self.counters["device_resets"] += 1
            log.warning(
                "device reset detected", extra={"event": "bridge_device_reset", "url": self.url, "via": via,
                                                "old_boot_id": self._boot_id, "boot_id": boot_id},
            )
            if self.config.device is not None and self._state != "syncing":
                self._send(self.config.device, now, track=True)
        if self._stall is not None:
            self._close_stall(True)
        self._last_beat = None  # the new boot's uptime starts again
        self.diagnostics.new_boot()
        self._boot_id = boot_id
        self._expected = next_seq
        self._replay = None
        self._replay_failed = False
        if self._order_replay is not None:
            self._order_replay_done(now)
        self._buffer.clear()
        self._gap_since = None
        self._assembly = None
        self._need_inventory = True
        self._synced.clear()
        if self._unsynced_since is None:
            self._unsynced_since = self._clock()
        # The device sends an inventory right after its HELLO; ask only if it does not come.
        self._inventory_due = now + self.config.inventory_timeout

    def _sequenced(self, msg: p.Message, now: float) -> None:
        d = seq_distance(msg.seq, self._expected)
        if d == 0:
            self._apply(msg, now)
            self._expected = (self._expected + 1) % SEQ_MOD
            self._drain(now)
        elif d > 0:
            if msg.seq in self._buffer:
                self.counters["duplicates"] += 1
                return
            self.counters["out_of_order"] += 1
            self._buffer[msg.seq] = msg
            if len(self._buffer) > self.config.max_reorder:
                oldest = min(self._buffer, key=lambda s: seq_distance(s, self._expected))
                del self._buffer[oldest]
                self.counters["reorder_overflow"] += 1
                self._request_inventory(now, "reorder buffer overflow")
            if self._gap_since is None:
                self._gap_since = now
        else:
            self.counters["duplicates"] += 1

    def _drain(self, now: float) -> None:
        progressed = False
        while self._expected in self._buffer:
            msg = self._buffer.pop(self._expected)
            self._apply(msg, now)
            self._expected = (self._expected + 1) % SEQ_MOD
            progressed = True
        if not self._buffer:
            self._gap_since = None
        elif progressed or self._gap_since is None:
            self._gap_since = now

    def _apply(self, msg: p.Message, now: float) -> None:
        if isinstance(msg, p.Inventory):
            self._on_inventory_part(msg, now, in_sequence=True)
            return
        if isinstance(msg, p.TagArrive):  # TagLeave is a subclass
            key = (msg.antenna, msg.uid.hex().upper())
            arrived = not isinstance(msg, p.TagLeave)
            with self._lock:
                if (key in self._model) == arrived:
                    self.counters["redundant_reports"] += 1
                    return
                (self._model.add if arrived else self._model.discard)(key)
            self._emit_live(PresenceChange(key[0], key[1], arrived, now, "event", msg.seq, self._boot_id), now)
        elif isinstance(msg, p.Heartbeat):
            self.counters["heartbeats"] += 1
            stalled = self._device_stalled(msg)
            if self._stall is not None:
                self._close_stall(stalled or self._stall[2])
            elif stalled and self._last_beat is not None:
                # A late heartbeat came before the scan that ends the stall: that scan's arrivals
                # may still follow, so they wait for the next heartbeat.
                self.counters["stall_windows"] += 1
                self._stall = (now, [], True)
            self._last_beat = (msg.uptime_ms, msg.scan_cycles)
            self.diagnostics.heartbeat(msg.uptime_ms, msg.scan_cycles)
            if not self._need_inventory and msg.present != len(self._model):
                self.counters["consistency_mismatches"] += 1
                reason = f"heartbeat counts {msg.present} tags, model has {len(self._model)}"
                self._request_inventory(now, reason)
        elif isinstance(msg, p.Fault) and msg.code == p.FaultCode.SCAN_STALLED:
            # The board's loop stopped between two reads (msg.detail ms): the arrivals it found after
            # it, up to the next heartbeat (which the board holds back for two cycles), may be out of order.
            self.counters["scan_stalls"] += 1
            self.diagnostics.fault(msg.source, msg.code, msg.detail)
            if self._stall is None:
                self.counters["stall_windows"] += 1
                self._stall = (now, [], True)
            else:
                self._stall = (self._stall[0], self._stall[1], True)
            log.info("device scan stalled", extra={"event": "bridge_scan_stall", "url": self.url, "gap_ms": msg.detail})
        elif isinstance(msg, p.Fault):
            self.counters["faults"] += 1
            self._faults.append(msg)
            self.diagnostics.fault(msg.source, msg.code, msg.detail)
            log.warning(
                "device fault", extra={"event": "bridge_fault", "url": self.url, "source": msg.source,
                                       "code": msg.code, "detail": msg.detail},
            )
            if self._on_fault is not None:
                self._on_fault(msg)
        elif isinstance(msg, p.Ack):
            if self._order_replay is not None and msg.cmd_seq == self._order_replay[0]:
                self._order_replay_done(now)
                return
            if self._replay is not None and msg.cmd_seq == self._replay[2]:
                self._replay_answered(msg, now)
                return
            pending = self._pending.pop(msg.cmd_seq, None)
            if msg.status != p.AckStatus.OK:
                self.counters["command_errors"] += 1
                log.warning(
                    "device refused command", extra={"event": "bridge_nak", "url": self.url,
                                                     "cmd_type": msg.cmd_type, "status": msg.status},
                )
            elif pending is not None:
                self.counters["commands_acked"] += 1

    def _on_inventory_part(self, inv: p.Inventory, now: float, in_sequence: bool = False) -> None:
        first = (inv.seq - (inv.part - 1)) % SEQ_MOD
        if not in_sequence and seq_distance(first, self._expected) < 0:
            self.counters["stale_inventory_parts"] += 1
            return
        key = (inv.boot_id, inv.snapshot, first, inv.parts)
        if self._assembly is None or self._assembly.key != key:
            self._assembly = _Assembly(key)
        self._assembly.parts[inv.part] = inv.entries
        if len(self._assembly.parts) < inv.parts:
            return
        parts, self._assembly = self._assembly.parts, None
        snapshot = {(a, uid.hex().upper()) for entries in parts.values() for a, uid in entries}
        with self._lock:
            gone = sorted(self._model - snapshot)
            new = sorted(snapshot - self._model)
            self._model = snapshot
        ordered = self._reconcile_order(gone, new, first)
        unexplained = {c for c in ordered if c[2]} - self._explained
        if unexplained and self._last_missing is not None:
            # A lost arrival goes first only if every lost frame came before the explained ones; an
            # explained arrival sent before a lost frame may have been before or after its arrival
            # (issue 26, F5: heavy corruption, several gaps in one snapshot): no order is known.
            unexplained |= {c for c in ordered if c[2] and 0 <= self._when.get(c, -1) < self._last_missing}
        if len(unexplained) >= 2 and self._order_replay is None:
            # Several arrivals and no frame says in which order: the device's ring may (a host that
            # just started, or one whose gap the ring no longer covers); the ACK ends its replay.
            sent = self._send(p.Replay((first - fw.RING_FRAMES) % SEQ_MOD), now)
            self._order_replay = (sent.seq, now, ordered, unexplained)
            self._ring_order = {}
            self._ring_seqs = set()
            self._ring_marks = {}
            self._ring_arrivals = {}
            self.counters["order_replays"] += 1
        else:
            self._emit_reconciled(ordered, unexplained, {}, now)
        self.counters["inventories"] += 1
        self.counters["reconciled_changes"] += len(gone) + len(new)
        if gone or new:
            log.info(
                "inventory reconciled", extra={"event": "bridge_reconciled", "url": self.url,
                                               "left": len(gone), "arrived": len(new)},
            )
        self._need_inventory = False
        self._inventory_due = None
        self._replay_failed = False
        self._replay = None
        if not in_sequence:
            self._expected = (first + inv.parts) % SEQ_MOD
            for s in [s for s in self._buffer if seq_distance(s, self._expected) < 0]:
                del self._buffer[s]
            self._gap_since = None
            self._drain(now)
        self._state = "ready"
        self._synced.set()
        self._unsynced_since = None

    def _emit_reconciled(self, ordered: list[tuple[int, str, bool]], unexplained: set[tuple[int, str, bool]],
                         ring: dict[tuple[int, str, bool], int], now: float) -> None:
        """Emit a snapshot's differences; arrivals the ring placed go in the ring's order, after
        any it could not place, which are flagged unordered if there are several."""
        unplaced = [c for c in unexplained if c not in ring]
        if len(unexplained) >= 2 and ((unplaced and self._ring_holes()) or (ring and self._ring_stalled(unexplained))):
            # The ring's replay lost frames too: an arrival it did not place may be in a hole, not
            # older than the ones it placed.  Or the board stalled before one (FAULT 7 in the ring):
            # the scan after a stall reports in antenna order (the 200-hand run's hand 167, a kill -9
            # under load: seat 1's card placed before seat 6's).  None of them has a known order.
            unplaced = list(unexplained)
        if ring:
            # The ring orders only the changes whose place was unknown (lost, or seen before a lost
            # frame); those seen after every lost frame stay after them all, in their own order (put
            # among the ring's "rest", a card seen after four lost ones went out first: issue 26, F5).
            unknown = [c for c in ordered if c in unexplained or c not in self._when]
            seen = [c for c in ordered if c not in unknown]
            placed = sorted((c for c in unknown if c in ring), key=lambda c: ring[c])
            ordered = [c for c in unknown if c not in ring] + placed + seen
        for change in ordered:
            known = len(unplaced) < 2 or change not in unplaced
            if not known:
                self.counters["unordered_arrivals"] += 1
            self._emit(PresenceChange(change[0], change[1], change[2], now, "inventory", None, self._boot_id, known))

    def _ring_stalled(self, changes: set[tuple[int, str, bool]]) -> bool:
        """Whether one of ``changes`` came in the ring inside a stall window (after a FAULT 7 and
        before the next HEARTBEAT: the firmware holds that beat until the scans after the gap end)."""
        marks = sorted(self._ring_marks.items(), key=lambda m: seq_distance(m[0], self._expected))
        for change in changes:
            seq = self._ring_arrivals.get(change)
            if seq is None:
                continue
            before = [stall for q, stall in marks if seq_distance(q, seq) < 0]
            if before and before[-1]:
                return True
        return False

    def _ring_holes(self) -> bool:
        """Whether the ring replay skipped frames (lost or corrupted on the way)."""
        if len(self._ring_seqs) < 2:
            return bool(self._ring_seqs) or self._order_replay is not None
        base = min(self._ring_seqs, key=lambda q: seq_distance(q, self._expected))
        spread = max(seq_distance(q, base) for q in self._ring_seqs)
        return spread + 1 > len(self._ring_seqs)

    def _order_replay_done(self, now: float) -> None:
        assert self._order_replay is not None
        _, _, ordered, unexplained = self._order_replay
        self._order_replay = None
        self._emit_reconciled(ordered, unexplained, self._ring_order, now)
        held, self._held = self._held, []
        for change in held:  # what happened after the snapshot, in the order the model saw it
            self._emit(change)

    def _reconcile_order(
        self, gone: list[tuple[int, str]], new: list[tuple[int, str]], first: int
    ) -> list[tuple[int, str, bool]]:
        """A snapshot's differences in the order they most likely happened on the table.

        Frames buffered after a gap and older than the snapshot say when their own change
        happened.  The other differences come from the frames lost in the gap, which were sent
        before the frames that revealed it, so they go first (leaves, then arrivals); the
        explained ones follow in sequence order.  Without buffered frames: leaves, then arrivals.
        """
        when: dict[tuple[int, str, bool], int] = {}
        for seq, msg in self._buffer.items():
            if seq_distance(seq, first) < 0 and isinstance(msg, p.TagArrive):  # TagLeave is a subclass
                change = (msg.antenna, msg.uid.hex().upper(), not isinstance(msg, p.TagLeave))
                when[change] = max(when.get(change, -1), seq_distance(seq, self._expected))
        diffs = [(a, u, False) for a, u in gone] + [(a, u, True) for a, u in new]
        self._explained = set(when)
        self._when = when
        span = seq_distance(first, self._expected)
        have = {seq_distance(q, self._expected) for q in self._buffer}
        self._last_missing = next((d for d in reversed(range(max(span, 0))) if d not in have), None)
        return sorted(diffs, key=lambda change: when.get(change, -1))  # stable: lost changes keep their order

    def _ask_replay(self, now: float, again: bool = False) -> None:
        if self._replay is not None and self._replay[0] == self._expected and not again:
            return
        if not again:
            self._replay_tries = 0
        self._replay_tries += 1
        self.counters["replay_requests"] += 1
        log.info("asking the device to replay from %d", self._expected,
                 extra={"event": "bridge_replay_request", "url": self.url, "first": self._expected})
        sent = self._send(p.Replay(self._expected), now)
        self._replay = (self._expected, now, sent.seq)

    def _replay_answered(self, ack: p.Ack, now: float) -> None:
        if ack.status != p.AckStatus.OK:
            self._replay_gone(now, "the device's ring no longer holds the missed frames")
        elif self._buffer:  # the ACK ends the replay: copies still missing were lost on the line
            self._replay_again(now)

    def _replay_again(self, now: float) -> None:
        """A replay left frames missing (its copies or its ACK lost on the line): ask again from the
        first one still missing, a few times, before a snapshot decides (issue 26, F5: a snapshot
        after one failed replay lost a card that came and went, and the order of those it found)."""
        if self._replay is not None and seq_distance(self._expected, self._replay[0]) > 0:
            self._replay_tries = 0  # it filled a gap: what is missing now is a newer loss
        if self._replay_tries >= self.config.replay_tries:
            self._replay_gone(now, f"{self._replay_tries} REPLAYs left frames missing")
            return
        self.counters["replay_retries"] += 1
        self._ask_replay(now, again=True)

    def _replay_gone(self, now: float, reason: str) -> None:
        """The missed frames cannot be had again: drop what waited for them and take a fresh
        snapshot; its arrivals then carry ``ordered=False`` if there are several."""
        self.counters["replays_failed"] += 1
        log.warning("replay failed: %s", reason, extra={"event": "bridge_replay_failed", "url": self.url})
        self._replay = None
        self._replay_failed = True
        for s in [s for s, m in self._buffer.items() if isinstance(m, p.Inventory)]:
            del self._buffer[s]
        self._request_inventory(now, "replay failed")

    def _request_inventory(self, now: float, reason: str) -> None:
        self._need_inventory = True
        self.counters["inventory_requests"] += 1
        log.info("requesting inventory: %s", reason,
                 extra={"event": "bridge_inventory_request", "url": self.url, "reason": reason})
        self._inventory_due = now + self.config.inventory_timeout
        self._send(p.RequestInventory(), now)

    def _heartbeat_period(self) -> float:
        """The device's heartbeat period in seconds (configured, announced, or the reference 500 ms)."""
        period_ms = self.config.device.heartbeat_ms if self.config.device else None
        if period_ms is None:
            period_ms = self._hello.heartbeat_ms if self._hello else 500
        return period_ms / 1000

    def _emit_live(self, change: PresenceChange, now: float) -> None:
        """A change from an in-sequence frame: out at once, unless it opens or falls in a stall window."""
        period = self._heartbeat_period()
        if (self._stall is None and change.arrived
                and self._silence * self.config.device_time_scale > period + self._stall_margin()):
            self.counters["stall_windows"] += 1
            self._stall = (now, [], False)
        self._emit(change)

    def _device_stalled(self, beat: p.Heartbeat) -> bool:
        """Whether the device's loop stalled since the previous heartbeat, by its own clock."""
        if self._last_beat is None:
            return True  # nothing to compare with: assume the worst, the dealer confirms
        elapsed_ms = (beat.uptime_ms - self._last_beat[0]) % (1 << 32)
        return elapsed_ms > (self._heartbeat_period() + self._stall_margin()) * 1000

    def _stall_margin(self) -> float:
        """How late (seconds) a heartbeat must be to mean a stall: a fifth of a period, at least 0.1 s.
        A board that stalled that long may have scanned two new cards at once: the dealer is asked."""
        return max(0.1, self._heartbeat_period() / 5)

    def _close_stall(self, stalled: bool) -> None:
        """Let a stall window's changes out: arrivals of unknown order flagged if there are several."""
        assert self._stall is not None
        held, self._stall = self._stall[1], None
        unknown = stalled and sum(1 for c in held if c.arrived) >= 2
        if unknown:
            self.counters["unordered_arrivals"] += sum(1 for c in held if c.arrived)
            log.warning("device stalled while %d cards arrived: their order is unknown", len(held),
                        extra={"event": "bridge_stall_order_unknown", "url": self.url})
        for change in held:
            self._emit(dataclasses.replace(change, ordered=False) if unknown and change.arrived else change)

    def _emit(self, change: PresenceChange) -> None:
        if self._stall is not None:  # every change waits behind a stall window's, whatever its path
            self._stall[1].append(change)
            return
        if self._order_replay is not None:
            # A snapshot's differences are not out yet (the ring is ordering its arrivals) but the
            # model already includes them: this change comes after them, so it waits its turn.
            self.counters["held_changes"] += 1
            self._held.append(change)
            return
        self.counters["changes"] += 1
        self.diagnostics.presence(change.antenna, change.arrived)
        log.debug(
            "presence change",
            extra={"event": "bridge_presence", "antenna": change.antenna, "uid": change.uid,
                   "arrived": change.arrived, "source": change.source},
        )
        self._on_change(change)

    # -- timers ---------------------------------------------------------------------
    def _heartbeat_timeout(self) -> float:
        if self.config.heartbeat_timeout is not None:
            return self.config.heartbeat_timeout
        return max(1.0, 4 * self._heartbeat_period())

    def _timers(self, now: float) -> None:
        cfg = self.config
        if self._state == "handshake":
            if now >= self._handshake_deadline:
                if self._handshake_tries >= cfg.handshake_retries:
                    self.counters["handshake_failures"] += 1
                    self._lost("no HELLO from device")
                    return
                self._handshake_tries += 1
                self._handshake_deadline = now + cfg.handshake_timeout
                self._send(p.HelloAck(0), now)
            return
        if self._last_heartbeat is not None and now - self._last_heartbeat > self._heartbeat_timeout():
            self.counters["watchdog_trips"] += 1
            log.error(
                "no heartbeat for %.1fs: reader hung, rebooting it and reopening the port",
                now - self._last_heartbeat, extra={"event": "bridge_watchdog", "url": self.url},
            )
            if cfg.reboot_on_watchdog:
                self._send(p.Reboot(), now)
            self._lost("heartbeat watchdog")
            return
        if self._stall is not None and now - self._stall[0] > 2 * self._heartbeat_period() + 0.1:
            self._close_stall(True)  # no heartbeat came to say the device was fine
        if self._gap_since is not None and now - self._gap_since >= cfg.reorder_window:
            self.counters["gaps"] += 1
            log.info("sequence gap", extra={"event": "bridge_gap", "url": self.url,
                                            "expected": self._expected, "buffered": len(self._buffer)})
            self._gap_since = None
            if self._inventory_due is None and self._replay is None and not self._replay_failed:
                self._ask_replay(now)
            elif self._inventory_due is None and self._replay is None:
                self._request_inventory(now, "sequence gap")
        if self._order_replay is not None and now - self._order_replay[1] >= max(cfg.ack_timeout, 0.2):
            self._order_replay_done(now)  # no answer: what the ring gave so far
        if self._replay is not None:
            if seq_distance(self._expected, self._replay[0]) > 0 and not self._buffer:
                self._replay = None  # the gap is filled
            elif now - self._replay[1] >= max(cfg.ack_timeout, 4 * cfg.reorder_window):
                self._replay_again(now)
        if self._inventory_due is not None and now >= self._inventory_due:
            self._request_inventory(now, "inventory overdue")
        for seq, pending in list(self._pending.items()):
            if now - pending.sent_at >= cfg.ack_timeout:
                del self._pending[seq]
                if pending.tries >= cfg.command_retries:
                    self.counters["commands_unacked"] += 1
                    continue
                sent = self._send(pending.msg, now, track=True)
                self._pending[sent.seq].tries = pending.tries + 1
