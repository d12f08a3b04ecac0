"""Device side of the bridge protocol, shared by the RP2040 firmware and the emulator.

This one file runs unchanged under MicroPython (on the RP2040) and CPython (inside
``firmware_bridge.emulator``), so what the tests exercise is the code that ships.
That dictates the dialect: no dataclasses, no typing, no f-strings, only ``struct``
from the standard library, and time passed in as millisecond ticks by the caller
(``time.ticks_ms`` on the board, a monotonic clock in the emulator).

COBS and CRC-16/CCITT-FALSE are written by hand HERE ONLY because MicroPython has
no ``cobs``/``crc`` packages; the host (``firmware_bridge.protocol``) uses the PyPI
packages, and ``tests/bridge/test_bridge_protocol.py`` checks both agree byte for byte.
The wire format is specified in ``firmware_bridge/PROTOCOL.md``.
"""

import struct

PROTOCOL_VERSION = 1
FIRMWARE_VERSION = (1, 8, 0)

# Message types, device -> host.
T_HELLO = 0x01
T_HEARTBEAT = 0x02
T_TAG_ARRIVE = 0x03
T_TAG_LEAVE = 0x04
T_INVENTORY = 0x05
T_FAULT = 0x06
T_ACK = 0x07
# Message types, host -> device.
T_HELLO_ACK = 0x81
T_CONFIGURE = 0x82
T_REQUEST_INVENTORY = 0x83
T_REBOOT = 0x84
T_EXPECT = 0x85
T_REPLAY = 0x86

# ACK status codes.
ACK_OK = 0
ACK_BAD_ARGS = 1
ACK_UNKNOWN_COMMAND = 2
ACK_NOT_READY = 3

# FAULT codes; source is an antenna number or SOURCE_CONTROLLER.
SOURCE_CONTROLLER = 0xFF
FAULT_READER_NOT_RESPONDING = 1
FAULT_READER_RECOVERED = 2
FAULT_TOO_MANY_TAGS = 3
FAULT_BAD_HOST_FRAME = 4
FAULT_OUTPUT_OVERFLOW = 5
FAULT_FIRMWARE_ERROR = 6
FAULT_SCAN_STALLED = 7  # detail = the gap in ms between two reads (sent before the next arrival)

# Reset causes reported in HELLO.
RESET_POWER_ON = 0
RESET_WATCHDOG = 1
RESET_HOST_REQUEST = 2
RESET_SOFT = 3

HEADER_FORMAT = ">BBH"  # version, type, sequence
HEADER_SIZE = 4
CRC_SIZE = 2
MAX_PAYLOAD = 250  # header + body; the COBS-encoded frame then fits in 255 bytes
MAX_BODY = MAX_PAYLOAD - HEADER_SIZE
MAX_ENCODED = MAX_PAYLOAD + CRC_SIZE + 2
MAX_UID_LEN = 10
INVENTORY_HEAD_FORMAT = ">IHBBB"  # boot id, snapshot, part, parts, count
INVENTORY_HEAD_SIZE = 9

STALL_GAP_MS = 100
DEFAULT_SCAN_PERIOD_MS = 100
DEFAULT_DEBOUNCE_MS = 250
DEFAULT_HEARTBEAT_MS = 500
MAX_TAGS_PER_ANTENNA = 8
LEAVE_MISSES = 3  # consecutive scans without a read, besides debounce_ms, before a tag has left
RING_FRAMES = 128  # recent frames kept for REPLAY after the host missed some
# ... in one preallocated byte ring of RING_BYTES (1.7.0): before, 128 (seq, frame) tuples and
# their bytes objects, ~9 KiB of small objects the collector marked at every collection (on the
# RP2040 its pause grew 4.4 -> 4.9 ms as the ring filled).  128 frames of a dealt table (arrivals,
# leaves, heartbeats: 17-21 bytes) fit; a few inventory frames (up to 256 bytes) make it hold fewer.
RING_BYTES = 4096
MAX_EXPECT = 16


def _make_crc_table():
    table = []
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return table


# Built at the first use: the RP2040 never uses it (rp2fast's CRC), nor spends its boot on it.
_CRC_TABLE = []  # type: list[int]


def crc16(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no xorout)."""
    table = _CRC_TABLE
    if not table:
        table.extend(_make_crc_table())
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ b) & 0xFF]
    return crc


def cobs_encode(data):
    """Consistent Overhead Byte Stuffing, identical output to ``cobs.cobs.encode``."""
    out = bytearray(b"\x00")
    code_idx = 0
    code = 1
    after_full_block = False
    for b in data:
        after_full_block = False
        if b == 0:
            out[code_idx] = code
            code_idx = len(out)
            out.append(0)
            code = 1
        else:
            out.append(b)
            code += 1
            if code == 0xFF:
                out[code_idx] = code
                code_idx = len(out)
                out.append(0)
                code = 1
                after_full_block = True
    if after_full_block:
        out = out[:-1]  # a full block at the very end needs no trailing code byte
    else:
        out[code_idx] = code
    return bytes(out)


def cobs_decode(data):
    """Inverse of :func:`cobs_encode`; raises ``ValueError`` for malformed input."""
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        code = data[i]
        if code == 0:
            raise ValueError("zero byte in COBS data")
        i += 1
        end = i + code - 1
        if end > n:
            raise ValueError("COBS block runs past the end")
        chunk = data[i:end]
        if 0 in chunk:
            raise ValueError("zero byte in COBS data")
        out.extend(chunk)
        i = end
        if code < 0xFF and i < n:
            out.append(0)
    return bytes(out)


def encode_frame(version, mtype, seq, body):
    """Header + body + CRC, COBS-encoded, terminated by the 0x00 delimiter."""
    payload = struct.pack(HEADER_FORMAT, version, mtype, seq & 0xFFFF) + bytes(body)
    if len(payload) > MAX_PAYLOAD:
        raise ValueError("payload too long")
    payload += struct.pack(">H", crc16(payload))
    return cobs_encode(payload) + b"\x00"


def decode_frame(frame):
    """One frame without its delimiter -> (version, type, seq, body); ``ValueError`` if bad."""
    if len(frame) > MAX_ENCODED:
        raise ValueError("frame too long")
    raw = cobs_decode(frame)
    if len(raw) < HEADER_SIZE + CRC_SIZE:
        raise ValueError("frame too short")
    payload = raw[:-CRC_SIZE]
    if crc16(payload) != struct.unpack(">H", raw[-CRC_SIZE:])[0]:
        raise ValueError("bad crc")
    version, mtype, seq = struct.unpack(HEADER_FORMAT, payload[:HEADER_SIZE])
    return version, mtype, seq, payload[HEADER_SIZE:]


class FrameReader:
    """Splits a byte stream at 0x00 and decodes frames; bad frames are counted and skipped."""

    def __init__(self):
        self._buf = bytearray()
        self._overflow = False
        self.errors = 0

    def feed(self, data):
        frames = []
        for b in data:
            if b == 0:
                if self._overflow:
                    self.errors += 1
                elif self._buf:
                    try:
                        frames.append(decode_frame(bytes(self._buf)))
                    except ValueError:
                        self.errors += 1
                self._buf = bytearray()
                self._overflow = False
            elif not self._overflow:
                self._buf.append(b)
                if len(self._buf) > MAX_ENCODED:
                    self._overflow = True
                    self._buf = bytearray()
        return frames


def encode_uid_entry(antenna, uid):
    return bytes((antenna & 0xFF, len(uid))) + bytes(uid)


def _sub(a, b):
    return a - b


def all_in(keys, seen):
    """Every key is in ``seen`` (without building a list)."""
    for k in keys:
        if k not in seen:
            return False
    return True


class Device:
    """The protocol state machine of one microcontroller.

    The hardware loop calls :meth:`observe` once per antenna per scan cycle with the
    UIDs it read, then :meth:`end_cycle`, and :meth:`poll` and :meth:`feed` (bytes
    from the host) as often as it likes.  Frames go out through ``write(bytes)``.

    Debounce: a tag is reported on its first read; it is reported gone only after it
    has not been read for ``debounce_ms`` *and* ``LEAVE_MISSES`` consecutive scans, so
    a missed read (a common MFRC522 failure) or a slow loop does not make a
    leave/arrive pair.  After boot the device only learns what is on the table for
    ``debounce_ms`` (at least two cycles, so one missed read cannot hide a card); the
    HELLO and the INVENTORY that follow report it.
    """

    def __init__(self, antenna_count, write, boot_id, now_ms=0, reset_cause=RESET_POWER_ON,
                 firmware_version=FIRMWARE_VERSION, ticks_diff=None, on_reboot=None, on_configure=None,
                 protocol_version=PROTOCOL_VERSION, confirm_ms=0):
        self.antenna_count = antenna_count
        self.boot_id = boot_id & 0xFFFFFFFF
        self.reset_cause = reset_cause
        self.firmware_version = firmware_version
        self.protocol_version = protocol_version
        self._write = write
        self._diff = ticks_diff or _sub
        self._on_reboot = on_reboot
        self._on_configure = on_configure
        self._reader = FrameReader()
        self.seq = 0
        self.booted = False
        self.synced = False
        self.scan_period_ms = DEFAULT_SCAN_PERIOD_MS
        self.debounce_ms = DEFAULT_DEBOUNCE_MS
        self.heartbeat_ms = DEFAULT_HEARTBEAT_MS
        self.enabled = [True] * antenna_count
        self._crowded = [False] * antenna_count  # TOO_MANY_TAGS already reported
        self.present = [{} for _ in range(antenna_count)]  # antenna -> {uid: [last seen ms, misses]}
        self.cycles = 0
        self.frames_sent = 0
        self._boot_ms = now_ms
        self._last_heartbeat_ms = now_ms
        self._now_ms = now_ms
        self._uptime_ms = 0  # accumulated from successive ticks: ticks_diff only spans 2**29 ms
        self._uptime_at = now_ms
        self.confirm_ms = confirm_ms  # > 0: a new tag is reported once a second read confirms it
        self.pending = [{} for _ in range(antenna_count)]  # antenna -> {uid: first read ms}
        self.awaiting = 0  # entries in pending, all antennas (the scan loop checks it, not 28 dicts)
        self.dead = [False] * antenna_count  # readers reported not responding
        self.expected = []  # antennas the host expects the next cards on (EXPECT)
        # The last RING_FRAMES frames, for REPLAY: their bytes one after another (wrapping round)
        # in _ring; per slot (a circle of RING_FRAMES) its seq, offset and length (small ints: no
        # objects); _ring_first the oldest slot, _ring_count slots kept, _ring_used bytes.
        self._ring = bytearray(RING_BYTES)
        self._ring_seq = [0] * RING_FRAMES
        self._ring_at = [0] * RING_FRAMES
        self._ring_size = [0] * RING_FRAMES
        self._ring_first = 0
        self._ring_count = 0
        self._ring_used = 0
        self._ring_end = 0  # where the next frame's bytes go
        # A gap between two reads longer than this (a stalled loop) may have let two cards land
        # unseen: the scan that finds them reports them in antenna order, so the next arrival is
        # preceded by FAULT 7 (the host asks the dealer to confirm their order).  The reference
        # cycle is 35-44 ms; a dealer pitches no two cards within 100 ms.
        self.stall_gap_ms = STALL_GAP_MS
        self._last_read_ms = now_ms
        self._stall_gap = 0  # a stall's gap not told yet (ms)
        # The heartbeat waits until two cycles end after the gap, so every card found by the scans
        # after it comes between FAULT 7 and the next HEARTBEAT (the host's window).
        self._stall_cycles = 0

    # -- output ---------------------------------------------------------------
    def _send(self, mtype, body):
        frame = encode_frame(self.protocol_version, mtype, self.seq, body)
        self._keep(self.seq, frame)
        self.seq = (self.seq + 1) & 0xFFFF
        self.frames_sent += 1
        self._write(frame)

    def _keep(self, seq, frame):
        """``frame`` into the ring, the oldest frames dropped to make room (slots or bytes)."""
        n = len(frame)
        while self._ring_count and (self._ring_count >= RING_FRAMES or self._ring_used + n > RING_BYTES):
            self._ring_used -= self._ring_size[self._ring_first]
            self._ring_first = (self._ring_first + 1) % RING_FRAMES
            self._ring_count -= 1
        slot = (self._ring_first + self._ring_count) % RING_FRAMES
        at = self._ring_end
        self._ring_seq[slot] = seq
        self._ring_at[slot] = at
        self._ring_size[slot] = n
        ring = self._ring
        head = RING_BYTES - at  # bytes before the ring wraps round
        if n <= head:
            ring[at:at + n] = frame
        else:
            ring[at:] = frame[:head]
            ring[:n - head] = frame[head:]
        self._ring_end = (at + n) % RING_BYTES
        self._ring_count += 1
        self._ring_used += n

    def _kept(self, slot):
        """The frame in ring slot ``slot``, as bytes."""
        at = self._ring_at[slot]
        n = self._ring_size[slot]
        if at + n <= RING_BYTES:
            return bytes(self._ring[at:at + n])
        return bytes(self._ring[at:]) + bytes(self._ring[:at + n - RING_BYTES])

    def uptime_ms(self, now_ms):
        """Milliseconds since boot, exact past the ticks period (call at least every 2**29 ms)."""
        d = self._diff(now_ms, self._uptime_at)
        if d > 0:
            self._uptime_ms += d
            self._uptime_at = now_ms
        return self._uptime_ms

    def send_hello(self):
        fw = self.firmware_version
        body = struct.pack(">BBBBIBH", fw[0], fw[1], fw[2], self.antenna_count, self.boot_id,
                           self.reset_cause, self.heartbeat_ms)
        self._send(T_HELLO, body)

    def send_heartbeat(self, now_ms):
        uptime = self.uptime_ms(now_ms) & 0xFFFFFFFF
        body = struct.pack(">IIIH", self.boot_id, uptime, self.cycles & 0xFFFFFFFF, self.present_count())
        self._send(T_HEARTBEAT, body)

    def send_inventory(self, snapshot):
        """Send the full presence table, split over as many frames as it needs."""
        entries = []
        for antenna in range(self.antenna_count):
            for uid in sorted(self.present[antenna]):
                entries.append(encode_uid_entry(antenna, uid))
        parts = []
        current = []
        size = INVENTORY_HEAD_SIZE
        for entry in entries:
            if size + len(entry) > MAX_BODY or len(current) == 255:
                parts.append(current)
                current = []
                size = INVENTORY_HEAD_SIZE
            current.append(entry)
            size += len(entry)
        parts.append(current)
        for i, chunk in enumerate(parts):
            head = struct.pack(INVENTORY_HEAD_FORMAT, self.boot_id, snapshot & 0xFFFF, i + 1, len(parts),
                               len(chunk))
            self._send(T_INVENTORY, head + b"".join(chunk))
        for antenna in range(self.antenna_count):  # a host that connects late learns them too
            if self.dead[antenna]:
                self.fault(antenna, FAULT_READER_NOT_RESPONDING, 0)

    def reader_state(self, antenna, alive, detail=0):
        """The hardware loop's verdict on one reader; a change is a FAULT (after boot)."""
        if alive == (not self.dead[antenna]):
            return
        self.dead[antenna] = not alive
        if self.booted:
            self.fault(antenna, FAULT_READER_RECOVERED if alive else FAULT_READER_NOT_RESPONDING, detail)

    def fault(self, source, code, detail=0):
        self._send(T_FAULT, struct.pack(">BBH", source & 0xFF, code & 0xFF, detail & 0xFFFF))

    def _ack(self, cmd_seq, cmd_type, status):
        self._send(T_ACK, struct.pack(">HBB", cmd_seq, cmd_type, status))

    # -- scanning -------------------------------------------------------------
    def present_count(self):
        return sum(len(tags) for tags in self.present) & 0xFFFF

    def read_at(self, now_ms):
        """A read of any antenna at ``now_ms``, an empty slot's too (the scan loop does not call
        :meth:`observe` for those): a gap between two reads over ``stall_gap_ms`` is a stall."""
        gap = self._diff(now_ms, self._last_read_ms)
        self._last_read_ms = now_ms
        if gap > self.stall_gap_ms and self.booted:
            self._stall_gap = min(gap, 0xFFFF)
            self._stall_cycles = 2

    def observe(self, antenna, uids, now_ms):
        """Record one scan of one antenna: ``uids`` is the list of UIDs it read."""
        self._now_ms = now_ms
        self.read_at(now_ms)
        if antenna < 0 or antenna >= self.antenna_count or not self.enabled[antenna]:
            return
        tags = self.present[antenna]
        if not uids and not tags and not self.pending[antenna]:
            self._crowded[antenna] = False
            return  # an empty slot read empty: most reads (nothing to learn, nothing to send)
        seen = []
        for uid in uids:
            if type(uid) is not bytes:
                uid = bytes(uid)
            if not uid or len(uid) > MAX_UID_LEN:
                continue
            seen.append(uid)
            state = tags.get(uid)
            if state is not None:  # seen again: its state updated in place (no garbage per read)
                state[0] = now_ms
                state[1] = 0
            elif self.confirm_ms and self.booted and not self._confirmed(antenna, uid, now_ms):
                continue
            elif len(tags) >= MAX_TAGS_PER_ANTENNA:
                if self.booted and not self._crowded[antenna]:
                    self.fault(antenna, FAULT_TOO_MANY_TAGS, len(tags))
                self._crowded[antenna] = True
            else:
                tags[uid] = [now_ms, 0]
                if self.booted:
                    if self._stall_gap:
                        self.fault(SOURCE_CONTROLLER, FAULT_SCAN_STALLED, self._stall_gap)
                        self._stall_gap = 0
                    self._send(T_TAG_ARRIVE, encode_uid_entry(antenna, uid))
        if len(seen) < MAX_TAGS_PER_ANTENNA:
            self._crowded[antenna] = False
        pending = self.pending[antenna]
        if pending:
            for uid in list(pending):
                if uid not in seen:
                    del pending[uid]  # read once, then gone: a card skimming past, not an arrival
                    self.awaiting -= 1
        if not self.booted or len(seen) >= len(tags) and all_in(tags, seen):
            return  # still settling: only learn; or every tag was read: none is missing
        for uid in sorted(tags):
            if uid in seen:
                continue
            state = tags[uid]
            state[1] += 1
            if state[1] >= LEAVE_MISSES and self._diff(now_ms, state[0]) >= self.debounce_ms:
                del tags[uid]
                self._send(T_TAG_LEAVE, encode_uid_entry(antenna, uid))

    def confirm_due(self, now_ms, lead_ms=0):
        """The antennas holding a new tag whose confirming read may start now: its first read
        ``confirm_ms`` ago, less ``lead_ms`` (what a read takes to start and end: the read that
        confirms ends ``confirm_ms`` after the first or later).  A read sooner could not confirm
        it, so the scan loop spends its priority reads on these, not on every tag pending."""
        due = []
        if not self.awaiting:
            return due
        for antenna in range(self.antenna_count):
            for first in self.pending[antenna].values():
                if self._diff(now_ms, first) >= self.confirm_ms - lead_ms:
                    due.append(antenna)
                    break
        return due

    def _confirmed(self, antenna, uid, now_ms):
        pending = self.pending[antenna]
        first = pending.get(uid)
        if first is None:
            pending[uid] = now_ms
            self.awaiting += 1
            return False
        if self._diff(now_ms, first) < self.confirm_ms:
            return False
        del pending[uid]
        self.awaiting -= 1
        return True

    def end_cycle(self, now_ms):
        """A full pass over all antennas is done; the first one completes the boot."""
        self.cycles += 1
        self._now_ms = now_ms
        if self._stall_cycles:
            self._stall_cycles -= 1
            if not self._stall_cycles and not self.awaiting:
                self._stall_gap = 0  # no card landed in the gap: nothing to order
        if not self.booted and self.cycles >= 2 and self._diff(now_ms, self._boot_ms) >= self.debounce_ms:
            self.booted = True
            self.send_hello()
            self.send_inventory(0)
            self._last_heartbeat_ms = now_ms

    def poll(self, now_ms):
        """Periodic duties: the heartbeat, and HELLO again until the host acknowledges it."""
        self._now_ms = now_ms
        self.uptime_ms(now_ms)
        if self.booted and not self._stall_cycles and self._diff(now_ms, self._last_heartbeat_ms) >= self.heartbeat_ms:
            self._last_heartbeat_ms = now_ms
            if not self.synced:
                self.send_hello()
            self.send_heartbeat(now_ms)

    # -- host commands --------------------------------------------------------
    def feed(self, data):
        """Bytes from the host; complete frames are decoded and executed."""
        errors = self._reader.errors
        for frame in self._reader.feed(data):
            self.handle(frame[0], frame[1], frame[2], frame[3])
        if self._reader.errors != errors and self.booted:
            self.fault(SOURCE_CONTROLLER, FAULT_BAD_HOST_FRAME, self._reader.errors)

    def handle(self, version, mtype, seq, body):
        if version != self.protocol_version:
            return
        if not self.booted:
            if mtype == T_REBOOT and self._on_reboot is not None:
                self._on_reboot()
            return  # the boot HELLO + INVENTORY answer everything else
        if mtype == T_HELLO_ACK:
            if len(body) != 4:
                self._ack(seq, mtype, ACK_BAD_ARGS)
                return
            boot_id = struct.unpack(">I", body)[0]
            if boot_id == self.boot_id:
                self.synced = True
                self._ack(seq, mtype, ACK_OK)
            else:  # "who are you?": identify and send the whole table
                self.send_hello()
                self.send_inventory(seq)
        elif mtype == T_REQUEST_INVENTORY:
            self._ack(seq, mtype, ACK_OK)
            self.send_inventory(seq)
        elif mtype == T_CONFIGURE:
            self._ack(seq, mtype, self._configure(body))
        elif mtype == T_REBOOT:
            self._ack(seq, mtype, ACK_OK)
            if self._on_reboot is not None:
                self._on_reboot()
        elif mtype == T_EXPECT:
            if len(body) < 1 or len(body) != 1 + body[0] or body[0] > MAX_EXPECT:
                self._ack(seq, mtype, ACK_BAD_ARGS)
                return
            self.expected = [a for a in body[1:] if a < self.antenna_count]
        elif mtype == T_REPLAY:
            if len(body) != 2:
                self._ack(seq, mtype, ACK_BAD_ARGS)
                return
            self._replay(seq, struct.unpack(">H", body)[0])
        else:
            self._ack(seq, mtype, ACK_UNKNOWN_COMMAND)

    def _replay(self, cmd_seq, first):
        """Send again, with their own sequence numbers, the frames from ``first`` on, then the ACK
        (so it marks the end): OK if the ring still held ``first``; NOT_READY if not, after the
        whole ring (a host that has no position, e.g. just started, learns the recent order)."""
        count = self._ring_count
        start = 0
        found = False
        for i in range(count):
            if self._ring_seq[(self._ring_first + i) % RING_FRAMES] == first:
                start = i
                found = True
                break
        # (copied out before any is written: the ACK below goes into the ring too)
        frames = [self._kept((self._ring_first + i) % RING_FRAMES) for i in range(start, count)]
        for frame in frames:
            self._write(frame)
        self._ack(cmd_seq, T_REPLAY, ACK_OK if found else ACK_NOT_READY)

    def _configure(self, body):
        if len(body) < 7:
            return ACK_BAD_ARGS
        scan, debounce, heartbeat, nbytes = struct.unpack(">HHHB", body[:7])
        mask = body[7:]
        if len(mask) != nbytes or heartbeat < 10 or heartbeat > 60000:
            return ACK_BAD_ARGS
        self.scan_period_ms = scan
        self.debounce_ms = debounce
        self.heartbeat_ms = heartbeat
        for antenna in range(self.antenna_count):
            on = nbytes == 0 or (antenna // 8 < nbytes and bool(mask[antenna // 8] >> (antenna % 8) & 1))
            if not on and self.enabled[antenna]:
                for uid in sorted(self.present[antenna]):
                    self._send(T_TAG_LEAVE, encode_uid_entry(antenna, uid))
                self.present[antenna] = {}
            self.enabled[antenna] = on
        if self._on_configure is not None:
            self._on_configure(self)
        return ACK_OK
