"""``tablectl bench table --host``: the host's part of the dealt session alone, stage by stage.

The same hold'em session as ``tablectl bench table`` (``controller.bench.table._Session``: ten
seats, hole cards pitched 0.3 s apart, a burn, the flop's three cards 80 ms apart, a card to the
wrong seat every few hands, the scoop), but the board is the protocol emulator
(``firmware_bridge.emulator``: the firmware's own ``bridge_proto.Device`` under CPython, in its own
process): a card's TAG_ARRIVE is on the pty within a scan, and every latency starts
when that frame is written.  What is measured is therefore the host alone: the pty, pyserial, the
link, zones, fusion, the engine owner, the journal, the publisher, paho, Mosquitto and a subscriber
in its own process, on this machine's load.

Each hole card, flop (its third card) and wrong-seat card is timed at each hand-over, on the
host's monotonic clock (shared by the processes), as ``stages_ms`` (p50/p99 of each stage):

* ``pty_to_link``: the frame written -> the link has it in sequence (the pty, the link thread's
  wake-up, pyserial's read, the frame decoder; a sequence gap's replay);
* ``held_by_link``: -> the link lets the presence change out to the pipeline (a stall window holds
  arrivals until the next heartbeat says their order is sure);
* ``link_to_engine``: -> the engine owner's ``TableService.submit`` starts (the owner lock, zones,
  fusion: a board group's wait shows here);
* ``journal_wait``: the journal's lock (another writer is committing: the daemon's delivered-cursor
  thread);
* ``journal``: the journal's commit (SQLite WAL, with the table's ``[journal] sync``);
* ``engine_to_publish``: the rest of ``submit`` (the engine applies) until the card's message is
  handed to :class:`controller.mqtt.link.MqttLink` (``event/card``, ``event/board``, ``alert``);
* ``publish_to_subscriber``: -> the subscriber's ``on_message`` (paho's write, Mosquitto, the
  subscriber's paho loop).

The stages of one card add up to its ``end_to_end_ms``; ``while_an_equity_ran_ms`` has the cards
whose path overlapped a live equity's computation (the preflop's, ten-handed, may still run when
the flop lands).  A card whose message did not leave on its own frame's path (a flop closed by the
board window's timer; a card held behind cards of unknown order, which the dealer is asked to
confirm and the bench never does) is counted in ``missing``; ``link_counters`` shows the stall
windows and unordered arrivals behind such holds (on a loaded machine, the emulator's own stalls).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from controller.bench.latency import EmulatorProcess, _summary, rfid_source
from controller.bench.table import _Session, arrivals, bench_table, seat_players, start_table, wrong_hand
from controller.mqtt.broker import Broker

STAGES = ("pty_to_link", "held_by_link", "link_to_engine", "journal_wait", "journal", "engine_to_publish",
          "publish_to_subscriber")
#: Not a stage: the CPU time the link thread spent on the card's frame (zones to the publisher, the
#: journal's own CPU included), against which the stages' wall time shows what is waiting.
CPU = "link_thread_cpu"
READERS = 28
#: The emulator's settings: the firmware's heartbeat (500 ms) and stall gap (100 ms: five scan
#: periods), no debounce.  Its scan period does not count (latencies start at the frame's write).
BOARD = {"scan_period_ms": 20, "debounce_ms": 0, "heartbeat_ms": 500, "tick": 0.001}


class _Board:
    """The emulator process behind the session's ``place``/``remove`` (keyed moves)."""

    def __init__(self, emu: EmulatorProcess) -> None:
        self.emu = emu

    def place(self, key: int, antenna: int, uid: str, powerup_us: int) -> None:
        self.emu.place(antenna, uid)

    def remove(self, key: int, antenna: int, uid: str) -> None:
        self.emu.remove(antenna, uid)


class _Probe:
    """Wraps the daemon's hand-overs (instance attributes only: nothing of the daemon changes) and
    notes when each card passed each one.  The link thread carries a card from the frame to the
    publisher with no hand-off, so a thread-local 'current change' ties the stages together."""

    def __init__(self, daemon: Any) -> None:
        self.local = threading.local()
        # antenna, uid, arrived, seq, when the link took the frame in order, when it let the change out
        self.changes: list[tuple[int, str, bool, int | None, float, float]] = []
        # change index -> (submit starts, the journal's lock asked for, taken, the commit returns)
        self.submits: dict[int, tuple[float, float, float, float]] = {}
        self.published: list[tuple[str, int | None, float]] = []  # topic, change index, t
        self.cpu: dict[int, float] = {}  # change index -> the link thread's CPU seconds on it
        rfid = rfid_source(daemon)
        pipeline = rfid.pipeline
        feed = pipeline.feed

        def timed_feed(change: Any) -> None:
            self.changes.append((change.antenna, change.uid, change.arrived, change.seq, change.t, time.monotonic()))
            self.local.change = index = len(self.changes) - 1
            cpu = time.thread_time()
            try:
                feed(change)
            finally:
                self.local.change = None
                self.cpu[index] = time.thread_time() - cpu

        pipeline.feed = timed_feed  # type: ignore[method-assign]
        service = daemon.service
        submit = service.submit
        journal = service.journal
        append = journal.append

        def timed_append(*a: Any, **kw: Any) -> Any:
            self.local.journal_wait = time.monotonic()
            with journal._lock:  # reentrant: the append takes it again at once
                self.local.journal_in = time.monotonic()
                try:
                    return append(*a, **kw)
                finally:
                    self.local.journal_out = time.monotonic()

        def timed_submit(*a: Any, **kw: Any) -> Any:
            start = time.monotonic()
            self.local.journal_wait = self.local.journal_in = self.local.journal_out = start
            out = submit(*a, **kw)
            index = getattr(self.local, "change", None)
            if index is not None:
                self.submits[index] = (start, self.local.journal_wait, self.local.journal_in, self.local.journal_out)
            return out

        journal.append = timed_append
        service.submit = timed_submit
        link = daemon.link
        publish = link.publish

        def timed_publish(topic: str, *a: Any, **kw: Any) -> Any:
            if topic.endswith(("/event/card", "/event/board", "/alert")):
                self.published.append((topic, getattr(self.local, "change", None), time.monotonic()))
            return publish(topic, *a, **kw)

        link.publish = timed_publish
        # When a live equity was being computed (a flop can land while the preflop's runs, in the
        # equity worker's thread of the daemon: it competes for the GIL).
        self.equity: list[tuple[float, float]] = []
        import controller.equity.worker as worker_mod

        self._patched = [(worker_mod, "equity_payload", worker_mod.equity_payload)]
        for mod, name, fn in self._patched:
            setattr(mod, name, self._timed_equity(fn))

    def _timed_equity(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*a: Any, **kw: Any) -> Any:
            t = time.monotonic()
            try:
                return fn(*a, **kw)
            finally:
                self.equity.append((t, time.monotonic()))
        return timed

    def restore(self) -> None:
        """The equity functions as they were (the daemon's own wrappers go with the daemon)."""
        for mod, name, fn in self._patched:
            setattr(mod, name, fn)


def _written_at(written: dict[int, list[float]], seq: int | None, before: float) -> float | None:
    """When the frame ``seq`` was written: its last copy before the link had it (a reset of the
    board starts its numbers again)."""
    return max((t for t in written.get(seq, ()) if t <= before), default=None) if seq is not None else None


def _stages(probe: _Probe, written: dict[int, list[float]], index: int, topic: str, got: float
            ) -> dict[str, float] | None:
    """One card's stages in ms, from its change ``index`` to the subscriber's receipt ``got``."""
    _antenna, _uid, _arrived, seq, t_in, t_link = probe.changes[index]
    t_frame = _written_at(written, seq, t_in)
    if t_frame is None or index not in probe.submits:
        return None
    t_pub = next((t for tp, i, t in probe.published if i == index and tp.endswith(topic)), None)
    if t_pub is None:
        return None
    start, j_wait, j_in, j_out = probe.submits[index]
    return {"pty_to_link": (t_in - t_frame) * 1000, "held_by_link": (t_link - t_in) * 1000,
            "link_to_engine": (start - t_link) * 1000, "journal_wait": (j_in - j_wait) * 1000,
            "journal": (j_out - j_in) * 1000, "engine_to_publish": ((t_pub - start) - (j_out - j_wait)) * 1000,
            "publish_to_subscriber": (got - t_pub) * 1000, "end_to_end": (got - t_frame) * 1000,
            "link_thread_cpu": probe.cpu.get(index, 0.0) * 1000,
            "while_an_equity_ran": float(any(a < got and b > t_frame for a, b in probe.equity))}


def host_session(broker: Broker, hands: int, seed: int = 3, wrong_every: int = 4, pace: float = 1.0,
                 progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """``pace``: the dealer's pauses times this (below 1: a faster dealer, for a quick test)."""
    say = progress or (lambda _m: None)
    rng = random.Random(seed)
    deck, uids, tmp, config = bench_table(broker, "tablectl-bench-host-")
    link_path = str(tmp / "ttyEMU")
    with ExitStack() as running:
        emu = EmulatorProcess(link_path, antennas=READERS, settings=BOARD)
        d, rfid, sub = start_table(running, broker, config, deck, link_path, emu)
        assert d.link is not None and rfid.bridge is not None
        probe = _Probe(d)
        running.callback(probe.restore)
        seat_players(d, rfid, 20, "the emulator")
        s = _Session(d, rfid.pipeline, _Board(emu), rng, uids, slow=0.0, pause=lambda t: time.sleep(t * pace))
        t0 = time.monotonic()
        for n in range(hands):
            s.hand(n, wrong_seat=wrong_hand(n, wrong_every))
            say(f"hand {n + 1}/{hands} dealt")
        elapsed = time.monotonic() - t0
        time.sleep(0.5)
        written: dict[int, list[float]] = {}
        for seq, t in emu.frame_list():
            written.setdefault(seq, []).append(t)
        msgs = sub.messages()
        counters = rfid.bridge.health().to_dict().get("counters", {})
    out = _score(s, probe, written, msgs, elapsed)
    # A stall window holds a card until the next heartbeat (its order may be in doubt): on a loaded
    # machine the host's own pauses open some (the silence is timed on the host's clock).
    out["link_counters"] = {k: v for k, v in counters.items() if k in (
        "stall_windows", "unordered_arrivals", "scan_stalls", "gaps", "corrupt_frames", "redundant_reports")}
    return out


def _change_of(probe: _Probe, antenna: int, uid: str, after: int) -> int | None:
    return next((i for i in range(after, len(probe.changes))
                 if probe.changes[i][:3] == (antenna, uid, True)), None)


def _score(s: _Session, probe: _Probe, written: dict[int, list[float]], msgs: list[tuple[str, Any, float]],
           elapsed: float) -> dict[str, Any]:
    cards, boards, alerts = arrivals(msgs)
    index_of: dict[int, int | None] = {}  # move key -> its arrival's change index
    cursor = 0
    for key in sorted(k for k, m in s.moves.items() if m[0] == "place"):
        _what, antenna, uid, _hand = s.moves[key]
        i = _change_of(probe, antenna, uid, cursor)
        index_of[key] = i
        if i is not None:
            cursor = i
    per: dict[str, list[dict[str, float]]] = {"hole": [], "flop": [], "wrong_seat_alert": []}
    missing = {"hole": 0, "flop": 0, "wrong_seat_alert": 0}

    def add(name: str, key: int, topic: str, got: float | None) -> None:
        i = index_of.get(key)
        row = None if i is None or got is None else _stages(probe, written, i, topic, got)
        if row is None:
            missing[name] += 1
        else:
            per[name].append(row)

    seen: dict[tuple[int, int], int] = {}
    for hand, seat, key in s.hole:
        k = seen.get((hand, seat), 0)
        seen[(hand, seat)] = k + 1
        got = cards.get((hand, seat), [])
        add("hole", key, "/event/card", got[k] if k < len(got) else None)
    for _hand, labels, key in s.flops:
        add("flop", key, "/event/board", next((t for cs, t in boards if set(labels) <= cs), None))
    for hand, key in s.wrong:
        add("wrong_seat_alert", key, "/alert", next((t for h, t, _ in alerts if h == hand), None))
    out: dict[str, Any] = {}
    for name, rows in per.items():
        out[name] = {"end_to_end_ms": _summary([r["end_to_end"] for r in rows]),
                     "while_an_equity_ran_ms": _summary([r["end_to_end"] for r in rows if r["while_an_equity_ran"]]),
                     "stages_ms": {st: {k: v for k, v in _summary([r[st] for r in rows]).items()
                                        if k in ("p50", "p90", "p99", "max")} for st in (*STAGES, CPU)},
                     "missing": missing[name]}
    out["hands"] = len({h for h, _, _ in s.hole} | {h for h, _ in s.wrong})
    out["seconds"] = round(elapsed, 1)
    return out


def run_bench(hands: int = 12, seed: int = 3, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    say = progress or (lambda _m: None)
    load = _load()
    with Broker.start() as broker:
        say(f"host session: {hands} hands, the protocol emulator as the board")
        session = host_session(broker, hands, seed=seed, progress=progress)
    return {
        "bench": "table --host",
        "board": "firmware_bridge.emulator (bridge_proto.Device under CPython, own process): frames at once",
        **session,
        "load_before_after": [load, _load()],
        "note": "the host's part only (the frame written on the pty -> the subscriber), wall time on this "
                "machine; stages on the host's monotonic clock; not the chip's part (`--chip`)",
    }


def _load() -> float | None:
    try:
        return round(float(Path("/proc/loadavg").read_text().split()[0]), 2)
    except (OSError, ValueError, IndexError):
        return None
