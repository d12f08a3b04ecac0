"""The device state machine (firmware/bridge_proto.py) as it runs on the board."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from firmware_bridge import protocol as p
from firmware_bridge.firmware import bridge_proto as fw

UID_A = bytes.fromhex("04A1B2C3D4E5F6")
UID_B = bytes.fromhex("DEADBEEF")
UID_C = bytes.fromhex("C0FFEE01")


class Board:
    """A Device with a fake clock and a decoder on its output."""

    def __init__(self, antennas: int = 4, debounce_ms: int = 100) -> None:
        self.out: list[bytes] = []
        self.reboots = 0
        self.now = 0
        self.dev = fw.Device(antennas, self.out.append, boot_id=0xB007, now_ms=0, on_reboot=self._reboot)
        self.dev.debounce_ms = debounce_ms
        self.dev.scan_period_ms = 10
        # Its clock jumps (a cycle may be a whole heartbeat period): not a stall to report (FAULT 7).
        self.dev.stall_gap_ms = 10_000
        self.table: dict[int, list[bytes]] = {}

    def _reboot(self) -> None:
        self.reboots += 1

    def cycle(self, ms: int = 10) -> list[p.Message]:
        self.now += ms
        for a in range(self.dev.antenna_count):
            self.dev.observe(a, self.table.get(a, []), self.now)
        self.dev.end_cycle(self.now)
        self.dev.poll(self.now)
        return self.take()

    def take(self) -> list[p.Message]:
        msgs = [m for m in p.FrameDecoder().feed(b"".join(self.out)) if isinstance(m, p.Message)]
        self.out.clear()
        return msgs

    def send(self, msg: p.Message) -> list[p.Message]:
        self.dev.feed(p.encode(msg))
        return self.take()

    def boot(self) -> list[p.Message]:
        msgs: list[p.Message] = []
        while not self.dev.booted:
            msgs += self.cycle()
        return msgs


def test_boot_learns_the_table_then_says_hello_with_an_inventory() -> None:
    b = Board()
    b.table = {1: [UID_A], 3: [UID_B]}
    msgs = b.boot()
    assert [type(m) for m in msgs] == [p.Hello, p.Inventory]
    hello, inv = msgs
    assert hello.boot_id == 0xB007 and hello.antenna_count == 4 and hello.seq == 0
    assert set(inv.entries) == {(1, UID_A), (3, UID_B)} and inv.seq == 1
    assert b.now >= b.dev.debounce_ms  # a single missed read at boot cannot hide a card


def test_arrive_at_once_leave_after_debounce_and_flicker_is_silent() -> None:
    b = Board()
    b.boot()
    b.table = {2: [UID_A]}
    assert [(type(m), m.antenna) for m in b.cycle() if isinstance(m, p.TagArrive)] == [(p.TagArrive, 2)]
    b.table = {}
    for _ in range(5):  # 50 ms without a read: under the 100 ms debounce
        assert not [m for m in b.cycle() if isinstance(m, p.TagArrive)]
    b.table = {2: [UID_A]}
    assert not [m for m in b.cycle() if isinstance(m, p.TagArrive)]
    b.table = {}
    leaves = []
    for _ in range(12):
        leaves += [m for m in b.cycle() if isinstance(m, p.TagLeave)]
    assert leaves == [p.TagLeave(2, UID_A, seq=leaves[0].seq)]


def test_leave_needs_missed_scans_not_just_time() -> None:
    b = Board()
    b.boot()
    b.table = {0: [UID_A]}
    b.cycle()
    b.table = {}
    assert not [m for m in b.cycle(500) if isinstance(m, p.TagLeave)]  # one slow scan is one miss
    b.cycle()
    assert [m for m in b.cycle() if isinstance(m, p.TagLeave)]


def test_heartbeat_and_hello_repeat_until_acknowledged() -> None:
    b = Board()
    b.boot()
    msgs = b.cycle(b.dev.heartbeat_ms)
    assert [type(m) for m in msgs] == [p.Hello, p.Heartbeat]
    hb = msgs[1]
    assert hb.boot_id == 0xB007 and hb.present == 0 and hb.scan_cycles == b.dev.cycles
    assert b.send(p.HelloAck(0xB007, seq=40)) == [p.Ack(40, p.MessageType.HELLO_ACK, 0, seq=hb.seq + 1)]
    assert [type(m) for m in b.cycle(b.dev.heartbeat_ms)] == [p.Heartbeat]


def test_hello_ack_zero_asks_for_identity_and_inventory() -> None:
    b = Board()
    b.table = {0: [UID_A]}
    b.boot()
    msgs = b.send(p.HelloAck(0, seq=7))
    assert [type(m) for m in msgs] == [p.Hello, p.Inventory]
    assert msgs[1].snapshot == 7 and msgs[1].entries == ((0, UID_A),)


def test_request_inventory_configure_reboot_and_unknown() -> None:
    b = Board()
    b.table = {0: [UID_A], 1: [UID_B]}
    b.boot()
    ack, inv = b.send(p.RequestInventory(seq=9))
    assert ack == p.Ack(9, p.MessageType.REQUEST_INVENTORY, 0, seq=ack.seq)
    assert inv.snapshot == 9 and len(inv.entries) == 2
    msgs = b.send(p.Configure(20, 60, 250, (0, 2, 3), seq=10))
    assert [type(m) for m in msgs] == [p.TagLeave, p.Ack]  # antenna 1 switched off: its tag is gone
    assert msgs[0].antenna == 1 and msgs[1].status == p.AckStatus.OK
    assert (b.dev.scan_period_ms, b.dev.debounce_ms, b.dev.heartbeat_ms) == (20, 60, 250)
    assert not [m for m in b.cycle() if isinstance(m, p.TagArrive)]  # disabled antennas are not scanned
    assert b.send(p.Configure(20, 60, 1, None, seq=11))[0].status == p.AckStatus.BAD_ARGS
    b.dev.feed(fw.encode_frame(fw.PROTOCOL_VERSION, 0x99, 12, b""))
    assert b.take()[0].status == p.AckStatus.UNKNOWN_COMMAND
    assert b.send(p.Reboot(seq=13))[0].cmd_type == p.MessageType.REBOOT and b.reboots == 1


def test_garbage_from_host_is_reported_as_a_fault() -> None:
    b = Board()
    b.boot()
    b.dev.feed(b"\x05\x01\x02\x00")
    (fault,) = b.take()
    assert isinstance(fault, p.Fault) and fault.code == p.FaultCode.BAD_HOST_FRAME


def test_too_many_tags_reported_once() -> None:
    b = Board()
    b.boot()
    b.table = {0: [bytes([i, 1, 2, 3]) for i in range(fw.MAX_TAGS_PER_ANTENNA + 2)]}
    first = b.cycle()
    assert sum(isinstance(m, p.TagArrive) for m in first) == fw.MAX_TAGS_PER_ANTENNA
    assert sum(isinstance(m, p.Fault) for m in first + b.cycle() + b.cycle()) == 1


def test_sequence_wraps() -> None:
    b = Board()
    b.boot()
    b.dev.seq = 0xFFFF
    b.table = {0: [UID_A]}
    (a,) = b.cycle()
    b.table = {1: [UID_A]}
    msgs = b.cycle()
    assert a.seq == 0xFFFF and msgs[0].seq == 0


def test_firmware_source_stays_micropython_compatible() -> None:
    """No dataclasses, typing, f-strings or __future__ in the code that runs on the board."""
    for name in ("boot.py", "bridge_proto.py", "main.py", "scan_loop.py", "mfrc522.py", "rp2fast.py"):
        path = Path(fw.__file__).with_name(name)
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                mods = [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                for mod in mods:
                    assert mod not in ("dataclasses", "typing", "__future__", "enum"), (name, mod)
            assert not isinstance(node, ast.JoinedStr), (name, node.lineno)


@pytest.mark.parametrize("antennas", [1, 28])
def test_empty_inventory_is_one_part(antennas: int) -> None:
    b = Board(antennas)
    _, inv = b.boot()
    assert (inv.part, inv.parts, inv.entries) == (1, 1, ())


def test_a_gap_between_reads_is_told_before_the_next_arrival_and_the_heartbeat_waits() -> None:
    """Issue 26: a loop that stopped longer than ``stall_gap_ms`` between two reads may have let two
    cards land unseen; the scan after it reports them in antenna order.  FAULT 7 (scan stalled,
    detail = the gap) goes before the first arrival, and the heartbeat waits two cycles, so the host
    holds every arrival those scans found.  A gap with no card after it is forgotten."""
    b = Board()
    b.dev.stall_gap_ms = 100
    b.boot()
    b.send(p.HelloAck(0xB007, seq=1))
    b.cycle(150)  # a stall, and no card
    b.cycle(10)
    b.cycle(10)
    b.table = {3: [UID_A]}
    assert [type(m) for m in b.cycle(10)] == [p.TagArrive]  # long forgotten: no fault
    b.table = {3: [UID_A], 0: [UID_B], 2: [UID_C]}
    msgs = b.cycle(180)
    assert msgs[0] == p.Fault(0xFF, p.FaultCode.SCAN_STALLED, 180, seq=msgs[0].seq)
    assert [(m.antenna, m.uid) for m in msgs[1:]] == [(0, UID_B), (2, UID_C)]
    b.now += 500  # the heartbeat is due, but two cycles must end after the gap first
    assert b.cycle(0) == []
    assert [type(m) for m in b.cycle(10)] == [p.Heartbeat]
