"""Emulator + link over a real pty (and TCP) with pyserial: exactly-once presence changes."""

from __future__ import annotations

import os
import random
import select
import threading
import time
import tty
from collections.abc import Callable
from dataclasses import replace

import pytest

from firmware_bridge import protocol as p
from firmware_bridge.emulator import Emulator, FaultConfig
from firmware_bridge.link import BridgeLink, IncompatibleDeviceError, LinkConfig, PresenceChange, seq_distance
from firmware_bridge.table_sim import FAST_LINK
from tests.conftest import poll

FAST = replace(FAST_LINK, inventory_timeout=0.25)  # the rig's fast timings, a little more patient


class Recorder:
    """Collects the link's changes (called in the link thread) and lets a test wait on them."""

    def __init__(self) -> None:
        self.changes: list[PresenceChange] = []
        self._cond = threading.Condition()

    def __call__(self, change: PresenceChange) -> None:
        with self._cond:
            self.changes.append(change)
            self._cond.notify_all()

    def wait_count(self, n: int, timeout: float = 5.0) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: len(self.changes) >= n, timeout)

    def triples(self) -> list[tuple[int, str, bool]]:
        with self._cond:
            return [(c.antenna, c.uid, c.arrived) for c in self.changes]


def wait_for(pred: Callable[[], bool], timeout: float = 5.0) -> bool:
    return poll(pred, timeout)


def uid_of(i: int) -> str:
    return f"04{i:02X}A1B2C3D4{i:02X}"  # 7-byte NTAG-style UIDs


def test_seq_distance_wraps() -> None:
    assert seq_distance(5, 5) == 0
    assert seq_distance(0, 0xFFFF) == 1
    assert seq_distance(0xFFFF, 0) == -1
    assert seq_distance(100, 50) == 50


def test_scripted_session_with_faults_unplug_and_reset(tmp_path) -> None:
    """Many moves, 1% of frames dropped/corrupted/duplicated, an unplug and a reset:
    the change stream equals the physical sequence exactly."""
    faults = FaultConfig(seed=11, drop=0.01, corrupt=0.01, duplicate=0.01, reorder=0.01, miss_read=0.02)
    rng = random.Random(3)
    antennas = 16
    rec = Recorder()
    with Emulator(antennas, faults=faults, link_path=str(tmp_path / "ttyBRIDGE")) as emu:
        link = BridgeLink(emu.url, FAST, on_change=rec)
        with link:
            assert link.wait_synced(5)
            expected: list[tuple[int, str, bool]] = []
            where: dict[str, int] = {}
            moves = 240
            for i in range(moves):
                if i == moves // 3:
                    emu.unplug(0.15)
                if i == 2 * moves // 3:
                    emu.reset()
                uid = uid_of(rng.randrange(30))
                if uid in where and rng.random() < 0.6:
                    antenna = where.pop(uid)
                    emu.remove(antenna, uid)
                    expected.append((antenna, uid, False))
                elif uid not in where:
                    antenna = rng.randrange(antennas)
                    where[uid] = antenna
                    emu.place(antenna, uid)
                    expected.append((antenna, uid, True))
                else:
                    continue
                assert rec.wait_count(len(expected), 5.0), (i, expected[-1], rec.triples()[-3:])
                if rec.triples() != expected:
                    pytest.fail(f"move {i}: got {rec.changes[-4:]}\nexpected {expected[-4:]}\n{link.health()}"
                                f"\n{emu.counters} {emu.injector.counters}")
            time.sleep(0.2)  # let late duplicates and heartbeats arrive: nothing more may appear
            health = link.health()
    assert rec.triples() == expected
    c = health.counters
    assert c["corrupt_frames"] > 0 and c["device_resets"] == 1 and c["disconnects"] >= 1, c
    assert emu.injector.counters["dropped"] > 0 and emu.injector.counters["duplicated"] > 0
    assert health.synced and health.healthy


def test_socket_url_and_initial_inventory() -> None:
    rec = Recorder()
    with Emulator(8, transport="tcp") as emu:
        emu.place(3, uid_of(1))
        emu.place(5, uid_of(2))
        with BridgeLink(emu.url, FAST, on_change=rec) as link:
            assert link.wait_synced(5)
            assert rec.wait_count(2)
            assert sorted(rec.triples()) == [(3, uid_of(1), True), (5, uid_of(2), True)]
            assert all(c.source == "inventory" for c in rec.changes)
            emu.remove(3, uid_of(1))
            assert rec.wait_count(3)
            assert rec.changes[-1].source == "event" and not rec.changes[-1].arrived
            emu.unplug(0.1)
            emu.place(7, uid_of(3))
            assert rec.wait_count(4, 5.0)
            assert rec.triples()[-1] == (7, uid_of(3), True)
            assert link.presence() == {5: frozenset({uid_of(2)}), 7: frozenset({uid_of(3)})}


def test_incompatible_protocol_version_is_refused() -> None:
    with Emulator(4, protocol_version=p.PROTOCOL_VERSION + 1) as emu:
        link = BridgeLink(emu.url, FAST)
        with link, pytest.raises(IncompatibleDeviceError, match="protocol v2"):
            link.wait_synced(5)
        assert link.health().state == "incompatible"
        assert not link.health().healthy


def test_hung_reader_trips_watchdog_and_recovers() -> None:
    rec = Recorder()
    with Emulator(8) as emu, BridgeLink(emu.url, FAST, on_change=rec) as link:
        assert link.wait_synced(5)
        emu.silence(1.0)
        emu.place(2, uid_of(9))  # happens while the firmware is hung
        assert wait_for(lambda: link.health().counters.get("watchdog_trips", 0) >= 1, 5)
        assert rec.wait_count(1, 8)
        assert rec.triples() == [(2, uid_of(9), True)]
        assert wait_for(lambda: link.health().synced, 5)


def test_reset_without_hello_is_detected_by_heartbeat() -> None:
    """If the HELLO of a new boot is lost the heartbeat's boot id still reveals the reset."""
    rec = Recorder()
    with Emulator(8) as emu, BridgeLink(emu.url, FAST, on_change=rec) as link:
        emu.place(1, uid_of(1))
        assert link.wait_synced(5) and rec.wait_count(1)
        emu.injector.config = FaultConfig(drop=1.0)  # everything from the reset is lost ...
        emu.reset()
        emu.remove(1, uid_of(1))
        time.sleep(0.1)
        emu.injector.config = FaultConfig()  # ... until the line heals
        assert rec.wait_count(2, 5)
        assert rec.triples() == [(1, uid_of(1), True), (1, uid_of(1), False)]
        assert link.health().counters["device_resets"] == 1


def test_new_host_gets_full_state_and_health_is_serialisable() -> None:
    import json

    with Emulator(8) as emu:
        for i in range(5):
            emu.place(i, uid_of(i))
        with BridgeLink(emu.url, FAST) as link:
            assert link.wait_synced(5)
            got = [link.changes.get(timeout=2) for _ in range(5)]
            assert sorted((c.antenna, c.uid) for c in got) == [(i, uid_of(i)) for i in range(5)]
            h = link.health()
            assert h.connected and h.antenna_count == 8 and h.firmware_version == "1.8.0"
            assert h.last_heartbeat_age is not None and h.last_heartbeat_age < 1
            json.dumps(h.to_dict())


def test_configure_is_sent_and_acknowledged() -> None:
    cfg = LinkConfig(**{**{f: getattr(FAST, f) for f in FAST.__dataclass_fields__},
                        "device": p.Configure(scan_period_ms=15, debounce_ms=45, heartbeat_ms=40)})
    with Emulator(4) as emu, BridgeLink(emu.url, cfg) as link:
        assert link.wait_synced(5)
        assert wait_for(lambda: link.health().counters.get("commands_acked", 0) >= 1)
        assert emu.device.heartbeat_ms == 40 and emu.device.debounce_ms == 45


def test_bursts_under_heavy_faults_converge_without_phantoms() -> None:
    """Moves faster than the link can confirm, 5% of each fault: every change is a real
    transition (per tag and antenna they alternate, starting with an arrival) and the
    model ends equal to the table."""
    faults = FaultConfig(seed=5, drop=0.05, corrupt=0.05, duplicate=0.05, reorder=0.05, host_drop=0.05)
    rng = random.Random(8)
    rec = Recorder()
    with Emulator(12, faults=faults) as emu, BridgeLink(emu.url, FAST, on_change=rec) as link:
        assert link.wait_synced(5)
        where: dict[str, int] = {}
        for _ in range(200):
            uid = uid_of(rng.randrange(20))
            if uid in where:
                emu.remove(where.pop(uid), uid)
            if rng.random() < 0.6:
                where[uid] = rng.randrange(12)
                emu.place(where[uid], uid)
            time.sleep(rng.choice((0, 0, 0.002, 0.02)))
        table = {a: frozenset(u.hex().upper() for u in uids) for a, uids in emu.table().items()}
        assert wait_for(lambda: link.presence() == table, 8), (link.presence(), table)
    state: dict[tuple[int, str], bool] = {}
    for antenna, uid, arrived in rec.triples():
        assert state.get((antenna, uid), False) != arrived, (antenna, uid, arrived)
        state[(antenna, uid)] = arrived


class ScriptedDevice:
    """The device end of a pty, played frame by frame by the test: nothing is timed."""

    def __init__(self) -> None:
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave)
        self.url = os.ttyname(self._slave)
        self._decoder = p.FrameDecoder()

    def send(self, *msgs: p.Message) -> None:
        os.write(self.master, b"".join(p.encode(m) for m in msgs))

    def receive(self, kind: type[p.Message], timeout: float = 5.0) -> p.Message:
        """The next host command of type ``kind`` (others are skipped)."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            if select.select([self.master], [], [], left)[0]:
                for msg in self._decoder.feed(os.read(self.master, 4096)):
                    if isinstance(msg, kind):
                        return msg
        raise AssertionError(f"the host sent no {kind.__name__}")

    def close(self) -> None:
        os.close(self.master)
        os.close(self._slave)


def test_a_leave_during_a_snapshot_order_replay_follows_the_arrival() -> None:
    """Regression (CI, heavy faults under load): a snapshot with several new cards holds its
    arrivals back while the device replays its ring to order them.  A TAG_LEAVE for one of them
    that arrived before the replay's ACK used to go out at once, before its own arrival: the
    change stream said "left" for a card it never reported present."""
    a, x = uid_of(1), uid_of(0)
    slow = replace(FAST, ack_timeout=30.0, heartbeat_timeout=30.0, handshake_timeout=30.0,
                   inventory_timeout=30.0)  # no timer may fire: the frames alone decide
    boot = 0xB007
    device = ScriptedDevice()
    rec = Recorder()
    try:
        with BridgeLink(device.url, slow, on_change=rec) as link:
            device.receive(p.HelloAck)  # "who are you?"
            device.send(p.Hello((1, 1, 0), 12, boot, seq=0),  # a host starting with two cards down
                        p.Inventory(boot, 0, 1, 1, ((3, bytes.fromhex(a)), (7, bytes.fromhex(x))), seq=1))
            replay = device.receive(p.Replay)  # the link asks the ring in which order they came
            device.send(p.TagLeave(7, bytes.fromhex(x), seq=2))  # one is picked up meanwhile
            assert wait_for(lambda: link.health().counters["frames"] >= 3)
            device.send(p.Ack(replay.seq, p.MessageType.REPLAY, p.AckStatus.NOT_READY, seq=3))
            assert rec.wait_count(3)
            assert wait_for(lambda: link.presence() == {3: frozenset({a})})
            time.sleep(0.05)  # nothing more may appear
    finally:
        device.close()
    triples = rec.triples()
    assert sorted(triples[:2]) == [(3, a, True), (7, x, True)], triples
    assert triples[2:] == [(7, x, False)], triples
    assert [c.source for c in rec.changes] == ["inventory", "inventory", "event"]


def test_text_script_drives_the_emulator() -> None:
    from firmware_bridge.emulator import Place, Remove, Reset, Unplug, Wait, parse_script

    script = parse_script(
        """
        # deal two hole cards to seat 1, then muck one
        place 0 04:01:A1:B2:C3:D4:01
        wait 0.05
        place 1 0402A1B2C3D402
        wait 0.05
        remove 0 0401A1B2C3D401
        unplug 0.05 reset
        """
    )
    assert [type(s) for s in script] == [Place, Wait, Place, Wait, Remove, Unplug]
    assert isinstance(parse_script("reset")[0], Reset)
    with pytest.raises(ValueError, match="line 1"):
        parse_script("jump 3")
    rec = Recorder()
    with Emulator(4) as emu, BridgeLink(emu.url, FAST, on_change=rec) as link:
        assert link.wait_synced(5)
        emu.run_script(script)
        assert rec.wait_count(3)
        assert wait_for(lambda: link.health().counters.get("device_resets", 0) == 1 and link.health().synced)
        assert link.presence() == {1: frozenset({uid_of(2)})}
        assert rec.triples() == [(0, uid_of(1), True), (1, uid_of(2), True), (0, uid_of(1), False)]
