"""A register-level model of MFRC522 readers and ISO/IEC 14443-A tags, on a virtual clock.

Written in the dialect MicroPython and CPython share (no dataclasses, typing or f-strings,
no ``random``: a seeded LCG keeps runs identical under both), because the model runs in the
same interpreter as the firmware it serves.

What is modelled, from the NXP MFRC522 datasheet (rev 3.9) and ISO/IEC 14443-3:

* SPI framing (section 8.1.2): the first byte is the address byte (bit 7 = read, bits 6..1 =
  register); a read returns, on each following byte, the register the previous byte named; a
  write stores every following byte into the addressed register (the FIFO takes them all).
* The registers the driver uses, with their datasheet semantics: CommandReg (Idle,
  Transceive, CalcCRC, SoftReset), ComIrqReg (Set1 write semantics), ErrorReg, FIFODataReg and
  FIFOLevelReg (64-byte FIFO, FlushBuffer, BufferOvfl), ControlReg.RxLastBits, BitFramingReg
  (StartSend, RxAlign, TxLastBits), CollReg (CollPos, CollPosNotValid), TxControlReg (the field),
  TModeReg/TPrescalerReg/TReloadReg (the timer, TAuto: starts at the end of a transmission,
  stops on the 5th received bit), RFCfgReg (reserved bits tracked), VersionReg.
* The air interface at 106 kbit/s: a bit is 128/fc (9.44 us), a byte 9 bits with parity, plus
  start and end of frame; the tag answers after the frame delay time (1172/fc).
* Tags (4-, 7- and 10-byte UIDs): a power-up delay from field on before they answer, the
  IDLE/READY/ACTIVE/HALT states, REQA/WUPA, bit-oriented anticollision and SELECT through the
  cascade levels, HLTA; two tags answering differently = a collision (bits OR-ed, CollErr, the
  position of the first differing bit); seeded faults: a corrupted CRC_A, a truncated frame.
* Readers that are dead (MISO stuck at 0x00 or 0xFF, as the RP2040's SPI reads an absent chip:
  no error is raised) and clones (other VersionReg values).
"""

FC_HZ = 13560000
BIT_US = 128 * 1000000 / FC_HZ  # 9.44 us at 106 kbit/s
FDT_US = 1172 * 1000000 / FC_HZ  # PCD frame end -> PICC answer start (ISO 14443-3 6.2.1.1)

# Registers.
COMMAND = 0x01
COM_IRQ = 0x04
DIV_IRQ = 0x05
ERROR = 0x06
STATUS2 = 0x08
FIFO_DATA = 0x09
FIFO_LEVEL = 0x0A
CONTROL = 0x0C
BIT_FRAMING = 0x0D
COLL = 0x0E
MODE = 0x11
TX_CONTROL = 0x14
TX_ASK = 0x15
CRC_RESULT_H = 0x21
CRC_RESULT_L = 0x22
RF_CFG = 0x26
T_MODE = 0x2A
T_PRESCALER = 0x2B
T_RELOAD_H = 0x2C
T_RELOAD_L = 0x2D
VERSION = 0x37

RESET_VALUES = {
    COMMAND: 0x20, 0x02: 0x80, COM_IRQ: 0x14, 0x07: 0x21, FIFO_LEVEL: 0x00, 0x0B: 0x08,
    CONTROL: 0x10, COLL: 0xA0, MODE: 0x3F, TX_CONTROL: 0x80, 0x16: 0x10, 0x17: 0x84, 0x18: 0x84,
    0x19: 0x4D, 0x1C: 0x62, 0x1F: 0xEB, CRC_RESULT_H: 0xFF, CRC_RESULT_L: 0xFF, 0x24: 0x26,
    RF_CFG: 0x48, 0x27: 0x88, 0x28: 0x20, 0x29: 0x20, 0x33: 0x80, 0x36: 0x40,
}
RF_CFG_RESERVED = 0x8F  # RFCfgReg bits 7 and 3..0 are reserved: keep their reset value

CMD_IDLE = 0x0
CMD_CALC_CRC = 0x3
CMD_TRANSCEIVE = 0xC
CMD_SOFT_RESET = 0xF

IRQ_TX = 0x40
IRQ_RX = 0x20
IRQ_IDLE = 0x10
IRQ_ERR = 0x02
IRQ_TIMER = 0x01

ERR_PROTOCOL = 0x01
ERR_PARITY = 0x02
ERR_CRC = 0x04
ERR_COLL = 0x08
ERR_BUFFER_OVFL = 0x10

# Tag states (ISO 14443-3 6.3).
OFF = 0
IDLE = 1
READY = 2
ACTIVE = 3
HALT = 4


class SimEnd(BaseException):
    """The simulated time is up: unwinds the firmware's endless loop."""


class SimReboot(BaseException):
    """The board resets (``machine.reset()`` or the hardware watchdog)."""

    def __init__(self, cause):
        super().__init__(cause)
        self.cause = cause


class Lcg:
    """A tiny seeded generator (same numbers under CPython and MicroPython)."""

    def __init__(self, seed=1):
        self.state = (seed * 2654435761 + 1) & 0xFFFFFFFF

    def next(self):
        self.state = (self.state * 1103515245 + 12345) & 0x7FFFFFFF
        return self.state

    def random(self):
        return (self.next() >> 8) / 8388608.0

    def randint(self, lo, hi):
        return lo + self.next() % (hi - lo + 1)


class Clock:
    """Virtual microseconds.  Scheduled actions run when time passes them; ``hooks`` run on
    every advance (the board's watchdog, the USB line)."""

    def __init__(self, end_us=None):
        self.now = 0
        self.end_us = end_us
        self._events = []  # sorted [t, n, fn]
        self._n = 0
        self.hooks = []

    def at(self, t_us, fn):
        self._n += 1
        item = [int(t_us), self._n, fn]
        i = len(self._events)
        while i > 0 and self._events[i - 1][0] > item[0]:
            i -= 1
        self._events.insert(i, item)

    def next_event(self):
        return self._events[0][0] if self._events else None

    def advance(self, us):
        target = self.now + us
        while self._events and self._events[0][0] <= target:
            t, _, fn = self._events.pop(0)
            if t > self.now:
                self.now = t
            fn()
        if target > self.now:
            self.now = target
        for hook in self.hooks:
            hook(self.now)
        if self.end_us is not None and self.now >= self.end_us:
            raise SimEnd()


def crc_a(data):
    """ISO/IEC 14443-3 CRC_A, little-endian bytes: x^16 + x^12 + x^5 + 1 (0x8408 bit-reversed),
    preset 0x6363, each byte least significant bit first.  Shifted out bit by bit from the
    polynomial, not a byte at a time as the firmware's driver does it, so that the model checks
    the driver's CRC instead of sharing its code (tests/firmware/test_crc_a.py pins both)."""
    crc = 0x6363
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8408 if crc & 1 else crc >> 1
    return bytes((crc & 0xFF, crc >> 8))


def _bits(data, nbits):
    """LSB-first bit list of the first ``nbits`` bits of ``data``."""
    out = []
    for i in range(nbits):
        out.append((data[i // 8] >> (i % 8)) & 1)
    return out


def _pack(bits, offset=0):
    """Bits placed from bit position ``offset`` of byte 0 (RxAlign) -> (bytes, valid bits in last)."""
    total = offset + len(bits)
    out = bytearray((total + 7) // 8)
    for i, bit in enumerate(bits):
        if bit:
            p = offset + i
            out[p // 8] |= 1 << (p % 8)
    return bytes(out), total % 8


def frame_us(nbits):
    """Air time of a frame carrying ``nbits`` data bits (parity per full byte, SOF, EOF)."""
    return (nbits + nbits // 8 + 2) * BIT_US


class Tag:
    """An ISO/IEC 14443-A tag.  ``powerup_us``: field on -> able to answer."""

    def __init__(self, uid, powerup_us=1500, crc_error=0.0, truncate=0.0, bad_cascade=False, seed=7):
        uid = bytes(uid)
        if len(uid) not in (4, 7, 10):
            raise ValueError("UID must be 4, 7 or 10 bytes")
        self.uid = uid
        self.powerup_us = powerup_us
        self.crc_error = crc_error
        self.truncate = truncate
        self.bad_cascade = bad_cascade
        self.rng = Lcg(seed + uid[-1])
        self.state = OFF
        self.level = 0
        self.halted = False

    def levels(self):
        return {4: 1, 7: 2, 10: 3}[len(self.uid)]

    def cln(self, level):
        """The 5 bytes (4 UID bytes or CT + 3, then BCC) a tag gives at cascade ``level``."""
        u = self.uid
        if level + 1 < self.levels():
            part = bytes((0x88,)) + u[3 * level:3 * level + 3]
        else:
            part = u[3 * level:3 * level + 4]
        return part + bytes((part[0] ^ part[1] ^ part[2] ^ part[3],))

    def sak(self, level):
        last = level + 1 == self.levels()
        if self.bad_cascade:
            last = not last
        if not last:
            return 0x04
        return 0x08 if len(self.uid) == 4 else 0x00

    def power_off(self):
        self.state = OFF
        self.halted = False

    def receive(self, data, nbits):
        """A PCD frame -> the answer as (bytes, nbits) or None (silent)."""
        st = self.state
        if st == OFF:
            return None
        if nbits == 7:
            cmd = data[0] & 0x7F
            if cmd == 0x26 and st in (IDLE, READY):
                self.state, self.level = READY, 0
                return self._answer(bytes((0x44 if len(self.uid) == 7 else 0x04, 0x00)), False)
            if cmd == 0x52:
                self.state, self.level = READY, 0
                return self._answer(bytes((0x44 if len(self.uid) == 7 else 0x04, 0x00)), False)
            self._unexpected()
            return None
        if st == READY and nbits >= 16 and data[0] in (0x93, 0x95, 0x97):
            level = (data[0] - 0x93) // 2
            if level != self.level:
                self._unexpected()
                return None
            nvb = data[1]
            cln = self.cln(level)
            if nvb == 0x70 and nbits == 72:
                if crc_a(data[:7]) != bytes(data[7:9]) or bytes(data[2:7]) != cln:
                    return None  # not for this tag (or garbled): stay READY, silent
                sak = self.sak(level)
                if sak & 0x04:
                    self.level = level + 1
                else:
                    self.state = ACTIVE
                return self._answer(bytes((sak,)) + crc_a(bytes((sak,))), True)
            known = ((nvb >> 4) - 2) * 8 + (nvb & 0x0F)
            if known < 0 or known >= 40 or nbits != 16 + known:
                self._unexpected()
                return None
            mine = _bits(cln, 40)
            if _bits(data[2:], known) != mine[:known]:
                return None
            rest = mine[known:]
            return rest  # a bit-oriented answer (list of bits)
        if st == ACTIVE and nbits == 32 and data[0] == 0x50 and data[1] == 0x00:
            if crc_a(data[:2]) == bytes(data[2:4]):
                self.state = HALT
                self.halted = True
                return None
        self._unexpected()
        return None

    def _unexpected(self):
        self.state = HALT if self.halted else IDLE

    def _answer(self, data, with_crc):
        bits = _bits(data, 8 * len(data))
        if with_crc and self.crc_error and self.rng.random() < self.crc_error:
            bits[-1] ^= 1  # the last CRC bit flipped: the parity still checks (one bit of noise)
        if self.truncate and self.rng.random() < self.truncate:
            bits = bits[:-3]
        return bits


class Antenna:
    """What lies on one antenna: tags with the time each was placed."""

    def __init__(self):
        self.tags = []  # [tag, placed_us]


class Table:
    """Antennas with tags on them; cards are placed/removed at virtual times."""

    def __init__(self, clock, antennas):
        self.clock = clock
        self.antennas = [Antenna() for _ in range(antennas)]

    def place(self, antenna, tag):
        self.antennas[antenna].tags.append([tag, self.clock.now])
        tag.power_off()

    def remove(self, antenna, uid):
        uid = bytes(uid)
        ant = self.antennas[antenna]
        for item in ant.tags:
            if item[0].uid == uid:
                ant.tags.remove(item)
                item[0].power_off()
                return item[0]
        return None

    def uids(self, antenna):
        return [item[0].uid for item in self.antennas[antenna].tags]


class Reader:
    """One MFRC522 on antenna ``antenna`` of ``table``."""

    def __init__(self, clock, table, antenna, version=0x92, dead=None):
        self.clock = clock
        self.table = table
        self.antenna = antenna
        self.version = version
        self.dead = dead  # None, or the byte MISO reads forever (0x00 / 0xFF)
        self.fail = None  # an exception every access raises (a stand-in for a firmware bug)
        self.hang_us = 0  # the next access hangs the bus this long
        self.regs = bytearray(64)
        self.fifo = bytearray()
        self.field_on_us = None
        self.reserved_violations = 0
        self.transceives = 0
        self.commands = {}  # first byte of each frame sent -> count
        self._selected = False
        self._addr = None
        self._read = False
        self._pending = None  # [tx_end, rx_end or None, answer bits, errors, coll_pos, align, timer_end]
        self.reset()

    # -- chip state -------------------------------------------------------------------
    def reset(self):
        for i in range(64):
            self.regs[i] = RESET_VALUES.get(i, 0)
        self.regs[VERSION] = self.version
        self.fifo = bytearray()
        self._pending = None
        self._field(False)

    def _field(self, on):
        if on and self.field_on_us is None:
            self.field_on_us = self.clock.now
        elif not on and self.field_on_us is not None:
            self.field_on_us = None
            for item in self.table.antennas[self.antenna].tags:
                item[0].power_off()

    def field_is_on(self):
        return self.field_on_us is not None

    def _powered_tags(self, now):
        out = []
        if self.field_on_us is None:
            return out
        for tag, placed in self.table.antennas[self.antenna].tags:
            since = placed if placed > self.field_on_us else self.field_on_us
            if now - since >= tag.powerup_us:
                if tag.state == OFF:
                    tag.state = IDLE
                out.append(tag)
        return out

    def _timer_us(self):
        tmode = self.regs[T_MODE]
        prescaler = ((tmode & 0x0F) << 8) | self.regs[T_PRESCALER]
        reload = (self.regs[T_RELOAD_H] << 8) | self.regs[T_RELOAD_L]
        return (reload + 1) * (2 * prescaler + 1) * 1000000 / FC_HZ

    def _update(self):
        """Bring the pending transceive up to the present."""
        p = self._pending
        if p is None:
            return
        now = self.clock.now
        tx_end, rx_end, bits, errors, coll, align, timer_end = p
        if now >= tx_end:
            self.regs[COM_IRQ] |= IRQ_TX
        in_time = rx_end is not None and (timer_end is None or rx_end - frame_us(len(bits)) + 5 * BIT_US < timer_end)
        if in_time and now >= rx_end:
            data, last = _pack(bits, align)
            room = 64 - len(self.fifo)
            if len(data) > room:
                errors |= ERR_BUFFER_OVFL
                data = data[:room]
            self.fifo.extend(data)
            self.regs[ERROR] = errors
            ctrl = self.regs[CONTROL] & 0xF8
            self.regs[CONTROL] = ctrl | last
            if coll:
                self.regs[COLL] = (self.regs[COLL] & 0x80) | (coll & 0x1F)
            else:
                self.regs[COLL] = (self.regs[COLL] & 0x80) | 0x20
            self.regs[COM_IRQ] |= IRQ_RX | (IRQ_ERR if errors else 0)
            self._pending = None
            return
        if timer_end is not None and now >= timer_end and not in_time:
            self.regs[COM_IRQ] |= IRQ_TIMER
            self._pending = None

    def _start_transceive(self):
        data = bytes(self.fifo)
        self.fifo = bytearray()
        framing = self.regs[BIT_FRAMING]
        last = framing & 0x07
        align = (framing >> 4) & 0x07
        nbits = 8 * len(data) - (8 - last if last else 0)
        if nbits <= 0:
            return
        self.transceives += 1
        self.commands[data[0]] = self.commands.get(data[0], 0) + 1
        self.regs[ERROR] = 0
        now = self.clock.now
        tx_end = now + frame_us(nbits) - (BIT_US if nbits == 7 else 0)
        answers = []
        for tag in self._powered_tags(now):
            a = tag.receive(data, nbits)
            if a is not None:
                answers.append(a)
        timer_end = None
        if self.regs[T_MODE] & 0x80:
            timer_end = tx_end + self._timer_us()
        if not answers:
            self._pending = [tx_end, None, None, 0, 0, 0, timer_end]
            return
        bits = []
        coll = 0
        for i in range(max(len(a) for a in answers)):
            col = [a[i] for a in answers if i < len(a)]
            if coll == 0 and (len(col) != len(answers) or min(col) != max(col)):
                coll = align + i + 1
            bits.append(max(col))
        errors = 0
        if coll:
            errors |= ERR_COLL
            coll = coll if coll <= 32 else 0
        rx_end = tx_end + FDT_US + frame_us(len(bits))
        self._pending = [tx_end, rx_end, bits, errors, coll, align, timer_end]

    def _calc_crc(self):
        crc = crc_a(bytes(self.fifo))
        self.fifo = bytearray()
        self.regs[CRC_RESULT_L] = crc[0]
        self.regs[CRC_RESULT_H] = crc[1]
        self.regs[DIV_IRQ] |= 0x04

    # -- register access --------------------------------------------------------------
    def read_reg(self, reg):
        self._update()
        if reg == FIFO_DATA:
            if not self.fifo:
                return 0
            b = self.fifo[0]
            self.fifo = self.fifo[1:]
            return b
        if reg == FIFO_LEVEL:
            return len(self.fifo) & 0x7F
        if reg == TX_CONTROL:
            return self.regs[TX_CONTROL]
        return self.regs[reg]

    def write_reg(self, reg, value):
        self._update()
        if reg == COMMAND:
            cmd = value & 0x0F
            if cmd == CMD_SOFT_RESET:
                self.reset()
                return
            self.regs[COMMAND] = (self.regs[COMMAND] & 0xF0) | (value & 0x3F)
            if cmd == CMD_IDLE:
                self._pending = None
            elif cmd == CMD_CALC_CRC:
                self._calc_crc()
            elif cmd == CMD_TRANSCEIVE and self.regs[BIT_FRAMING] & 0x80:
                self._start_transceive()
        elif reg == COM_IRQ:
            if value & 0x80:
                self.regs[COM_IRQ] |= value & 0x7F
            else:
                self.regs[COM_IRQ] &= ~value & 0x7F
        elif reg == FIFO_DATA:
            if len(self.fifo) < 64:
                self.fifo.append(value)
            else:
                self.regs[ERROR] |= ERR_BUFFER_OVFL
        elif reg == FIFO_LEVEL:
            if value & 0x80:
                self.fifo = bytearray()
                self.regs[ERROR] &= ~ERR_BUFFER_OVFL & 0xFF
        elif reg == BIT_FRAMING:
            self.regs[BIT_FRAMING] = value
            if value & 0x80 and (self.regs[COMMAND] & 0x0F) == CMD_TRANSCEIVE and self._pending is None:
                self._start_transceive()
        elif reg == TX_CONTROL:
            self.regs[TX_CONTROL] = value
            self._field(bool(value & 0x03))
        elif reg == RF_CFG:
            if (value ^ RESET_VALUES[RF_CFG]) & RF_CFG_RESERVED:
                self.reserved_violations += 1
            self.regs[RF_CFG] = value
        elif reg in (ERROR, VERSION):
            pass  # read-only
        else:
            self.regs[reg] = value

    # -- SPI (chip select + bytes) ----------------------------------------------------
    def select(self, low):
        self._selected = low
        self._addr = None

    def xfer(self, mosi):
        """One byte on the bus while this chip is selected; returns MISO."""
        if self.fail is not None:
            raise self.fail
        if self.hang_us:
            hang, self.hang_us = self.hang_us, 0
            self.clock.advance(hang)  # the bus hangs: only the watchdog gets the board out
        if self.dead is not None:
            return self.dead
        if self._addr is None:
            self._addr = (mosi >> 1) & 0x3F
            self._read = bool(mosi & 0x80)
            return 0x00
        if self._read:
            value = self.read_reg(self._addr)
            self._addr = (mosi >> 1) & 0x3F
            return value
        self.write_reg(self._addr, mosi)
        return 0x00
