"""RP2040 main loop: scan every MFRC522, debounce, report over USB serial.

Copy ``bridge_proto.py``, ``mfrc522.py`` and this file to the board (``mpremote cp``).
All protocol behaviour (framing, CRC, sequence numbers, heartbeats, debounce, host
commands) is in ``bridge_proto.Device``, the code the host's emulator and tests run;
this file is only the hardware around it.  Edit the pin table below for your wiring
(see README.md).
"""

import os
import select
import struct
import sys
import time

import machine
import micropython
from bridge_proto import (
    FAULT_READER_NOT_RESPONDING,
    FAULT_READER_RECOVERED,
    RESET_POWER_ON,
    RESET_SOFT,
    RESET_WATCHDOG,
    Device,
)
from mfrc522 import MFRC522

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

RX_GAIN = _setting("RX_GAIN", 0x50)  # RFCfgReg: 0x70 = 48 dB (longest range), 0x40 = 33 dB; see README on cross-reads
WDT_MS = 4000  # hardware watchdog: a hung SPI bus reboots the board (reset cause WATCHDOG)
REINIT_MS = 5000  # how often a dead reader is retried


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
        return [Pin(n, Pin.OUT, value=1) for n in CS_PINS]
    addr = [Pin(n, Pin.OUT, value=0) for n in MUX_ADDR]
    enable = [Pin(n, Pin.OUT, value=1) for n in MUX_ENABLE]
    return [MuxPin(i, addr, enable) for i in range(16 * len(enable))]


def reset_cause():
    cause = machine.reset_cause()
    if cause == machine.WDT_RESET:
        return RESET_WATCHDOG
    if cause == machine.PWRON_RESET:
        return RESET_POWER_ON
    return RESET_SOFT


def main():
    micropython.kbd_intr(-1)  # the line is binary: 0x03 must not raise KeyboardInterrupt
    wdt = machine.WDT(timeout=WDT_MS)
    Pin = machine.Pin
    spi = machine.SPI(SPI_ID, baudrate=SPI_BAUD, polarity=0, phase=0,
                      sck=Pin(PIN_SCK), mosi=Pin(PIN_MOSI), miso=Pin(PIN_MISO))
    rst = Pin(PIN_RST, Pin.OUT, value=0)
    time.sleep_ms(5)
    rst.value(1)
    time.sleep_ms(50)
    readers = [MFRC522(spi, cs, gain=RX_GAIN) for cs in chip_selects()]
    alive = [r.init() for r in readers]
    last_init = time.ticks_ms()

    out = sys.stdout.buffer
    inp = sys.stdin.buffer
    poller = select.poll()
    poller.register(sys.stdin, select.POLLIN)
    boot_id = struct.unpack(">I", os.urandom(4))[0] or 1
    dev = Device(len(readers), out.write, boot_id, now_ms=time.ticks_ms(), reset_cause=reset_cause(),
                 ticks_diff=time.ticks_diff, on_reboot=machine.reset)
    reported_dead = [False] * len(readers)
    out.write(b"\x00")  # end whatever partial frame the host parser holds

    while True:
        cycle_start = time.ticks_ms()
        for antenna, reader in enumerate(readers):
            wdt.feed()
            while poller.poll(0):  # host commands, between readers
                dev.feed(inp.read(1))
            if not dev.enabled[antenna]:
                continue
            uids = []
            if alive[antenna]:
                try:
                    uids = reader.scan()
                except OSError:
                    alive[antenna] = False
            dev.observe(antenna, uids, time.ticks_ms())
            dev.poll(time.ticks_ms())
        now = time.ticks_ms()
        dev.end_cycle(now)
        if time.ticks_diff(now, last_init) >= REINIT_MS:
            last_init = now
            for antenna, reader in enumerate(readers):
                if not alive[antenna]:
                    alive[antenna] = reader.init()
        if dev.booted:
            for antenna in range(len(readers)):
                if alive[antenna] == reported_dead[antenna]:
                    reported_dead[antenna] = not alive[antenna]
                    code = FAULT_READER_NOT_RESPONDING if reported_dead[antenna] else FAULT_READER_RECOVERED
                    dev.fault(antenna, code, 0)
        spare = dev.scan_period_ms - time.ticks_diff(time.ticks_ms(), cycle_start)
        while spare > 0:  # the rest of the period: stay responsive to the host
            wdt.feed()
            while poller.poll(0):
                dev.feed(inp.read(1))
            dev.poll(time.ticks_ms())
            time.sleep_ms(min(spare, 5))
            spare = dev.scan_period_ms - time.ticks_diff(time.ticks_ms(), cycle_start)


def maintenance_requested():
    """Hold BOOTSEL while the board starts to get the REPL instead of the scan loop."""
    try:
        import rp2

        return bool(rp2.bootsel_button())
    except (ImportError, AttributeError):
        return False


if not maintenance_requested():
    main()
