"""An RP2040 board for the firmware: stub ``machine``/``rp2``/``time``/``select``/``sys``/``os``
modules over the MFRC522 model, a USB CDC line, and a cost model for MicroPython's software.

The firmware's ``main.py`` (with ``scan_loop.py``), ``mfrc522.py`` and ``bridge_proto.py`` run unmodified: under
CPython they are executed with an ``__import__`` that hands them these stubs; under
MicroPython the stubs go into ``sys.modules`` (see ``mpy.py``).  Wiring comes from the
``board_config`` module scan_loop.py reads (as a user's own board_config.py would).

Cost model (virtual microseconds charged per call; estimates for MicroPython 1.2x on an RP2040
at 125 MHz, where a Python-level call with its argument handling costs several microseconds):
every SPI transfer ``SPI_CALL_US`` plus 8 bits / baud rate per byte plus ``SPI_BYTE_US``;
a pin write ``PIN_US``; a ticks read ``TICKS_US``; a poll ``POLL_US``; a USB write
``USB_CALL_US`` plus ``USB_BYTE_US`` per byte.  The radio side (frames, the tag's answer
delay, the reader's timer) is timed by the model per ISO/IEC 14443-3 and the datasheet.

USB CDC: the device's transmit buffer holds ``USB_TX_BUF`` bytes and the host empties it
once per 1 ms USB frame while it reads; when the buffer is full a write waits for room, up
to 500 ms (as the rp2 port's stdout does), then drops what does not fit.
"""

import sys

from firmware_bridge.sim.rc522 import Clock, Lcg, Reader, SimEnd, SimReboot, Table

SPI_CALL_US = 8
SPI_BYTE_US = 0.25
PIN_US = 3
TICKS_US = 2
POLL_US = 6
USB_CALL_US = 12
USB_BYTE_US = 0.2
USB_TX_BUF = 256
USB_FRAME_US = 1000
USB_WRITE_TIMEOUT_US = 500000

PWRON_RESET = 1
WDT_RESET = 3
WATCHDOG_SCRATCH = 0x4005800C  # WATCHDOG_BASE + SCRATCH0; 8 words survive a watchdog reset

IS_CPYTHON = sys.implementation.name == "cpython"


class _Obj:
    """A bare attribute holder used as a stub module (works as one under both interpreters): its
    attributes are the keywords it is made with."""

    def __init__(self, **attrs):
        for name in attrs:
            setattr(self, name, attrs[name])


class Board:
    """The board, its readers, its table and its USB line.  ``run(until_us)`` boots the firmware
    and runs it until then, rebooting it whenever it resets."""

    def __init__(self, readers=28, clock=None, fw_dir=None, spi_baud=4000000, mux=True, seed=1,
                 versions=None, dead=None, cost=None):
        self.clock = clock or Clock()
        self.table = Table(self.clock, readers)
        versions = versions or {}
        dead = dead or {}
        self.readers = [Reader(self.clock, self.table, a, version=versions.get(a, 0x92), dead=dead.get(a))
                        for a in range(readers)]
        self.fw_dir = fw_dir
        self.rng = Lcg(seed)
        self.cost = cost or {}
        self.config = _Obj()
        self.config.READER_COUNT = readers
        self.config.SPI_BAUD = spi_baud
        if mux:
            self.config.MUX_ADDR = (0, 1, 2, 3)
            self.config.MUX_ENABLE = (4, 5)
        else:
            self.config.CS_PINS = (17, 20, 21, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 26, 27, 28)
        self.pins = {}
        self.baud = spi_baud
        self.selected = []
        # USB
        self.tx = bytearray()
        self.rx = bytearray()
        self.host_reading = True
        self.received = []  # [t_us, bytes] as the host read them
        self.dropped_bytes = 0
        self.usb_blocked_us = 0
        self._last_usb_frame = 0
        # watchdog, resets
        self.wdt_timeout_us = None
        self.wdt_fed = 0
        self.scratch = [0] * 8
        self.boots = []  # [t_us, cause]
        self.crashes = []  # [t_us, repr]
        self.clock.hooks.append(self._hook)
        self.idle_us = 0  # virtual time the firmware spent sleeping
        self.stubs = None

    # -- cost ------------------------------------------------------------------
    def charge(self, name, default):
        self.clock.advance(self.cost.get(name, default))

    def _hook(self, now):
        if self.wdt_timeout_us is not None and now - self.wdt_fed > self.wdt_timeout_us:
            self.wdt_timeout_us = None
            raise SimReboot(WDT_RESET)
        if now - self._last_usb_frame >= USB_FRAME_US:
            self._last_usb_frame = now - (now - self._last_usb_frame) % USB_FRAME_US
            if self.host_reading and self.tx:
                self.deliver(now, bytes(self.tx))
                self.tx = bytearray()

    def deliver(self, now, data):
        """Bytes the host reads at ``now`` (the tests' log; a pty in real time)."""
        self.received.append([now, data])

    # -- host side -------------------------------------------------------------
    def host_send(self, data, at_us=None):
        data = bytes(data)

        def deliver():
            self.rx.extend(data)

        if at_us is None:
            deliver()
        else:
            self.clock.at(at_us, deliver)

    def output(self):
        out = bytearray()
        for _, chunk in self.received:
            out.extend(chunk)
        return bytes(out)

    # -- pins and chip selects -------------------------------------------------
    def _pin_changed(self, n):
        cfg = self.config
        pins = self.pins
        mux = getattr(cfg, "MUX_ADDR", None)
        low = []
        if mux is not None:
            if n not in cfg.MUX_ENABLE and n not in mux:
                return
            for d, e in enumerate(cfg.MUX_ENABLE):
                if pins.get(e, 1) == 0:
                    addr = 0
                    for bit, a in enumerate(mux):
                        if pins.get(a, 1):
                            addr |= 1 << bit
                    low.append(d * 16 + addr)
        else:
            if n not in cfg.CS_PINS:
                return
            for i, c in enumerate(cfg.CS_PINS):
                if pins.get(c, 1) == 0:
                    low.append(i)
        if not low and not self.selected:
            return
        low = [i for i in low if i < len(self.readers)]
        for i in self.selected:
            if i not in low:
                self.readers[i].select(False)
        for i in low:
            if i not in self.selected:
                self.readers[i].select(True)
        self.selected = low

    def spi_transfer(self, out):
        n = len(out)
        self.clock.advance(self.cost.get("spi_call", SPI_CALL_US) + n * (8000000.0 / self.baud + SPI_BYTE_US))
        res = bytearray(n)
        for k in range(n):
            miso = 0xFF  # pulled up when nothing drives MISO
            for i in self.selected:
                miso &= self.readers[i].xfer(out[k])
            res[k] = miso
        return res

    # -- running the firmware --------------------------------------------------
    def run(self, until_us):
        self.clock.end_us = until_us
        cause = PWRON_RESET
        while True:
            self.boots.append([self.clock.now, cause])
            self.wdt_timeout_us = None
            self.tx = bytearray()
            self.selected = []
            self.pins = {}
            if cause == PWRON_RESET:
                self.scratch = [0] * 8
            self.reset_cause = cause
            try:
                try:
                    self._exec_main()
                except Exception as exc:  # the script died: the REPL takes over; the WDT may still bite
                    self.crashes.append([self.clock.now, repr(exc)])
                while True:
                    self.clock.advance(1000)
            except SimReboot as r:
                cause = r.cause
            except SimEnd:
                return

    def _exec_main(self):
        self.stubs = make_stubs(self)
        if IS_CPYTHON:
            _exec_cpython(self.fw_dir, self.stubs, "main")
        else:
            _exec_micropython(self.stubs)


def load_firmware_module(board, name):
    """One firmware module (e.g. ``mfrc522``) bound to ``board``'s stubs, without running main."""
    board.stubs = make_stubs(board)
    if IS_CPYTHON:
        return _exec_cpython(board.fw_dir, board.stubs, name)
    for k in board.stubs:
        sys.modules[k] = board.stubs[k]
    if name in sys.modules:
        del sys.modules[name]
    return __import__(name)


def _exec_micropython(stubs):
    saved = {}
    for name in stubs:
        if name in sys.modules:
            saved[name] = sys.modules[name]
        sys.modules[name] = stubs[name]
    for name in ("main", "scan_loop", "mfrc522", "bridge_proto"):
        if name in sys.modules:
            del sys.modules[name]
    try:
        __import__("main")
    finally:
        for name in stubs:
            del sys.modules[name]
        for name in saved:
            sys.modules[name] = saved[name]


def _exec_cpython(fw_dir, stubs, name):
    import builtins
    import os
    import types

    loaded = {}
    real_import = builtins.__import__

    def fw_import(name, globals=None, locals=None, fromlist=(), level=0):
        if name in stubs:
            return stubs[name]
        if name in loaded:
            return loaded[name]
        path = os.path.join(fw_dir, name + ".py")
        if os.path.exists(path):
            return load(name, path)
        return real_import(name, globals, locals, fromlist, level)

    fw_builtins = dict(builtins.__dict__)
    fw_builtins["__import__"] = fw_import

    def load(name, path):
        mod = types.ModuleType(name)
        mod.__dict__["__builtins__"] = fw_builtins
        mod.__file__ = path
        loaded[name] = mod
        with open(path) as f:
            code = compile(f.read(), path, "exec")
        exec(code, mod.__dict__)
        return mod

    return load(name, os.path.join(fw_dir, name + ".py"))


def make_stubs(board):
    """The modules the firmware imports, bound to ``board``."""
    clock = board.clock

    # -- time ------------------------------------------------------------------
    period = 1 << 30

    def ticks_ms():
        board.charge("ticks", TICKS_US)
        return int(clock.now // 1000) % period

    def ticks_us():
        board.charge("ticks", TICKS_US)
        return int(clock.now) % period

    def ticks_diff(a, b):
        return ((a - b + period // 2) % period) - period // 2

    def ticks_add(a, b):
        return (a + b) % period

    def sleep_us(us):
        if us > 0:
            board.idle_us += us
            clock.advance(us)

    def sleep_ms(ms):
        sleep_us(ms * 1000)

    t = _Obj(ticks_ms=ticks_ms, ticks_us=ticks_us, ticks_diff=ticks_diff, ticks_add=ticks_add, sleep_us=sleep_us,
             sleep_ms=sleep_ms, sleep=lambda s: sleep_us(int(s * 1000000)), time=lambda: int(clock.now // 1000000))

    # -- machine ---------------------------------------------------------------
    class Pin:
        IN = 0
        OUT = 1
        PULL_UP = 1

        def __init__(self, n, mode=-1, pull=-1, value=None):
            self.n = n
            if value is not None:
                self.value(value)

        def value(self, v=None):
            if v is None:
                return board.pins.get(self.n, 1)
            board.charge("pin", PIN_US)
            v = 1 if v else 0
            if board.pins.get(self.n, 1) != v:
                board.pins[self.n] = v
                if self.n == 22 and v == 0:
                    for r in board.readers:
                        r.reset()
                board._pin_changed(self.n)
            return None

        def on(self):
            self.value(1)

        def off(self):
            self.value(0)

        def __call__(self, v=None):
            return self.value(v)

    class SPI:
        def __init__(self, spi_id, baudrate=1000000, polarity=0, phase=0, bits=8, firstbit=0, sck=None,
                     mosi=None, miso=None):
            board.baud = baudrate

        def init(self, baudrate=1000000, **kw):
            board.baud = baudrate

        def write(self, buf):
            board.spi_transfer(buf)

        def read(self, n, write=0):
            return bytes(board.spi_transfer(bytes((write,)) * n))

        def readinto(self, buf, write=0):
            res = board.spi_transfer(bytes((write,)) * len(buf))
            for i in range(len(buf)):
                buf[i] = res[i]

        def write_readinto(self, wbuf, rbuf):
            res = board.spi_transfer(wbuf)
            for i in range(len(rbuf)):
                rbuf[i] = res[i]

    class WDT:
        def __init__(self, id=0, timeout=5000):
            board.wdt_timeout_us = timeout * 1000
            board.wdt_fed = clock.now

        def feed(self):
            board.charge("pin", PIN_US)
            board.wdt_fed = clock.now

    class Mem32:
        def __getitem__(self, addr):
            i = (addr - WATCHDOG_SCRATCH) // 4
            return board.scratch[i] if 0 <= i < 8 else 0

        def __setitem__(self, addr, value):
            i = (addr - WATCHDOG_SCRATCH) // 4
            if 0 <= i < 8:
                board.scratch[i] = value & 0xFFFFFFFF

    def reset():
        raise SimReboot(WDT_RESET)  # the rp2 port resets through the watchdog

    m = _Obj(Pin=Pin, SPI=SPI, WDT=WDT, mem32=Mem32(), reset=reset, soft_reset=reset,
             reset_cause=lambda: board.reset_cause, PWRON_RESET=PWRON_RESET, WDT_RESET=WDT_RESET, SOFT_RESET=5,
             freq=lambda *a: 125000000, unique_id=lambda: b"\xe6\x61\x38\x52\x83\x2a\x5c\x2b")

    # -- USB: sys.stdout / sys.stdin, select ------------------------------------
    class Out:
        def write(self, data):
            board.charge("usb", USB_CALL_US + USB_BYTE_US * len(data))
            data = bytes(data)
            waited = 0
            while data:
                room = USB_TX_BUF - len(board.tx)
                if room > 0:
                    board.tx.extend(data[:room])
                    data = data[room:]
                    continue
                if waited >= USB_WRITE_TIMEOUT_US:
                    board.dropped_bytes += len(data)
                    break
                clock.advance(USB_FRAME_US)
                waited += USB_FRAME_US
                board.usb_blocked_us += USB_FRAME_US
            return None

        def flush(self):
            return None

    class In:
        def read(self, n=-1):
            board.charge("usb", USB_CALL_US)
            if n is None or n < 0:
                n = len(board.rx)
            data = bytes(board.rx[:n])
            board.rx = board.rx[n:]
            return data

        def readinto(self, buf):
            data = self.read(len(buf))
            for i in range(len(data)):
                buf[i] = data[i]
            return len(data)

    out = _Obj(buffer=Out(), write=lambda text: None)
    s = _Obj(stdout=out, stdin=_Obj(buffer=In()), stderr=out, implementation=sys.implementation,
             print_exception=lambda exc, file=None: None, exit=sys.exit, maxsize=sys.maxsize, byteorder="little")

    class Poll:
        def __init__(self):
            self.objs = []

        def register(self, obj, mask=5):
            self.unregister(obj)
            self.objs.append([obj, mask])

        def unregister(self, obj):
            self.objs = [o for o in self.objs if o[0] is not obj]

        def modify(self, obj, mask):
            self.register(obj, mask)

        def poll(self, timeout=-1):
            board.charge("poll", POLL_US)
            ready = []
            for obj, mask in self.objs:
                ev = 0
                if (obj is s.stdin or obj is s.stdin.buffer) and mask & 1 and board.rx:
                    ev |= 1
                if (obj is s.stdout or obj is s.stdout.buffer) and mask & 4 and len(board.tx) < USB_TX_BUF:
                    ev |= 4
                if ev:
                    ready.append((obj, ev))
            if not ready and timeout and timeout > 0:
                sleep_ms(timeout)
                return self.poll(0)
            return ready

        def ipoll(self, timeout=-1, flags=0):
            return self.poll(timeout)

    sel = _Obj(POLLIN=1, POLLOUT=4, POLLERR=8, POLLHUP=16, poll=Poll)

    # -- os, micropython, rp2, gc ----------------------------------------------
    o = _Obj(urandom=lambda n: bytes(board.rng.next() & 0xFF for _ in range(n)))
    mp = _Obj(kbd_intr=lambda c: None, const=lambda v: v, alloc_emergency_exception_buf=lambda n: None,
              opt_level=lambda *a: 0, schedule=lambda f, a: f(a))
    rp2 = _Obj(bootsel_button=lambda: 0)

    return {"time": t, "utime": t, "machine": m, "sys": s, "select": sel, "os": o, "micropython": mp, "rp2": rp2,
            "board_config": board.config}
