"""The RP2040's fast paths: register access, CRC and COBS in viper (machine code), for main.py.

Measured on the chip's own binary (``tablectl bench table --chip``), a register access through
``machine.SPI`` and ``Pin.value()`` costs 73 us start to start with direct chip selects and 220 us
behind the 74HC154s (``MuxPin.value()`` is four pin writes in Python), where the bus itself needs
4 us at 4 MHz.  Here one viper call selects the reader with two SIO writes (the decoder's address
while both enables are still high, then the enable or chip select low), clocks the bytes through
SPI0's FIFO, waits for the bus to go idle and deselects.  ``run_empty`` (1.6.0) goes further: the
scan loop's whole step over a run of empty slots (switch the next reader on, read the first
warming one) in one call, so an empty table's cycle is bound by the readers' 5 ms settle, not
by Python between reads.

Only ``main.py`` on an RP2040 imports this (``sys.platform == "rp2"``): the register-level model
and the MicroPython WebAssembly tests run the portable driver, whose logic this does not change:
:class:`FastMFRC522` replaces only the four bus methods of :class:`mfrc522.MFRC522`.  SPI0 must
already be set up by ``machine.SPI`` (clock, mode, pins).
"""

import time

import bridge_proto
import micropython
from mfrc522 import _SEL, _SETUP, EXCHANGE_US, KNOWN_VERSIONS, MFRC522, ReaderDead, _cascade, _Collision, crc_a
from micropython import const

_VERSIONS = bytes(KNOWN_VERSIONS)
_EMPTY = ()  # what an empty slot reads: shared, nothing allocated
_NONE = None  # (viper compares objects with an object, not with the None constant)
_FIFO = bytearray(65)  # every reader's FIFO transfers: one reader is read at a time

# One reader's selection, an array('I', 4): SIO bits to set (address ones), to clear (address
# zeros), to clear last (its enable or chip select: goes low), to set when done (deselect).


@micropython.viper
def reg(sel: ptr32, addr: int, value: int) -> int:  # noqa: F821
    """One two-byte access: ``addr`` then ``value``; returns the byte clocked in with ``value``."""
    sio = ptr32(0xD0000000)  # noqa: F821
    spi = ptr32(0x4003C000)  # noqa: F821 - SPI0: SSPDR at 0x08, SSPSR at 0x0C
    d = 0  # noqa: F841 - reads of SSPDR pop the RX FIFO
    while spi[3] & 4:  # RNE: drain anything left
        d = spi[2]  # noqa: F841
    sio[5] = sel[0]
    sio[6] = sel[1]
    sio[6] = sel[2]
    spi[2] = addr
    spi[2] = value
    while not (spi[3] & 4):
        pass
    d = spi[2]  # noqa: F841 - the address byte's answer
    while not (spi[3] & 4):
        pass
    got = spi[2]
    while spi[3] & 0x10:  # BSY
        pass
    sio[5] = sel[3]
    return got & 0xFF


@micropython.viper
def xfer(sel: ptr32, buf: ptr8, n: int):  # noqa: F821
    """``n`` bytes of ``buf`` out, the bytes clocked in written back over them (in place)."""
    sio = ptr32(0xD0000000)  # noqa: F821
    spi = ptr32(0x4003C000)  # noqa: F821
    while spi[3] & 4:
        buf[0] = spi[2]  # stale bytes: overwritten below
    sio[5] = sel[0]
    sio[6] = sel[1]
    sio[6] = sel[2]
    tx = 0
    rx = 0
    while rx < n:
        sr = spi[3]
        if tx < n and (sr & 2) and tx - rx < 8:  # TNF, and the 8-deep RX FIFO cannot overflow
            spi[2] = buf[tx]
            tx += 1
        if sr & 4:
            buf[rx] = spi[2]
            rx += 1
    while spi[3] & 0x10:
        pass
    sio[5] = sel[3]


@micropython.viper
def exchange(sel, bufo, nf: int) -> int:
    """MFRC522._transceive's register sequence in one call: ``bufo`` holds the FIFO write
    (0x12, then the frame), ``nf`` = frame length | BitFramingReg << 8.  Returns 0 (no answer,
    timer, error or the EXCHANGE_US bound) or 1 | bytes << 1 | RxLastBits << 8 | collided << 11 |
    CollReg << 12, the answer in ``bufo[1:1 + bytes]``."""
    buf = ptr8(bufo)  # noqa: F821
    n = nf & 0xFF
    framing = nf >> 8
    reg(sel, 0x02, 0x00)  # CommandReg: Idle
    reg(sel, 0x08, 0x7F)  # ComIrqReg: clear
    reg(sel, 0x14, 0x80)  # FIFOLevelReg: flush
    xfer(sel, bufo, n + 1)
    reg(sel, 0x1A, framing)  # BitFramingReg
    reg(sel, 0x02, 0x0C)  # CommandReg: Transceive
    reg(sel, 0x1A, framing | 0x80)  # StartSend
    timer = ptr32(0x40054000)  # noqa: F821 - TIMERAWL at 0x28
    start = timer[10]
    limit = int(EXCHANGE_US)
    # (1.8.0) No interrupt can come while our own frame is on the air and before the tag's frame
    # delay (ISO/IEC 14443-3 6.2.1.1: 86 us) is over, so the first poll waits for that: a bit is
    # 9.44 us at 106 kbit/s, counted here as 9 without parity, start or end bits, and 80 us for the
    # frame delay, a lower bound.  After a REQA (its ATQA is 16 bits) or a SELECT (9 bytes; its SAK
    # and CRC_A 24 bits), no answer can be complete before the reader's timer (200 us from our
    # frame's end) runs out, so the first poll waits 190 us.  An anticollision frame's answer may be
    # a few bits: 80.  Before, ComIrqReg was polled all along (a SELECT: ~60 polls, and polls were
    # three in four bytes on the bus); the answer is seen as soon as before.
    last_bits = framing & 7
    bits = n * 8
    if last_bits:
        bits = bits - 8 + last_bits
    quiet = bits * 9 + 80
    if (n == 1 and last_bits == 7) or (n == 9 and framing == 0):
        quiet = bits * 9 + 190
    while timer[10] - start < quiet:
        pass
    while True:
        irq = int(reg(sel, 0x88, 0))
        if irq & 0x20:  # RxIRq
            break
        if irq & 0x01:  # TimerIRq: nobody answered
            return 0
        if timer[10] - start > limit:
            return 0
    error = int(reg(sel, 0x8C, 0))
    if error & 0x13:  # BufferOvfl, ParityErr, ProtocolErr
        return 0
    cnt = int(reg(sel, 0x94, 0)) & 0x7F
    last = int(reg(sel, 0x98, 0)) & 0x07
    if cnt > 64:
        cnt = 64
    i = 0
    while i < cnt:
        buf[i] = 0x92
        i += 1
    buf[cnt] = 0
    xfer(sel, bufo, cnt + 1)
    out = 1 | (cnt << 1) | (last << 8)
    if error & 0x08:  # CollErr
        out |= (1 << 11) | ((int(reg(sel, 0x9C, 0)) & 0xFF) << 12)
    return out


@micropython.viper
def write_all(sel, pairs, n: int):
    """``n`` register writes in one call: ``pairs`` holds (address byte, value) twice n bytes."""
    p = ptr8(pairs)  # noqa: F821
    i = 0
    while i < n:
        reg(sel, p[2 * i], p[2 * i + 1])
        i += 1


@micropython.viper
def _known(v: int) -> int:
    """1 if ``v`` is a VersionReg value of a reader (mfrc522.KNOWN_VERSIONS)."""
    known = ptr8(_VERSIONS)  # noqa: F821
    n = int(len(_VERSIONS))
    i = 0
    while i < n:
        if known[i] == v:
            return 1
        i += 1
    return 0


@micropython.viper
def setup(sel, pairs, n: int, gain: int) -> int:
    """MFRC522.init after a reset, in one call: VersionReg checked, the ``n`` setup writes of
    ``pairs``, RxGain into RFCfgReg (its reserved bits kept), the field off.  Returns TxControlReg
    without the field bits, or -1 if the reader does not answer (yet)."""
    if not _known(int(reg(sel, 0xEE, 0))):  # VersionReg (0x37), read
        return -1
    write_all(sel, pairs, n)
    rf = int(reg(sel, 0xCC, 0))  # RFCfgReg (0x26), read
    reg(sel, 0x4C, (rf & 0x8F) | (gain & 0x70))
    tx = int(reg(sel, 0xA8, 0)) & 0xFC  # TxControlReg (0x14), read
    reg(sel, 0x28, tx)
    return tx


@micropython.viper
def field_on(sel, tx: int) -> int:
    """The field on (TxControlReg = ``tx`` | both antenna drivers); returns time.ticks_us()."""
    reg(sel, 0x28, tx | 3)
    timer = ptr32(0x40054000)  # noqa: F821 - TIMERAWL at 0x28: what ticks_us reads
    return timer[10] & 0x3FFFFFFF


@micropython.viper
def first_reqa(sel, bufo, on_us: int, tx_settle: int) -> int:
    """A scan's start in one call: VersionReg checked, the rest of the settle time from ``on_us``
    (``tx_settle`` >> 8 us) waited, REQA, and for an empty slot the field off (TxControlReg =
    ``tx_settle`` & 0xFF).  Returns -1 (the reader does not answer), 0 (nobody answered, or
    garbled: field off) or 1 (a tag answered, or tags collided: field still on)."""
    if not _known(int(reg(sel, 0xEE, 0))):
        return -1
    settle = tx_settle >> 8
    timer = ptr32(0x40054000)  # noqa: F821
    while ((timer[10] - on_us) & 0x3FFFFFFF) < settle:
        pass
    buf = ptr8(bufo)  # noqa: F821
    buf[0] = 0x12
    buf[1] = 0x26  # REQA, 7 bits
    r = int(exchange(sel, bufo, 0x701))
    if r & 0x800:  # collided: tags of different types answered
        return 1
    if r and ((r >> 1) & 0x7F) == 2 and ((r >> 8) & 7) == 0:  # ATQA: two bytes, whole
        return 1
    reg(sel, 0x28, tx_settle & 0xFF)
    return 0


@micropython.viper
def select_known(sel, bufo, frames, levels: int) -> int:
    """The direct SELECT of a known UID (a presence check), every cascade level in one call:
    ``frames`` holds each level's SELECT frame (SEL, NVB 0x70, the 4 bytes and BCC, CRC_A: 9
    bytes).  Returns 1 if each SAK came whole, with a good CRC_A and a cascade bit that agrees
    with the cascade tag (and the last level's says complete), else 0 (MFRC522._select_level's
    checks)."""
    buf = ptr8(bufo)  # noqa: F821
    f = ptr8(frames)  # noqa: F821
    level = 0
    while level < levels:
        base = 9 * level
        buf[0] = 0x12
        j = 0
        while j < 9:
            buf[1 + j] = f[base + j]
            j += 1
        r = int(exchange(sel, bufo, 9))
        if r == 0 or (r & 0x800):
            return 0
        if ((r >> 1) & 0x7F) != 3 or ((r >> 8) & 7) != 0:
            return 0
        sak = buf[1]
        b = (sak ^ 0x63) & 0xFF  # CRC_A of the SAK byte (preset 0x6363)
        b = (b ^ (b << 4)) & 0xFF
        crc = (0x63 ^ (b << 8) ^ (b << 3) ^ (b >> 4)) & 0xFFFF
        if buf[2] != (crc & 0xFF) or buf[3] != (crc >> 8):
            return 0
        cascade = 0
        if sak & 4:
            cascade = 1
        tag = 0
        if f[base + 2] == 0x88:
            tag = 1
        if cascade != tag:
            return 0
        level += 1
        if cascade and level >= levels:
            return 0
    return 1


# run_empty's answers (its low byte; reads done << 8, order picks << 16; st[0] the scan order's
# position after it, st[5] the antenna it stopped on when that antenna's read needs Python).
RUN_TIME = const(1)  # its time is up: the loop's service is due
RUN_HEAD = const(2)  # the next antenna to read is not an empty enabled slot: the loop reads it
RUN_PICK = const(3)  # the next antenna in the order is not one it may switch on itself: the scanner picks
RUN_WRAP = const(4)  # the order went round: a scan cycle ended
RUN_TAG = const(5)  # st[5] answered its REQA (its field still on): the loop reads its tags
RUN_DEAD = const(6)  # st[5] did not answer its VersionReg


@micropython.viper
def run_empty(ctx, st) -> int:
    """The scan loop's common step, many times in one call: fill the pipeline (``warming``, the
    readers whose field is on) from the scan order, then read its first reader while it is an
    empty slot (first_reqa: nothing found, its field off), until something needs the loop's Python.

    ``ctx``: [readers, dev.enabled, alive, dev.present, dev.pending, the scan order (bytes),
    the FIFO buffer, warming]; ``st``: array('i') [order position, picks allowed, pipeline
    depth, ADJACENT, time allowed (us), antenna]. An antenna is read here only if enabled, alive,
    holding no tag and none pending, its field on; one is switched on here only if the same and
    no field within ADJACENT of it is on (else the scanner's Python decides, as it always did)."""
    readers = ctx[0]
    enabled = ctx[1]
    alive = ctx[2]
    present = ctx[3]
    pending = ctx[4]
    order_o = ctx[5]
    order = ptr8(order_o)  # noqa: F821
    n = int(len(order_o))
    fifo = ctx[6]
    warming = ctx[7]
    s = ptr32(st)  # noqa: F821
    pos = s[0]
    budget = s[1]
    depth = s[2]
    adj = s[3]
    limit = s[4]
    timer = ptr32(0x40054000)  # noqa: F821
    start = timer[10]
    reads = 0
    picks = 0
    reason = 0
    while reason == 0:
        while int(len(warming)) <= depth:  # the pipeline refilled first, as the loop does
            if budget <= 0:
                reason = RUN_PICK
                break
            c = int(order[pos])
            rc = readers[c]
            tc = rc._tx_control
            if (not enabled[c]) or (not alive[c]) or present[c] or pending[c] or tc is _NONE:
                reason = RUN_PICK
                break
            i = 0
            nw = int(len(warming))
            while i < nw:
                d = int(warming[i]) - c
                if d <= adj and d >= 0 - adj:  # (viper has no unary minus)
                    reason = RUN_PICK
                    break
                i += 1
            if reason:
                break
            rc.on_us = field_on(rc._sel, int(tc))
            warming.append(c)
            picks += 1
            budget -= 1
            pos += 1
            if pos >= n:
                pos = 0
                reason = RUN_WRAP
                break
        if reason:
            break
        a = int(warming[0])
        rd = readers[a]
        tx_o = rd._tx_control
        on_o = rd.on_us
        if (not enabled[a]) or (not alive[a]) or present[a] or pending[a] or tx_o is _NONE or on_o is _NONE:
            reason = RUN_HEAD
            break
        r = int(first_reqa(rd._sel, fifo, int(on_o), int(tx_o) | (int(rd.settle_us) << 8)))
        warming.pop(0)
        reads += 1
        if r != 1:
            rd.on_us = None
        if r != 0:
            s[5] = a
            reason = RUN_TAG if r == 1 else RUN_DEAD
            break
        if timer[10] - start > limit:
            reason = RUN_TIME
    s[0] = pos
    return reason | (reads << 8) | (picks << 16)


def _select_frames(uid):
    """A UID's SELECT frames for select_known (SEL, NVB, the cascade level's 4 bytes and BCC,
    CRC_A; 9 bytes a level), or None for a UID of no ISO length."""
    parts = _cascade(uid)
    if parts is None:
        return None
    f = bytearray()
    for level in range(len(parts)):
        frame = bytes((_SEL[level], 0x70)) + parts[level]
        f.extend(frame)
        f.extend(crc_a(frame))
    return f


class FastMFRC522(MFRC522):
    """The portable driver, its bus methods replaced by the viper ones above."""

    _encoded = {}  # register pairs (by identity) -> their address/value bytes, built once

    def _encode(self, pairs):
        enc = self._encoded.get(id(pairs))
        if enc is None:
            enc = bytearray()
            for reg_, value in pairs:
                enc.append((reg_ << 1) & 0x7E)
                enc.append(value)
            self._encoded[id(pairs)] = enc
        return enc

    def _write_all(self, pairs):
        write_all(self._sel, self._encode(pairs), len(pairs))

    def __init__(self, sel, gain=0x50, settle_us=5000):
        # Only what the viper paths use: no SPI object, chip-select object or per-reader buffers
        # (the portable driver's four): every reader shares one FIFO buffer (one is read at a
        # time), which keeps ~14 KiB of 28 readers off the heap the collector marks.
        self._sel = sel
        self.gain = gain
        self.settle_us = settle_us
        self.collisions = 0
        self.on_us = None
        self.read_ms = 0
        self._tx_control = None
        self._fifo = _FIFO
        self._known_uid = None
        self._known_frames = None

    def _write(self, reg_, value):
        reg(self._sel, (reg_ << 1) & 0x7E, value)

    def _read(self, reg_):
        return reg(self._sel, ((reg_ << 1) & 0x7E) | 0x80, 0)

    def _write_fifo(self, data):
        n = len(data)
        buf = self._fifo
        buf[0] = 0x12  # FIFODataReg (0x09) << 1, write
        for i in range(n):
            buf[i + 1] = data[i]
        xfer(self._sel, buf, n + 1)

    def init(self, reset=True):
        if reset:
            self.soft_reset()
            time.sleep_ms(2)
        tx = setup(self._sel, self._encode(_SETUP), len(_SETUP), self.gain)
        if tx < 0:
            self._tx_control = None
            return False
        self._tx_control = tx
        self.on_us = None
        return True

    def field(self, on):
        tx = self._tx_control
        if tx is None:
            MFRC522.field(self, on)
        elif on:
            self.on_us = field_on(self._sel, tx)
        else:
            reg(self._sel, 0x28, tx)
            self.on_us = None

    def scan(self, known=None):
        """MFRC522.scan with its start in one call (first_reqa): an empty slot is read without a
        line of Python between the VersionReg read and the field going off."""
        on = self.on_us
        tx = self._tx_control
        if on is None or tx is None:
            return MFRC522.scan(self, known)
        r = first_reqa(self._sel, self._fifo, on, tx | (self.settle_us << 8))
        self.read_ms = time.ticks_ms()  # (its REQA: a fraction of a millisecond ago)
        if r <= 0:
            self.on_us = None
            if r < 0:
                raise ReaderDead("reader not answering")
            return _EMPTY
        try:
            return self._tags(known, True)
        finally:
            self.field(False)

    def after_reqa(self, known, answered):
        """The rest of scan() once run_empty's REQA was answered (``answered`` 1: the tags are
        read, the field goes off) or the reader did not answer (-1: ReaderDead)."""
        if answered < 0:
            raise ReaderDead("reader not answering")
        self.read_ms = time.ticks_ms()
        try:
            return self._tags(known, True)
        finally:
            self.field(False)

    def _reqa(self):
        buf = self._fifo
        buf[0] = 0x12
        buf[1] = 0x26
        r = exchange(self._sel, buf, 0x701)
        if r & 0x800:
            self.collisions += 1
            return True
        return r != 0 and (r >> 1) & 0x7F == 2 and (r >> 8) & 7 == 0

    def _select(self, known=None):
        if known is not None:
            # Built once per card a reader holds (its last one kept: one card a slot), not kept
            # in one table-wide dict: a container of many objects costs every collection more.
            if known != self._known_uid:
                self._known_uid = known
                self._known_frames = _select_frames(known)
            frames = self._known_frames
            if frames is not None:
                if select_known(self._sel, self._fifo, frames, len(frames) // 9):
                    return known, False
                return None
        return MFRC522._select(self, known)

    def _transceive(self, data, last_bits=0, align=0):
        buf = self._fifo
        n = len(data)
        buf[0] = 0x12
        for i in range(n):
            buf[i + 1] = data[i]
        r = exchange(self._sel, buf, n | (((align << 4) | last_bits) << 8))
        if not r:
            return None
        answer = bytes(buf[1:1 + ((r >> 1) & 0x7F)])
        if r & 0x800:
            self.collisions += 1
            raise _Collision(answer, (r >> 12) & 0xFF)
        return answer, (r >> 8) & 0x07

    def _read_fifo(self, n):
        if n <= 0:
            return b""
        buf = self._fifo
        for i in range(n):
            buf[i] = 0x92  # FIFODataReg, read: each byte names the next
        buf[n] = 0
        xfer(self._sel, buf, n + 1)
        return bytes(buf[1:n + 1])


@micropython.viper
def _crc16(data: ptr8, n: int, crc: int) -> int:  # noqa: F821
    i = 0
    while i < n:
        crc ^= data[i] << 8
        for _ in range(8):
            if crc & 0x8000:
                crc = ((crc << 1) ^ 0x1021) & 0xFFFF
            else:
                crc = (crc << 1) & 0xFFFF
        i += 1
    return crc


def crc16(data, crc=0xFFFF):
    """bridge_proto.crc16 in machine code (the same CRC-16/CCITT-FALSE)."""
    return _crc16(data, len(data), crc)


@micropython.viper
def _cobs(data: ptr8, n: int, out: ptr8) -> int:  # noqa: F821
    code_idx = 0
    code = 1
    o = 1
    full = 0
    i = 0
    while i < n:
        b = data[i]
        full = 0
        if b == 0:
            out[code_idx] = code
            code_idx = o
            o += 1
            code = 1
        else:
            out[o] = b
            o += 1
            code += 1
            if code == 0xFF:
                out[code_idx] = code
                code_idx = o
                o += 1
                code = 1
                full = 1
        i += 1
    if full:
        return o - 1
    out[code_idx] = code
    return o


_out = bytearray(bridge_proto.MAX_ENCODED + 8)


def cobs_encode(data):
    """bridge_proto.cobs_encode in machine code (identical output)."""
    n = len(data)
    out = _out if n + n // 254 + 2 <= len(_out) else bytearray(n + n // 254 + 2)
    return bytes(out[:_cobs(data, n, out)])


def install():
    """Swap the protocol's CRC and COBS for these (its functions look them up at each call)."""
    bridge_proto.crc16 = crc16
    bridge_proto.cobs_encode = cobs_encode
