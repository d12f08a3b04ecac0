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
from mfrc522 import MFRC522

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


class FastMFRC522(MFRC522):
    """The portable driver, its bus methods replaced by the viper ones above."""

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
