"""The RP2040's fast paths: register access, CRC and COBS in viper (machine code), for main.py.

Measured on the chip's own binary (``tablectl bench table --chip``), a register access through
``machine.SPI`` and ``Pin.value()`` costs 73 us start to start with direct chip selects and 220 us
behind the 74HC154s (``MuxPin.value()`` is four pin writes in Python), where the bus itself needs
4 us at 4 MHz.  Here one viper call selects the reader with two SIO writes (the decoder's address
while both enables are still high, then the enable or chip select low), clocks the bytes through
SPI0's FIFO, waits for the bus to go idle and deselects.

Only ``main.py`` on an RP2040 imports this (``sys.platform == "rp2"``): the register-level model
and the MicroPython WebAssembly tests run the portable driver, whose logic this does not change:
:class:`FastMFRC522` replaces only the four bus methods of :class:`mfrc522.MFRC522`.  SPI0 must
already be set up by ``machine.SPI`` (clock, mode, pins).
"""

import bridge_proto
import micropython
from mfrc522 import EXCHANGE_US, MFRC522, _Collision

# One reader's selection, an array('I', 4): SIO bits to set (address ones), to clear (address
# zeros), to clear last (its enable or chip select: goes low), to set when done (deselect).


@micropython.viper
def _select(sel: ptr32):  # noqa: F821 - viper types
    sio = ptr32(0xD0000000)  # noqa: F821
    sio[5] = sel[0]  # GPIO_OUT_SET (0x14)
    sio[6] = sel[1]  # GPIO_OUT_CLR (0x18)
    sio[6] = sel[2]


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


class FastMFRC522(MFRC522):
    """The portable driver, its bus methods replaced by the viper ones above."""

    _encoded = {}  # register pairs (by identity) -> their address/value bytes, built once

    def _write_all(self, pairs):
        enc = self._encoded.get(id(pairs))
        if enc is None:
            enc = bytearray()
            for reg_, value in pairs:
                enc.append((reg_ << 1) & 0x7E)
                enc.append(value)
            self._encoded[id(pairs)] = enc
        write_all(self._sel, enc, len(pairs))

    def __init__(self, spi, cs, sel, **kw):
        self._sel = sel
        super().__init__(spi, cs, **kw)

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
