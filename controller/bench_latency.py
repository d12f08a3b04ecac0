"""``tablectl bench latency``: from a frame the emulator writes to the ``event/card`` message a
subscriber receives through Mosquitto, against the bare floor measured in the same run.

* **daemon**: the real daemon (journal on disk, engine owner, publisher, paho, a real
  Mosquitto) reading the emulator over a pty; cards are pitched in dealing order, hand
  after hand, nine-handed hold'em.  Latency = subscriber receipt of the k-th card event
  minus the time the emulator wrote the TAG_ARRIVE frame of the k-th card.
* **floor**: the pty hop alone (emulator frame -> link presence change, no processing)
  plus a paho -> Mosquitto -> paho hop (QoS 1, no processing).

The host's slide window (``ZoneTracker`` debounce: a tag must stay put that long before
it counts, so a pitched card skimming another seat is ignored) is a deliberate wait, not
processing: the daemon is measured with the production window and with it at zero, and
both are reported.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from controller.broker import Broker
from controller.cards import standard_deck
from controller.config import Config
from controller.decks import Deck, DeckRegistry
from controller.events import EndHand, NewHand, SeatPlayer, SetButton


class EmulatorProcess:
    """The emulator in its own process, as the real microcontroller is: it must not share the
    daemon's GIL.  Frame write times come back at the end (CLOCK_MONOTONIC is system-wide)."""

    def __init__(self, link_path: str, antennas: int = 27) -> None:
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_emulator_main, args=(child, link_path, antennas), daemon=True)
        self.proc.start()
        if not self.conn.poll(20) or self.conn.recv() != "ready":
            raise RuntimeError("bench: the emulator process did not start")

    def place(self, antenna: int, uid: str) -> None:
        self.conn.send(("place", antenna, uid))

    def remove(self, antenna: int, uid: str) -> None:
        self.conn.send(("remove", antenna, uid))

    def frames(self) -> dict[int, float]:
        self.conn.send(("frames",))
        return dict(self.conn.recv())

    def stop(self) -> None:
        try:
            self.conn.send(("stop",))
            self.conn.poll(5)
        finally:
            self.proc.join(5)
            if self.proc.is_alive():
                self.proc.kill()


def _emulator_main(conn, link_path: str, antennas: int) -> None:
    from firmware_bridge.emulator import Emulator

    frames: list[tuple[int, float]] = []
    emu = Emulator(antennas, scan_period_ms=2, debounce_ms=0, heartbeat_ms=200, tick=0.0005,
                   on_frame=lambda seq, t: frames.append((seq, t)), link_path=link_path).start()
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


def pty_floor(cards: int, pace: float = 0.005) -> dict[str, Any]:
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
                    cond.wait_for(lambda n=i: len(got) > n, 5)
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


def mqtt_floor(broker: Broker, messages: int) -> dict[str, Any]:
    """paho -> Mosquitto -> paho, QoS 1, one message in flight, no processing."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    got = threading.Condition()
    sent: dict[int, float] = {}
    lat: list[float] = []

    def on_message(c, u, m) -> None:
        now = time.monotonic()
        i = int(m.payload)
        with got:
            lat.append((now - sent[i]) * 1000)
            got.notify_all()

    sub = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5, client_id="floor-sub")
    pub = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5, client_id="floor-pub")
    sub.on_message = on_message
    for c in (sub, pub):
        c.connect(broker.host, broker.port)
        c.loop_start()
    sub.subscribe("floor/#", qos=1)
    time.sleep(0.3)
    for i in range(messages):
        sent[i] = time.monotonic()
        pub.publish("floor/card", str(i).encode(), qos=1)
        with got:
            got.wait_for(lambda i=i: len(lat) > i, 5)
    for c in (sub, pub):
        c.disconnect()
        c.loop_stop()
    return _summary(lat)


def daemon_latency(broker: Broker, cards: int, settle: float, pace: float = 0.02, seed: int = 7) -> dict[str, Any]:
    """Pitch ``cards`` cards through emulator -> daemon -> Mosquitto -> subscriber."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    from controller.daemon import Daemon
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
    config = Config.default_demo("bench", size=9, journal=tmp / "journal.sqlite",
                                 mqtt_url=f"mqtt://127.0.0.1:{broker.port}", broadcast_delay=0)
    arrivals: list[int] = []
    received: list[float] = []
    cond = threading.Condition()
    emu = EmulatorProcess(str(tmp / "ttyEMU"))
    d = Daemon(config, registry=registry, serial_url=str(tmp / "ttyEMU"))
    d.start()
    assert d.pipeline is not None and d.link is not None and d.bridge is not None
    d.pipeline.zones = ZoneTracker(d.pipeline.zones.zone_map, debounce=settle)
    original_feed = d.pipeline.feed

    def feed(change) -> None:
        if change.arrived:
            arrivals.append(change.seq)
        original_feed(change)

    d.pipeline.feed = feed  # type: ignore[method-assign]

    def on_message(c, u, m) -> None:
        now = time.monotonic()
        with cond:
            received.append(now)
            cond.notify_all()

    sub = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5, client_id="bench-sub")
    sub.on_message = on_message
    sub.connect(broker.host, broker.port)
    sub.loop_start()
    sub.subscribe(d.topics.event("card"), qos=1)
    d.link.connected_event.wait(10)
    d.bridge.wait_synced(10)
    time.sleep(0.3)
    for seat in range(1, 10):
        d.submit(SeatPlayer(seat, f"p{seat}"))
    d.submit(SetButton(9))
    zone_map = d.pipeline.zones.zone_map
    antenna_of = {(s.zone.seat, s.index): a for a, s in zone_map.antennas.items() if s.zone.kind == "seat"}
    pitched = 0
    t0 = time.monotonic()
    while pitched < cards:
        d.submit(NewHand())
        order = list(d.service.engine.order)  # type: ignore[union-attr]
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
        with cond:
            cond.wait_for(lambda n=pitched: len(received) >= n, 30)
        d.submit(EndHand())
        for antenna, uid in placed:
            emu.remove(antenna, uid)
        time.sleep(max(settle, 0.01) + 0.05)
    elapsed = time.monotonic() - t0
    written = emu.frames()
    lat = []
    for k, t_recv in enumerate(received[: len(arrivals)]):
        seq = arrivals[k]
        if seq is not None and seq in written:
            lat.append((t_recv - written[seq]) * 1000)
    sub.loop_stop()
    sub.disconnect()
    d.stop()
    emu.stop()
    out = _summary(lat)
    out.update({"settle_s": settle, "cards": pitched, "events": len(received), "seconds": round(elapsed, 1)})
    return out


def run_bench(cards: int = 10000, settle: float = 0.25) -> dict[str, Any]:
    with Broker.start() as broker:
        pty = pty_floor(cards)
        mqtt_hop = mqtt_floor(broker, cards)
        fast = daemon_latency(broker, cards, settle=0.0)
        production = daemon_latency(broker, min(cards, 2000), settle=settle)
    floor_p50 = pty["p50"] + mqtt_hop["p50"]
    floor_p99 = pty["p99"] + mqtt_hop["p99"]
    return {
        "bench": "latency",
        "cards": cards,
        "floor": {"pty": {k: pty[k] for k in ("p50", "p90", "p99", "max")}, "mqtt": mqtt_hop,
                  "p50": round(floor_p50, 3), "p99": round(floor_p99, 3)},
        "daemon": fast,
        "ratio_p50": round(fast["p50"] / floor_p50, 2) if floor_p50 else None,
        "ratio_p99": round(fast["p99"] / floor_p99, 2) if floor_p99 else None,
        "daemon_with_slide_window": production,
        "note": "daemon: slide window 0 (processing only); daemon_with_slide_window: the production "
                f"{settle}s ZoneTracker window that ignores a pitched card skimming another seat",
    }
