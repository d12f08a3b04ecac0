"""A software antenna microcontroller on a pty or a loopback TCP port, with fault injection.

The protocol logic is the reference firmware's own ``bridge_proto.Device`` run under
CPython; this module only replaces the hardware around it: the "table" is a dict of
antenna -> tags that a test (or a script) changes, and the USB line is a pty (the host
opens the slave path with pyserial, like ``/dev/ttyACM0``) or ``socket://`` on
127.0.0.1.  Between the device and the line sits a seeded :class:`FaultInjector`
that drops, corrupts, duplicates and reorders frames, and the emulator can reset
(new boot id, sequence from 0, HELLO, inventory), hang (silence) and unplug (the port
vanishes; with ``link_path`` it comes back at the same path, as a udev by-id symlink
would).

Everything runs in one emulator thread; the public methods only post actions to it,
so the device code never needs locks (as on the microcontroller).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import random
import socket
import threading
import time
import tty
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from firmware_bridge.firmware import bridge_proto as fw

log = logging.getLogger(__name__)


def _uid(uid: bytes | str) -> bytes:
    return bytes.fromhex(uid.replace(":", "")) if isinstance(uid, str) else bytes(uid)


@dataclass(frozen=True, slots=True)
class FaultConfig:
    """Probabilities per device->host frame (at most one fault per frame), plus line faults."""

    seed: int = 0
    drop: float = 0.0
    corrupt: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0
    host_drop: float = 0.0  # probability a chunk of host->device bytes is lost
    miss_read: float = 0.0  # probability a present tag is not read in one scan


# -- script steps -----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Place:
    antenna: int
    uid: bytes


@dataclass(frozen=True, slots=True)
class Remove:
    antenna: int
    uid: bytes


@dataclass(frozen=True, slots=True)
class Wait:
    seconds: float


@dataclass(frozen=True, slots=True)
class Reset:
    pass


@dataclass(frozen=True, slots=True)
class Silence:
    seconds: float


@dataclass(frozen=True, slots=True)
class Unplug:
    seconds: float
    reset: bool = False  # a bus-powered board loses power when unplugged


Step = Place | Remove | Wait | Reset | Silence | Unplug


def parse_script(text: str) -> list[Step]:
    """``place 3 04A1B2C3D4E5F6`` / ``remove 3 04A1...`` / ``wait 0.2`` / ``reset`` /
    ``silence 1.5`` / ``unplug 0.5 [reset]``; ``#`` starts a comment."""
    steps: list[Step] = []
    for n, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        cmd, args = words[0].lower(), words[1:]
        try:
            if cmd in ("place", "remove"):
                steps.append((Place if cmd == "place" else Remove)(int(args[0]), _uid(args[1])))
            elif cmd == "wait":
                steps.append(Wait(float(args[0])))
            elif cmd == "reset":
                steps.append(Reset())
            elif cmd == "silence":
                steps.append(Silence(float(args[0])))
            elif cmd == "unplug":
                steps.append(Unplug(float(args[0]), reset=args[1:2] == ["reset"]))
            else:
                raise ValueError(f"unknown command {cmd!r}")
        except (IndexError, ValueError) as exc:
            raise ValueError(f"script line {n}: {line.strip()!r}: {exc}") from exc
    return steps


# -- fault injection --------------------------------------------------------------
class FaultInjector:
    """Applies :class:`FaultConfig` to the device's outgoing frames, deterministically per seed."""

    def __init__(self, config: FaultConfig) -> None:
        self.config = config
        self.rng = random.Random(config.seed)
        self.counters: Counter[str] = Counter()
        self._held: tuple[int, bytes] | None = None
        self._late: list[tuple[int, bytes]] = []

    def process(self, seq: int, frame: bytes) -> list[tuple[int, bytes]]:
        c = self.config
        out: list[tuple[int, bytes]] = []
        r = self.rng.random()
        held_now = False
        if r < c.drop:
            self.counters["dropped"] += 1
        elif r < c.drop + c.corrupt:
            self.counters["corrupted"] += 1
            out.append((seq, self._corrupt(frame)))
        elif r < c.drop + c.corrupt + c.duplicate:
            self.counters["duplicated"] += 1
            out.append((seq, frame))
            if self.rng.random() < 0.5:
                out.append((seq, frame))
            else:
                self._late.append((seq, frame))  # replayed after a newer frame: the dangerous kind
                held_now = True
        elif r < c.drop + c.corrupt + c.duplicate + c.reorder and self._held is None:
            self.counters["reordered"] += 1
            self._held = (seq, frame)
            held_now = True
        else:
            out.append((seq, frame))
        if not held_now:
            out.extend(self.flush())
        return out

    def flush(self) -> list[tuple[int, bytes]]:
        out = list(self._late)
        self._late.clear()
        if self._held is not None:
            out.append(self._held)
            self._held = None
        return out

    def _corrupt(self, frame: bytes) -> bytes:
        mode = self.rng.choice(("bit", "byte", "truncate"))
        body = bytearray(frame[:-1])
        if mode == "bit":  # a line error inside the payload: CRC-16 always catches one bit
            raw = bytearray(fw.cobs_decode(bytes(body)))
            i = self.rng.randrange(len(raw))
            raw[i] ^= 1 << self.rng.randrange(8)
            return fw.cobs_encode(bytes(raw)) + b"\x00"
        if mode == "byte":  # may hit a COBS code byte or insert a 0x00 that splits the frame
            body[self.rng.randrange(len(body))] = self.rng.randrange(256)
            return bytes(body) + b"\x00"
        return bytes(body[: self.rng.randrange(1, len(body))]) + b"\x00"


# -- transports -----------------------------------------------------------------------
class PtyTransport:
    """The device end of a pty; ``url`` is the slave path (or a stable symlink to it)."""

    def __init__(self, link_path: str | None = None) -> None:
        self.link_path = link_path
        self._master: int | None = None
        self._slave: int | None = None
        self.path: str | None = None
        self.overflows = 0

    @property
    def url(self) -> str:
        return self.link_path or self.path or ""

    def open(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)  # no echo or line editing before the host configures the port
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self.path = os.ttyname(slave)
        if self.link_path:
            tmp = f"{self.link_path}.tmp{os.getpid()}"
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            os.symlink(self.path, tmp)
            os.replace(tmp, self.link_path)

    def close(self) -> None:
        if self.link_path:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.link_path)
        for fd in (self._master, self._slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = None

    def read(self) -> bytes:
        if self._master is None:
            return b""
        try:
            return os.read(self._master, 4096)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError:
            return b""

    def write(self, data: bytes) -> None:
        if self._master is not None and not _send_all(functools.partial(os.write, self._master), data):
            self.overflows += 1


def _send_all(send: Callable[[memoryview], int], data: bytes) -> bool:
    """Write ``data`` through a non-blocking ``send``; False when the host is not reading (like a
    full USB CDC buffer: the rest of the bytes are lost).  A closed line loses them silently."""
    view = memoryview(data)
    while view:
        try:
            n = send(view)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True
        view = view[n:]
    return True


class TcpTransport:
    """A one-client TCP server on loopback; the host uses ``socket://127.0.0.1:PORT``."""

    def __init__(self, port: int = 0) -> None:
        self.port = port
        self._server: socket.socket | None = None
        self._client: socket.socket | None = None
        self.overflows = 0

    @property
    def url(self) -> str:
        return f"socket://127.0.0.1:{self.port}"

    def open(self) -> None:
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", self.port))
        srv.listen(1)
        srv.setblocking(False)
        self.port = srv.getsockname()[1]
        self._server = srv

    def close(self) -> None:
        for s in (self._client, self._server):
            if s is not None:
                with contextlib.suppress(OSError):
                    s.close()
        self._client = self._server = None

    def _accept(self) -> None:
        if self._server is None:
            return
        try:
            conn, _ = self._server.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            return
        conn.setblocking(False)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self._client is not None:
            with contextlib.suppress(OSError):
                self._client.close()
        self._client = conn

    def read(self) -> bytes:
        self._accept()
        if self._client is None:
            return b""
        try:
            data = self._client.recv(4096)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError:
            data = b""
        if not data:
            with contextlib.suppress(OSError):
                self._client.close()
            self._client = None
        return data

    def write(self, data: bytes) -> None:
        if self._client is not None and not _send_all(self._client.send, data):
            self.overflows += 1


# -- the emulator -------------------------------------------------------------------------
class Emulator:
    """A scripted microcontroller.  Use as a context manager; ``url`` is what the host opens.

    Timing defaults are faster than the real board (10 ms scans, 50 ms heartbeat) so
    tests finish quickly; the protocol does not care.
    """

    def __init__(
        self,
        antenna_count: int = 16,
        faults: FaultConfig | None = None,
        transport: str = "pty",
        link_path: str | None = None,
        tcp_port: int = 0,
        scan_period_ms: int = 10,
        debounce_ms: int = 30,
        heartbeat_ms: int = 50,
        tick: float = 0.002,
        protocol_version: int = fw.PROTOCOL_VERSION,
        firmware_version: tuple[int, int, int] = fw.FIRMWARE_VERSION,
        on_frame: Callable[[int, float], None] | None = None,
    ) -> None:
        self.antenna_count = antenna_count
        self.faults = faults or FaultConfig()
        self.injector = FaultInjector(self.faults)
        self._rng = random.Random(self.faults.seed + 1)
        if transport == "pty":
            self.transport: PtyTransport | TcpTransport = PtyTransport(link_path)
        elif transport == "tcp":
            self.transport = TcpTransport(tcp_port)
        else:
            raise ValueError(f"transport must be 'pty' or 'tcp', not {transport!r}")
        self._settings = (scan_period_ms, debounce_ms, heartbeat_ms)
        self.tick = tick
        self.protocol_version = protocol_version
        self.firmware_version = firmware_version
        self.on_frame = on_frame
        self.counters: Counter[str] = Counter()
        self.boot_ids: list[int] = []
        self._table: dict[int, set[bytes]] = {a: set() for a in range(antenna_count)}
        self._lock = threading.Lock()
        self._actions: list[tuple[str, float, bool]] = []
        self._reader_changes: list[tuple[int, bool]] = []
        self._dead: set[int] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = time.monotonic()
        self._unplugged_until: float | None = None
        self._reset_on_replug = False
        self._silent_until = 0.0
        self.device = self._new_device(fw.RESET_POWER_ON)

    # -- control (any thread) ----------------------------------------------------------
    @property
    def url(self) -> str:
        return self.transport.url

    def start(self) -> Emulator:
        self.transport.open()
        self._thread = threading.Thread(target=self._loop, name="bridge-emulator", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2.0)
            self._thread = None
        self.transport.close()

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def place(self, antenna: int, uid: bytes | str) -> None:
        with self._lock:
            self._table[antenna].add(_uid(uid))

    def remove(self, antenna: int, uid: bytes | str) -> None:
        with self._lock:
            self._table[antenna].discard(_uid(uid))

    def table(self) -> dict[int, frozenset[bytes]]:
        """What is physically on the antennas now."""
        with self._lock:
            return {a: frozenset(t) for a, t in self._table.items() if t}

    def reset(self) -> None:
        """Reboot the microcontroller: new boot id, sequence from 0, HELLO + inventory."""
        self._post("reset")

    def silence(self, seconds: float) -> None:
        """Hang the firmware: no scans, no frames, host bytes ignored."""
        self._post("silence", seconds)

    def unplug(self, seconds: float, reset: bool = False) -> None:
        """Close the port (it vanishes) and bring it back after ``seconds``."""
        self._post("unplug", seconds, reset)

    def run_script(self, steps: Iterable[Step]) -> None:
        """Play a script in the calling thread (``Wait`` steps sleep)."""
        for step in steps:
            if isinstance(step, Place):
                self.place(step.antenna, step.uid)
            elif isinstance(step, Remove):
                self.remove(step.antenna, step.uid)
            elif isinstance(step, Wait):
                time.sleep(step.seconds)
            elif isinstance(step, Reset):
                self.reset()
            elif isinstance(step, Silence):
                self.silence(step.seconds)
            elif isinstance(step, Unplug):
                self.unplug(step.seconds, step.reset)

    def reader(self, antenna: int, alive: bool) -> None:
        """A reader stops answering (its SPI or version register: FAULT 1), or answers again (FAULT 2)."""
        with self._lock:
            self._reader_changes.append((antenna, alive))

    def _post(self, action: str, seconds: float = 0.0, flag: bool = False) -> None:
        with self._lock:
            self._actions.append((action, seconds, flag))

    # -- emulator thread --------------------------------------------------------------------
    def _now_ms(self) -> int:
        return int((time.monotonic() - self._t0) * 1000)

    def _new_device(self, cause: int) -> fw.Device:
        boot_id = self._rng.randrange(1, 1 << 32)
        self.boot_ids.append(boot_id)
        device = fw.Device(
            self.antenna_count, self._device_write, boot_id, now_ms=self._now_ms(), reset_cause=cause,
            firmware_version=self.firmware_version, on_reboot=self._on_reboot,
            protocol_version=self.protocol_version,
        )
        device.scan_period_ms, device.debounce_ms, device.heartbeat_ms = self._settings
        # Its scans are faster than the board's, and so may a stall be that lets two cards land
        # unseen (the benches pitch every 80 ms): five scan periods.
        device.stall_gap_ms = 5 * max(device.scan_period_ms, 1)
        for antenna in getattr(self, "_dead", ()):  # still dead after a reset (reported with the inventory)
            device.reader_state(antenna, False)
        return device

    def _on_reboot(self) -> None:
        self._post("reboot")

    def _device_write(self, frame: bytes) -> None:
        self.counters["frames"] += 1
        if self._unplugged_until is not None:
            self.counters["lost_unplugged"] += 1
            return
        seq = (self.device.seq - 1) & 0xFFFF
        for s, f in self.injector.process(seq, frame):
            self._write(s, f)

    def _write(self, seq: int, frame: bytes) -> None:
        if self.on_frame is not None:  # before the write: the host may decode it at once
            self.on_frame(seq, time.monotonic())
        self.transport.write(frame)

    def _do_reset(self, cause: int) -> None:
        self.counters["resets"] += 1
        self.injector.flush()  # frames in flight die with the USB stack
        self.device = self._new_device(cause)
        if self._unplugged_until is None:
            self.transport.write(b"\x00")

    def _loop(self) -> None:
        next_scan = time.monotonic()
        held_since: float | None = None
        while not self._stop.is_set():
            now = time.monotonic()
            with self._lock:
                actions, self._actions = self._actions, []
                readers, self._reader_changes = self._reader_changes, []
            for antenna, alive in readers:
                (self._dead.discard if alive else self._dead.add)(antenna)
                self.device.reader_state(antenna, alive)
            for action, seconds, flag in actions:
                if action in ("reset", "reboot"):
                    self._do_reset(fw.RESET_SOFT if action == "reset" else fw.RESET_HOST_REQUEST)
                elif action == "silence":
                    self.counters["silences"] += 1
                    self._silent_until = now + seconds
                elif action == "unplug" and self._unplugged_until is None:
                    self.counters["unplugs"] += 1
                    self.injector.flush()
                    self.transport.close()
                    self._unplugged_until = now + seconds
                    self._reset_on_replug = flag
            if self._unplugged_until is not None and now >= self._unplugged_until:
                self._unplugged_until = None
                self.transport.open()
                if self._reset_on_replug:
                    self._do_reset(fw.RESET_POWER_ON)
            if now < self._silent_until:
                self.transport.read()  # a hung board does not read; drop what the host sends
                time.sleep(self.tick)
                continue
            data = self.transport.read()
            if data and self._unplugged_until is None:
                if self.faults.host_drop and self._rng.random() < self.faults.host_drop:
                    self.counters["host_dropped"] += 1
                else:
                    self.device.feed(data)
            if now >= next_scan:
                self._scan()
                period = max(self.device.scan_period_ms, 1) / 1000
                next_scan = max(next_scan + period, now)
            self.device.poll(self._now_ms())
            if self.injector._held is not None or self.injector._late:
                held_since = held_since or now
                if now - held_since > 0.02:
                    for s, f in self.injector.flush():
                        self._write(s, f)
                    held_since = None
            else:
                held_since = None
            self._stop.wait(max(0.0, min(self.tick, next_scan - time.monotonic())))

    def _scan(self) -> None:
        with self._lock:
            table = {a: list(t) for a, t in self._table.items()}
        miss = self.faults.miss_read
        now_ms = self._now_ms()
        for antenna in range(self.antenna_count):
            if antenna in self._dead:
                continue  # a dead reader reads nothing (the board skips it)
            uids = table.get(antenna, [])
            if miss:
                uids = [u for u in uids if self._rng.random() >= miss]
            self.device.observe(antenna, sorted(uids), now_ms)
        self.device.end_cycle(now_ms)
