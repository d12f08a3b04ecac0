"""``tablectl bench table --chip``: the dealt session through the daemon, on the chip's own binary.

The same hold'em session as ``tablectl bench table`` (``controller.bench.table``: ten seats, 28
readers behind the two 74HC154s, hole cards pitched 0.3 s apart, a burn and a flop, a card to the
wrong seat every few hands, the scoop), but the board is the emulated RP2040 running the firmware
(``firmware_bridge.chip``: rp2040js, MicroPython v1.22.0, the MFRC522 model in the chip's time)
and its USB line is a pty the real daemon opens; the daemon publishes to a real Mosquitto and a
subscriber in its own process notes what arrives.

The emulator runs slower than real time (``emulator_speed``: chip seconds per wall second), so the
dealer is paced by the chip's clock (``ChipProcess.sleep``) and every latency is measured in two
parts that are each exact: from the card landing to its frame's last byte leaving the board's USB,
in the chip's own time; from those bytes reaching the pty to the subscriber, in wall time.  Their
sum is what a chip running at its real speed would show, with one difference stated: the host
answers (EXPECT) reach the chip sooner in chip time than they would (the host is ~10x faster
relative to the emulated chip), so hints are, if anything, on time.

Heap and collector: ``boot.py`` carries a probe (once per chip second: time one ``gc.collect()``,
note the free heap after it), sampled after every hand: ``heap_after_each_hand`` shows whether the
low-water mark moves hand over hand.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from controller.bench.latency import _summary
from controller.bench.table import (
    _score,
    _Session,
    arrivals,
    bench_table,
    seat_players,
    start_table,
    time_removals,
    wrong_hand,
)
from controller.bench.table_host import _Probe
from controller.bench.table_host import _score as host_stages
from controller.mqtt.broker import Broker
from firmware_bridge.firmware import bridge_proto as fw

SLOWEST = 0.02  # chip seconds per wall second, below the slowest the emulator has run (0.027)
SETTLE = 0.6  # chip seconds after the flop and after the scoop (the flop and the leaves are read)
#: The link's counters in the score: faults and resyncs, and the stall windows and arrivals of
#: unknown order (the pipeline asks the dealer about those, and the bench never answers).
LINK_COUNTERS = ("faults", "gaps", "inventories", "corrupt_frames", "device_resets", "stall_windows",
                 "unordered_arrivals", "scan_stalls", "redundant_reports")

# -- the session's probe, appended to boot.py (not part of the firmware) ---------------------
# Watchdog SCRATCH4..7: lowest free heap right after a collection; the longest collection (us);
# collections (low 16 bits) | heap size / 16 (high 16 bits); free heap after the latest collection.
PROBE = b"""
# -- bench probe (controller/bench/table_chip.py), not part of the firmware ------------------
import gc, machine, time
_S = 0x4005801C
_m = machine.mem32
_h = gc.mem_free() + gc.mem_alloc()
_m[_S] = _h
_m[_S + 4] = 0
_m[_S + 8] = (_h >> 4) << 16
_m[_S + 12] = _h


def _probe(_t):
    t0 = time.ticks_us()
    gc.collect()
    took = time.ticks_diff(time.ticks_us(), t0)
    free = gc.mem_free()
    if free < _m[_S]:
        _m[_S] = free
    if took > _m[_S + 4]:
        _m[_S + 4] = took
    _m[_S + 8] = (_m[_S + 8] & 0xFFFF0000) | ((_m[_S + 8] + 1) & 0xFFFF)
    _m[_S + 12] = free


_timer = machine.Timer(period=1000, callback=_probe)
"""


def _heap(scratch: list[int]) -> dict[str, Any]:
    low, longest, packed, last = scratch
    heap = (packed >> 16) << 4
    return {"heap_bytes": heap, "lowest_free_after_a_collection_bytes": low,
            "lowest_free_after_a_collection_pct": round(100 * low / heap, 1) if heap else None,
            "free_after_the_latest_collection_pct": round(100 * last / heap, 1) if heap else None,
            "longest_collection_ms": round(longest / 1000, 3), "collections_timed": packed & 0xFFFF}


def _frames(writes: list[tuple[float, float, bytes]]) -> dict[tuple[int, int, bytes], list[tuple[float, float]]]:
    """(type, antenna, uid) -> [(chip us, wall) of the USB write that ended the frame], for every
    TAG_ARRIVE and TAG_LEAVE the board sent."""
    reader = fw.FrameReader()
    out: dict[tuple[int, int, bytes], list[tuple[float, float]]] = {}
    for t, wall, data in writes:
        for _v, mtype, _seq, body in reader.feed(data):
            if mtype in (fw.T_TAG_ARRIVE, fw.T_TAG_LEAVE):
                out.setdefault((mtype, body[0], bytes(body[2:2 + body[1]])), []).append((t, wall))
    return out


def _written(writes: list[tuple[float, float, bytes]]) -> dict[int, list[float]]:
    """Frame seq -> the wall times of the USB writes that ended a frame of that seq (for
    ``table_host``'s stages: the host's part of each card, stage by stage, from the pty on)."""
    reader = fw.FrameReader()
    out: dict[int, list[float]] = {}
    for _t, wall, data in writes:
        for _v, _mtype, seq, _body in reader.feed(data):
            out.setdefault(seq, []).append(wall)
    return out


def _two_part_times(s: _Session, moves: dict[int, float], writes: list[tuple[float, float, bytes]]
                    ) -> tuple[dict[int, float], dict[int, float]]:
    """Per move key: the wall time the move would have had on a chip at real speed (the frame's
    wall time minus the chip's landing -> frame time), and that chip part in ms.  A key the board
    never reported has neither (the score counts it lost)."""
    frames = _frames(writes)
    written: dict[int, tuple[float, float]] = {}
    for key, (what, antenna, uid, _hand) in s.moves.items():
        if key not in moves:
            continue
        mtype = fw.T_TAG_ARRIVE if what == "place" else fw.T_TAG_LEAVE
        hit = next((tw for tw in frames.get((mtype, antenna, bytes.fromhex(uid)), []) if tw[0] >= moves[key]), None)
        if hit is not None:
            written[key] = hit
    times: dict[int, float] = {}
    chip_ms: dict[int, float] = {}
    for key, (t, wall) in written.items():
        times[key] = wall - (t - moves[key]) / 1e6
        chip_ms[key] = (t - moves[key]) / 1000
    for last, keys in s.flop_keys.items():  # the board event follows whichever flop card came last
        if all(k in written for k in keys):
            t, wall = max((written[k] for k in keys), key=lambda tw: tw[0])
            times[last] = wall - (t - moves[last]) / 1e6
            chip_ms[last] = (t - moves[last]) / 1000  # the third card landing -> the last frame out
        else:
            times.pop(last, None)
            chip_ms.pop(last, None)
    return times, chip_ms


def _record_fusion(fusion: Any) -> list[tuple[float, str, str, bool, bool, list[str]]]:
    """Every zone change the fusion was fed and every timer poll that put something out, as
    (host time, zone, uid, entered, ordered, the outputs' kinds): where a card went once it left
    the board (a missing flop's cards: dealt, held as of unknown order, or grouped short)."""
    seen: list[tuple[float, str, str, bool, bool, list[str]]] = []
    feed, poll = fusion.feed, fusion.poll

    def fed(change: Any) -> Any:
        out = feed(change)
        seen.append((time.monotonic(), change.zone.name, change.uid, change.entered, change.ordered,
                     [type(o).__name__ for o in out]))
        return out

    def polled(*a: Any, **kw: Any) -> Any:
        out = poll(*a, **kw)
        if out:
            seen.append((time.monotonic(), "(poll)", "", False, True, [type(o).__name__ for o in out]))
        return out

    fusion.feed, fusion.poll = fed, polled
    return seen


def _missing_flops(s: _Session, score: dict[str, Any], times: dict[int, float], msgs: list[tuple[str, Any, float]],
                   fused: list[tuple[float, str, str, bool, bool, list[str]]],
                   frames: dict[tuple[int, int, bytes], list[tuple[float, float]]],
                   moves: dict[int, float]) -> list[dict[str, Any]]:
    """Each flop the score counts missing, traced: did each card's TAG_ARRIVE leave the board, what
    the fusion was fed for it (ordered or not) and put out, the board events and alerts that
    named its cards or its hand."""
    if not score.get("flops_missing"):
        return []
    _cards, boards, alerts = arrivals(msgs)
    out = []
    for hand, labels, last in s.flops:
        if any(set(labels) <= cs and last in times and t >= times[last] - 1 for cs, t in boards):
            continue
        cards = []
        for key in s.flop_keys[last]:
            _what, antenna, uid, _hand = s.moves[key]
            sent = [t for t, _w in frames.get((fw.T_TAG_ARRIVE, antenna, bytes.fromhex(uid)), [])
                    if key in moves and t >= moves[key]]
            cards.append({"antenna": antenna, "uid": uid, "timed": key in times,
                          "tag_arrive_left_chip_us": sent[:1],
                          "fusion": [[z, e, o, k] for _t, z, u, e, o, k in fused if u.upper() == uid.upper()][-3:]})
        out.append({"hand": hand, "labels": list(labels), "cards": cards,
                    "board_events_naming_its_cards": [sorted(cs) for cs, _t in boards if cs & set(labels)],
                    "alerts_of_its_hand": [code for h, _t, code in alerts if h == hand]})
    return out


def chip_session(broker: Broker, hands: int, files: dict[str, bytes], board: str = "", seed: int = 3,
                 wrong_every: int = 3, slow_tags: float = 0.1, minutes: float | None = None,
                 own_session: bool = True, pace: float = 1.0,
                 progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """``minutes``: deal no new hand once this many wall minutes have passed (a long run that must
    end in time still ends with its score: lost and phantom cards, flops, alerts, leaves).
    ``own_session``: the emulator in a scheduling group of its own (``ChipProcess``), so the host's
    part is not timed behind it; without, it runs faster on a shared machine.
    ``pace``: the dealer's pauses between cards and before the burn, the flop and the
    acknowledgement, times this, in chip time (0.5: a dealer twice as quick); the settles that let
    the flop and the scoop's leaves be read (0.6 chip s) stay.  Every hand still deals and scoops
    the same cards, so the board does the same work per hand (a faster dealer: more of it per
    chip second, and the collector probe, once per chip second, samples fewer times per hand)."""
    if not 0 < pace <= 1:
        raise ValueError(f"bench: the dealer's pace must be in (0, 1], not {pace}")
    from firmware_bridge.chip.realtime import ChipProcess

    say = progress or (lambda _m: None)
    rng = random.Random(seed)
    deck, uids, tmp, config = bench_table(broker, "tablectl-bench-chip-")
    # The chip's 500 ms heartbeat comes every few wall seconds here: a long timeout, and the link's
    # stall window on the chip's clock (SLOWEST chip s per wall s, below the emulator's slowest).
    serial = config.source("serial")
    config = config.model_copy(update={"serial": serial.model_copy(update={"heartbeat_timeout": 120.0,
                                                                        "device_time_scale": SLOWEST})})
    link_path = str(tmp / "ttyACM0")
    files = dict(files)
    files["boot.py"] = files.get("boot.py", b"") + PROBE
    heap_per_hand: list[dict[str, Any]] = []
    with ExitStack() as running:
        chip = ChipProcess(link_path, own_session=own_session, readers=28, mux=True, files=files, config_extra=board)
        d, rfid, sub = start_table(running, broker, config, deck, link_path, chip)
        assert rfid.bridge is not None
        probe = _Probe(d)  # the host's part stage by stage, as ``tablectl bench table --host`` has it
        running.callback(probe.restore)
        gone = time_removals(rfid)
        # The host's board window (1 s between two board cards' arrivals) on the chip's clock too:
        # at 0.1x a flop's cards, 80 ms apart on the felt, reach the host ~1 s apart.
        rfid.pipeline.fusion.board_window /= SLOWEST
        seat_players(d, rfid, 240, "the chip")
        fused = _record_fusion(rfid.pipeline.fusion)
        s = _Session(d, rfid.pipeline, chip, rng, uids, slow_tags, pause=lambda t: chip.sleep(t * pace),
                     settle=SETTLE / pace, scoop=0.02)
        t0 = time.monotonic()
        start_chip = chip.sleep(0.0)
        for n in range(hands):
            if minutes is not None and time.monotonic() - t0 > 60 * minutes:
                say(f"{minutes} minutes are up: {n} of {hands} hands dealt")
                break
            wrong = wrong_hand(n, wrong_every)
            s.hand(n, wrong_seat=wrong)
            _moves, _writes, now, wall, scratch = chip.times()
            heap_per_hand.append({"hand": n + 1, "chip_s": round(now / 1e6, 2), **_heap(scratch)})
            heap = heap_per_hand[-1]  # (in the progress too: a long run stopped early still tells)
            say(f"hand {n + 1}/{hands} dealt{' (a card to the wrong seat)' if wrong else ''}: chip at "
                f"{now / 1e6:.1f} s, {now / 1e6 / wall:.3f} chip s per wall s; longest collection "
                f"{heap['longest_collection_ms']} ms, lowest free heap {heap['lowest_free_after_a_collection_pct']} %")
        elapsed = time.monotonic() - t0
        time.sleep(1.0)
        moves, writes, now, wall, scratch = chip.times()
        msgs = sub.messages()
        health = rfid.bridge.health().to_dict()
    stages = host_stages(s, probe, _written(writes), msgs, elapsed)
    times, chip_ms = _two_part_times(s, moves, writes)
    total: dict[int, float] = {}
    out = _score(s, times, msgs, gone, (0.0, 0.0, []), elapsed, health, per_key=total)
    for k in ("while_the_model_kept_up", "firmware_max_lag_ms", "firmware_lagging_over_5ms_pct"):
        out.pop(k, None)
    hole_keys = [key for _h, _seat, key in s.hole]
    wrong_keys = [key for _h, key in s.wrong]
    flop_keys = [key for _h, _labels, key in s.flops]
    out["landing_to_tag_arrive_ms"] = {  # the chip's part alone: landing -> the frame leaves its USB
        "hole_expected_by_the_host": _summary([chip_ms[k] for k in hole_keys if k in chip_ms]),
        "flop_third_card_to_the_last_frame": _summary([chip_ms[k] for k in flop_keys if k in chip_ms]),
        "wrong_seat_no_hint": _summary([chip_ms[k] for k in wrong_keys if k in chip_ms]),
    }
    # The host's part alone (wall time): the frame on the pty -> the subscriber, on this loaded machine.
    out["host_part_ms"] = {
        name: _summary([total[k] - chip_ms[k] for k in keys if k in total and k in chip_ms])
        for name, keys in (("hole", hole_keys), ("flop", flop_keys), ("wrong_seat_alert", wrong_keys))
    }
    out["host_part_stages_ms"] = {name: {"n": stages[name]["end_to_end_ms"]["n"], **stages[name]["stages_ms"],
                                         "while_an_equity_ran": stages[name]["while_an_equity_ran_ms"]}
                                  for name in ("hole", "flop", "wrong_seat_alert")}
    out["link_counters"] = {k: v for k, v in health.get("counters", {}).items() if k in LINK_COUNTERS}
    out["flops_missing_why"] = _missing_flops(s, out, times, msgs, fused, frames=_frames(writes), moves=moves)
    out["dealer_pace"] = pace
    if pace != 1:
        out["dealer_pace_note"] = (
            f"the dealer's pauses x{pace} in chip time (pitch, before the burn and the flop, the flop's "
            f"spread, the acknowledgement, the scoop); the {SETTLE} chip s settles stay: the same cards "
            "per hand, more per chip second (latencies under a quicker dealer; the collector probe "
            "samples once per chip second, so fewer times per hand)")
    out["heap"] = _heap(scratch)
    out["heap_after_each_hand"] = heap_per_hand
    out["hands_dealt"] = len(heap_per_hand)
    out["hands_asked"] = hands
    out["chip_seconds"] = round((now - start_chip) / 1e6, 2)
    out["emulator_speed"] = round(now / 1e6 / wall, 3) if wall else None
    return out


def run_bench(hands: int = 3, files: dict[str, bytes] | None = None, fw_dir: str | Path | None = None,
              compiled: bool = False, board: str = "", seed: int = 3, minutes: float | None = None,
              session_only: bool = False, own_session: bool = True, pace: float = 1.0,
              progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The chip's micro-measures (``firmware_bridge.chip.bench``: boot, scan cycle, no-hint arrivals,
    collector; not with ``session_only``) and then the dealt session through the daemon (``minutes``:
    no new hand after that many wall minutes)."""
    from firmware_bridge.chip.bench import run_chip_bench
    from firmware_bridge.chip.harness import FIRMWARE_DIR, firmware_files

    say = progress or (lambda _m: None)
    if session_only:
        out: dict[str, Any] = {"bench": "table --chip (the session only)", "firmware": str(fw_dir or FIRMWARE_DIR),
                               "precompiled_mpy": compiled, "board_config": board}
    else:
        out = run_chip_bench(fw_dir=fw_dir, compiled=compiled, board=board, progress=progress, seed=seed)
    if files is None:
        files = firmware_files(Path(fw_dir) if fw_dir else FIRMWARE_DIR, compiled=compiled)
    if hands <= 0:
        return out
    with Broker.start() as broker:
        say(f"session: {hands} hands through the daemon on 28 readers behind the decoders (chip-paced)")
        out["session"] = chip_session(broker, hands, files, board=board, seed=seed, minutes=minutes,
                                      own_session=own_session, pace=pace, progress=progress)
        out["session"]["emulator_in_a_scheduling_group_of_its_own"] = own_session
    return out
