"""Minimal MFRC522 driver for MicroPython: find the one ISO 14443A tag on an antenna.

Just what the bridge needs: init, field on/off, REQA, anticollision/select through
the cascade levels (4-, 7- and 10-byte UIDs: MIFARE Classic, Ultralight, NTAG21x),
HLTA.  Bit-level collision resolution is deliberately left out: a card slot holds one
card, and two tags answering at once are reported as a collision (``scan`` returns
nothing that cycle), which the host's debounce rides over.

The field is switched on only while a reader is scanned, so neighbouring antennas
never transmit at the same time (no cross-coupling between adjacent slots) and every
tag starts each scan from the IDLE state (so REQA, not WUPA, finds it).
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

KNOWN_VERSIONS = (0x88, 0x90, 0x91, 0x92, 0xB2)  # clones report 0x88/0xB2


class ReaderError(OSError):
    pass


def crc_a(data):
    """ISO 14443-3 CRC_A, little-endian bytes."""
    crc = 0x6363
    for b in data:
        b ^= crc & 0xFF
        b = (b ^ (b << 4)) & 0xFF
        crc = ((crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)) & 0xFFFF
    return bytes((crc & 0xFF, crc >> 8))


class MFRC522:
    def __init__(self, spi, cs, gain=0x50, settle_us=2500):
        self.spi = spi
        self.cs = cs
        self.gain = gain  # RFCfgReg RxGain: lower it if a reader sees the neighbouring slot's card
        self.settle_us = settle_us  # field on -> tag powered up and ready for REQA
        self.collisions = 0
        self.cs.value(1)

    def _write(self, reg, value):
        self.cs.value(0)
        self.spi.write(bytes(((reg << 1) & 0x7E, value)))
        self.cs.value(1)

    def _read(self, reg):
        self.cs.value(0)
        self.spi.write(bytes((((reg << 1) & 0x7E) | 0x80,)))
        value = self.spi.read(1)[0]
        self.cs.value(1)
        return value

    def _set(self, reg, mask):
        self._write(reg, self._read(reg) | mask)

    def _clear(self, reg, mask):
        self._write(reg, self._read(reg) & ~mask)

    def version(self):
        return self._read(_VERSION)

    def init(self):
        """Reset and configure; returns False if the chip does not answer (wiring, power)."""
        self._write(_COMMAND, _SOFT_RESET)
        time.sleep_ms(2)
        if self.version() not in KNOWN_VERSIONS:
            return False
        self._write(_T_MODE, 0x80)  # timer starts after each transmission
        self._write(_T_PRESCALER, 0xA9)  # 6.78 MHz / 339 = 20 kHz: 50 us ticks
        self._write(_T_RELOAD_H, 0x00)
        self._write(_T_RELOAD_L, 0x28)  # 40 ticks = 2 ms answer timeout
        self._write(_TX_ASK, 0x40)  # 100 % ASK
        self._write(_MODE, 0x3D)  # CRC preset 0x6363
        self._write(_RF_CFG, self.gain)
        self.field(False)
        return True

    def field(self, on):
        if on:
            self._set(_TX_CONTROL, 0x03)
        else:
            self._clear(_TX_CONTROL, 0x03)

    def _transceive(self, data, last_bits=0):
        self._write(_COMMAND, _IDLE)
        self._write(_COM_IRQ, 0x7F)
        self._write(_FIFO_LEVEL, 0x80)
        for b in data:
            self._write(_FIFO_DATA, b)
        self._write(_BIT_FRAMING, last_bits)
        self._write(_COMMAND, _TRANSCEIVE)
        self._set(_BIT_FRAMING, 0x80)  # StartSend
        for _ in range(200):
            irq = self._read(_COM_IRQ)
            if irq & 0x30:  # RxIRq or IdleIRq
                break
            if irq & 0x01:  # TimerIRq: nobody answered
                return None
        else:
            return None
        self._clear(_BIT_FRAMING, 0x80)
        error = self._read(_ERROR)
        if error & 0x08:
            self.collisions += 1
            raise ReaderError("collision")
        if error & 0x13:
            return None
        n = self._read(_FIFO_LEVEL)
        return bytes(self._read(_FIFO_DATA) for _ in range(n))

    def _select(self):
        uid = b""
        for level in _SEL:
            answer = self._transceive(bytes((level, 0x20)))
            if answer is None or len(answer) != 5:
                return None
            if answer[0] ^ answer[1] ^ answer[2] ^ answer[3] != answer[4]:
                return None  # BCC mismatch: a garbled read is never a UID
            frame = bytes((level, 0x70)) + answer
            sak = self._transceive(frame + crc_a(frame))
            if sak is None or len(sak) != 3:
                return None
            if answer[0] == 0x88:  # cascade tag: the UID continues at the next level
                uid += answer[1:4]
                continue
            return uid + answer[0:4]
        return None

    def scan(self):
        """Field on, read the tag (if any), field off.  Returns a list of 0 or 1 UIDs."""
        self.field(True)
        time.sleep_us(self.settle_us)
        try:
            atqa = self._transceive(bytes((_REQA,)), last_bits=0x07)
            if atqa is None or len(atqa) != 2:
                return []
            uid = self._select()
            if uid is None:
                return []
            halt = bytes((_HLTA, 0x00))
            self._transceive(halt + crc_a(halt))
            return [uid]
        except ReaderError:
            return []
        finally:
            self.field(False)
