"""``tablectl bench latency``: from a frame the emulator writes to the ``event/card`` message a
subscriber receives through Mosquitto, against the bare floor measured in the same run.

* **daemon**: the real daemon (journal on disk, engine owner, publisher, paho, a real
  Mosquitto) reading the emulator over a pty; cards are pitched in dealing order, hand
  after hand, nine-handed hold'em.  Latency = subscriber receipt of the k-th card event
  minus the time the emulator wrote the TAG_ARRIVE frame of the k-th card.
* **floor**: the pty hop alone (emulator frame -> link presence change, no processing)
  plus a paho -> Mosquitto -> paho hop (QoS 1, no processing).
* **journal commit**: one SQLite WAL commit alone, paced like the cards, with each journal
  sync mode: what durability costs before any processing (the floor does not include it).

The emulator and the subscriber each run in their own process, as the microcontroller and
a display do, so neither shares the daemon's GIL.

The host's slide window (``ZoneTracker`` debounce: a tag must stay put that long before
it counts, so a pitched card skimming another seat is ignored) is a deliberate wait, not
processing: the daemon is measured with the production window and with it at zero, and
both are reported.
"""

from __future__ import annotations

import contextlib
import functools
import random
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.demo.config import demo_config
from controller.mqtt.broker import Broker
from controller.rules.cards import standard_deck
from controller.rules.decks import Deck, DeckRegistry
from controller.rules.events import EndHand, NewHand, SeatPlayer, SetButton
from firmware_bridge.source import RfidSource

#: Seconds between two cards, for the daemon and for both floors alike: an idle machine wakes
#: up more slowly than a busy one, so the floor must be measured at the daemon's own pace.
CARD_PACE = 0.02
#: Samples for everything but the headline daemon run (the floors' medians settle long before).
SIDE_SAMPLES = 3000


class _ChildProcess:
    """A helper process driven over a pipe (spawned: it shares nothing with the daemon, GIL
    included).  ``main(conn, *args)`` answers "ready" once up and returns on ("stop",)."""

    what = "helper"

    def __init__(self, main: Callable[..., None], *args: Any) -> None:
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=main, args=(child, *args), daemon=True)
        self.proc.start()
        if not self.conn.poll(20) or self.conn.recv() != "ready":
            raise RuntimeError(f"bench: the {self.what} process did not start")

    def stop(self) -> None:
        try:
            self.conn.send(("stop",))
            self.conn.poll(5)
        finally:
            self.proc.join(5)
            if self.proc.is_alive():
                self.proc.kill()


class EmulatorProcess(_ChildProcess):
    """The emulator in its own process, as the real microcontroller is.  Frame write times
    come back at the end (CLOCK_MONOTONIC is system-wide)."""

    what = "emulator"

    def __init__(self, link_path: str, antennas: int = 27, settings: dict[str, Any] | None = None) -> None:
        super().__init__(_emulator_main, link_path, antennas, settings)

    def place(self, antenna: int, uid: str) -> None:
        self.conn.send(("place", antenna, uid))

    def remove(self, antenna: int, uid: str) -> None:
        self.conn.send(("remove", antenna, uid))

    def frames(self) -> dict[int, float]:
        return dict(self.frame_list())

    def frame_list(self) -> list[tuple[int, float]]:
        """Every frame's number and write time, in order (numbers restart when the reader resets)."""
        self.conn.send(("frames",))
        return list(self.conn.recv())


def subscribed_client(host: str, port: int, topic: str | list[tuple[str, int]], client_id: str,
                      on_message: Callable[..., None]) -> Any:
    """A paho client (MQTT v5) subscribed to ``topic`` at QoS 1 (or to a list of ``(topic, qos)``),
    its loop running: the benches' subscribers in their own processes."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    subscribed = threading.Event()
    sub = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5, client_id=client_id)
    sub.on_message = on_message
    sub.on_subscribe = lambda *a: subscribed.set()
    sub.connect(host, port)
    sub.loop_start()
    sub.subscribe(topic, qos=1)
    subscribed.wait(10)
    return sub


def serve_subscriber(conn: Any, sub: Any, got: list[Any], lock: Any = None,
                     other: Callable[[tuple[Any, ...]], None] | None = None) -> None:
    """A bench subscriber's command loop, in its own process: says ``ready``, answers ``("results",)``
    with what ``got`` holds (under ``lock``), and on ``("stop",)`` disconnects ``sub`` and says
    ``bye``; any other command goes to ``other``."""
    guard = lock if lock is not None else contextlib.nullcontext()
    conn.send("ready")
    while True:
        cmd = conn.recv()
        if cmd[0] == "results":
            with guard:
                conn.send(list(got))
        elif cmd[0] == "stop":
            sub.disconnect()
            sub.loop_stop()
            conn.send("bye")
            return
        elif other is not None:
            other(cmd)


def _longer_than(items: Any, n: int) -> bool:
    return len(items) > n


def rfid_source(daemon: Any) -> RfidSource:
    """The daemon's antenna source: the benches reach into its pipeline and its bridge."""
    src = daemon.sources["serial"]
    assert isinstance(src, RfidSource), src
    return src


def _emulator_main(conn, link_path: str, antennas: int, settings: dict[str, Any] | None = None) -> None:
    """``settings``: the Emulator's own (the firmware's defaults with ``{}``); None: a fast scan
    for the latency floor."""
    from firmware_bridge.emulator import Emulator

    frames: list[tuple[int, float]] = []
    if settings is None:
        settings = {"scan_period_ms": 2, "debounce_ms": 0, "heartbeat_ms": 200, "tick": 0.0005}
    emu = Emulator(antennas, **settings, on_frame=lambda seq, t: frames.append((seq, t)), link_path=link_path).start()
    conn.send("ready")
    while True:
        cmd = conn.recv()
        if cmd[0] == "place":
            emu.place(cmd[1], cmd[2])
        elif cmd[0] == "remove":
            emu.remove(cmd[1], cmd[2])
        elif cmd[0] == "frames":
            conn.send(list(frames))
        elif cmd[0] == "stop":
            emu.stop()
            conn.send("bye")
            return


def pty_floor(cards: int, pace: float = CARD_PACE) -> dict[str, Any]:
    """Emulator process -> pty -> host link presence change: no processing at all."""
    from firmware_bridge.link import BridgeLink, LinkConfig

    tmp = Path(tempfile.mkdtemp(prefix="tablectl-bench-"))
    emu = EmulatorProcess(str(tmp / "ttyEMU"))
    got: list[tuple[int | None, float]] = []
    cond = threading.Condition()

    def on_change(change) -> None:
        now = time.monotonic()
        with cond:
            if change.arrived:
                got.append((change.seq, now))
            cond.notify_all()

    try:
        with BridgeLink(str(tmp / "ttyEMU"), LinkConfig(heartbeat_timeout=5.0), on_change=on_change) as link:
            link.wait_synced(10)
            for i in range(cards):
                uid = f"04{i:06X}"
                emu.place(i % 16, uid)
                with cond:
                    cond.wait_for(functools.partial(_longer_than, got, i), 5)
                emu.remove(i % 16, uid)
                time.sleep(pace)
            written = emu.frames()
    finally:
        emu.stop()
    ms = [(t - written[seq]) * 1000 for seq, t in got if seq is not None and seq in written]
    return _summary(ms)


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def _summary(ms: list[float]) -> dict[str, Any]:
    return {"n": len(ms), "p50": _pct(ms, 0.5), "p90": _pct(ms, 0.9), "p99": _pct(ms, 0.99),
            "max": round(max(ms), 3) if ms else 0.0, "mean": round(statistics.fmean(ms), 3) if ms else 0.0}


class SubscriberProcess(_ChildProcess):
    """A subscriber in its own process, as a display is.  It notes when each message arrives
    (CLOCK_MONOTONIC is system-wide) and its payload's ``seq`` (or the payload itself when it
    is a bare number)."""

    what = "subscriber"

    def __init__(self, host: str, port: int, topic: str, client_id: str) -> None:
        super().__init__(_subscriber_main, host, port, topic, client_id)

    def wait_count(self, n: int, timeout: float = 30.0) -> int:
        self.conn.send(("wait", n, timeout))
        return int(self.conn.recv())

    def received(self) -> list[tuple[Any, float]]:
        self.conn.send(("results",))
        return list(self.conn.recv())


def _subscriber_main(conn, host: str, port: int, topic: str, client_id: str) -> None:
    import json

    got: list[tuple[Any, float]] = []
    cond = threading.Condition()

    def on_message(c, u, m) -> None:
        now = time.monotonic()
        try:
            body = json.loads(m.payload)
            key = body.get("seq") if isinstance(body, dict) else body
        except ValueError:
            key = None
        with cond:
            got.append((key, now))
            cond.notify_all()

    def wait(cmd: tuple[Any, ...]) -> None:  # ("wait", n, timeout): until n messages came
        with cond:
            cond.wait_for(functools.partial(_longer_than, got, cmd[1] - 1), cmd[2])
            conn.send(len(got))

    serve_subscriber(conn, subscribed_client(host, port, topic, client_id, on_message), got, cond, wait)


def mqtt_floor(broker: Broker, messages: int, pace: float = CARD_PACE) -> dict[str, Any]:
    """paho -> Mosquitto -> paho (the subscriber in its own process), QoS 1, one message in
    flight, no processing."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    sub = SubscriberProcess(broker.host, broker.port, "floor/#", "floor-sub")
    pub = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5, client_id="floor-pub")
    pub.connect(broker.host, broker.port)
    pub.loop_start()
    time.sleep(0.3)
    sent: dict[int, float] = {}
    try:
        for i in range(messages):
            sent[i] = time.monotonic()
            pub.publish("floor/card", str(i).encode(), qos=1)
            sub.wait_count(i + 1, 5)
            time.sleep(pace)
        got = sub.received()
    finally:
        pub.disconnect()
        pub.loop_stop()
        sub.stop()
    return _summary([(t - sent[k]) * 1000 for k, t in got if isinstance(k, int) and k in sent])


def flush_floor(folder: Path, commits: int, pace: float = CARD_PACE, sync: str = "full") -> dict[str, Any]:
    """One SQLite WAL commit (the journal's own settings) per card, paced like the cards:
    the cost of durability alone, which the bare floor does not include."""
    from controller.journal import Journal
    from controller.rules.cards import Card
    from controller.rules.events import Burn

    ms = []
    with Journal(folder / f"flush-{sync}.sqlite", sync=sync) as journal:
        for i in range(commits):
            t = time.perf_counter()
            journal.append(Burn(Card.parse("As")), at=float(i), source="bench")
            ms.append((time.perf_counter() - t) * 1000)
            time.sleep(pace)
    return _summary(ms)


def record_arrivals(pipeline: Any) -> list[int | None]:
    """The frame seq of every tag arrival the daemon's RFID pipeline takes, in order: the
    k-th card's start time is the emulator's write time of the k-th arrival's frame."""
    arrivals: list[int | None] = []
    feed = pipeline.feed

    def counting_feed(change: Any) -> None:
        if change.arrived:
            arrivals.append(change.seq)
        feed(change)

    pipeline.feed = counting_feed
    return arrivals


def daemon_latency(broker: Broker, cards: int, settle: float, pace: float = CARD_PACE, seed: int = 7,
                   sync: str = "full") -> dict[str, Any]:
    """Pitch ``cards`` cards through emulator -> daemon -> Mosquitto -> subscriber process."""
    from controller.app.daemon import Daemon
    from firmware_bridge.zones import ZoneTracker

    rng = random.Random(seed)
    deck = Deck("A")
    uids: list[str] = []
    for i, card in enumerate(standard_deck()):
        uid = f"04{i:02X}5EED"
        deck.add(uid, card)
        uids.append(uid)
    registry = DeckRegistry([deck])
    tmp = Path(tempfile.mkdtemp(prefix="tablectl-bench-"))
    config = demo_config("bench", size=9, journal=tmp / "journal.sqlite",
                         mqtt_url=f"mqtt://127.0.0.1:{broker.port}", broadcast_delay=0, journal_sync=sync)
    emu = EmulatorProcess(str(tmp / "ttyEMU"))
    d = Daemon(config, registry=registry, backends={"serial": str(tmp / "ttyEMU")})
    d.start()
    rfid = rfid_source(d)
    assert d.link is not None
    rfid.pipeline.zones = ZoneTracker(rfid.pipeline.zones.zone_map, debounce=settle)
    arrivals = record_arrivals(rfid.pipeline)
    sub = SubscriberProcess(broker.host, broker.port, d.topics.event("card"), f"bench-sub-{sync}-{settle}")
    d.link.connected_event.wait(10)
    assert rfid.bridge is not None
    rfid.bridge.wait_synced(10)
    time.sleep(0.3)
    for seat in range(1, 10):
        d.submit(SeatPlayer(seat, f"p{seat}"))
    d.submit(SetButton(9))
    zone_map = rfid.pipeline.zones.zone_map
    antenna_of = {(s.zone.seat, s.index): a for a, s in zone_map.antennas.items() if s.zone.kind == "seat"}
    pitched = 0
    t0 = time.monotonic()
    try:
        while pitched < cards:
            d.submit(NewHand())
            order = list(d.service.engine.view().order)  # type: ignore[union-attr]
            hand = rng.sample(range(52), 2 * len(order))
            placed = []
            for rnd in range(2):
                for k, seat in enumerate(order):
                    if pitched >= cards:
                        break
                    uid = uids[hand[rnd * len(order) + k]]
                    antenna = antenna_of[(seat, rnd)]
                    emu.place(antenna, uid)
                    placed.append((antenna, uid))
                    pitched += 1
                    time.sleep(pace)
            sub.wait_count(pitched, 30)
            d.submit(EndHand())
            for antenna, uid in placed:
                emu.remove(antenna, uid)
            time.sleep(max(settle, 0.01) + 0.05)
        elapsed = time.monotonic() - t0
        written = emu.frames()
        received = [t for _seq, t in sub.received()]
    finally:
        sub.stop()
        d.stop()
        emu.stop()
    lat = []
    for k, t_recv in enumerate(received[: len(arrivals)]):
        seq = arrivals[k]
        if seq is not None and seq in written:
            lat.append((t_recv - written[seq]) * 1000)
    out = _summary(lat)
    out.update({"journal_sync": sync, "settle_s": settle, "cards": pitched, "events": len(received),
                "seconds": round(elapsed, 1)})
    return out


def run_bench(cards: int = 10000, settle: float = 0.25, progress: Callable[[str], None] | None = None
              ) -> dict[str, Any]:
    say = progress or (lambda _msg: None)
    tmp = Path(tempfile.mkdtemp(prefix="tablectl-bench-"))
    with Broker.start() as broker:
        say("floor: pty hop")
        pty = pty_floor(min(cards, SIDE_SAMPLES))
        say("floor: MQTT hop")
        mqtt_hop = mqtt_floor(broker, min(cards, SIDE_SAMPLES))
        say("durability: journal commits")
        flush_full = flush_floor(tmp, min(cards, SIDE_SAMPLES), sync="full")
        flush_normal = flush_floor(tmp, min(cards, SIDE_SAMPLES), sync="normal")
        say("daemon: journal sync full")
        full = daemon_latency(broker, cards, settle=0.0, sync="full")
        say("daemon: journal sync normal")
        normal = daemon_latency(broker, min(cards, SIDE_SAMPLES), settle=0.0, sync="normal")
        say("daemon: production slide window")
        production = daemon_latency(broker, min(cards, 2000), settle=settle)
    floor_p50 = pty["p50"] + mqtt_hop["p50"]
    floor_p99 = pty["p99"] + mqtt_hop["p99"]
    durable_p50 = floor_p50 + flush_full["p50"]

    def ratio(a: float, b: float) -> float | None:
        return round(a / b, 2) if b else None

    return {
        "bench": "latency",
        "cards": cards,
        "floor": {"pty": {k: pty[k] for k in ("p50", "p90", "p99", "max")}, "mqtt": mqtt_hop,
                  "p50": round(floor_p50, 3), "p99": round(floor_p99, 3)},
        "journal_commit": {"full": flush_full, "normal": flush_normal},
        "daemon": full,
        "ratio_p50": ratio(full["p50"], floor_p50),
        "ratio_p99": ratio(full["p99"], floor_p99),
        "floor_plus_disk_flush_p50": round(durable_p50, 3),
        "ratio_p50_to_floor_plus_disk_flush": ratio(full["p50"], durable_p50),
        "daemon_journal_sync_normal": normal,
        "ratio_p50_journal_sync_normal": ratio(normal["p50"], floor_p50),
        "daemon_with_slide_window": production,
        "note": "daemon: the default journal (sync full: every event flushed to disk before it is applied, "
                "survives a power cut), slide window 0 (processing only). daemon_journal_sync_normal: "
                "events committed to the WAL before they are applied (survives kill -9, not a power cut). "
                "journal_commit: one commit alone, paced like the cards. daemon_with_slide_window: the "
                f"production {settle}s ZoneTracker window that ignores a pitched card skimming another seat",
    }
