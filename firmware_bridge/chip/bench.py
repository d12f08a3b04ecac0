"""The firmware measured on the chip's own binary (``tablectl bench table --chip``).

Four runs of the emulated RP2040 (``harness.Chip``), all in the chip's own time:

* ``mux``: 28 readers behind two 74HC154 decoders, as a 10-seat table is wired: boot, an empty
  table, then ``NO_HINT`` tags laid one at a time where the host expects nothing (each on a
  seeded random antenna at a seeded random moment, so at every phase of the scan cycle, and
  lifted again before the next), two laid where an EXPECT said the next card goes, then ten tags
  on ten antennas 30 ms apart;
* ``direct``: 22 readers on their own chip-select GPIOs: boot, an empty table, one tag;
* ``probe``: the ``mux`` table with a probe added to ``boot.py`` (a 250 ms soft timer that records
  the lowest ``gc.mem_free()`` and times a ``gc.collect()`` of the firmware's heap, into the
  watchdog's scratch registers), so the timing runs carry no probe.  The timing runs see the
  collector's own pauses from the bus: ``stalls_over_3ms``;
* ``dealt``: the ``mux`` wiring on a table after the deal (20 hole cards and the burn), flops and
  then hole cards where the host expects them (``run_dealt``): the flop's figure with more than
  the session's two or three flops, and no host wall time in it.

Measured from the pins and the bus, not from the firmware's own clock: a register access is a
chip select low to high; a scan is from the reader's VersionReg read to its field going off,
named by what the reader transceived (1 = empty: REQA alone; 3 = presence check of a 7-byte UID:
REQA + two SELECTs; 5 = full anticollision); landing -> TAG_ARRIVE is from the model placing the
tag to the frame's delimiter leaving the board's USB.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from firmware_bridge.chip.harness import FIRMWARE_DIR, Chip, firmware_files
from firmware_bridge.firmware import bridge_proto as fw
from firmware_bridge.sim.rc522 import Tag

BOOT_US = 1_500_000  # the table is left empty this long after power-on
SINGLES = (5, 8, 11, 14)  # direct: laid one by one where the host expects nothing, 100 ms apart
# mux: tags laid one at a time where the host expects nothing.  Each lands a seeded random
# NO_HINT_GAP_US + [0, NO_HINT_JITTER_US) after the last (the jitter spans more than a scan cycle,
# so the landings fall at every phase of it) on a seeded random antenna not among the last three,
# and is lifted NO_HINT_LIFT_US after it landed (the table is empty again for the next).
NO_HINT = 24
NO_HINT_GAP_US = 160_000
NO_HINT_JITTER_US = 60_000
NO_HINT_LIFT_US = 120_000
NO_HINT_UID0 = 40  # their UIDs: _uid(40 + k)
EXPECTED = (17, 26)  # laid where an EXPECT said the next card goes
TEN = (0, 3, 6, 9, 12, 15, 18, 21, 24, 27)  # laid 30 ms apart
DEALT_FLOPS = 8  # dealt: flops on a table of 20 hole cards and the burn
DEALT_HOLES = 6  # dealt: then hole cards, each expected by the host

PROBE = b"""
# -- bench probe (firmware_bridge/chip/bench.py), not part of the firmware ----------------
import gc, machine, time
_S = 0x4005801C  # watchdog SCRATCH4..7: lowest free heap, longest collection (us), collections, heap
_m = machine.mem32
_m[_S] = gc.mem_free() + gc.mem_alloc()
_m[_S + 4] = 0
_m[_S + 8] = 0
_m[_S + 12] = gc.mem_free() + gc.mem_alloc()


def _probe(_t):
    free = gc.mem_free()
    if free < _m[_S]:
        _m[_S] = free
    t0 = time.ticks_us()
    gc.collect()
    took = time.ticks_diff(time.ticks_us(), t0)
    if took > _m[_S + 4]:
        _m[_S + 4] = took
    _m[_S + 8] = _m[_S + 8] + 1


_timer = machine.Timer(period=250, callback=_probe)
"""


def _uid(i: int) -> bytes:
    return bytes.fromhex(f"04{i:02X}5EED{i:02X}A080")


def _ms(us: float) -> float:
    return round(us / 1000, 3)


def _med(values: list[float]) -> float | None:
    return _ms(statistics.median(values)) if values else None


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    v = sorted(values)
    return _ms(v[min(len(v) - 1, int(q * len(v)))])


def _arrivals(chip: Chip) -> dict[tuple[int, bytes], float]:
    """(antenna, uid) -> chip us when its TAG_ARRIVE's delimiter left the board."""
    reader = fw.FrameReader()
    out: dict[tuple[int, bytes], float] = {}
    for t, data in chip.received:
        for i in range(len(data)):
            for _v, mtype, _seq, body in reader.feed(data[i:i + 1]):
                if mtype == fw.T_TAG_ARRIVE:
                    out.setdefault((body[0], bytes(body[2:2 + body[1]])), t)
                elif mtype == fw.T_HELLO and "hello" not in chip.marks:
                    chip.marks["hello"] = t
    return out


def _scans(chip: Chip, t0: float, t1: float) -> dict[int, list[float]]:
    """Scan durations in [t0, t1) by transceives in the scan."""
    out: dict[int, list[float]] = {}
    last: dict[int, tuple[float, int]] = {}
    events = sorted([(t, 0, r, n) for t, r, n in chip.scan_starts] + [(t, 1, r, n) for t, r, n in chip.scan_ends])
    for t, kind, r, n in events:
        if kind == 0:
            last[r] = (t, n)
        elif r in last:
            ts, ns = last.pop(r)
            if t0 <= ts < t1:
                out.setdefault(n - ns, []).append(t - ts)
    return out


def _stalls(chip: Chip, t0: float, t1: float) -> list[float]:
    """Gaps over 3 ms between one register access and the next, except the settle wait that
    follows a scan's VersionReg read: the scan loop never sleeps elsewhere, so these are the
    collector's pauses (or any other stall), seen from the bus without a probe on the chip."""
    starts = sorted(t for t, _r, _n in chip.scan_starts)
    acc = sorted((a, b) for a, b, _r in chip.accesses if t0 <= a < t1)
    out = []
    j = 0
    for (a, b), (c, _d) in zip(acc, acc[1:], strict=False):
        while j < len(starts) and starts[j] < a:
            j += 1
        version_read = j < len(starts) and starts[j] <= b
        if not version_read and c - b > 3000:
            out.append(c - b)
    return out


def no_hint_schedule(seed: int, n: int = NO_HINT, readers: int = 28) -> list[tuple[int, float]]:
    """(antenna, landing chip us) of the no-hint series, from ``BOOT_US`` on: the same for a seed."""
    rng = random.Random(seed)
    out: list[tuple[int, float]] = []
    t = float(BOOT_US)
    recent: list[int] = []
    for _k in range(n):
        t += rng.uniform(0, NO_HINT_JITTER_US)
        a = rng.choice([x for x in range(readers) if x not in recent])
        recent = (recent + [a])[-3:]
        out.append((a, t))
        t += NO_HINT_GAP_US
    return out


def run_dealt(files: dict[str, bytes], board: str = "", seed: int = 21) -> dict[str, Any]:
    """The ``dealt`` run: 28 readers behind the decoders holding 20 hole cards and the burn (a
    10-seat table after the deal), then ``DEALT_FLOPS`` flops on the board slots 20-22 (the host
    expecting the burn and the three slots, as it does; the cards 80 ms apart, at seeded random
    phases, lifted again before the next), then ``DEALT_HOLES`` hole cards, each on a seat slot
    emptied a second before and expected 50-90 ms before it lands.  All in chip time, with no host
    in the loop: the session has two flops in three hands, this has eight, the same every run."""
    chip = Chip(readers=28, mux=True, files=files, config_extra=board)
    rng = random.Random(seed)
    placed: dict[tuple[int, bytes], float] = {}
    seq = [1]

    def place(antenna: int, uid: bytes, powerup: int) -> Callable[[], None]:
        def go() -> None:
            chip.table.place(antenna, Tag(uid, powerup_us=powerup))
            placed[(antenna, uid)] = chip.clock.now
        return go

    def expect(antennas: tuple[int, ...]) -> Callable[[], None]:
        frame = fw.encode_frame(fw.PROTOCOL_VERSION, fw.T_EXPECT, seq[0], bytes((len(antennas), *antennas)))
        seq[0] += 1
        return lambda: chip.host_send(frame)

    for a in [*range(20), 25]:  # (antenna order on the reference table: seats, board 20-24, burn 25)
        chip.clock.at(BOOT_US + 1000 * a, place(a, _uid(a), 1000))
    t = BOOT_US + 800_000.0
    flops: list[list[tuple[int, bytes]]] = []
    for k in range(DEALT_FLOPS):
        chip.clock.at(t, expect((25, 20, 21, 22)))
        t += 200_000 + rng.uniform(0, 60_000)
        cards = [(20 + i, _uid(60 + 3 * k + i)) for i in range(3)]
        for i, (a, uid) in enumerate(cards):
            chip.clock.at(t + 80_000 * i, place(a, uid, rng.randint(600, 2200)))
            chip.clock.at(t + 560_000, lambda a=a, uid=uid: chip.table.remove(a, uid))
        flops.append(cards)
        t += 1_760_000  # the three leaves are over (250 ms and three missed reads) before the next
    holes: list[tuple[int, bytes]] = []
    for k in range(DEALT_HOLES):
        a = 2 * k + 1
        chip.clock.at(t, lambda a=a: chip.table.remove(a, _uid(a)))
        t += 1_000_000
        chip.clock.at(t, expect((a,)))
        t += 50_000 + rng.uniform(0, 40_000)
        holes.append((a, _uid(100 + k)))
        chip.clock.at(t, place(a, _uid(100 + k), rng.randint(600, 2200)))
        t += 300_000
    chip.run(t)
    arrived = _arrivals(chip)
    flop_ms = [max(arrived[c] for c in cards) - placed[cards[2]] for cards in flops if all(c in arrived for c in cards)]
    hole_ms = [arrived[h] - placed[h] for h in holes if h in arrived]

    def summary(v: list[float], of: int) -> dict[str, Any]:
        return {"n": len(v), "of": of, "p50": _med(v), "max": _ms(max(v)) if v else None}

    return {
        "chip_seconds": round(chip.clock.now / 1e6, 3), "wall_seconds": round(chip.wall, 1),
        "flop_third_card_to_the_last_frame_ms": summary(flop_ms, len(flops)),
        "hole_expected_by_the_host_ms": summary(hole_ms, len(holes)),
    }


def run_one(kind: str, files: dict[str, bytes], board: str = "", seed: int = 21) -> dict[str, Any]:
    if kind == "dealt":
        return run_dealt(files, board, seed)
    mux = kind != "direct"
    readers = 22 if kind == "direct" else 28
    files = dict(files)
    if kind == "probe":
        files["boot.py"] = files.get("boot.py", b"") + PROBE
    chip = Chip(readers=readers, mux=mux, files=files, config_extra=board)
    chip.trace = kind != "probe"
    placed: dict[tuple[int, bytes], float] = {}

    def place(antenna: int, uid: bytes, powerup: int = 1500) -> Callable[[], None]:
        def go() -> None:
            chip.table.place(antenna, Tag(uid, powerup_us=powerup))
            placed[(antenna, uid)] = chip.clock.now
        return go

    until: float = BOOT_US + 600_000
    singles: list[tuple[int, bytes]] = []
    if kind in ("mux", "probe"):
        schedule = no_hint_schedule(seed, readers=readers)
        for k, (a, t) in enumerate(schedule):  # one at a time, at seeded random phases
            uid = _uid(NO_HINT_UID0 + k)
            singles.append((a, uid))
            chip.clock.at(t, place(a, uid))
            chip.clock.at(t + NO_HINT_LIFT_US, lambda a=a, uid=uid: chip.table.remove(a, uid))
        base = schedule[-1][1] + NO_HINT_GAP_US + NO_HINT_JITTER_US
        for k, a in enumerate(EXPECTED):  # the host says where the next card goes, 50 ms before it lands
            expect = fw.encode_frame(fw.PROTOCOL_VERSION, fw.T_EXPECT, 1 + k, bytes((1, a)))
            chip.clock.at(base + 150_000 * k, lambda e=expect: chip.host_send(e))
            chip.clock.at(base + 50_000 + 150_000 * k, place(a, _uid(8 + k)))
        base += 350_000
        for k, a in enumerate(TEN):
            chip.clock.at(base + 30_000 * k, place(a, _uid(10 + k)))
        until = base + (700_000 if kind == "mux" else 1_500_000)
        if kind == "probe":  # and lift them again: frames, leaves, more garbage
            for k, a in enumerate(TEN):
                chip.clock.at(base + 700_000 + 30_000 * k,
                              lambda a=a, k=k: chip.table.remove(a, _uid(10 + k)))
    else:
        for k, a in enumerate(SINGLES):
            singles.append((a, _uid(1 + k)))
            chip.clock.at(BOOT_US + 100_000 * k, place(a, _uid(1 + k)))
    chip.run(until)
    arrived = _arrivals(chip)
    lat = {key: arrived[key] - t for key, t in placed.items() if key in arrived}
    out: dict[str, Any] = {
        "readers": readers, "wiring": "two 74HC154" if mux else "direct chip selects",
        "chip_seconds": round(chip.clock.now / 1e6, 3), "wall_seconds": round(chip.wall, 1),
        "emulator_speed": round(chip.clock.now / 1e6 / chip.wall, 3) if chip.wall else None,
        "power_on_to_first_spi_ms": _ms(chip.first_spi) if chip.first_spi is not None else None,
        "power_on_to_hello_ms": _ms(chip.marks["hello"]) if "hello" in chip.marks else None,
        "not_reported_when_the_run_ended": sorted(a for a, _ in placed if (a, _) not in arrived),
    }
    if kind == "probe":
        free, longest, collections, heap = chip.scratch
        out.update({"heap_bytes": heap, "lowest_free_heap_bytes": free,
                    "lowest_free_heap_pct": round(100 * free / heap, 1) if heap else None,
                    "longest_collection_ms": _ms(longest), "collections_timed": collections})
        return out
    # The first scan: a reader's field first switched on (the readers' reset and init read their
    # VersionReg too, so the first VersionReg read is not yet a scan).
    out["power_on_to_first_scan_ms"] = _ms(chip.first_field_on) if chip.first_field_on is not None else None
    t_empty0, t_empty1 = BOOT_US - 600_000, BOOT_US
    acc = [(a, b, r) for a, b, r in chip.accesses if t_empty0 <= a < t_empty1]
    lows = [b - a for a, b, _ in acc]
    starts: dict[int, list[float]] = {}
    for start_us, _end_us, reader in acc:
        starts.setdefault(reader, []).append(start_us)
    s2s = [y - x for v in starts.values() for x, y in zip(v, v[1:], strict=False) if y - x < 500]
    cyc = [y - x for v in ({r: [t for t, rr, _ in chip.scan_starts if rr == r and t_empty0 <= t < t_empty1]
                            for r in range(readers)}).values() for x, y in zip(v, v[1:], strict=False)]
    scans = _scans(chip, t_empty0, until)
    stalls = _stalls(chip, t_empty0 - 200_000, until)
    out.update({
        "register_access_cs_low_us": round(statistics.median(lows), 1) if lows else None,
        "register_access_start_to_start_us": round(statistics.median(s2s), 1) if s2s else None,
        "empty_reader_ms": _med(scans.get(1, [])),
        "scan_cycle_empty_ms": _med(cyc),
        "full_read_7byte_ms": _med(scans.get(5, [])),
        "presence_check_7byte_ms": _med(scans.get(3, [])),
        "stalls_over_3ms": {"count": len(stalls), "per_s": round(len(stalls) / ((until - t_empty0 + 200_000) / 1e6), 2),
                            "longest_ms": _ms(max(stalls)) if stalls else 0.0},
    })
    one = [lat[key] for key in singles if key in lat]
    out["landing_to_tag_arrive_ms"] = {"one_at_a_time_no_hint": {
        "n": len(one), "of": len(singles), "p50": _med(one), "p90": _pct(one, 0.9),
        "max": _ms(max(one)) if one else None,
        "phases": f"seeded random (seed {seed}), lifted before the next" if mux else "fixed, 100 ms apart"}}
    if kind == "mux":
        exp = [lat[(a, _uid(8 + k))] for k, a in enumerate(EXPECTED) if (a, _uid(8 + k)) in lat]
        ten = [lat[(a, _uid(10 + k))] for k, a in enumerate(TEN) if (a, _uid(10 + k)) in lat]
        out["landing_to_tag_arrive_ms"].update({
            "expected_by_the_host": [_ms(v) for v in exp],
            "ten_tags_30ms_apart": {"n": len(ten), "p50": _med(ten), "max": _ms(max(ten)) if ten else None},
        })
    return out


def run_chip_bench(fw_dir: str | Path | None = None, compiled: bool = False, board: str = "",
                   progress: Callable[[str], None] | None = None, seed: int = 21) -> dict[str, Any]:
    """The four runs in parallel processes; the firmware from ``fw_dir`` (default: the shipped one),
    ``board``: lines added to the board_config.py the wiring goes in (e.g. ``PIPELINE = 5``)."""
    say = progress or (lambda _m: None)
    files = firmware_files(Path(fw_dir) if fw_dir else FIRMWARE_DIR, compiled=compiled)
    kinds = ("mux", "direct", "probe", "dealt")
    say("chip: booting four emulated RP2040s (mux 28, direct 22, GC probe, a dealt table's flops)")
    with ProcessPoolExecutor(max_workers=len(kinds)) as pool:
        results = dict(zip(kinds, pool.map(run_one, kinds, [files] * len(kinds), [board] * len(kinds),
                                           [seed] * len(kinds)), strict=True))
    probe = results["probe"]
    return {
        "bench": "table --chip",
        "chip": "rp2040js 1.4.1 running MicroPython v1.22.0 (RPI_PICO-20231227), 125 MHz; MFRC522 model on SPI0",
        "firmware": str(fw_dir or FIRMWARE_DIR), "precompiled_mpy": compiled, "board_config": board,
        "files": {name: len(data) for name, data in files.items()},
        "mux": results["mux"], "direct": results["direct"], "dealt": results["dealt"],
        "gc": {k: v for k, v in probe.items() if k not in ("readers", "wiring")},
        "note": "chip time from the emulated RP2040 (Cortex-M0+ cycles, timer, SPI at its clock, USB); "
                "flash cache misses and bus contention are not modelled: lower bounds for silicon",
    }
