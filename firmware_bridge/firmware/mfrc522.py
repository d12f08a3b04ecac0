"""MFRC522 driver for MicroPython: find the ISO 14443A tags on one antenna.

What the bridge needs: init, field on/off, REQA, the anticollision/select loop through the
cascade levels (4-, 7- and 10-byte UIDs: MIFARE Classic, Ultralight, NTAG21x) with bit-level
collision resolution (ISO/IEC 14443-3 6.5.3), so two tags on one antenna are both found, and a
cheap presence check for a tag already known to lie there (REQA + SELECT of its UID, no
anticollision frames).

Checked on every answer: the number of valid bits in the last byte (RxLastBits), the BCC of
each UID part, the select acknowledge's CRC_A and its cascade bit against the cascade tag.
A garbled answer is never a UID.

Timing: ISO/IEC 14443-3 5.2.1 gives a tag 5 ms of unmodulated field before the first command,
so ``settle_us`` is 5000; the main loop hides it by switching the next readers' fields on while
it reads the current one (``field(True)`` remembers when; ``scan`` waits only what is left).
The reader's timer (TAuto) bounds each exchange: it stops when an answer starts, so it only
has to cover the tag's frame delay (~90 us); the wait loop is also bounded in time, not in a
number of register reads, so a faster SPI clock cannot cut an exchange short.

A dead reader (the RP2040's SPI raises nothing: an absent chip reads 0x00 or 0xFF) is found
by its version register, read at every scan: :class:`ReaderDead` is raised.

Register accesses reuse preallocated buffers: a scan allocates almost nothing.
"""

import time

_COMMAND = 0x01
_COM_IRQ = 0x04
_ERROR = 0x06
_FIFO_DATA = 0x09
_FIFO_LEVEL = 0x0A
_CONTROL = 0x0C
_BIT_FRAMING = 0x0D
_COLL = 0x0E
_MODE = 0x11
_TX_CONTROL = 0x14
_TX_ASK = 0x15
_RF_CFG = 0x26
_T_MODE = 0x2A
_T_PRESCALER = 0x2B
_T_RELOAD_H = 0x2C
_T_RELOAD_L = 0x2D
_VERSION = 0x37

_IDLE = 0x00
_TRANSCEIVE = 0x0C
_SOFT_RESET = 0x0F

_REQA = 0x26
_SEL = (0x93, 0x95, 0x97)
_HLTA = 0x50
_REQA_FRAME = bytes((_REQA,))  # sent at every read: built once

# Written by init, in this order.
_SETUP = (
    (_T_MODE, 0x80),  # TAuto: the timer starts at the end of each transmission
    (_T_PRESCALER, 0xA9),  # 13.56 MHz / (2 * 169 + 1) = 40 kHz: 25 us ticks
    (_T_RELOAD_H, 0x00),
    # 8 ticks = 200 us: every answer this driver asks for (ATQA, anticollision, SAK) starts a fixed
    # 86-91 us after our frame (ISO/IEC 14443-3 6.2.1.1, n = 9), and the timer stops once ~5 bits
    # of it are in (~47 us): 200 us leaves 60 us to spare.
    (_T_RELOAD_L, 0x07),
    (_TX_ASK, 0x40),  # 100 % ASK
    (_MODE, 0x3D),  # CRC preset 0x6363
)

# VersionReg: NXP 0x91 (v1.0), 0x92 (v2.0), 0x90 (v0.0); clones 0x88 (FM17522), 0xB2, 0x12, 0x82.
KNOWN_VERSIONS = (0x12, 0x82, 0x88, 0x90, 0x91, 0x92, 0xB2)
MAX_TAGS = 4  # tags enumerated per antenna per scan (a card slot holds one; a pile may hold more)
EXCHANGE_US = 3000  # wall-clock bound of one exchange, whatever the timer says


class ReaderError(OSError):
    pass


class ReaderDead(OSError):
    """The chip does not answer (version register reads 0x00/0xFF or an unknown value)."""


class _Collision(Exception):
    def __init__(self, data, coll):
        super().__init__()
        self.data = data
        self.coll = coll


def crc_a(data):
    """ISO 14443-3 CRC_A, little-endian bytes."""
    crc = 0x6363
    for b in data:
        b ^= crc & 0xFF
        b = (b ^ (b << 4)) & 0xFF
        crc = ((crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)) & 0xFFFF
    return bytes((crc & 0xFF, crc >> 8))


class MFRC522:
    def __init__(self, spi, cs, gain=0x50, settle_us=5000):
        self.spi = spi
        self.cs = cs
        self.gain = gain  # RFCfgReg RxGain: lower it if a reader sees the neighbouring slot's card
        self.settle_us = settle_us  # field on -> tag powered up and ready for REQA (ISO 14443-3 5.2.1)
        self.collisions = 0
        self.on_us = None  # ticks_us when the field went on
        self.read_ms = 0  # ticks_ms of the last scan's first REQA (after the settle)
        self._tx_control = None  # TxControlReg without the field bits, once read
        self._tx = bytearray(2)
        self._rx = bytearray(2)
        self._fifo = bytearray(65)
        self._fifo_rx = bytearray(65)
        self.cs.value(1)

    def _write(self, reg, value):
        b = self._tx
        b[0] = (reg << 1) & 0x7E
        b[1] = value
        self.cs.value(0)
        self.spi.write(b)
        self.cs.value(1)

    def _read(self, reg):
        b = self._tx
        b[0] = ((reg << 1) & 0x7E) | 0x80
        b[1] = 0
        self.cs.value(0)
        self.spi.write_readinto(b, self._rx)
        self.cs.value(1)
        return self._rx[1]

    def _write_fifo(self, data):
        n = len(data)
        buf = self._fifo
        buf[0] = (_FIFO_DATA << 1) & 0x7E
        for i in range(n):
            buf[i + 1] = data[i]
        self.cs.value(0)
        self.spi.write(memoryview(buf)[:n + 1])
        self.cs.value(1)

    def _read_fifo(self, n):
        if n <= 0:
            return b""
        addr = ((_FIFO_DATA << 1) & 0x7E) | 0x80
        buf = self._fifo
        for i in range(n):
            buf[i] = addr
        buf[n] = 0
        self.cs.value(0)
        self.spi.write_readinto(memoryview(buf)[:n + 1], memoryview(self._fifo_rx)[:n + 1])
        self.cs.value(1)
        return bytes(self._fifo_rx[1:n + 1])

    def version(self):
        return self._read(_VERSION)

    def soft_reset(self):
        self._write(_COMMAND, _SOFT_RESET)
        self._tx_control = None

    def init(self, reset=True):
        """Reset and configure; returns False if the chip does not answer (wiring, power).
        ``reset=False``: the caller has just reset it (the main loop resets every reader at once
        through NRSTPD and waits until each answers)."""
        if reset:
            self.soft_reset()
            time.sleep_ms(2)
        if self.version() not in KNOWN_VERSIONS:
            return False
        self._tx_control = None  # reset since it was read (a hard reset, or a reader swapped)
        self._write_all(_SETUP)
        # RxGain is bits 6..4; bits 7 and 3..0 are reserved: keep what the chip holds there.
        self._write(_RF_CFG, (self._read(_RF_CFG) & 0x8F) | (self.gain & 0x70))
        self.field(False)
        return True

    def alive(self):
        return self.version() in KNOWN_VERSIONS

    def _write_all(self, pairs):
        """Write each (register, value) in turn (rp2fast does it in one call)."""
        for reg, value in pairs:
            self._write(reg, value)

    def field(self, on):
        # TxControlReg's other bits are the reader's own: read once (init), then kept here, so
        # switching the field is one register write, not a read and a write.
        value = self._tx_control
        if value is None:
            value = self._tx_control = self._read(_TX_CONTROL) & ~0x03 & 0xFF
        if on:
            self._write(_TX_CONTROL, value | 0x03)
            self.on_us = time.ticks_us()
        else:
            self._write(_TX_CONTROL, value & ~0x03 & 0xFF)
            self.on_us = None

    def _transceive(self, data, last_bits=0, align=0):
        """Send ``data``; returns (answer bytes, valid bits in its last byte: 0 = 8) or None.
        Raises _Collision with what was received when two tags answered differently."""
        self._write(_COMMAND, _IDLE)
        self._write(_COM_IRQ, 0x7F)
        self._write(_FIFO_LEVEL, 0x80)
        self._write_fifo(data)
        framing = (align << 4) | last_bits
        self._write(_BIT_FRAMING, framing)
        self._write(_COMMAND, _TRANSCEIVE)
        self._write(_BIT_FRAMING, framing | 0x80)  # StartSend
        start = time.ticks_us()
        while True:
            irq = self._read(_COM_IRQ)
            if irq & 0x20:  # RxIRq: an answer is complete
                break
            if irq & 0x01:  # TimerIRq: nobody answered
                return None
            if time.ticks_diff(time.ticks_us(), start) > EXCHANGE_US:
                return None
        error = self._read(_ERROR)
        if error & 0x13:  # BufferOvfl, ParityErr, ProtocolErr
            return None
        n = self._read(_FIFO_LEVEL)
        last = self._read(_CONTROL) & 0x07
        answer = self._read_fifo(n)
        if error & 0x08:  # CollErr
            self.collisions += 1
            raise _Collision(answer, self._read(_COLL))
        return answer, last

    def _select_level(self, level, known=None):
        """One cascade level: returns (5 UID bytes incl. BCC, SAK, collided) or None."""
        sel = _SEL[level]
        cl = bytearray(5)
        bits = 0
        collided = False
        if known is not None:
            cl[:] = known
            bits = 40
        rounds = 0
        while bits < 40:
            rounds += 1
            if rounds > 41:
                return None
            nbytes = bits // 8
            nb = bits % 8
            head = bytes((sel, ((2 + nbytes) << 4) | nb)) + bytes(cl[:nbytes + (1 if nb else 0)])
            try:
                got = self._transceive(head, last_bits=nb, align=nb)
            except _Collision as c:
                if c.coll & 0x20:  # position out of range: give up
                    return None
                pos = c.coll & 0x1F or 32
                if pos <= bits:
                    return None
                self._merge(cl, nbytes, nb, c.data)
                bits = pos
                cl[(pos - 1) // 8] |= 1 << ((pos - 1) % 8)  # take the branch with a 1 here
                collided = True
                continue
            if got is None:
                return None
            answer, last = got
            if len(answer) != 5 - nbytes or last != 0:
                return None
            self._merge(cl, nbytes, nb, answer)
            bits = 40
        if cl[0] ^ cl[1] ^ cl[2] ^ cl[3] != cl[4]:
            return None  # BCC mismatch: a garbled read is never a UID
        frame = bytes((sel, 0x70)) + bytes(cl)
        try:
            got = self._transceive(frame + crc_a(frame))
        except _Collision:  # two answers to a SELECT of one UID: not a valid select
            return None
        if got is None:
            return None
        sak, last = got
        if len(sak) != 3 or last != 0 or crc_a(sak[:1]) != sak[1:3]:
            return None
        cascade = bool(sak[0] & 0x04)
        if cascade != (cl[0] == 0x88):
            return None  # the cascade bit and the cascade tag disagree
        return bytes(cl), sak[0], collided

    @staticmethod
    def _merge(cl, nbytes, nb, data):
        if not data:
            return
        keep = (1 << nb) - 1
        cl[nbytes] = (cl[nbytes] & keep) | (data[0] & ~keep & 0xFF)
        for i in range(1, len(data)):
            if nbytes + i < 5:
                cl[nbytes + i] = data[i]

    def _select(self, known=None):
        """The select cascade; ``known``: a UID to select directly (presence check).
        Returns (uid, collided) or None."""
        uid = b""
        collided = False
        parts = _cascade(known) if known is not None else None
        for level in range(3):
            got = self._select_level(level, parts[level] if parts is not None else None)
            if got is None:
                return None
            cl, sak, coll = got
            collided = collided or coll
            if sak & 0x04:
                uid += cl[1:4]
                if parts is not None and level + 1 >= len(parts):
                    return None
                continue
            return uid + cl[0:4], collided
        return None

    def _reqa(self):
        try:
            got = self._transceive(_REQA_FRAME, last_bits=0x07)
        except _Collision:
            return True  # tags of different types answered: they are there, anticollision sorts them
        return got is not None and len(got[0]) == 2 and got[1] == 0

    def _halt(self):
        halt = bytes((_HLTA, 0x00))
        self._transceive(halt + crc_a(halt))

    def scan(self, known=None):
        """Read the tags on this antenna: field on (unless already), the rest of the settle time,
        REQA and the select loop, field off.  ``known``: UIDs believed present, checked with a
        direct SELECT first (a full anticollision follows only if one is missing or another
        answers).  Returns the list of UIDs read.  Raises :class:`ReaderDead`."""
        if self._read(_VERSION) not in KNOWN_VERSIONS:
            self.on_us = None
            raise ReaderDead("reader not answering")
        if self.on_us is None:
            self.field(True)
        wait = self.settle_us - time.ticks_diff(time.ticks_us(), self.on_us)
        if wait > 0:
            time.sleep_us(wait)
        try:
            self.read_ms = time.ticks_ms()  # when the tags were asked: what the read's time is
            return self._tags(known, self._reqa())
        finally:
            self.field(False)

    def _tags(self, known, answered):
        """The rest of :meth:`scan` once the first REQA is sent (``answered``: a tag answered it);
        the field stays on (the caller switches it off)."""
        found = []
        if known:
            for uid in known:
                if not (answered or (answered is None and self._reqa())):
                    return found
                answered = None  # the next one asks again
                if self._select(uid) is not None:
                    found.append(uid)
            if len(found) == len(known):
                return found
            if found:
                return found  # the missing one is missing; the next full scan looks for others
        for _ in range(MAX_TAGS):
            if not (answered or (answered is None and self._reqa())):
                break
            answered = None
            got = self._select()
            if got is None:
                break
            uid, collided = got
            if uid not in found:
                found.append(uid)
            if not collided:
                break  # one tag answered: nobody else is there
            self._halt()  # more than one: silence this one, and ask again
        return found


def _cascade(uid):
    """A UID's cascade-level parts (each 4 bytes + BCC)."""
    n = len(uid)
    if n == 4:
        parts = [uid]
    elif n == 7:
        parts = [b"\x88" + uid[0:3], uid[3:7]]
    elif n == 10:
        parts = [b"\x88" + uid[0:3], b"\x88" + uid[3:6], uid[6:10]]
    else:
        return None
    out = []
    for p in parts:
        out.append(bytes(p) + bytes((p[0] ^ p[1] ^ p[2] ^ p[3],)))
    return out
