# ruff: noqa: E402 (micropython.kbd_intr(-1) goes before the slow imports)
"""RP2040 main loop: scan every MFRC522, debounce, report over USB serial.

``main.py`` imports this module, which runs the loop.  It is a module, not ``main.py`` itself,
so that it can be precompiled: MicroPython compiles ``main.py`` from source at every boot, and
for this file that took ~200 ms of the chip's time before the first scan (README "Install").
All protocol behaviour (framing, CRC, sequence numbers, heartbeats, debounce, host
commands) is in ``bridge_proto.Device``, the code the host's emulator and tests run;
this file is only the hardware around it.  Edit the pin table below for your wiring
(see README.md).
"""

import micropython

micropython.kbd_intr(-1)  # before anything slow: the line is binary (boot.py does it first; see there)

import gc
import os
import select
import struct
import sys
import time

import machine
from bridge_proto import (
    FAULT_FIRMWARE_ERROR,
    FAULT_OUTPUT_OVERFLOW,
    RESET_HOST_REQUEST,
    RESET_POWER_ON,
    RESET_SOFT,
    RESET_WATCHDOG,
    SOURCE_CONTROLLER,
    Device,
)
from mfrc522 import MFRC522

# On the RP2040 itself: register access, CRC and COBS in viper (rp2fast.py); the model and the
# MicroPython WebAssembly tests run the portable code.
FAST = getattr(sys, "platform", "") == "rp2"
if FAST:
    from array import array

    import rp2fast

    rp2fast.install()

try:  # the board's own wiring, if any: a board_config.py beside this file overrides the table below
    import board_config as _board
except ImportError:
    _board = None


def _setting(name, default):
    return getattr(_board, name, default)


# -- wiring ---------------------------------------------------------------------------
SPI_ID = 0
PIN_SCK = 18
PIN_MOSI = 19
PIN_MISO = 16
PIN_RST = 22  # shared NRSTPD of all readers
SPI_BAUD = _setting("SPI_BAUD", 4000000)  # 10 MHz is the chip's limit; long ribbon cables want less
# One chip-select GPIO per reader, in antenna order (antenna N = CS_PINS[N]).
CS_PINS = _setting("CS_PINS", (17, 20, 21, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 26, 27, 28))
# With more readers than free GPIOs, drive two 74HC154 4-to-16 decoders instead:
# MUX_ADDR = (0, 1, 2, 3); MUX_ENABLE = (4, 5)  (active-low outputs are the CS lines)
MUX_ADDR = _setting("MUX_ADDR", None)
MUX_ENABLE = _setting("MUX_ENABLE", None)
# Readers actually wired (behind the decoders, or the first N chip selects); None = every line.
READER_COUNT = _setting("READER_COUNT", None)

RX_GAIN = _setting("RX_GAIN", 0x50)  # RFCfgReg: 0x70 = 48 dB (longest range), 0x40 = 33 dB; see README on cross-reads
RESET_LOW_US = 100  # NRSTPD low (the datasheet's minimum is 100 ns)
RESET_WAIT_MS = _setting("RESET_WAIT_MS", 50)  # longest wait for a reader's oscillator after the reset
WDT_MS = 4000  # hardware watchdog: a hung SPI bus reboots the board (reset cause WATCHDOG)
REINIT_MS = 5000  # how often a dead reader is retried

# -- scan schedule (README "Scan timing") ------------------------------------------------
PIPELINE = _setting("PIPELINE", 5)  # readers whose field is already on (settling) while one is read
# ... while the host expects no card (no EXPECT): a deeper pipeline hides the settle behind more
# (shorter) empty reads, so the whole table's cycle is shorter; with expected antennas, PIPELINE
# (one read in PRIORITY_EVERY goes to them, and each waits behind the fields already on).
PIPELINE_IDLE = _setting("PIPELINE_IDLE", 7)
ADJACENT = _setting("ADJACENT", 1)  # antennas closer than this in number are neighbours: never on together
# A neighbour of an expected antenna passed over this long (its field cannot go on beside the
# expected one's, back in the pipeline at every priority turn) goes before that antenna's next turn.
STARVE_MS = _setting("STARVE_MS", 500)
# While the host expects a card, the pipeline is no deeper than the settle needs (1.7.0): a field
# switched on waits out its settle behind the reads ahead of it, counted at about OCCUPIED_US for
# a slot holding a tag (a presence check, ~3.5 ms on the chip, and the loop around it) and
# EMPTY_US for an empty one; once those add up to SETTLE_COVER_US, one more field on would only
# make the expected antenna's read wait longer (on a dealt table it waited behind five presence
# checks: ~23 ms).  With no EXPECT the pipeline stays PIPELINE_IDLE deep (a tag lifted a moment
# ago still counts as one there, and its read is short: a shallower pipeline waited on settles).
SETTLE_COVER_US = _setting("SETTLE_COVER_US", 5000)
OCCUPIED_US = 4000
EMPTY_US = 600
PRIORITY_EVERY = _setting("PRIORITY_EVERY", 2)  # every Nth read goes to an expected/confirming antenna
FULL_EVERY = _setting("FULL_EVERY", 4)  # every Nth read of an occupied antenna is a full anticollision
CONFIRM_MS = _setting("CONFIRM_MS", 20)  # a new tag is reported when a second read, this much later, confirms it
# The confirming read is started this much before CONFIRM_MS is up: its field's 5 ms settle comes
# before its REQA, which is what must be CONFIRM_MS after the first read's; a read of it that would
# come sooner waits for that (_await_confirm), so its field can go on a little early.
CONFIRM_LEAD_MS = _setting("CONFIRM_LEAD_MS", 6)
# The collector (on the RP2040): at the end of a scan cycle with no new tag awaiting its confirming
# read, once GC_MS has passed since the last; and whenever GC_THRESHOLD bytes were allocated since.
GC_MS = _setting("GC_MS", 100)
GC_THRESHOLD = _setting("GC_THRESHOLD", 16384)
# On the RP2040, the empty slots are read and their successors switched on in machine code
# (rp2fast.run_empty), for at most RUN_US at a time before the loop's service (host commands,
# heartbeats) runs again.
RUN_US = _setting("RUN_US", 2000)
OUT_LIMIT = 2048  # bytes queued for USB while the host does not read; beyond: frames dropped, FAULT 5 later

# Watchdog scratch register 0 survives the watchdog reset machine.reset() goes through on the
# rp2 port: it tells a host-requested reboot from a hang.
SCRATCH0 = 0x4005800C
REBOOT_MAGIC = 0x7AB1E0B7


class MuxPin:
    """A chip select behind a 74HC154 pair, with the Pin.value() interface MFRC522 uses."""

    def __init__(self, index, addr, enable):
        self.index = index
        self.addr = addr
        self.enable = enable

    def value(self, v):
        if v:
            for pin in self.enable:
                pin.value(1)
            return
        for bit, pin in enumerate(self.addr):
            pin.value((self.index >> bit) & 1)
        self.enable[self.index // 16].value(0)


def chip_selects():
    Pin = machine.Pin
    if MUX_ADDR is None:
        pins = CS_PINS if READER_COUNT is None else CS_PINS[:READER_COUNT]
        return [Pin(n, Pin.OUT, value=1) for n in pins]
    addr = [Pin(n, Pin.OUT, value=0) for n in MUX_ADDR]
    enable = [Pin(n, Pin.OUT, value=1) for n in MUX_ENABLE]
    count = 16 * len(enable) if READER_COUNT is None else READER_COUNT
    return [MuxPin(i, addr, enable) for i in range(count)]


def selections(count):
    """Per reader, the SIO masks rp2fast selects it with (see rp2fast.py), the same wiring."""
    out = []
    if MUX_ADDR is None:
        pins = CS_PINS if READER_COUNT is None else CS_PINS[:READER_COUNT]
        for n in pins[:count]:
            out.append(array("I", (0, 0, 1 << n, 1 << n)))
        return out
    enables = 0
    for n in MUX_ENABLE:
        enables |= 1 << n
    for i in range(count):
        ones = 0
        zeros = 0
        for bit, n in enumerate(MUX_ADDR):
            if (i >> bit) & 1:
                ones |= 1 << n
            else:
                zeros |= 1 << n
        out.append(array("I", (ones, zeros, 1 << MUX_ENABLE[i // 16], enables)))
    return out


def reset_cause():
    cause = machine.reset_cause()
    requested = machine.mem32[SCRATCH0] == REBOOT_MAGIC
    machine.mem32[SCRATCH0] = 0
    if cause == machine.WDT_RESET:
        return RESET_HOST_REQUEST if requested else RESET_WATCHDOG
    if cause == machine.PWRON_RESET:
        return RESET_POWER_ON
    return RESET_SOFT


def _ready(poller):
    """The one registered stream is ready, asked without allocating (ipoll reuses its tuple)."""
    for _ in poller.ipoll(0):
        return True
    return False


class Output:
    """Frames to the host without ever blocking the scan: written while USB has room, queued
    (up to OUT_LIMIT bytes) while it has none, dropped beyond, and the loss reported."""

    def __init__(self, stream):
        self.stream = stream
        self.poller = select.poll()
        self.poller.register(stream, select.POLLOUT)
        self.queue = bytearray()
        self.dropped = 0
        self.one = bytearray(1)

    def write(self, frame):
        if len(self.queue) + len(frame) > OUT_LIMIT:
            self.dropped += 1
            return
        self.queue.extend(frame)
        self.pump()

    def pump(self):
        # One byte per write: "writable" only promises room for one, and a write that does not
        # fit blocks the whole loop (up to 500 ms on the rp2 port) while the host does not read.
        # The byte goes through a preallocated buffer and readiness through ipoll: no garbage.
        q = self.queue
        n = 0
        one = self.one
        while n < len(q) and _ready(self.poller):
            one[0] = q[n]
            self.stream.write(one)
            n += 1
        if n:
            self.queue = q[n:]
        return not self.queue


class Scanner:
    """Which antenna to read next: every enabled one in turn, in a stride that keeps the
    readers whose fields are on together apart, with the antennas the host expects the next
    card on (and those holding a tag awaiting its confirming read) every PRIORITY_EVERY-th read."""

    def __init__(self, count):
        self.count = count
        stride = 2 * ADJACENT + 1
        order = []
        for start in range(stride):
            order.extend(range(start, count, stride))
        self.order = order
        self.pos = 0
        self.countdown = PRIORITY_EVERY  # reads until the next priority read (no division on an M0+)
        self.prio_pos = 0
        self.cycle_done = False
        self.urgent = False  # the last antenna given is due a confirming read: read it next, not last
        self.deferred = []
        self.deferred_ms = {}  # antenna -> when the order passed it over (ticks_ms)

    def _clear(self, antenna, busy):
        for b in busy:
            if abs(b - antenna) <= ADJACENT:
                return False
        return True

    def _starved(self, antenna):
        """A neighbour of ``antenna`` passed over STARVE_MS ago or more: it goes first (an expected
        antenna is back in the pipeline at every priority turn, and its neighbours could wait for
        as long as the host kept expecting a card there)."""
        now = time.ticks_ms()
        for b, since in self.deferred_ms.items():
            if abs(b - antenna) <= ADJACENT and time.ticks_diff(now, since) >= STARVE_MS:
                return True
        return False

    def next(self, dev, busy):
        # Called once per read: written for MicroPython's speed (locals, no division, the common
        # case first), the same choices as before.
        self.urgent = False
        deferred_ms = self.deferred_ms
        self.countdown -= 1
        if self.countdown <= 0:
            self.countdown = PRIORITY_EVERY
            prio = dev.expected
            due = None
            if dev.awaiting:  # a new tag's confirming read, once it can confirm (CONFIRM_MS on)
                due = dev.confirm_due(time.ticks_ms(), CONFIRM_LEAD_MS)
                for a in due:  # before the expected antennas' turns: it is what reports a card
                    # Only the reader read next must be clear of it: a neighbour whose field is
                    # merely warming is switched off for it and read soon after (see main()).
                    if a not in busy and dev.enabled[a] and (not busy or abs(busy[0] - a) > ADJACENT):
                        self.urgent = True
                        return a
            if prio:
                # In turn, from the one whose turn it is.  One that already holds a tag (the host's
                # hint lags its own count: the flop's first two cards, still expected while the
                # third comes) is read in the order like any other: a priority read of it is a
                # presence check that finds nothing new.  One whose new tag awaits its confirming
                # read gets it from confirm_due above, when it can count.  One blocked by a
                # neighbour's field (the board's slots are each other's neighbours) keeps its turn
                # but lets the next one go meanwhile (before 1.7.0 all waited: a flop's first card
                # was read ~50 ms after it landed).
                present = dev.present
                pending = dev.pending
                enabled = dev.enabled
                np = len(prio)
                pos = self.prio_pos % np
                blocked = -1
                for k in range(np):
                    i = pos + k
                    if i >= np:
                        i -= np
                    a = prio[i]
                    if present[a] or pending[a] or not enabled[a]:
                        continue
                    if a in busy or not self._clear(a, busy) or (deferred_ms and self._starved(a)):
                        if blocked < 0:
                            blocked = i
                        continue
                    self.prio_pos = i + 1 if blocked < 0 else blocked
                    return a
                if blocked >= 0:
                    self.prio_pos = blocked
        deferred = self.deferred
        if deferred:
            for a in deferred:  # passed over while a neighbour's field was on: first in line now
                if self._clear(a, busy):
                    deferred.remove(a)
                    if a in deferred_ms:
                        del deferred_ms[a]
                    return a
        order = self.order
        enabled = dev.enabled
        n = len(order)
        pos = self.pos
        for _ in range(n):
            a = order[pos]
            pos += 1
            if pos == n:
                pos = 0
                self.cycle_done = True
            if not enabled[a]:
                continue
            clear = True
            for b in busy:
                if abs(b - a) <= ADJACENT:
                    clear = False
                    break
            if clear:
                self.pos = pos
                return a
            if a not in deferred:
                deferred.append(a)
                deferred_ms[a] = time.ticks_ms()
        self.pos = pos
        return None


def main():
    cause = reset_cause()
    wdt = machine.WDT(timeout=WDT_MS)
    Pin = machine.Pin
    spi = machine.SPI(SPI_ID, baudrate=SPI_BAUD, polarity=0, phase=0,
                      sck=Pin(PIN_SCK), mosi=Pin(PIN_MOSI), miso=Pin(PIN_MISO))
    # A hard reset of every reader (NRSTPD low: the datasheet asks >= 100 ns), which also resets
    # every register, so no soft reset follows.  A reader answers once its oscillator runs (the
    # datasheet's start-up time: the crystal's own, plus 37.74 us); so rather than a fixed 50 ms,
    # each reader's VersionReg is polled until it answers, for at most RESET_WAIT_MS in all.
    rst = Pin(PIN_RST, Pin.OUT, value=0)
    time.sleep_us(RESET_LOW_US)
    rst.value(1)
    started = time.ticks_ms()
    cs_lines = chip_selects()  # (every chip select high, the decoders' enables high)
    if FAST:
        readers = [rp2fast.FastMFRC522(sel, gain=RX_GAIN) for sel in selections(len(cs_lines))]
    else:
        readers = [MFRC522(spi, cs, gain=RX_GAIN) for cs in cs_lines]
    cs_lines = None
    alive = []
    for r in readers:
        ok = r.init(reset=False)  # False while the reader does not answer yet
        while not ok and time.ticks_diff(time.ticks_ms(), started) < RESET_WAIT_MS:
            time.sleep_us(200)
            ok = r.init(reset=False)
        alive.append(ok)
    last_init = time.ticks_ms()

    out = Output(sys.stdout.buffer)
    inp = sys.stdin.buffer
    poller = select.poll()
    poller.register(sys.stdin, select.POLLIN)
    boot_id = struct.unpack(">I", os.urandom(4))[0] or 1
    reboot = []

    def on_reboot():
        reboot.append(1)

    dev = Device(len(readers), out.write, boot_id, now_ms=time.ticks_ms(), reset_cause=cause,
                 ticks_diff=time.ticks_diff, on_reboot=on_reboot, confirm_ms=CONFIRM_MS)
    for antenna in range(len(readers)):
        dev.reader_state(antenna, alive[antenna])
    out.write(b"\x00")  # end whatever partial frame the host parser holds
    scanner = Scanner(len(readers))
    # No deeper than the order's shortest stride group less one: the field switched on then is never
    # beside one still warming from the group before (22 readers: 6; 28: 7), else the order is
    # deferred at every cycle and read in Python.
    idle = min(PIPELINE_IDLE, max(PIPELINE, len(readers) // (2 * ADJACENT + 1) - 1))
    warming = []  # antennas whose field is on, in the order they will be read
    reads = [0] * len(readers)
    errors = 0
    if FAST:  # what rp2fast.run_empty reads and changes in place (see there)
        ctx = [readers, dev.enabled, alive, dev.present, dev.pending, bytes(scanner.order), rp2fast._FIFO, warming]
        st = array("i", (0, 0, idle, ADJACENT, RUN_US, 0))

    def service():
        wdt.feed()
        while _ready(poller):  # host commands, between readers
            dev.feed(inp.read(1))
        if (not out.queue or out.pump()) and out.dropped:  # (no call while nothing waits)
            dev.fault(SOURCE_CONTROLLER, FAULT_OUTPUT_OVERFLOW, out.dropped)
            out.dropped = 0
        if reboot:
            _reboot(out, wdt)
        dev.poll(time.ticks_ms())

    served = time.ticks_add(time.ticks_ms(), -1)
    last_gc = time.ticks_ms()
    if FAST and GC_THRESHOLD:
        gc.threshold(GC_THRESHOLD)
    while True:
        try:
            now = time.ticks_ms()
            if now != served:  # once a millisecond is plenty: a read is ~0.5 ms on an empty slot
                served = now
                service()
            depth = PIPELINE if dev.expected else idle
            answered = 0  # run_empty's REQA of `antenna` was answered (1) or its reader is dead (-1)
            step = True  # the loop reads one antenna below
            run_us = RUN_US
            if FAST and dev.awaiting:  # a new tag: the batch ends when its confirming read may start
                run_us = 1000 * _confirm_in(dev, time.ticks_ms())
            if FAST and run_us > 0 and not scanner.deferred:
                st[0] = scanner.pos
                st[4] = run_us if run_us < RUN_US else RUN_US
                # Its picks count as the scanner's: it stops before a priority read is due.
                st[1] = scanner.countdown - 1 if dev.expected else 255
                st[2] = depth
                r = rp2fast.run_empty(ctx, st)
                scanner.pos = st[0]
                if dev.expected:
                    scanner.countdown -= r >> 16
                if r & 0xFF00:  # it read some (the last a fraction of a millisecond ago)
                    dev.read_at(time.ticks_ms())
                why = r & 0xFF
                if why == rp2fast.RUN_TAG or why == rp2fast.RUN_DEAD:
                    answered = 1 if why == rp2fast.RUN_TAG else -1
                elif why == rp2fast.RUN_WRAP:
                    scanner.cycle_done = True
                    step = False
                elif why == rp2fast.RUN_TIME:
                    step = False
            while step and not answered and len(warming) <= depth and not (dev.expected and _covered(dev, warming)):
                a = scanner.next(dev, warming)
                if a is None:
                    break
                urgent = scanner.urgent and warming
                if urgent:
                    # Its neighbours still warming (not the one read next) give way: their fields
                    # go off before its goes on, and they are first in line again once it is read.
                    i = len(warming) - 1
                    while i > 0:
                        b = warming[i]
                        if abs(b - a) <= ADJACENT:
                            warming.pop(i)
                            if alive[b]:
                                readers[b].field(False)
                            if b not in scanner.deferred:
                                scanner.deferred.insert(0, b)
                        i -= 1
                if alive[a]:
                    try:
                        readers[a].field(True)
                    except Exception as exc:
                        alive[a] = False
                        dev.reader_state(a, False, 0 if isinstance(exc, OSError) else 1)
                if urgent:
                    # A new tag's confirming read goes next after the one being read, not behind
                    # PIPELINE others (on a table full of cards, each a presence check of ~3.4 ms): it
                    # waits out its own settle instead, once per new tag.  (Every priority read so
                    # hurried made the expected antenna faster and all the others much slower.)
                    warming.insert(1, a)
                else:
                    warming.append(a)
            if answered:
                antenna = st[5]
            elif not step:
                antenna = -1
            elif not warming:
                time.sleep_ms(5)
                continue
            else:
                if dev.awaiting and len(warming) > 1:
                    _confirm_first(dev, warming)
                antenna = warming.pop(0)
            if antenna < 0:
                pass
            elif dev.enabled[antenna] and alive[antenna]:
                tags = dev.present[antenna]
                pending = dev.pending[antenna]
                known = None
                if tags or pending:  # (an empty slot: nothing to count, nothing to check)
                    reads[antenna] += 1  # reads of it while occupied: every FULL_EVERY-th is a full one
                    if pending:  # the confirming read: a presence check of the new tag (and the others)
                        known = sorted(tags) + sorted(pending) if tags else sorted(pending)
                    elif (reads[antenna] + antenna) % FULL_EVERY == 0:
                        # (offset by the antenna: cards dealt together are not all read in full in
                        # the same cycle, which made one cycle in FULL_EVERY twice as long)
                        known = None
                    else:
                        known = sorted(tags)
                    if pending:
                        _await_confirm(pending)
                reader = readers[antenna]
                try:
                    uids = reader.after_reqa(known, answered) if answered else reader.scan(known)
                    # The read's time is when its REQA went (after the settle), not when it ended:
                    # CONFIRM_MS is between the two reads' REQAs, and a full anticollision (~7 ms)
                    # is not added to every arrival.
                    seen_ms = reader.read_ms
                except Exception as exc:  # OSError: not answering; anything else: the same, with a detail
                    uids = []
                    seen_ms = time.ticks_ms()
                    alive[antenna] = False
                    dev.reader_state(antenna, False, 0 if isinstance(exc, OSError) else 1)
                if uids or tags or pending:  # an empty slot read empty tells the protocol nothing
                    dev.observe(antenna, uids, seen_ms)
                else:  # but it was read: the gap since the last read is no stall
                    dev.read_at(seen_ms)
            elif alive[antenna]:
                readers[antenna].field(False)
            if scanner.cycle_done:
                scanner.cycle_done = False
                now = time.ticks_ms()
                dev.end_cycle(now)
                if FAST and time.ticks_diff(now, last_gc) >= GC_MS and not dev.awaiting and not out.queue:
                    # The collector at a quiet point, often: a pause is ~4 ms plus what it frees,
                    # so little garbage a time keeps every pause short (README "Garbage collection").
                    last_gc = now
                    gc.collect()
                if time.ticks_diff(now, last_init) >= REINIT_MS:
                    last_init = now
                    for a in range(len(readers)):
                        if not alive[a] and a not in warming:
                            try:
                                alive[a] = readers[a].init()
                            except Exception:
                                alive[a] = False
                            dev.reader_state(a, alive[a])
            errors = 0
        except Exception as exc:  # a bug must not take the table down: report it, keep scanning
            errors += 1
            for a in warming:
                try:
                    readers[a].field(False)
                except Exception:
                    pass
            warming = []
            if FAST:
                ctx[7] = warming
            dev.fault(SOURCE_CONTROLLER, FAULT_FIRMWARE_ERROR, errors)
            if errors >= 20:  # failing every time: a clean restart is the better chance
                raise exc
            time.sleep_ms(10)


def _covered(dev, warming):
    """The fields already on cover a new field's settle: the reads ahead of it add up to
    SETTLE_COVER_US (an occupied slot's OCCUPIED_US, an empty one's EMPTY_US)."""
    present = dev.present
    pending = dev.pending
    us = 0
    for b in warming:
        us += OCCUPIED_US if present[b] or pending[b] else EMPTY_US
    return us >= SETTLE_COVER_US


def _await_confirm(pending):
    """A read of a new tag's antenna due less than CONFIRM_LEAD_MS before it could confirm the tag
    waits until it can: its REQA (after the settle, or after this) then comes no sooner than
    CONFIRM_MS after the first read's, so the confirming read's field may go on CONFIRM_LEAD_MS
    early (more than the settle) without a read that comes too soon to count."""
    now = time.ticks_ms()
    for first in pending.values():
        left = CONFIRM_MS - time.ticks_diff(now, first)
        if 0 < left <= CONFIRM_LEAD_MS:
            time.sleep_ms(left)
        return


def _confirm_in(dev, now):
    """ms until the first new tag's confirming read may start (``Device.confirm_due``, with the
    same CONFIRM_LEAD_MS); 0 or less: now."""
    soonest = CONFIRM_MS
    for pending in dev.pending:
        if pending:
            for first in pending.values():
                left = CONFIRM_MS - CONFIRM_LEAD_MS - time.ticks_diff(now, first)
                if left < soonest:
                    soonest = left
    return soonest


def _confirm_first(dev, warming):
    """A new tag's antenna already warming (an expected antenna, picked again on a priority turn
    before its tag could confirm) is read as soon as the tag can confirm, not behind the fields
    ahead of it: on a table of cards those are presence checks of ~4 ms each, and the confirming
    read came ~27 ms after the first instead of 20.  Only the order of the fields already on
    changes (no field goes on), so no two neighbours are on together; its read still waits out
    the rest of its field's settle, and its read's time (its REQA) comes after now, so at least
    CONFIRM_MS after the first."""
    now = time.ticks_ms()
    pending = dev.pending
    for i in range(1, len(warming)):
        for first in pending[warming[i]].values():
            if time.ticks_diff(now, first) >= CONFIRM_MS:
                warming.insert(0, warming.pop(i))
                return


def _reboot(out, wdt):
    """The host asked for a reboot: let its ACK out first, then reset (reported as a host request)."""
    deadline = time.ticks_add(time.ticks_ms(), 200)
    while not out.pump() and time.ticks_diff(deadline, time.ticks_ms()) > 0:
        wdt.feed()
        time.sleep_ms(1)
    time.sleep_ms(5)  # the last USB packet leaves on the next frame
    machine.mem32[SCRATCH0] = REBOOT_MAGIC
    machine.reset()


def maintenance_requested():
    """Hold BOOTSEL while the board starts to get the REPL instead of the scan loop."""
    try:
        import rp2

        return bool(rp2.bootsel_button())
    except (ImportError, AttributeError):
        return False


if not maintenance_requested():
    main()
