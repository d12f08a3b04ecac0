"""``tablectl bench table``: a dealt session on the antenna firmware's reader model, end to end.

card lands on an antenna (the MFRC522/ISO 14443-A model, ``firmware_bridge.sim``) -> the
firmware's own ``main.py``/``mfrc522.py`` scan it (virtual clock held to the wall clock,
RP2040 cost model) -> USB CDC on a pty -> the daemon's link, zones, fusion, engine, journal,
publisher -> Mosquitto -> a subscriber in its own process.

Ten seats, 28 readers (20 hole-card slots, 5 board, burn, muck, shoe), hold'em dealt
at a dealer's pace, every card a 7-byte UID (NTAG) with a power-up time drawn per card
(0.6-2.2 ms, and ``slow_tags``, by default one in ten, 3-4.5 ms, as slow inlays are).  Reported, p50/p99 in ms:

* ``hole``: a hole card lands -> its ``event/card`` reaches the subscriber;
* ``flop``: the third flop card lands -> the ``event/board`` with the three cards;
* ``wrong_seat_alert``: the first card pitched to the wrong seat lands -> its ``alert``;
* ``leave``: a card is lifted -> the host commits it gone (a leave makes no MQTT message);
* ``lost`` (a card landed and never reached the engine) and ``phantom`` (a card the engine got
  that never landed), the firmware's lag behind the wall clock (the CPython model can fall
  behind on a busy machine: ``while_the_model_kept_up`` has the same figures over the cards
  during which it never ran more than 5 ms late), and
* ``floor_read_ms``: the physical floor of one read, on the same model: a reader's field on,
  the settle time, REQA and the select cascade of a present 7-byte tag, field off.

The figures are the model's (estimated RP2040 costs, ISO 14443-3 timing), not a bench table's
and not the firmware's: they do not agree with the chip within 10%.  On the RP2040's own binary
(``--chip``: ``controller.bench.table_chip``, the same session through the daemon) firmware 1.1.0
took 19.5 ms for a full read of a 7-byte tag behind the decoders, where the model's floor for one
read, settle included, is 10.3 ms; and the CPython model must keep up with the wall clock, which
it does not on a loaded machine (``firmware_lagging_over_5ms_pct``).
"""

from __future__ import annotations

import random
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from controller.bench.latency import _ChildProcess, _summary, rfid_source, serve_subscriber, subscribed_client
from controller.demo.config import demo_config
from controller.mqtt.broker import Broker
from controller.rules.cards import standard_deck
from controller.rules.decks import Deck, DeckRegistry
from controller.rules.events import Acknowledge, Act, EndHand, NewHand, SeatPlayer, SetButton

FIRMWARE_DIR = Path(__file__).resolve().parents[2] / "firmware_bridge" / "firmware"
SEATS = 10
PITCH = 0.30  # seconds between two hole cards (a brisk dealer)
FLOP_SPREAD = 0.08  # seconds between the three flop cards landing


def _uid(i: int) -> str:
    return f"04{i:02X}5EED{i:02X}A080"


def bench_table(broker: Broker, prefix: str) -> tuple[Deck, list[str], Path, Any]:
    """The benches' table: a 52-card deck tagged with :func:`_uid`, a fresh working folder
    named by ``prefix``, and a demo config of ``SEATS`` seats publishing on ``broker`` without delay."""
    deck = Deck("A")
    uids = [_uid(i) for i in range(52)]
    for uid, card in zip(uids, standard_deck(), strict=True):
        deck.add(uid, card)
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    config = demo_config("bench", size=SEATS, journal=tmp / "journal.sqlite",
                         mqtt_url=f"mqtt://127.0.0.1:{broker.port}", broadcast_delay=0)
    return deck, uids, tmp, config


def _powerup(rng: random.Random, slow: float) -> int:
    return rng.randint(3000, 4500) if rng.random() < slow else rng.randint(600, 2200)


class FirmwareProcess(_ChildProcess):
    """The firmware on its model readers, in real time, on a pty (its own process)."""

    what = "firmware"

    def __init__(self, link_path: str, fw_dir: str, readers: int = 28) -> None:
        super().__init__(_firmware_main, link_path, fw_dir, readers)

    def place(self, key: int, antenna: int, uid: str, powerup_us: int) -> None:
        self.conn.send(("place", key, antenna, uid, powerup_us))

    def remove(self, key: int, antenna: int, uid: str) -> None:
        self.conn.send(("remove", key, antenna, uid))

    def times(self) -> tuple[dict[int, float], tuple]:
        self.conn.send(("times",))
        times, lag = self.conn.recv()
        return dict(times), tuple(lag)


def _firmware_main(conn, link_path: str, fw_dir: str, readers: int) -> None:
    from firmware_bridge.sim.rc522 import SimEnd, Tag
    from firmware_bridge.sim.realtime import RealtimeBoard

    times: dict[int, float] = {}
    board: RealtimeBoard

    def poll() -> None:
        while conn.poll():
            cmd = conn.recv()
            if cmd[0] == "place":
                board.table.place(cmd[2], Tag(bytes.fromhex(cmd[3]), powerup_us=cmd[4]))
                times[cmd[1]] = time.monotonic()
            elif cmd[0] == "remove":
                board.table.remove(cmd[2], bytes.fromhex(cmd[3]))
                times[cmd[1]] = time.monotonic()
            elif cmd[0] == "times":
                conn.send((dict(times), (board.lag_us / 1000, 100.0 * board.late_samples / max(1, board.samples),
                                         [tuple(span) for span in board.late])))
            elif cmd[0] == "stop":
                raise SimEnd()

    board = RealtimeBoard(link_path, poll=poll, readers=readers, fw_dir=fw_dir, mux=True)
    conn.send("ready")
    try:
        board.run(1 << 62)
    finally:
        board.pty.close()
        conn.send("bye")


class EventSubscriber(_ChildProcess):
    """Every message under the table's ``event/#`` and ``alert`` topics, with its arrival time."""

    what = "subscriber"

    def __init__(self, host: str, port: int, root: str) -> None:
        super().__init__(_subscriber_main, host, port, root)

    def messages(self) -> list[tuple[str, Any, float]]:
        self.conn.send(("results",))
        return list(self.conn.recv())


def _subscriber_main(conn, host: str, port: int, root: str) -> None:
    import json

    got: list[tuple[str, Any, float]] = []
    lock = threading.Lock()

    def on_message(c, u, m) -> None:
        now = time.monotonic()
        try:
            body = json.loads(m.payload) if m.payload else None
        except ValueError:
            body = None
        with lock:
            got.append((m.topic, body, now))

    topics = [(f"{root}/event/#", 1), (f"{root}/alert", 1)]
    serve_subscriber(conn, subscribed_client(host, port, topics, "bench-table-sub", on_message), got, lock)


def floor_read_ms(fw_dir: str | Path = FIRMWARE_DIR) -> float:
    """One reader reading one present 7-byte tag, alone, with the firmware's own driver."""
    from firmware_bridge.sim.board import Board, load_firmware_module
    from firmware_bridge.sim.rc522 import Tag

    board = Board(readers=1, fw_dir=str(fw_dir), mux=False)
    board.table.place(0, Tag(bytes.fromhex(_uid(1)), powerup_us=1500))
    mfrc = load_firmware_module(board, "mfrc522")
    cs = board.stubs["machine"].Pin(17, 1, value=1)
    reader = mfrc.MFRC522(board.stubs["machine"].SPI(0, baudrate=board.baud), cs)
    reader.init()
    t0 = board.clock.now
    got = reader.scan()
    took = board.clock.now - t0
    if not got:
        raise RuntimeError("bench: the floor read found no tag")
    return round(took / 1000, 3)


def time_removals(rfid: Any) -> dict[str, list[float]]:
    """When each tag left its antenna, by uid (the host's clock), as the antenna source's fusion
    sees it: the bench wraps the fusion's feed."""
    gone: dict[str, list[float]] = {}
    fusion_feed = rfid.pipeline.fusion.feed

    def watch(change: Any) -> Any:
        if not change.entered:
            gone.setdefault(change.uid, []).append(time.monotonic())
        return fusion_feed(change)

    rfid.pipeline.fusion.feed = watch
    return gone


class _Session:
    """Deals hold'em hands on the model table and records when each card landed or left."""

    def __init__(self, daemon: Any, pipeline: Any, fw: Any, rng: random.Random, uids: list[str],
                 slow: float, pause: Callable[[float], object] = time.sleep, settle: float = 1.5,
                 scoop: float = 0.05, host_wait: float = 20.0) -> None:
        self.d = daemon
        # The dealer's own acts (the bets, EndHand) reach the daemon directly, the cards through the
        # board and the host: before each, the dealer waits (wall seconds, at most this) until the
        # table shows the cards the board has, as a dealer watching the display does.  Otherwise a
        # host stalled longer than the pause (a loaded machine) gets the flop after the EndHand and
        # rejects it: a flop lost to the bench's own race, not to the table (the chip's long run).
        self.host_wait = host_wait
        self.fw = fw  # FirmwareProcess, or the chip's ChipProcess: place / remove
        self.pause = pause  # the dealer's clock: the wall's, or (on the chip) the chip's
        self.settle = settle  # after the flop and after the scoop
        self.scoop = scoop  # between two cards scooped
        self.rng = rng
        self.uids = uids
        self.key = 0
        self.moves: dict[int, tuple[str, int, str, int | None]] = {}  # key -> (what, antenna, uid, hand)
        self.hole: list[tuple[int, int, int]] = []  # (hand, seat, key)
        self.flops: list[tuple[int, tuple[str, ...], int]] = []  # (hand, labels, key of the last card)
        self.flop_keys: dict[int, list[int]] = {}  # key of the last flop card -> the three cards' keys
        self.wrong: list[tuple[int, int]] = []  # (hand, key)
        self.leaves: list[tuple[str, int]] = []  # (uid, key)
        self.landed: set[str] = set()
        zone_map = pipeline.zones.zone_map
        self.seat_antenna = {(s.zone.seat, s.index): a for a, s in zone_map.antennas.items() if s.zone.kind == "seat"}
        self.board_antenna = [a for a, s in sorted(zone_map.antennas.items()) if s.zone.kind == "board"]
        self.pile = {s.zone.kind: a for a, s in zone_map.antennas.items() if s.zone.kind in ("burn", "muck")}
        self.powerup = {uid: _powerup(rng, slow) for uid in uids}
        self.cards = dict(zip(uids, standard_deck(), strict=True))
        self.labels = {uid: card.label() for uid, card in self.cards.items()}

    def _shown(self, uids: list[str]) -> None:
        """Wait until the engine has these cards (``host_wait`` at most: a card the board never
        reported is the score's lost card, not a stuck bench)."""
        want = {self.cards[u] for u in uids}
        end = time.monotonic() + self.host_wait
        while time.monotonic() < end:
            with self.d.owner_lock:
                engine = self.d.service.engine
                placed = engine.placements() if engine is not None else {}
            if want <= placed.keys():
                return
            time.sleep(0.005)

    def _place(self, antenna: int, uid: str, hand: int) -> int:
        self.key += 1
        self.moves[self.key] = ("place", antenna, uid, hand)
        self.fw.place(self.key, antenna, uid, self.powerup[uid])
        self.landed.add(uid)
        return self.key

    def _remove(self, antenna: int, uid: str) -> int:
        self.key += 1
        self.moves[self.key] = ("remove", antenna, uid, None)
        self.fw.remove(self.key, antenna, uid)
        return self.key

    def _bet(self) -> None:
        engine = self.d.service.engine
        for _ in range(40):
            with self.d.owner_lock:  # the hand copied whole, between two events
                seat = engine.view().to_act
            if seat is None:
                return
            for action in ("check", "call"):
                try:
                    self.d.submit(Act(seat, action))
                    break
                except Exception:  # noqa: BLE001 - the other action is the legal one
                    continue
            else:
                return

    def hand(self, number: int, wrong_seat: bool) -> None:
        d = self.d
        d.submit(NewHand())
        hand_id = d.service.hand_id
        order = list(d.service.engine.view().order)
        deck = list(self.uids)
        self.rng.shuffle(deck)
        on_table: list[tuple[int, str]] = []
        if wrong_seat:
            # The first card goes to the button instead of the first seat to be dealt.
            uid = deck.pop()
            antenna = self.seat_antenna[(order[-1], 0)]
            self.wrong.append((hand_id, self._place(antenna, uid, hand_id)))
            on_table.append((antenna, uid))
            self.pause(1.0)
            try:
                d.submit(Acknowledge())
            except Exception:  # noqa: BLE001 - nothing to acknowledge if the alert never came
                pass
        else:
            for rnd in range(2):
                for seat in order:
                    uid = deck.pop()
                    antenna = self.seat_antenna[(seat, rnd)]
                    self.hole.append((hand_id, seat, self._place(antenna, uid, hand_id)))
                    on_table.append((antenna, uid))
                    self.pause(PITCH * self.rng.uniform(0.8, 1.2))
            self.pause(0.6)
            self._shown([uid for _a, uid in on_table])
            self._bet()
            burn = deck.pop()
            self._place(self.pile["burn"], burn, hand_id)
            on_table.append((self.pile["burn"], burn))
            self.pause(0.5)
            flop = [deck.pop() for _ in range(3)]
            keys = []
            for i, uid in enumerate(flop):
                keys.append(self._place(self.board_antenna[i], uid, hand_id))
                on_table.append((self.board_antenna[i], uid))
                if i < 2:
                    self.pause(FLOP_SPREAD)
            self.flops.append((hand_id, tuple(self.labels[u] for u in flop), keys[-1]))
            self.flop_keys[keys[-1]] = keys
            self.pause(self.settle)
            self._shown([uid for _a, uid in on_table])
        try:
            d.submit(EndHand())
        except Exception:  # noqa: BLE001 - a dead hand is over already
            pass
        for antenna, uid in on_table:  # the dealer scoops the cards
            self.leaves.append((uid, self._remove(antenna, uid)))
            self.pause(self.scoop)
        self.pause(self.settle)


def seat_players(d: Any, rfid: Any, within: float, what: str) -> None:
    """Once the host is in sync with ``what`` (the firmware, the emulator, the chip) within ``within``
    seconds, seat ``SEATS`` players (``p1``...) with the button on the last seat: every table bench
    deals to the same table."""
    if not rfid.bridge.wait_synced(within):
        raise RuntimeError(f"bench: {what} never synchronised with the host")
    for seat in range(1, SEATS + 1):
        d.submit(SeatPlayer(seat, f"p{seat}"))
    d.submit(SetButton(SEATS))


def start_table(running: ExitStack, broker: Broker, config: Any, deck: Deck, link_path: str,
                device: Any) -> tuple[Any, Any, EventSubscriber]:
    """The bench's table behind ``device`` (what serves ``link_path``: the firmware, the emulator,
    the chip): the daemon with ``deck``, started, its RFID source, and a subscriber to its events.
    ``running`` stops them all when it closes (the subscriber, the daemon, then the device), also
    when one of them fails to start: a daemon that cannot start still lets the device's process go."""
    from controller.app.daemon import Daemon

    running.callback(device.stop)
    d = Daemon(config, registry=DeckRegistry([deck]), backends={"serial": link_path})
    running.callback(d.stop)
    d.start()
    sub = EventSubscriber(broker.host, broker.port, config.topic)
    running.callback(sub.stop)
    return d, rfid_source(d), sub


def wrong_hand(n: int, every: int) -> bool:
    """Hand ``n`` (from 0) is one with a card pitched to the wrong seat: every ``every``-th (0: none)."""
    return every > 0 and n % every == every - 1


def session_latency(broker: Broker, hands: int, fw_dir: str | Path, seed: int = 3, wrong_every: int = 4,
                    slow_tags: float = 0.1) -> dict[str, Any]:
    rng = random.Random(seed)
    deck, uids, tmp, config = bench_table(broker, "tablectl-bench-table-")
    link_path = str(tmp / "ttyRP2040")
    with ExitStack() as running:
        fw = FirmwareProcess(link_path, str(fw_dir))
        d, rfid, sub = start_table(running, broker, config, deck, link_path, fw)
        gone = time_removals(rfid)
        assert d.link is not None and rfid.bridge is not None
        d.link.connected_event.wait(10)
        seat_players(d, rfid, 20, "the firmware")
        s = _Session(d, rfid.pipeline, fw, rng, uids, slow_tags)
        t0 = time.monotonic()
        for n in range(hands):
            s.hand(n, wrong_seat=wrong_hand(n, wrong_every))
        elapsed = time.monotonic() - t0
        time.sleep(1.0)
        times, lag = fw.times()
        msgs = sub.messages()
        health = rfid.bridge.health().to_dict()
    return _score(s, times, msgs, gone, lag, elapsed, health)


def arrivals(msgs: list[tuple[str, Any, float]]) -> tuple[
        dict[tuple[Any, Any], list[float]], list[tuple[set[str], float]], list[tuple[Any, float, str]]]:
    """What the subscriber saw, by kind, each with the wall time it arrived: every ``event/card``
    by (hand, seat), every ``event/board`` as the cards it lists, every ``alert`` as (hand, time,
    reason)."""
    cards: dict[tuple[Any, Any], list[float]] = {}
    boards: list[tuple[set[str], float]] = []
    alerts: list[tuple[Any, float, str]] = []
    for topic, body, t in msgs:
        if not isinstance(body, dict):
            continue
        if topic.endswith("/event/card"):
            cards.setdefault((body.get("hand_id"), body.get("seat")), []).append(t)
        elif topic.endswith("/event/board"):
            boards.append((set(body.get("cards") or ()), t))
        elif topic.endswith("/alert"):
            alerts.append((body.get("hand_id"), t, str(body.get("reason") or "")))
    return cards, boards, alerts


def _score(s: _Session, times: dict[int, float], msgs: list[tuple[str, Any, float]],
           gone: dict[str, list[float]], lag: tuple, elapsed: float, health: dict[str, Any],
           per_key: dict[int, float] | None = None) -> dict[str, Any]:
    """The session's figures; ``per_key`` (if given) gets each hole card's, flop's and wrong-seat
    card's latency in ms by its move key."""
    per_key = {} if per_key is None else per_key
    spans = [tuple(span) for span in lag[2]]

    def steady(t0: float, t1: float) -> bool:
        """The model kept up with the wall clock over [t0, t1] (a CPU-starved CPython model
        runs slow, and its latencies then measure the machine, not the firmware)."""
        return not any(a <= t1 + 0.005 and b >= t0 - 0.005 for a, b in spans)

    steady_ms: dict[str, list[float]] = {"hole": [], "flop": [], "wrong_seat_alert": []}
    cards, boards, alerts = arrivals(msgs)
    def measured(name: str, arrivals: list[tuple[int, float | None]]) -> tuple[list[float], int]:
        """Each move's latency in ms to its arrival (None: it never came) and how many never came."""
        ms: list[float] = []
        for key, t in arrivals:
            if t is not None:
                ms.append((t - times[key]) * 1000)
                per_key[key] = ms[-1]
                if steady(times[key], t):
                    steady_ms[name].append(ms[-1])
        return ms, sum(t is None for _, t in arrivals)

    hole: list[tuple[int, float | None]] = []
    seen: dict[tuple[int, int], int] = {}
    for hand, seat, key in s.hole:
        k = seen.get((hand, seat), 0)
        seen[(hand, seat)] = k + 1
        got = cards.get((hand, seat), [])
        # (on the chip: no key when the board never reported the card)
        hole.append((key, got[k] if k < len(got) and key in times else None))
    hole_ms, lost = measured("hole", hole)
    phantom = sum(max(0, len(v) - seen.get(k, 0)) for k, v in cards.items())
    flop_ms, flops_missing = measured("flop", [
        (key, next((t for cs, t in boards if key in times and set(labels) <= cs and t >= times[key] - 1), None))
        for _hand, labels, key in s.flops])
    alert_ms, alerts_missing = measured("wrong_seat_alert", [
        (key, next((t for h, t, _ in alerts if key in times and h == hand and t >= times[key]), None))
        for hand, key in s.wrong])
    leave_ms, leaves_missing = [], 0
    for uid, key in s.leaves:
        cand = [t for t in gone.get(uid, []) if key in times and t >= times[key]]
        if cand:
            leave_ms.append((min(cand) - times[key]) * 1000)
        else:
            leaves_missing += 1
    return {
        "hole": _summary(hole_ms), "flop": _summary(flop_ms), "wrong_seat_alert": _summary(alert_ms),
        "leave": _summary(leave_ms),
        "while_the_model_kept_up": {k: _summary(v) for k, v in steady_ms.items()},
        "lost_hole_cards": lost, "phantom_hole_cards": phantom, "flops_missing": flops_missing,
        "alerts_missing": alerts_missing, "leaves_missing": leaves_missing,
        "alerts_seen": dict(Counter(code for _, _, code in alerts)),
        "board_events": [sorted(cs) for cs, _ in boards][:6],
        "hands": len({h for h, _, _ in s.hole} | {h for h, _ in s.wrong}), "cards_moved": len(s.moves),
        "firmware_max_lag_ms": round(lag[0], 3), "firmware_lagging_over_5ms_pct": round(lag[1], 2),
        "seconds": round(elapsed, 1),
        "link_counters": {k: v for k, v in health.get("counters", {}).items()
                          if k in ("faults", "gaps", "inventories", "corrupt_frames", "device_resets")},
    }


def run_bench(hands: int = 12, fw_dir: str | Path | None = None, seed: int = 3, slow_tags: float = 0.1,
              progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    say = progress or (lambda _msg: None)
    fw_dir = Path(fw_dir) if fw_dir else FIRMWARE_DIR
    say("floor: one read on the model")
    floor = floor_read_ms(fw_dir)
    with Broker.start() as broker:
        say(f"session: {hands} hands on 28 model readers")
        session = session_latency(broker, hands, fw_dir, seed=seed, slow_tags=slow_tags)
    return {
        "bench": "table",
        "model": "firmware_bridge.sim (MFRC522 register model, ISO 14443-3 timing, RP2040 cost estimates)",
        "readers": 28,
        "slow_tags": slow_tags,
        "firmware": str(fw_dir),
        "floor_read_ms": floor,
        **session,
        "ratio_hole_p50_to_floor": round(session["hole"]["p50"] / floor, 1) if floor else None,
        "note": "the model's figures (its RP2040 cost estimates), not the firmware's timing: they do not agree "
                "with the chip within 10% (`tablectl bench table --chip` runs the firmware on the RP2040's own "
                "binary); measured on the simulator, not on hardware; leave = lift -> the host's zone commit "
                "(a leave publishes nothing)",
    }
