"""``tablectl bench budget``: what the daemon costs a Raspberry Pi, with the camera off and on.

The real daemon (the journal on disk, the engine, the publisher, paho and a real Mosquitto,
the antenna emulator over a pty, and with the camera on the camera source with the stock
recogniser) runs in a process of its own, so the CPU seconds (utime + stime, /proc) and the
resident memory measured are its alone: its process and, with the camera on, the recogniser's
process it starts (:mod:`vision.recognition_worker`), summed.  The emulator, the dealer and a display (a subscriber
to ``event/card``) each run in another process.  The dealer plays dealer_sim's legal hold'em
hands through :class:`~firmware_bridge.table_sim.TableSim` (tags placed and lifted on the
antennas, the console's actions) at two paces:

* **live**: a live dealer, about 30 hands an hour (docs/scale.md): 4.5 s between moves;
* **shuffler**: a table with an automatic shuffler, about 91 hands an hour: 1.5 s a move.

The camera sees the board face up and seats 1-2 face down, as the demo's does.  Its frames
(1280x720) of what lies on the table are drawn before the run (``vision.synth``) and handed to
the daemon as JPEG, decoded at each grab as OpenCV decodes a USB camera's MJPEG: drawing the
scene is not the daemon's cost; decoding and recognising it are.

Card latency (the emulator's TAG_ARRIVE frame to the display's ``event/card``) is measured in
the same runs, so the camera-on figure is the table's latency while the camera runs.

What a Pi makes of it: this machine's single-core speed against a Pi's by one published
integer benchmark (sysbench 1.0.20 ``cpu``, one thread; :data:`PI_SYSBENCH`), this machine's
figure measured in the same run as events per CPU second (so other load on the machine does not
lower it).  An integer benchmark is a proxy: Python's interpreter leans more on caches and
memory than a prime sieve does, so the Pi figures are estimates, not measurements on a Pi.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.bench.latency import (
    EmulatorProcess,
    _ChildProcess,
    _summary,
    rfid_source,
    serve_subscriber,
    subscribed_client,
)
from controller.service import OutputKind

#: Seconds between the dealer's moves.
PACES = {"live": 4.5, "shuffler": 1.5}
#: sysbench 1.0.20 ``cpu --threads=1`` (primes to 10000), events/s, from
#: https://leoncode.co.uk/articles/raspberry-pi-benchmarks ("Raspberry Pi CPU Benchmarks").  It
#: lists no Zero 2 W: its figure is the Pi 3B+'s (the same Cortex-A53 core at 1.4 GHz) scaled to
#: the Zero 2 W's 1.0 GHz, an estimate.
PI_SYSBENCH = {"zero2w": round(687.45 * 1.0 / 1.4, 2), "pi4": 1477.83, "pi5": 2737.49}
PI_SOURCE = ("sysbench 1.0.20 cpu --threads=1, events/s: Pi 4 1477.83, Pi 5 2737.49, Pi 3B+ 687.45 "
             "(leoncode.co.uk/articles/raspberry-pi-benchmarks); Zero 2 W = the 3B+'s x 1.0/1.4 GHz (estimate)")
#: The issue's goals, in one Pi 4 core and MB resident.
GOALS = {"camera_off": {"pi4_core_share": 0.05, "rss_mb": 120}, "camera_on": {"pi4_core_share": 0.60, "rss_mb": 200}}
CONSOLE_KINDS = frozenset({"act", "discard", "report", "expose"})
UNGATED = frozenset({"muck"})


# ---------------------------------------------------------------------- the daemon's process
def _daemon_main(conn, settings: dict[str, Any], link: str, camera: bool) -> None:
    from controller.app.config import validate_config
    from controller.app.daemon import Daemon
    from controller.rules.decks import DeckRegistry
    from controller.rules.events import Acknowledge, EndHand
    from controller.service import Rejected
    from firmware_bridge.table_sim import enroll_deck

    frames: dict[str, bytes] = {}
    shown = {"key": ""}
    backends: dict[str, Any] = {"serial": link}
    if camera:
        import cv2
        import numpy as np

        from hw.camera.fake import FakeCamera

        def grab() -> Any:
            data = frames.get(shown["key"])
            return None if data is None else cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)

        backends["camera"] = lambda: FakeCamera(grab)
    daemon = Daemon(validate_config(settings), registry=DeckRegistry([enroll_deck("A", seed=0)]), backends=backends)
    rfid: Counter[str] = Counter()
    arrivals: list[tuple[int | None, int, float]] = []

    def count_rfid(event: Any, source: str) -> None:
        if source == "rfid" and event.kind not in UNGATED:
            rfid["posted"] += 1

    daemon.applied.append(count_rfid)
    daemon.start()
    serial = rfid_source(daemon)
    assert serial.bridge is not None
    feed = serial.pipeline.feed

    def note_arrival(change: Any) -> None:
        if change.arrived:
            arrivals.append((change.seq, change.antenna, time.monotonic()))
        feed(change)

    serial.pipeline.feed = note_arrival  # type: ignore[method-assign]  # the bench times each arrival
    serial.bridge.wait_synced(10)
    conn.send("ready")
    while True:
        cmd, *args = conn.recv()
        if cmd == "frames":
            frames.update(args[0])
        elif cmd == "view":
            shown["key"] = args[0]
        elif cmd == "submit":
            try:
                conn.send(("ok", sum(1 for o in daemon.submit(args[0], source=args[1]) if o.kind == OutputKind.ALERT)))
            except Rejected as exc:
                conn.send(("rejected", str(exc)))
        elif cmd == "hand_start":
            rfid["hand_start"] = rfid["posted"]
            conn.send(len(daemon.service.alerts) if daemon.service else 0)
        elif cmd == "settle":  # the antennas' reports of args[0] cards reached the engine
            deadline = time.monotonic() + args[1]
            while time.monotonic() < deadline:
                if rfid["posted"] - rfid["hand_start"] >= args[0] and daemon.inbox.empty():
                    break
                time.sleep(0.02)
            conn.send("settled")
        elif cmd == "finish_hand":  # the dealer pushes the pot; alerts raised, then acknowledged
            svc = daemon.service
            if svc is not None and svc.engine is not None and not svc.engine.over:
                daemon.submit(EndHand(), source="console")
            raised = [a.payload()["reason"] for a in list(svc.alerts)[args[0]:]] if svc else []
            while svc is not None and svc.alerts:
                daemon.submit(Acknowledge())
            conn.send(raised)
        elif cmd == "camera":
            cam = daemon.sources.get("camera")
            conn.send(getattr(getattr(cam, "camera", None), "grabs", 0))
        elif cmd == "arrivals":
            conn.send(list(arrivals))
        elif cmd == "stop":
            daemon.stop()
            conn.send("bye")
            return


class DaemonProcess(_ChildProcess):
    what = "daemon"

    def __init__(self, settings: dict[str, Any], link: str, camera: bool) -> None:
        super().__init__(_daemon_main, settings, link, camera)

    def call(self, *cmd: Any, timeout: float = 60.0) -> Any:
        self.conn.send(cmd)
        if not self.conn.poll(timeout):
            raise RuntimeError(f"bench budget: the daemon did not answer {cmd[0]}")
        return self.conn.recv()

    def tell(self, *cmd: Any) -> None:
        self.conn.send(cmd)

    def stop(self) -> None:
        try:
            self.call("stop", timeout=30)
        finally:
            self.proc.join(10)
            if self.proc.is_alive():
                self.proc.kill()


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of a process (its threads included), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (the camera's recogniser runs in a child of the daemon: its CPU and
    memory are the daemon's cost too)."""
    out, i = [pid], 0
    while i < len(out):
        for task in Path(f"/proc/{out[i]}/task").glob("*"):
            try:
                out += [int(c) for c in (task / "children").read_text().split()]
            except OSError:  # a thread or process that ended meanwhile
                pass
        i += 1
    return out


def tree_cpu_seconds(pids: list[int]) -> float:
    """utime + stime of these processes (those still running)."""
    total = 0.0
    for pid in pids:
        try:
            total += proc_cpu_seconds(pid)
        except OSError:
            pass
    return total


def tree_memory_mb(pids: list[int]) -> dict[str, float]:
    """The processes' resident memory summed (now and their peaks): shared library pages are
    counted once per process, so this is an upper bound of what they hold together."""
    figures = [proc_memory_mb(pid) for pid in pids]
    out = {key: round(sum(f[key] for f in figures), 1) for key in ("rss_mb", "peak_rss_mb")}
    out["pss_mb"] = round(sum(proc_pss_mb(pid) for pid in pids), 1)
    return out


def proc_pss_mb(pid: int) -> float:
    """Proportional set size now, MB: each shared page divided among the processes that map it, so
    the sum over processes is what they hold together (Linux's smaps_rollup)."""
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def proc_memory_mb(pid: int) -> dict[str, float]:
    """Resident memory now (VmRSS) and at its peak (VmHWM), MB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = round(int(value.split()[0]) / 1024, 1)
    return {"rss_mb": out.get("VmRSS", 0.0), "peak_rss_mb": out.get("VmHWM", 0.0)}


# ---------------------------------------------------------------------- the display's process
class CardSubscriber(_ChildProcess):
    """A display in its own process: the seat of each ``event/card`` and when it arrived (a
    face-down card's identity is not in it)."""

    what = "subscriber"

    def __init__(self, host: str, port: int, topic: str) -> None:
        super().__init__(_subscriber_main, host, port, topic)

    def received(self) -> list[tuple[int, float]]:
        self.conn.send(("results",))
        return list(self.conn.recv())


def _subscriber_main(conn, host: str, port: int, topic: str) -> None:
    import json

    got: list[tuple[int, float]] = []

    def on_message(c, u, m) -> None:
        now = time.monotonic()
        try:
            got.append((int(json.loads(m.payload)["seat"]), now))
        except (ValueError, KeyError, TypeError):
            pass

    serve_subscriber(conn, subscribed_client(host, port, topic, "budget-sub", on_message), got)


# ---------------------------------------------------------------------- the dealer
class _Table:
    """The hands to deal, their plans, and the camera's view of the table as the dealer moves."""

    def __init__(self, hands: int, seed: int) -> None:
        from controller.sim import dealer as dealer_sim
        from firmware_bridge.table_sim import TableLayout, TableSim, enroll_deck

        rng = random.Random(seed)
        self.deck = enroll_deck("A", seed=0)
        self.layout = TableLayout.for_games(["holdem"], seats=9)  # the package's nine seats
        sim = TableSim(self.layout, self.deck)
        self.plans: list[Any] = []
        while len(self.plans) < hands:
            try:
                self.plans.append(sim.plan(dealer_sim.legal_hand(rng, game="holdem", chips=True)))
            except (KeyError, ValueError):  # e.g. a tenth seat: not on this table
                continue
        self.card_of = {uid.upper(): card for uid, card in self.deck.tags.items()}
        self.slot_of = {a: f"board/{s.index}" if s.zone.kind == "board" else f"seat:{s.zone.seat}/{s.index}"
                        for a, s in self.layout.zone_map.antennas.items()
                        if s.zone.kind == "board" or (s.zone.kind == "seat" and s.zone.seat in (1, 2) and s.index < 2)}

    @staticmethod
    def hexuid(uid: Any) -> str:
        return (uid.hex() if isinstance(uid, bytes) else str(uid)).upper()

    def view_key(self, lying: dict[int, str]) -> str:
        return "|".join(sorted(f"{self.slot_of[a]}={self.card_of[u].label()}" for a, u in lying.items()
                               if a in self.slot_of and u in self.card_of))

    def views(self) -> set[str]:
        """Every view the camera will see while the plans are dealt."""
        from firmware_bridge.table_sim import Movement

        keys = {""}
        lying: dict[int, str] = {}
        for plan in self.plans:
            for action in plan.actions:
                if isinstance(action, Movement):
                    self.move(lying, action)
                    keys.add(self.view_key(lying))
        return keys

    def move(self, lying: dict[int, str], action: Any) -> None:
        for antenna, _uid in action.removes:
            lying.pop(antenna, None)
        for antenna, uid in action.places:
            lying[antenna] = self.hexuid(uid)

    def render(self, keys: set[str], seed: int) -> dict[str, bytes]:
        """The camera's frames of these views, as the JPEG a USB camera sends."""
        import cv2

        from controller.rules.cards import Card
        from vision.synth import SyntheticCamera

        cam = SyntheticCamera(seed=seed)
        out = {}
        for key in keys:
            view: dict[str, Any] = {}
            for item in filter(None, key.split("|")):
                slot, label = item.split("=")
                card = Card.parse(label)
                view[slot] = card if slot.startswith("board") else (card, "down")
            ok, jpeg = cv2.imencode(".jpg", cam.frame(view).bgr, [cv2.IMWRITE_JPEG_QUALITY, 90])
            out[key] = jpeg.tobytes()
        return out


def _deal(table: _Table, plans: list, daemon: DaemonProcess, emu: EmulatorProcess, pace: float,
          camera: bool) -> dict[str, Any]:
    from controller.rules.events import ChangeGame, SeatPlayer, StartHand, UnseatPlayer
    from firmware_bridge.table_sim import Console as ConsoleStep
    from firmware_bridge.table_sim import Movement

    seated: set[int] = set()
    lying: dict[int, str] = {}
    cards = 0
    alerts: list[str] = []
    for plan in plans:
        setup = plan.setup
        for seat in sorted(seated - set(setup.seats)):
            daemon.call("submit", UnseatPlayer(seat), "console")
        for seat in sorted(set(setup.seats) - seated):
            daemon.call("submit", SeatPlayer(seat, f"Player {seat}"), "console")
        seated = set(setup.seats)
        daemon.call("submit", ChangeGame(setup.game, setup.rules, setup.structure, setup.event), "console")
        daemon.call("submit", StartHand(setup), "demo")
        before = daemon.call("hand_start")
        for action in plan.actions:
            time.sleep(pace)
            if isinstance(action, Movement):
                for antenna, uid in action.removes:
                    emu.remove(antenna, table.hexuid(uid))
                for antenna, uid in action.places:
                    emu.place(antenna, table.hexuid(uid))
                cards += len(action.places)
                table.move(lying, action)
                if camera:
                    daemon.tell("view", table.view_key(lying))
            elif isinstance(action, ConsoleStep):
                daemon.call("settle", sum(1 for e in plan.expected[: action.index]
                                          if e.kind not in CONSOLE_KINDS | UNGATED), 5.0)
                daemon.call("submit", action.event, "console")  # a rejected step changes nothing
        time.sleep(max(pace, 0.5))
        alerts += daemon.call("finish_hand", before)
    return {"cards": cards, "alerts": alerts}


def _latency(table: _Table, arrivals: list[tuple[int | None, int, float]], written: list[tuple[int, float]],
             received: list[tuple[int, float]]) -> dict[str, Any]:
    """Each ``event/card`` against the TAG_ARRIVE frame of the latest arrival at its seat before
    it (the dealer goes round the table between a seat's two cards, seconds apart).  An arrival's
    frame is the last one written with its number before the daemon took it: a reader the daemon
    reboots (its heartbeat missed) numbers its frames from 0 again.  Arrivals found by an
    inventory after a reset have no frame and are not timed."""
    by_seat: dict[int, list[tuple[float, float | None]]] = {}
    for seq, antenna, taken in arrivals:
        zone = table.layout.zone_of(antenna)
        if zone.kind == "seat" and zone.seat is not None:
            frame = max((t for s, t in written if s == seq and t <= taken), default=None) if seq is not None else None
            by_seat.setdefault(zone.seat, []).append((taken, frame))
    ms = []
    for seat, t in received:
        before = [a for a in by_seat.get(seat, ()) if a[0] <= t]
        if before:
            frame = max(before)[1]
            if frame is not None:
                ms.append((t - frame) * 1000)
    return _summary(ms)


def _one_run(table: _Table, broker: Any, camera: bool, pace_name: str, plans: list, frames: dict[str, bytes],
             fps: float, tmp: Path) -> dict[str, Any]:
    from controller.mqtt.contract import Topics

    pace = PACES[pace_name]
    tag = f"{'cam' if camera else 'nocam'}-{pace_name}"
    journal = tmp / f"journal-{tag}.sqlite"
    link = str(tmp / f"tty-{tag}")
    settings = packaged_config(journal=journal, link=link, mqtt_url=f"mqtt://127.0.0.1:{broker.port}",
                               camera=camera, fps=fps)
    emu = EmulatorProcess(link, table.layout.antenna_count, settings={})
    daemon = sub = None
    try:
        daemon = DaemonProcess(settings, link, camera)
        if camera:
            daemon.tell("frames", frames)
            daemon.tell("view", "")
        sub = CardSubscriber(broker.host, broker.port, Topics("poker", "budget").event("card"))
        time.sleep(1.0)
        last_seq, file_before = _journal_mark(journal)
        grabs0 = daemon.call("camera")
        pid = daemon.proc.pid
        assert pid is not None
        pids = process_tree(pid)  # the daemon and, with the camera on, its recogniser's process
        cpu0, t0 = tree_cpu_seconds(pids), time.monotonic()
        dealt = _deal(table, plans, daemon, emu, pace, camera)
        cpu1, t1 = tree_cpu_seconds(pids), time.monotonic()
        grabs = daemon.call("camera") - grabs0
        memory = tree_memory_mb(pids)
        memory["processes"] = len(pids)
        arrivals = daemon.call("arrivals")
        written = emu.frame_list()
        received = sub.received()
    finally:
        for part in (sub, daemon, emu):
            if part is not None:
                part.stop()
    hands = len(plans)
    cpu, wall = cpu1 - cpu0, t1 - t0
    events, row_bytes = _journal_rows(journal, last_seq)
    file_after = _journal_mark(journal)[1]
    return {
        "camera": camera, "fps": fps if camera else 0, "pace": pace_name, "seconds_between_moves": pace,
        "hands": hands, "cards": dealt["cards"], "seconds": round(wall, 1),
        "hands_per_hour": round(hands * 3600 / wall, 1),
        "frames_per_s": round(grabs / wall, 2) if camera else 0,
        "cpu_s": round(cpu, 2), "cpu_s_per_hand": round(cpu / hands, 3),
        "cpu_ms_per_card": round(cpu * 1000 / max(1, dealt["cards"]), 1),
        "host_core_share": round(cpu / wall, 4),
        **memory,
        "journal_events_per_hand": round(events / hands, 1),
        "journal_bytes_per_hand": round(row_bytes / hands),
        "journal_file_growth_per_hand": round((file_after - file_before) / hands),
        "card_latency_ms": _latency(table, arrivals, written, received),
        "alerts": dict(Counter(dealt["alerts"])),
    }


def packaged_config(journal: Path, link: str, mqtt_url: str, camera: bool, fps: float) -> dict[str, Any]:
    """The .deb's default config (systemd/debian/table.toml: nine seats, broadcast at the end of
    the hand), on this bench's link, broker and journal; no GPIO (no board here) and no web pages
    (their ports are the machine's, and an idle page server costs nothing per hand)."""
    import tomllib

    path = Path(__file__).resolve().parents[2] / "systemd" / "debian" / "table.toml"
    settings = tomllib.loads(path.read_text(encoding="utf-8"))
    settings["table"]["id"] = "budget"
    settings["serial"] |= {"enabled": True, "port": link}
    settings["gpio"]["enabled"] = False
    settings["mqtt"] = {"url": mqtt_url, "base_topic": settings["mqtt"].get("base_topic", "poker")}
    settings["journal"]["path"] = str(journal)
    settings["camera"] = {**settings.get("camera", {}), "enabled": camera, "fps": fps}
    settings["web"] = {"enabled": False}
    return settings


def _journal_mark(path: Path) -> tuple[int, int]:
    """The journal's last event and its file's size with the write-ahead log folded in (a
    checkpoint from here: SQLite lets a second connection do it while the daemon writes)."""
    import sqlite3

    con = sqlite3.connect(path)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        last = con.execute("SELECT ifnull(max(seq), 0) FROM events").fetchone()[0]
    finally:
        con.close()
    return int(last), path.stat().st_size


def _journal_rows(path: Path, after: int) -> tuple[int, int]:
    """Events journaled after ``after`` and their bytes (every column; the hands' index rows too)."""
    import sqlite3

    con = sqlite3.connect(path)
    try:
        n, size = con.execute("SELECT count(*), ifnull(sum(length(data) + length(kind) + length(source) "
                              "+ ifnull(length(hash), 0) + 16), 0) FROM events WHERE seq > ?", (after,)).fetchone()
        hands = con.execute("SELECT ifnull(sum(length(setup) + length(outcome) + 24), 0) FROM hands "
                            "WHERE first_seq > ?", (after,)).fetchone()[0]
    finally:
        con.close()
    return int(n), int(size) + int(hands)


def host_sysbench(seconds: int = 10) -> dict[str, Any]:
    """sysbench's one-thread ``cpu`` test here, as events per CPU second of its thread (so a
    loaded machine does not lower it), or why it was not run."""
    if shutil.which("sysbench") is None:
        return {"error": "sysbench is not installed (apt-get install sysbench): no Pi estimate"}
    before = os.times()
    out = subprocess.run(["sysbench", "cpu", "--threads=1", f"--time={seconds}", "run"], capture_output=True,
                         text=True, check=True).stdout
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    events = int(re.search(r"total number of events:\s+(\d+)", out).group(1))  # type: ignore[union-attr]
    return {"events": events, "cpu_s": round(cpu, 2), "events_per_cpu_s": round(events / cpu, 1)}


def run_bench(hands: int = 2, live_hands: int = 1, fps: float = 10.0, seed: int = 1,
              progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """``hands`` hands at the shuffler's pace and ``live_hands`` at a live dealer's, camera off
    and on (the same hands), each run on a daemon of its own."""
    from controller.mqtt.broker import Broker

    say = progress or (lambda _msg: None)
    table = _Table(hands + live_hands, seed)
    by_pace = {"live": table.plans[:live_hands], "shuffler": table.plans[live_hands:]}
    say("the camera's frames of the hands (drawn before the runs: not the daemon's cost)")
    frames = table.render(table.views(), seed)
    say("sysbench on this machine (the Pi estimate's ratio)")
    host = host_sysbench()
    tmp = Path(tempfile.mkdtemp(prefix="tablectl-budget-"))
    runs = []
    with Broker.start() as broker:
        for camera in (False, True):
            for pace_name, plans in by_pace.items():
                if plans:
                    say(f"camera {'on' if camera else 'off'}, {pace_name} pace: {len(plans)} hands")
                    runs.append(_one_run(table, broker, camera, pace_name, plans, frames, fps, tmp))
    shutil.rmtree(tmp, ignore_errors=True)
    for run in runs:  # the camera's own cost per frame, beside the same pace without it
        off = next((r for r in runs if not r["camera"] and r["pace"] == run["pace"]), None)
        if run["camera"] and off is not None and run["frames_per_s"]:
            per_frame = (run["host_core_share"] - off["host_core_share"]) / run["frames_per_s"]
            run["cpu_ms_per_frame"] = round(per_frame * 1000, 1)
            run["host_core_share_at_fps"] = round(off["host_core_share"] + per_frame * fps, 4)
    rate = host.get("events_per_cpu_s")
    for run in runs:
        if rate:
            for key, share in (("pi_core_share", run["host_core_share"]),
                               ("pi_core_share_at_fps", run.get("host_core_share_at_fps"))):
                if share is not None:
                    run[key] = {pi: round(share * rate / score, 3) for pi, score in PI_SYSBENCH.items()}
    goals = {}
    for name, camera in (("camera_off", False), ("camera_on", True)):
        live = next((r for r in runs if r["camera"] is camera and r["pace"] == "live"), None)
        if live is None:
            continue
        goal = GOALS[name]
        pi4 = live.get("pi_core_share_at_fps" if camera else "pi_core_share", {}).get("pi4")
        peak = max(r["peak_rss_mb"] for r in runs if r["camera"] is camera)
        goals[name] = {"pi4_core_share_live": pi4, "goal_pi4_core_share": goal["pi4_core_share"],
                       "met_cpu": None if pi4 is None else pi4 < goal["pi4_core_share"],
                       "peak_rss_mb": peak, "goal_rss_mb": goal["rss_mb"], "met_rss": peak < goal["rss_mb"]}
    return {
        "bench": "budget",
        "host": {"cpu": _cpu_model(), "sysbench": host},
        "pi_sysbench_events_per_s": PI_SYSBENCH,
        "pi_source": PI_SOURCE,
        "runs": runs,
        "goals": goals,
        "note": "the daemon alone (its own process and, camera on, its recogniser's process, summed: CPU from /proc, "
                "resident memory VmRSS/VmHWM summed, an upper bound as shared libraries count once per process, and "
                "pss_mb now, shared pages divided among them; processes: how many); hold'em "
                "hands with no dealer mistake, every tag read; the camera at the configured fps over the board "
                "and seats 1-2 (frames_per_s: what it kept up here; host_core_share_at_fps: the off run's share "
                "plus cpu_ms_per_frame at the configured fps, which the goals use); pi_core_share = "
                "host_core_share x this machine's sysbench events per CPU second / the Pi's (an integer "
                "proxy: an estimate)",
    }


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"
