"""``tablectl bench faults``: hands dealt through faults, and what the table's readers saw.

The real thing end to end: Mosquitto with the shipped config and ACL, ``tablectl run`` as its
own process, the antenna emulator on a pty with the reference seat-major wiring, a dealer who
pitches legal hands (:mod:`controller.sim.dealer`, no mistakes) tag by tag and drives the
console over MQTT (a request per action, retried with the same transaction id when no answer
comes).  While the dealer keeps dealing, faults are injected at random moments of a hand:

* ``kill``: ``kill -9`` of the daemon, restarted at once;
* ``outage``: the broker stopped for 0.5-2 s and started again;
* ``unplug``: the antenna board's USB unplugged for 0.8 s;
* ``reset``: the antenna board reboots;
* ``stall``: the antenna board's loop stops for 0.5 s while the dealer goes on pitching (cards
  that land meanwhile are found by one scan, in antenna order: the table asks the dealer to
  confirm them, a ``confirm_alert``, never a false ruling; issue 26, F4);
* ``corrupt``: 3 s of heavy line corruption (a fifth of the frames mangled, 5 % dropped;
  issue 26, F5);
* ``retained``: the console publishes one ``request/misdeal`` with the retain flag, and the
  broker restarts (it must never be applied; issue 26, F1).
* ``slowclients``: every page port (display, overlay, tracker) flooded for 4 s with 100 idle
  connections and 5 that trickle a request a byte at a time (issue 26, F2); afterwards each page
  must answer again;
* ``diskfull``: the journal's disk (a tmpfs of its own) filled to the last byte for 2 s while the
  dealer goes on (issue 26, F6): the table holds the cards, says "journal full", refuses console
  requests (the dealer's console tries again), and applies what it held once space returns.

After the hands, a burst of 2,000 QoS 1 requests at once: how many are answered (issue 26, F7).
``kill -USR1`` ends a session early, after the hand being dealt: the burst and the verdict follow,
over the hands dealt (``hands``, beside ``hands_asked``).

A subscriber on ``#`` for every credential (display, console, overlay, homeassistant, producer) and
one for the controller on the event stream (a persistent session) record everything with its
arrival time.  At the end the journal is replayed offline and compared:

* ``false_rulings``: every ruling the engine made (the dealer made no mistake), by reason and
  by the fault of the hand; not the dealer's own misdeal calls (a hand that does not finish gets
  one, then is folded out) nor the table's "too late" answer to one;
* ``lost_events`` / ``duplicated_events``: public events the journal says were published and
  the controller's stream never got, or got more than once (at least once is the contract:
  payloads carry ``seq``);
* ``leaks``: a face-down card's identity on a display, console or Home Assistant topic (only
  ``hand_end.shown`` at a showdown may table cards), broadcast hole cards that reached the
  overlay before their delay, a hand's hole cards still retained on the overlay's topic; on the
  producer's login, anything outside its topics or naming any card (``leaks.producer``);
* ``recovery_s``: from the restart to ``online``, from the replug to the first card applied.

Measured on our own simulator and emulator (no table hardware here).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import re
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.processes import stop_process

REPO = Path(__file__).resolve().parent.parent.parent
ROLES = ("controller", "display", "console", "overlay", "homeassistant", "producer")
WATCHERS = ("display", "console", "overlay", "homeassistant", "producer")
TABLE = "t1"
SEATS = (1, 2, 3, 4, 5, 6)
GAMES = ("holdem", "omaha")
# misdeal: the dealer calls one mid-deal; stall, corrupt, retained: issue 26
FAULTS = ("none", "kill", "outage", "unplug", "reset", "misdeal", "stall", "corrupt", "retained", "slowclients",
          "diskfull")
PAGES = ("display", "overlay", "tracker")
DISK = "64m"  # the journal's own tmpfs: room for a 200-hand session, and quick to fill
SHOWN_KINDS = ("deal", "burn", "board")  # input events that give event/card, event/burn, event/board (cards counted)
CARD = re.compile(r"(?<![A-Za-z0-9])([2-9TJQKA][hdcs])(?![A-Za-z0-9])")


@dataclass
class Restart:
    """A kill -9's restart: when the new daemon was started, and when it said ``online`` (None: not yet)."""

    at: float
    online: float | None = None
    never: bool = False  # it did not come online within wait_online's 30 s (see daemon.log)


@dataclass
class Record:
    t: float  # monotonic arrival time
    topic: str
    payload: bytes
    wall: float = 0.0  # wall-clock arrival time (payloads' ts are wall clock)


class Recorder:
    """A paho v5 client that keeps every message with its arrival time."""

    def __init__(self, host: str, port: int, user: str, password: str, topics: list[str],
                 persistent: bool = False) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        self.records: list[Record] = []
        self.lock = threading.Lock()
        self._parsed = 0
        self._by_topic: defaultdict[str, list[dict]] = defaultdict(list)
        self._seqs: defaultdict[str, defaultdict[int, Counter]] = defaultdict(lambda: defaultdict(Counter))
        self._cards: defaultdict[str, dict[int, int]] = defaultdict(dict)
        # An event/board lists the whole board so far (the flop's 3, then 4, then 5): the board's
        # cards shown are its largest size per hand, not the sum over its events.
        self._board: defaultdict[str, dict[Any, int]] = defaultdict(dict)
        #: seq -> the cards each seat got from that one entry, when the bench knows it (:meth:`know`).
        self._known: dict[int, Counter] = {}
        self.connected = threading.Event()
        self.topics = topics
        self.c = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5,
                             client_id=f"bench-{user}-{secrets.token_hex(3)}")
        self.c.username_pw_set(user, password)
        self.c.reconnect_delay_set(min_delay=1, max_delay=1)
        self.c.on_connect = self._on_connect
        self.c.on_message = self._on_message
        props = None
        clean: Any = True
        if persistent:
            props = Properties(PacketTypes.CONNECT)
            props.SessionExpiryInterval = 3600
            clean = False
        self.c.connect_async(host, port, keepalive=5, clean_start=clean, properties=props)
        self.c.loop_start()

    def _on_connect(self, client, userdata, flags, rc, props) -> None:
        if not rc.is_failure:
            for t in self.topics:
                client.subscribe(t, qos=1)
            self.connected.set()

    def _on_message(self, client, userdata, msg) -> None:
        with self.lock:
            self.records.append(Record(time.monotonic(), msg.topic, bytes(msg.payload), time.time()))

    def snapshot(self) -> list[Record]:
        with self.lock:
            return list(self.records)

    def json_since(self, cursor: int) -> tuple[int, list[tuple[str, Any]]]:
        """The JSON objects received from record ``cursor`` on, with their topics (what is not JSON
        is passed over), and the cursor to give next time: each reader parses a record once."""
        with self.lock:
            new = self.records[cursor:]
            cursor = len(self.records)
        out = []
        for r in new:
            if r.payload[:1] == b"{":
                try:
                    out.append((r.topic, json.loads(r.payload)))
                except ValueError:
                    continue
        return cursor, out

    def parsed(self, topic: str) -> list[dict]:
        """The JSON payloads received on ``topic``, parsed once (the dealer looks many times a
        second: a 200-hand session must not parse every message again at each look)."""
        self._parsed, new = self.json_since(self._parsed)
        for t, p in new:
            self._by_topic[t].append(p)
            if isinstance(p, dict) and "seq" in p:
                self._seqs[t][p["seq"]][p.get("seat")] += 1
                if p.get("kind") == "board" and isinstance(p.get("cards"), list):
                    # (Summed as if each event held only the new cards, the river counted 5: from
                    # the turn on the dealer acted without waiting for the table's cards, and a
                    # river that came late, after a replay, found him at the scoop: issue 26, F5.)
                    sizes = self._board[t]
                    sizes[p.get("hand_id")] = max(sizes.get(p.get("hand_id"), 0), len(p["cards"]))
                else:  # the cards an event/burn stands for (a repeat holds the same)
                    self._cards[t][p["seq"]] = int(p.get("count") or 1)
        return self._by_topic[topic]

    def distinct(self, topics: tuple[str, ...]) -> int:
        """Events received on ``topics``, a repeat after an outage counted once (see :func:`events_in`)."""
        for t in topics:
            self.parsed(t)
        return sum(events_in(self._seqs[t], self._known) for t in topics)

    def know(self, seq: int, per_seat: Counter) -> None:
        """Entry ``seq`` gave each seat these cards (the dealer's confirm, taken whole)."""
        with self.lock:
            self._known[seq] = per_seat

    def cards(self, card_topic: str, grouped: tuple[str, ...]) -> int:
        """Cards shown: one per ``event/card`` (:func:`events_in`), a burn's count per ``grouped`` event,
        and the board's size per hand (its events list the whole board), a repeat counted once."""
        for t in (card_topic, *grouped):
            self.parsed(t)
        grouped_cards = sum(sum(self._cards[t].values()) + sum(self._board[t].values()) for t in grouped)
        return events_in(self._seqs[card_topic], self._known) + grouped_cards

    def close(self) -> None:
        self.c.disconnect()
        self.c.loop_stop()


def cards_due(expected: Any) -> int:
    """The cards the display must show once these engine events are in: one per deal or burn, a
    board event's cards.  (Counted as events, a flop the table got as one card and then two of
    unknown order was "in" after its first card: the dealer acted, was refused, his retry came
    after the turn was pitched, and the table ruled a false premature_turn.)"""
    return sum(len(getattr(e, "cards", ())) or 1 for e in expected if e.kind in SHOWN_KINDS)


def events_in(by_seq: dict[int, Counter], known: dict[int, Counter] | None = None) -> int:
    """How many events ``by_seq`` (seq -> copies received per seat) stands for.  Most journal entries
    give one event; the dealer's ``request/confirm`` gives one ``event/card`` per card it names, all
    with its one seq (two to one seat alike).  A repeat (the controller's outbox after an outage)
    sends every event of the seq again, so the copies per seat divided by their greatest common
    divisor count each once.  (Counting seqs, the bench saw a confirm of seven cards as one: its
    dealer then waited 8 s at every step of the hand for six cards the display had shown, and
    counted them as "acted with cards missing".)  A confirm whose seats all got the same number of
    cards looks like a repeat to that rule (two cards to each of two seats counted two): an entry in
    ``known`` (seq -> cards per seat, the confirm's answer) counts each seat up to its cards."""
    total = 0
    for seq, seats in by_seq.items():
        counts = {seat: c for seat, c in seats.items() if c}
        each = known.get(seq) if known else None
        if each is not None and set(counts) <= set(each):
            total += sum(min(c, each[seat]) for seat, c in counts.items())
        elif counts:
            g = math.gcd(*counts.values())
            total += sum(c // g for c in counts.values())
    return total


class Console:
    """The dealer's console: one request per step, answered on ``response/...``; a request that
    gets no answer in time is sent again with the same transaction id."""

    def __init__(self, host: str, port: int, password: str, topics: Any) -> None:
        self.topics = topics
        self.rec = Recorder(host, port, "console", password, [topics.response + "/#"])
        self.rec.connected.wait(10)
        self.sent = self.retries = self.refused = self.journal_full = 0
        self._seen = 0
        self._answers: defaultdict[str, list[dict]] = defaultdict(list)
        self.errors: Counter = Counter()

    def answers(self, tx: str) -> list[dict]:
        """The answers to transaction ``tx`` (responses parsed once, as they come)."""
        self._seen, new = self.rec.json_since(self._seen)
        for _, data in new:
            if isinstance(data, dict) and data.get("transaction"):
                self._answers[data["transaction"]].append(data)
        return self._answers.get(tx, [])

    def request(self, name: str, fields: dict, timeout: float = 6.0, tries: int = 6,
                quiet: bool = False) -> dict | None:
        """Send until answered; a refusal is counted unless ``quiet`` (an expected one)."""
        tx = f"{name}-{uuid.uuid4().hex[:10]}"
        payload = json.dumps(dict(fields, transaction=tx)).encode()
        for attempt in range(tries):
            if attempt:
                self._answers.pop(tx, None)  # a refusal ("journal full") answered this transaction once already
            if attempt:
                self.retries += 1
            self.sent += 1
            self.rec.c.publish(self.topics.request(name), payload, qos=1)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                got = self.answers(tx)
                if got and not got[0]["ok"] and "journal full" in (got[0]["error"] or "") and attempt + 1 < tries:
                    self.journal_full += 1  # nothing changed: the dealer tries again in a moment
                    time.sleep(0.5)
                    break
                if got:
                    if not got[0]["ok"] and not quiet:
                        self.refused += 1
                        self.errors[re.sub(r"\d+", "N", got[0]["error"] or "")[:80]] += 1
                    return got[0]
                time.sleep(0.01)
        return None


@dataclass
class HandLog:
    hand: int
    game: str
    fault: str
    start_seq: int | None = None
    finished: bool = False
    refused: list[str] = field(default_factory=list)


class Rig:
    def __init__(self, work: Path, seed: int, delay: int, log_mode: str, pace: float) -> None:
        from controller.mqtt.broker import Broker
        from controller.mqtt.contract import Topics
        from controller.rules.decks import DeckRegistry
        from firmware_bridge.emulator import Emulator
        from firmware_bridge.table_sim import TableLayout, TableSim, enroll_deck

        self.work = work
        self.rng = random.Random(seed)
        self.delay = delay
        self.pace = pace
        self.log_mode = log_mode
        self.topics = Topics("poker", TABLE)
        self.passwords = {r: secrets.token_urlsafe(12) for r in ROLES}
        conf = (REPO / "systemd" / "mosquitto" / "poker-table.conf").read_text()
        acl = (REPO / "systemd" / "mosquitto" / "acl").read_text()
        self.broker = Broker.start(users=self.passwords, acl_text=acl, config_template=conf)
        self.deck = enroll_deck("A", seed=0)
        self.registry = DeckRegistry([self.deck])
        self.registry.save(work / "decks.json")
        self.layout = TableLayout.for_games(GAMES, seats=len(SEATS))
        self.sim = TableSim(self.layout, self.deck)
        self.link = str(work / "ttyEMU")
        self.emulator = Emulator(self.layout.antenna_count, link_path=self.link).start()
        self.disk, self.disk_note = self._small_disk(work / "disk")
        self.pages = {name: _free_port() for name in PAGES}
        self.config = self._write_config()
        self.proc: subprocess.Popen | None = None
        host, port = self.broker.host, self.broker.port
        self.watch = {r: Recorder(host, port, r, self.passwords[r], ["#"]) for r in WATCHERS}
        t = self.topics
        self.ctl = Recorder(host, port, "controller", self.passwords["controller"],
                            [t.root + "/event/#", t.private_holecards, t.availability], persistent=True)
        for r in [*self.watch.values(), self.ctl]:
            r.connected.wait(10)
        self.console = Console(host, port, self.passwords["console"], t)
        self.kills = self.outages = self.unplugs = self.resets = 0
        self.stalls = self.corruptions = self.retained = 0
        self.confirms = 0  # request/confirm sent by the dealer, answering an "order unknown" alert
        self.floods = self.disk_fulls = 0
        self.gave_up: list[dict[str, Any]] = []  # the dealer acted before the display had every card
        self.entered: list[dict[str, Any]] = []  # he entered cards the table never showed (request/confirm)
        self.stuck: list[dict[str, Any]] = []  # a hand left open, that the next new_hand found
        self.last: tuple[int, Pitched, HandLog] | None = None  # the last hand dealt: its seq, cards, log
        self.flood_stats: list[dict[str, Any]] = []
        self.hand = 0  # the hand being dealt (1-based), for the records of the faults' threads
        self.restarts: list[Restart] = []  # every kill -9's restart
        self.recovery: dict[str, list[float]] = {"restart": [], "unplug": [], "reset": []}
        self._replugs: list[tuple[str, float]] = []
        self._threads: list[threading.Thread] = []

    @staticmethod
    def _small_disk(where: Path) -> tuple[Path | None, str]:
        """The journal's own small file system, to fill without touching anything else (root only)."""
        where.mkdir()
        prefix = _root_prefix()
        if prefix is None:
            return None, "unavailable: mounting a tmpfs needs root or passwordless sudo"
        proc = subprocess.run([*prefix, "mount", "-t", "tmpfs", "-o", f"size={DISK},mode=1777", "tmpfs", str(where)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return None, f"unavailable: mount failed: {proc.stderr.strip()[:120]}"
        return where, f"tmpfs {DISK}"

    def _write_config(self) -> Path:
        antennas = []
        for antenna, slot in sorted(self.layout.zone_map.antennas.items()):
            z = slot.zone
            zone = f"seat:{z.seat}:{slot.index}" if z.kind == "seat" else (
                f"board:{slot.index}" if z.kind == "board" else z.kind)
            antennas.append(f'{antenna} = "{zone}"')
        (self.work / "mqtt.pass").write_text(self.passwords["controller"])
        for role in ("console", "overlay"):
            (self.work / f"{role}.pass").write_text(self.passwords[role])
        pages = "\n".join(f'[web.{name}]\nport = {port}\nuser = "{"overlay" if name == "overlay" else "console"}"\n'
                          f'password_file = "{"overlay" if name == "overlay" else "console"}.pass"\n'
                          for name, port in self.pages.items())
        journal = "disk/journal.sqlite" if self.disk is not None else "journal.sqlite"
        cfg = self.work / "table.toml"
        cfg.write_text(f"""
[table]
id = "{TABLE}"
size = {len(SEATS)}
game = "holdem"
rules = "robert"

[stakes]
small_blind = 1
big_blind = 2

[antennas]
{chr(10).join(antennas)}

[serial]
enabled = true
port = "{self.link}"

[mqtt]
url = "mqtt://127.0.0.1:{self.broker.port}"
username = "controller"
password_file = "mqtt.pass"
discovery = true

[broadcast]
delay = {self.delay}

[journal]
path = "{journal}"
sync = "normal"

[web]
enabled = true

{pages}
""")
        return cfg

    # ------------------------------------------------------------------ the daemon
    def start_daemon(self) -> float:
        t0 = time.monotonic()
        log = open(self.work / "daemon.log", "a")  # noqa: SIM115 - the child's stderr, closed with it
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "controller.cli", "run", "--config", str(self.config), "--registry",
             str(self.work / "decks.json"), "--serial", self.link, "--log", self.log_mode],
            env=dict(os.environ, PYTHONUNBUFFERED="1"), stdout=subprocess.DEVNULL, stderr=log, cwd=str(REPO))
        log.close()
        return t0

    def online_after(self, t0: float) -> float | None:
        for r in self.ctl.snapshot():
            if r.t >= t0 and r.topic == self.topics.availability and r.payload == b"online":
                return r.t
        return None

    def wait_online(self, t0: float, timeout: float = 30.0) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            t = self.online_after(t0)
            if t is not None:
                return t - t0
            time.sleep(0.02)
        raise RuntimeError("the daemon did not come online: see " + str(self.work / "daemon.log"))

    def kill9(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        self.kills += 1
        t0 = self.start_daemon()
        restart = Restart(t0)
        self.restarts.append(restart)

        def measure() -> None:
            try:
                took = self.wait_online(t0)
            except RuntimeError:
                restart.never = True
                return
            restart.online = t0 + took
            self.recovery["restart"].append(took)

        self._spawn(measure)

    def outage(self) -> None:
        self.outages += 1
        self._spawn(lambda: self.broker.restart(down_for=self.rng.uniform(0.5, 2.0)))

    def unplug(self) -> None:
        self.unplugs += 1
        self.emulator.unplug(0.8)
        self._replugs.append(("unplug", time.monotonic() + 0.8))

    def reset(self) -> None:
        self.resets += 1
        self.emulator.reset()
        self._replugs.append(("reset", time.monotonic()))

    def stall(self) -> None:
        self.stalls += 1
        self.emulator.silence(0.5)

    def corrupt(self) -> None:
        """A burst of heavy line corruption for 3 s (the emulator's own fault injector)."""
        import dataclasses

        self.corruptions += 1
        injector = self.emulator.injector
        calm = injector.config

        def burst() -> None:
            injector.config = dataclasses.replace(calm, corrupt=0.2, drop=0.05)
            time.sleep(3.0)
            injector.config = calm

        self._spawn(burst)

    def retained_request(self) -> None:
        """A retained ``request/misdeal`` (transaction ``retained-N``), then a broker restart."""
        self.retained += 1
        payload = json.dumps({"reason": "called_misdeal", "transaction": f"retained-{self.retained}"}).encode()
        self.console.rec.c.publish(self.topics.request("misdeal"), payload, qos=1, retain=True)
        def restart_soon() -> None:
            time.sleep(0.3)
            self.broker.restart(down_for=0.5)

        self._spawn(restart_soon)

    def slowclients(self) -> None:
        """Every page port flooded for 4 s: 100 idle connections and 5 that trickle a request a
        byte every half second; then each page must answer a plain GET again (within 10 s).

        Every flood is recorded with the daemon's state at its check (its pid, a kill -9's
        restart in progress) and, per page, each failed request's error: a page check that
        overlaps the bench's own kill -9 waits for the restarted daemon's ``online`` first (the
        restart's time is ``recovery_s.restart``; the flood's question is whether the pages
        answer once the daemon is up), and says so (``waited_for_restart_s``)."""
        import socket

        self.floods += 1
        record: dict[str, Any] = {"flood": self.floods, "hand": self.hand, "pid": self.pid()}

        def flood() -> None:
            held: list[socket.socket] = []
            opened = refused = 0
            errors: Counter = Counter()
            for port in self.pages.values():
                for _ in range(105):
                    try:
                        held.append(socket.create_connection(("127.0.0.1", port), timeout=2))
                        opened += 1
                    except OSError as exc:
                        refused += 1
                        errors[_error(exc)] += 1
            slow = held[-5:]
            end = time.monotonic() + 4.0
            line = b"GET / HTTP/1.1\r\nHost: x\r\n"
            i = 0
            while time.monotonic() < end:
                for sock in slow:
                    with contextlib.suppress(OSError):
                        sock.send(line[i % len(line):i % len(line) + 1])
                i += 1
                time.sleep(0.5)
            for sock in held:
                sock.close()
            record.update(opened=opened, refused=refused, refused_because=dict(errors),
                          kills_during_the_flood=sum(1 for r in self.restarts if r.at >= t_flood))
            t_check = time.monotonic()
            record["restart_in_progress_at_check"] = self.restarting(t_check)
            coming = self.coming_online()
            record["waited_for_restart_s"] = round(self.wait_restarted(40.0), 3)
            if coming:  # when the daemon the bench had killed came back: after the old check's 10 s?
                online = [r.online for r in coming if r.online is not None]
                record["restart_online_after_check_start_s"] = (
                    round(max(online) - t_check, 3) if len(online) == len(coming) else None)
            record["pid_at_check"] = self.pid()
            record["answered_after_s"] = {}
            record["pages"] = {}
            for name, port in self.pages.items():
                url = f"http://127.0.0.1:{port}/"
                check = self.page_answers(url, 10.0)
                record["answered_after_s"][name] = check["answered_after_s"]
                record["pages"][name] = check
            self.flood_stats.append(record)

        t_flood = time.monotonic()
        self._spawn(flood)

    def pid(self) -> int | None:
        """The daemon's pid now (None before the first start)."""
        return self.proc.pid if self.proc is not None else None

    def restarting(self, t: float) -> bool:
        """Whether a kill -9's restart had begun and the daemon was not yet ``online`` at ``t``."""
        return any(r.at <= t and (r.online is None or r.online > t) for r in self.restarts)

    def coming_online(self, since: float = 0.0) -> list[Restart]:
        """The kill -9 restarts begun at or after ``since`` whose daemon has not said ``online`` yet."""
        return [r for r in self.restarts if r.at >= since and r.online is None and not r.never]

    def wait_restarted(self, limit: float) -> float:
        """Seconds waited (at most ``limit``) until every restart begun is online (0: none was coming)."""
        if not self.coming_online():
            return 0.0
        t0 = time.monotonic()
        while self.coming_online() and time.monotonic() - t0 < limit:
            time.sleep(0.05)
        return max(time.monotonic() - t0, 0.001)

    def page_answers(self, url: str, limit: float) -> dict[str, Any]:
        """GET ``url`` until it answers 200 (at most ``limit`` seconds, each try 3 s at most):
        the seconds it took (None: never), the tries and each failure's error, the daemon's pid
        during the tries, whether a restart began meanwhile, and the port's TCP states at the end.

        A kill -9 the bench itself makes during the check (the next hand's fault) restarts the
        clock: ``limit`` seconds from the restarted daemon's ``online`` (40 s at most to get there)."""
        import urllib.request

        t0 = time.monotonic()
        pids = {self.pid()}
        tries = 0
        errors: Counter = Counter()
        ok = False

        def clock_from() -> float:
            began = [r for r in self.restarts if r.at >= t0]
            if not began:
                return t0
            if any(r.online is None and not r.never for r in began):
                return min(time.monotonic(), t0 + 40.0)  # still coming online: the clock waits
            return max(float(r.online or t0) for r in began)

        while time.monotonic() - clock_from() < limit and not ok:
            tries += 1
            try:
                with urllib.request.urlopen(url, timeout=3) as r:
                    ok = r.status == 200
                    if not ok:
                        errors[f"HTTP {r.status}"] += 1
            except OSError as exc:
                errors[_error(exc)] += 1
                time.sleep(0.2)
            pids.add(self.pid())
        took = round(time.monotonic() - t0, 3) if ok else None
        out: dict[str, Any] = {"request": f"GET {url}", "answered_after_s": took, "tries": tries,
                               "errors": dict(errors), "pids": sorted(p for p in pids if p),
                               "restarts_begun_during_the_check": sum(1 for r in self.restarts
                                                                      if r.at >= t0)}
        if not ok:
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            out["port_tcp_states"] = _port_states(port)
            out["daemon_alive"] = self.proc is not None and self.proc.poll() is None
        return out

    def diskfull(self) -> None:
        """The journal's disk filled to the last byte for 2 s (its WAL just checkpointed), then emptied."""
        disk = self.disk
        if disk is None:
            return
        self.disk_fulls += 1
        ballast = disk / "ballast"

        def fill() -> None:
            import sqlite3

            # As a checkpoint leaves it: the WAL emptied, so the next append needs new blocks (a WAL
            # that still had room would take a few events on a full disk, and show nothing).
            with contextlib.closing(sqlite3.connect(disk / "journal.sqlite", timeout=5)) as db:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            fd = os.open(ballast, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                for size in (1 << 20, 4096, 512, 1):  # to the last byte
                    with contextlib.suppress(OSError):
                        while True:
                            os.write(fd, b"\0" * size)
                time.sleep(2.0)
            finally:
                os.close(fd)
                ballast.unlink()

        self._spawn(fill)

    def _spawn(self, fn: Callable[[], None]) -> None:
        t = threading.Thread(target=fn, daemon=True)
        t.start()
        self._threads.append(t)

    def stop(self) -> None:
        for t in self._threads:
            t.join(30)
        if self.proc is not None:
            stop_process(self.proc, 20)
        for r in [*self.watch.values(), self.ctl, self.console.rec]:
            r.close()
        self.emulator.stop()
        self.broker.stop()

    def unmount(self) -> None:
        """The journal is copied beside the config (``tablectl replay`` reads it there), then the disk goes."""
        if self.disk is not None:
            import shutil

            for f in self.disk.glob("journal.sqlite*"):
                shutil.copy2(f, self.work / f.name)
            subprocess.run([*(_root_prefix() or []), "umount", "-l", str(self.disk)], check=False)

    # ------------------------------------------------------------------ what the controller saw
    def events(self, kind: str) -> list[dict]:
        topic = self.topics.event(kind)
        return self.ctl.parsed(topic)

    def card_count(self) -> int:
        """Distinct card, burn and board events received (a repeat after an outage counts once)."""
        return self.ctl.cards(self.topics.event("card"), (self.topics.event("burn"), self.topics.event("board")))


def _root_prefix() -> list[str] | None:
    """How to run mount: as root, or through passwordless sudo; None when neither."""
    import shutil

    if os.geteuid() == 0:
        return []
    if shutil.which("sudo") and subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode == 0:
        return ["sudo", "-n"]
    return None


def _error(exc: BaseException) -> str:
    """A request's failure, short: its type and message (``URLError`` unwrapped)."""
    reason = getattr(exc, "reason", None)
    if isinstance(reason, BaseException):
        exc = reason
    return f"{type(exc).__name__}: {exc}"[:160]


#: /proc/net/tcp's state codes (include/net/tcp_states.h).
TCP_STATES = {1: "ESTABLISHED", 2: "SYN_SENT", 3: "SYN_RECV", 4: "FIN_WAIT1", 5: "FIN_WAIT2", 6: "TIME_WAIT",
              7: "CLOSE", 8: "CLOSE_WAIT", 9: "LAST_ACK", 10: "LISTEN", 11: "CLOSING"}


def _port_states(port: int) -> dict[str, int]:
    """The sockets on this machine whose local port is ``port``, counted by TCP state (is the
    page's port listening; or is it held by something else, e.g. a client's ephemeral port)."""
    states: Counter = Counter()
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port:
                states[TCP_STATES.get(int(fields[3], 16), fields[3])] += 1
    return dict(states)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _header(start: dict) -> dict:
    """The dealer simulator's table header for the hand the daemon just started."""
    header = {"game": start["game"], "structure": start["structure"], "rules": start["rules"],
              "event": start["event"], "table_size": len(SEATS), "seats": sorted(start["seats"]),
              "button": start["button"]}
    blinds = start.get("blinds") or {}
    header["small_blind"], header["big_blind"] = blinds.get("small"), blinds.get("big")
    return header


def _quiet(count: Callable[[], int], still: float, limit: float, reach: int | None = None) -> None:
    """Wait until ``count()`` has not changed for ``still`` seconds (at most ``limit``), or has reached
    ``reach`` (all there is to come is in: nothing to wait still for)."""
    end = time.monotonic() + limit
    last, since = count(), time.monotonic()
    while time.monotonic() < end and (reach is None or last < reach):
        time.sleep(0.02)
        now = count()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= still:
            return


def _request_fields(event: Any) -> tuple[str, dict] | None:
    if event.kind == "act":
        fields: dict[str, Any] = {"seat": event.seat, "action": event.action}
        if event.all_in:
            fields["all_in"] = True
        if event.amount is not None:
            fields["amount"] = event.amount
        return "action", fields
    return None


@dataclass
class Pitched:
    """What the bench's dealer pitched this hand, in order, and the confirm alerts he answered."""

    start_seq: int
    cards: list[tuple[str, str]] = field(default_factory=list)  # (zone: seat:N, burn, board; card)
    placed: int = 0  # cards he pitched to a seat, the burn or the board this hand (folded ones too)
    answered: int = 0
    asked: int = 0
    alerts_seen: int = 0


def _where(rig: Rig, antenna: int) -> str:
    zone = rig.layout.zone_map.antennas[antenna].zone
    return zone.name


def answer_confirm(rig: Rig, pitched: Pitched, log: HandLog) -> None:
    """The dealer reads an "order unknown: confirm" alert (``order_unknown``; ``card_unread`` too,
    as tables before it said: the bench deals no card a tag cannot read) on the display and
    answers with ``request/confirm``: the cards the table has not shown yet, where each went, in
    the order he pitched them (he knows: he dealt them; the display shows how many cards each
    seat, the burn and the board hold)."""
    alerts = rig.watch["display"].parsed(rig.topics.alert)
    asked = [a for a in alerts[pitched.alerts_seen:] if a.get("reason") in ("order_unknown", "card_unread")
             and a.get("seq", 0) > pitched.start_seq]
    pitched.alerts_seen = len(alerts)
    pitched.asked += len(asked)
    if pitched.asked <= pitched.answered:
        return
    pitched.answered = pitched.asked
    _quiet(rig.card_count, 0.4, 4.0)
    if confirm_missing(rig, pitched, log):
        rig.confirms += 1


def confirm_missing(rig: Rig, pitched: Pitched, log: HandLog) -> bool:
    """The dealer tells the table (``request/confirm``) the cards he pitched that the display does
    not show, where each went, in the order he pitched them; whether there were any."""
    states = rig.watch["display"].parsed(rig.topics.state)
    hand = states[-1].get("hand") if states else None
    if not hand:
        return False
    shown = {f"seat:{k}": v["cards"] for k, v in hand["seats"].items()}
    shown["burn"], shown["board"] = hand.get("burns", 0), len(hand.get("board") or [])
    by_zone: dict[str, list[int]] = defaultdict(list)
    for i, (zone, _card) in enumerate(pitched.cards):
        by_zone[zone].append(i)
    missing = sorted(i for zone, idx in by_zone.items() for i in idx[shown.get(zone, 0):])
    if not missing:
        return False
    cards = [{"to": pitched.cards[i][0], "card": pitched.cards[i][1]} for i in missing]
    r = rig.console.request("confirm", {"cards": cards})
    if r is None or not r["ok"]:
        log.refused.append(f"confirm {cards}: {r and r['error']}")
        return True
    # Its event/card messages share one seq: when the table took every card he named (as many
    # ``card`` outputs), he knows what each seat got from it (:func:`events_in`).
    result = r.get("result") or {}
    per_seat = Counter(int(c["to"].split(":")[1]) for c in cards if c["to"].startswith("seat:"))
    if result.get("seq") and not result.get("duplicate") and per_seat \
            and list(result.get("outputs") or ()).count("card") == sum(per_seat.values()):
        rig.ctl.know(int(result["seq"]), per_seat)
    return True


def deal_hand(rig: Rig, n: int, fault: str, progress: Callable[[str], None]) -> HandLog:
    from controller.sim import dealer as dealer_sim
    from firmware_bridge.table_sim import Console as ConsoleStep

    game = GAMES[n % len(GAMES)]
    log = HandLog(n, game, fault)
    rig.hand = n + 1
    rig.console.request("change_game", {"game": game})
    r = rig.console.request("new_hand", {})
    if r is not None and not r["ok"] and rig.last is not None:
        # The table refuses a new hand: the last one is still open (a card it never got, say).  The
        # floor ends it as the dealer would have (he enters what the table lacks, the players fold
        # in turn), counts it, and the session goes on (it must never stall for good: issue 26).
        last_seq, last_pitched, last_log = rig.last
        rig.stuck.append({"hand": last_log.hand + 1, "fault": last_log.fault, "refused": r and r["error"]})
        wrap_up(rig, last_seq, last_pitched, last_log)
        rig.console.request("acknowledge", {}, timeout=3, tries=2, quiet=True)
        rig.console.request("change_game", {"game": game})  # refused too while that hand was open
        r = rig.console.request("new_hand", {})
    if r is None or not r["ok"]:
        log.refused.append(f"new_hand: {r and r['error']}")
        return log
    seq = r["result"]["seq"]
    log.start_seq = seq
    deadline = time.monotonic() + 15
    start = None
    while start is None and time.monotonic() < deadline:
        start = next((e for e in rig.events("hand_start") if e["seq"] == seq), None)
        time.sleep(0.01)
    if start is None:
        log.refused.append("no hand_start event")
        return log
    hand = {"name": f"bench_{n}", "deck": "A", **_header(start)}
    hand["steps"] = dealer_sim._Dealer(rig.rng, _header(start)).run()  # noqa: SLF001 - the simulator's dealer
    plan = rig.sim.plan(hand)
    moves = [i for i, a in enumerate(plan.actions) if not hasattr(a, "event")]
    if fault == "misdeal":
        # Called during the initial deal, before any action (after substantial action a misdeal
        # is too late and the hand plays on: RRoP s3 Misdeals 2, TDA 34).
        first_act = next((i for i, a in enumerate(plan.actions) if hasattr(a, "event")), len(plan.actions))
        moves = [i for i in moves if i < first_act] or moves
    at = rig.rng.choice(moves[: max(1, len(moves) * 2 // 3)]) if fault != "none" and moves else -1
    cards_before = rig.card_count()
    pitched = Pitched(seq)
    rig.last = (seq, pitched, log)
    pitched_since, settled = True, -1  # a card placed since the cards last settled; the count then
    for i, action in enumerate(plan.actions):
        if i == at and fault == "misdeal":
            _quiet(rig.card_count, 0.4, 4.0)
            r = rig.console.request("misdeal", {"reason": "called_misdeal"})
            if r is None or not r["ok"]:
                log.refused.append(f"misdeal: {r and r['error']}")
            break
        if i == at:
            getattr(rig, {"kill": "kill9", "retained": "retained_request"}.get(fault, fault))()
        if isinstance(action, ConsoleStep):
            if any(e["seq"] > seq for e in rig.events("hand_end")):
                break  # the hand ended early (a ruling): the dealer stops and clears the table
            # The dealer acts on what the display shows: wait until the cards pitched so far are in.
            due = cards_due(plan.expected[: action.index])
            settle = time.monotonic() + 8
            while rig.card_count() - cards_before < due and time.monotonic() < settle:
                answer_confirm(rig, pitched, log)
                time.sleep(0.01)
            req = _request_fields(action.event)
            if req is None:
                continue
            if rig.card_count() - cards_before < due and confirm_missing(rig, pitched, log):
                # 8 s on, the display still lacks a card he pitched and the table asked nothing (a tag
                # it never heard, issue 26, F5): he enters it, as a dealer does (request/confirm).
                rig.entered.append({"hand": n + 1, "fault": fault, "due": due,
                                    "shown": rig.card_count() - cards_before})
                settle = time.monotonic() + 4
                while rig.card_count() - cards_before < due and time.monotonic() < settle:
                    time.sleep(0.01)
            if rig.card_count() - cards_before < due:
                # The dealer acts though the display still lacks a card he pitched: the table rules
                # on what it has (a short seat when action starts is wrong_card_count).
                rig.gave_up.append({"hand": n + 1, "fault": fault, "due": due,
                                    "shown": rig.card_count() - cards_before})
            answer = rig.console.request(*req)
            if answer is None or not answer["ok"]:
                log.refused.append(f"{req[0]} {req[1]}: {answer and answer['error']}")
        else:
            if action.removes and (pitched_since or rig.card_count() != settled):
                # A dealer lifts cards (a fold, the scoop) once the ones pitched have settled: once after
                # he last pitched (and again if a card came in since), not before every card he lifts;
                # settled is the display showing every card he pitched, or else no new one for 0.4 s.
                _quiet(rig.card_count, 0.4, 4.0, reach=cards_before + pitched.placed)
                pitched_since, settled = False, rig.card_count()
            for antenna, uid in action.removes:
                rig.emulator.remove(antenna, uid)
                card = rig.registry.lookup(uid).card  # gone from its seat (a fold, the scoop): no longer dealt there
                # (A burn lifted off the burn antenna stays burnt: the table counts it; forgotten here,
                # the dealer's confirm answer left out the next burn, and the table waited for it.)
                if card is not None and _where(rig, antenna).startswith("seat:") \
                        and (_where(rig, antenna), card.label()) in pitched.cards:
                    pitched.cards.remove((_where(rig, antenna), card.label()))
            for antenna, uid in action.places:
                rig.emulator.place(antenna, uid)
                card = rig.registry.lookup(uid).card
                where = _where(rig, antenna)
                if card is not None and (where in ("burn", "board") or where.startswith("seat:")):
                    pitched.cards.append((where, card.label()))  # dealt cards (not a fold into the muck)
                    pitched.placed += 1
                    pitched_since = True
            time.sleep(rig.pace)
            answer_confirm(rig, pitched, log)
    log.finished = wait_for_the_end(rig, seq, pitched, log)
    if not log.finished:
        rig.console.request("misdeal", {"reason": "called_misdeal"}, tries=2)
        wrap_up(rig, seq, pitched, log)
    # Clear the table for the next hand and acknowledge whatever the engine ruled.
    for antenna, uids in rig.emulator.table().items():
        for uid in uids:
            rig.emulator.remove(antenna, uid)
    for _ in range(20):
        r = rig.console.request("acknowledge", {}, timeout=3, tries=2, quiet=True)
        if r is None or not r["ok"]:
            break
    progress(f"hand {n + 1}: {game}, fault {fault}, {'finished' if log.finished else 'NOT finished'}"
             + (f", refused {len(log.refused)}" if log.refused else ""))
    return log


def wait_for_the_end(rig: Rig, seq: int, pitched: Pitched, log: HandLog, timeout: float = 15.0) -> bool:
    """All pitched, the dealer waits for the hand's end, answering the table's "order unknown"
    questions meanwhile, as he does at every step (the run on d940dfc, hand 75: an all-in flop asked
    about while the broker was away reached the display after his last card; unanswered, the table
    waited, and the hand was counted unfinished).  Whether it ended."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(e["seq"] > seq for e in rig.events("hand_end")):
            return True
        answer_confirm(rig, pitched, log)
        time.sleep(0.02)
    return False


def wrap_up(rig: Rig, seq: int, pitched: Pitched, log: HandLog) -> None:
    """A hand that did not finish and that a misdeal no longer ends (too late after substantial
    action: the hand plays on): the players fold in turn until it is over, so the session goes on
    (a hand left open refused every later new_hand: 173 of a 200-hand run).  A table that waits
    for a card (no one to act) gets it from the dealer, who knows what he pitched (request/confirm)."""
    entered = False
    for _ in range(12):
        if any(e["seq"] > seq for e in rig.events("hand_end")):
            return
        rig.console.request("acknowledge", {}, timeout=3, tries=1, quiet=True)
        states = rig.watch["display"].parsed(rig.topics.state)
        hand = states[-1].get("hand") if states else None
        if not hand:
            return
        if hand.get("to_act") is None:
            if entered or not confirm_missing(rig, pitched, log):
                return
            entered = True
            time.sleep(0.5)
            continue
        rig.console.request("action", {"seat": hand["to_act"], "action": "fold"}, tries=2, quiet=True)
        time.sleep(0.2)


# ---------------------------------------------------------------------- the verdict
#: All the producer's login may read (systemd/mosquitto/acl, user producer), under any table: none
#: of it names a card, live or delayed (its page shows no card; the overlay's login reads those).
PRODUCER_READS = ("availability", "broadcast/graphics", "broadcast/delay", "response/producer/#")


def producer_secrecy(records: list[Record], base: str = "poker") -> dict[str, Any]:
    """What the producer's subscriber on ``#`` got from the broker: messages on a topic outside
    :data:`PRODUCER_READS`, and messages naming any card at all (a hole card, live or from the
    broadcast feed, a board, a shown hand): both must be 0, over ``received`` > 0."""
    from paho.mqtt.client import topic_matches_sub

    allowed = [f"{base}/+/{t}" for t in PRODUCER_READS]
    outside = [r.topic for r in records if not any(topic_matches_sub(a, r.topic) for a in allowed)]
    cards = [r.topic for r in records if CARD.search(r.payload.decode("utf-8", "replace"))]
    return {"received": len(records), "outside_its_topics": len(outside), "naming_a_card": len(cards),
            "examples": sorted(set(outside + cards))[:5]}


def analyse(rig: Rig, hands: list[HandLog], retained: list[Record] | None = None) -> dict[str, Any]:
    from controller.app.config import load_config
    from controller.journal import Journal
    from controller.rules.table import Table
    from controller.service import TableService

    cfg = load_config(rig.config)
    public_kinds = {"hand_start", "card", "burn", "board", "street", "action", "draw", "hand_end"}
    expected: dict[tuple[str, int], int] = {}
    ended: set[int] = set()
    rulings: list[dict] = []
    confirm: list[dict] = []  # the table asking the dealer to confirm cards of unknown order
    retained_applied = 0
    called = 0
    downcards: dict[int, set[str]] = defaultdict(set)
    with Journal(cfg.journal.path) as journal:
        svc = TableService(Table(**cfg.table_kwargs()))
        retained_seqs = {seq for tx, seq in journal._db.execute(  # noqa: SLF001 - a bench reads the table
            "SELECT tx, seq FROM transactions WHERE tx LIKE 'retained-%'")}
        retained_applied = len(retained_seqs)
        chain = journal.verify_chain().to_dict()
        for entry in journal.entries():
            asks = entry.event.kind == "camera_report" and "order unknown" in getattr(entry.event, "detail", "")
            for out in svc.apply(entry.event, seq=entry.seq, at=entry.at):
                if out.kind in public_kinds:
                    expected[(out.kind, out.seq)] = svc.hand_id
                if out.kind == "hand_end":
                    ended.add(svc.hand_id)
                elif out.kind == "alert" and (out.payload.get("reason") == "called_misdeal" or (
                        entry.event.kind == "call_misdeal" and out.payload.get("reason") == "misdeal_too_late")):
                    called += 1  # the dealer's own call (or the table's "too late" to it), not a ruling it made
                elif out.kind == "alert" and asks:
                    confirm.append(dict(out.payload, seq=out.seq))
                elif out.kind == "alert":
                    rulings.append(dict(out.payload, seq=out.seq))
                elif out.kind == "holecards":
                    engine = svc.engine
                    assert engine is not None
                    for held in engine.hands.values():
                        for h in held:
                            if not h.up:
                                downcards[svc.hand_id].add(h.card.label(engine.setup.deck).split("@")[0])
    ctl = rig.ctl.snapshot()
    got: Counter = Counter()
    for r in ctl:
        if r.topic.startswith(rig.topics.root + "/event/") and r.payload:
            p = json.loads(r.payload)
            got[(p["kind"], p["seq"])] += 1
    lost = sorted(k for k in expected if k not in got)
    duplicated = sum(n - 1 for k, n in got.items() if k in expected and n > 1)

    # Leaks on the display, console and Home Assistant credentials: a face-down card of a hand in
    # any payload about that hand, except the cards tabled at its showdown.
    leaks: Counter = Counter()
    examples: list[str] = []
    for role in ("display", "console", "homeassistant"):
        for r in rig.watch[role].snapshot():
            if not r.payload or not r.payload.startswith(b"{"):
                continue
            p = json.loads(r.payload)
            hand_id = p.get("hand_id")
            if hand_id is None:
                continue
            text = r.payload.decode("utf-8", "replace")
            shown: set[str] = set()
            if p.get("kind") == "hand_end" and isinstance(p.get("shown"), dict):
                shown = {c.split("@")[0] for cards in p["shown"].values() for c in cards}
            bad = {c for c in CARD.findall(text) if c in downcards.get(hand_id, set())} - shown
            if p.get("kind") == "hand_end":
                bad = {c for c in bad if c not in shown}
            if bad:
                leaks[role] += 1
                if len(examples) < 5:
                    examples.append(f"{role} {r.topic}: {sorted(bad)}")
    journal_full_alerts = sum(1 for r in rig.watch["display"].snapshot()
                              if r.topic == rig.topics.alert_active and b'"journal_full"' in r.payload)
    # The overlay: broadcast hole cards never before their delay (``ts`` is when the controller
    # published the private copy, on this machine's clock).
    early = 0
    for r in rig.watch["overlay"].snapshot():
        if r.topic == rig.topics.broadcast("holecards") and r.payload:
            p = json.loads(r.payload)
            if r.wall < p["ts"] + rig.delay - 0.05:
                early += 1
    # Recovery after a replug or reset: the first card the controller's stream got afterwards.
    no_card_after: Counter = Counter()
    for kind, t in rig._replugs:  # noqa: SLF001
        cards = [r.t for r in ctl if t < r.t < t + 15 and r.topic.startswith(rig.topics.root + "/event/")
                 and r.topic.rsplit("/", 1)[-1] in ("card", "board", "burn")]
        if cards:
            rig.recovery[kind].append(min(cards) - t)
        else:
            no_card_after[kind] += 1  # the hand had ended (a ruling) or no card came in 15 s
    # Each ruling belongs to the dealt hand whose new_hand came last before it (by journal seq: a
    # redeal after a misdeal keeps its hand number, so numbers do not tell the dealt hands apart).
    starts = sorted((h.start_seq, h.hand + 1, h.fault) for h in hands if h.start_seq is not None)

    def dealt_hand(seq: int) -> int:
        found = 0
        for start, n, _fault in starts:
            if start <= seq:
                found = n
        return found

    for ruling in rulings:
        ruling["hand"] = dealt_hand(ruling["seq"])
    fault_of = {n: fault for _, n, fault in starts}
    # A finished hand's hole cards still retained on the overlay's topic (a live hand's may be).
    stale = [r for r in retained or [] if json.loads(r.payload).get("hand_id") in ended]
    by_reason = Counter(r["reason"] for r in rulings)
    # The bench's dealer never answers a confirm alert: cards it left unconfirmed can make a later
    # ruling in the same hand (a seat that looks dealt out).  Counted within false_rulings, and here.
    asked = {(dealt_hand(c["seq"]), c["seq"]) for c in confirm}
    after_confirm = Counter(r["hand"] for r in rulings if any(h == r["hand"] and q < r["seq"] for h, q in asked))
    by_fault = Counter(fault_of.get(r["hand"], "?") for r in rulings)

    def summary(xs: list[float]) -> dict[str, Any]:
        if not xs:
            return {"n": 0}
        return {"n": len(xs), "p50": round(statistics.median(xs), 3), "max": round(max(xs), 3)}

    return {
        "hands": len(hands),
        "hands_finished": sum(h.finished for h in hands),
        "faults": {"kill_9": rig.kills, "broker_outage": rig.outages, "unplug": rig.unplugs, "reset": rig.resets,
                   "stall": rig.stalls, "corrupt_burst": rig.corruptions, "retained_request": rig.retained,
                   "slow_clients": rig.floods, "disk_full": rig.disk_fulls,
                   "hands_by_fault": dict(Counter(h.fault for h in hands))},
        "retained_requests_applied": retained_applied,
        "confirm_alerts": len(confirm),
        "confirm_alerts_answered": rig.confirms,
        "dealer_acted_with_cards_missing": {"n": len(rig.gave_up), "examples": rig.gave_up[:5]},
        "dealer_entered_cards_never_shown": {"n": len(rig.entered), "examples": rig.entered[:5]},
        "hands_left_open_then_ended_by_the_floor": {"n": len(rig.stuck), "examples": rig.stuck[:5]},
        "confirm_alerts_by_fault": dict(Counter(fault_of.get(dealt_hand(c["seq"]), "?") for c in confirm)),
        "journal_chain": chain,
        "misdeals_called_by_the_dealer": called,
        "false_rulings": len(rulings),
        "false_rulings_by_reason": dict(by_reason),
        "false_rulings_after_an_unanswered_confirm_alert": sum(after_confirm.values()),
        "false_rulings_after_an_unanswered_confirm_alert_by_hand": {str(h): n for h, n in after_confirm.items()},
        "false_rulings_by_fault": dict(by_fault),
        "hands_with_false_rulings_by_fault": dict(Counter(fault_of.get(h, "?") for h in {r["hand"] for r in rulings})),
        "false_rulings_by_hand": {str(h): n for h, n in sorted(Counter(r["hand"] for r in rulings).items())},
        "requests": {"sent": rig.console.sent, "retried": rig.console.retries, "refused": rig.console.refused,
                     "refusals": dict(rig.console.errors)},
        "events": {"expected": len(expected), "received_distinct": sum(1 for k in got if k in expected),
                   "lost": len(lost), "lost_examples": [f"{k}@{s}" for k, s in lost[:5]],
                   "duplicated": duplicated},
        "leaks": {"display_console_ha": sum(leaks.values()), "by_credential": dict(leaks),
                  "examples": examples, "overlay_before_delay": early,
                  "overlay_retained_after_its_hand": len(stale),
                  "producer": producer_secrecy(rig.watch["producer"].snapshot(), rig.topics.base)},
        "recovery_s": {k: summary(v) for k, v in rig.recovery.items()},
        "recovery_without_a_card_in_15_s": dict(no_card_after),
        "slow_clients": {"floods": rig.flood_stats, "pages_not_answering_after":
                         sum(1 for f in rig.flood_stats for v in f["answered_after_s"].values() if v is None),
                         "checks_after_a_kill_9_restart": sum(1 for f in rig.flood_stats if f["waited_for_restart_s"])},
        "disk_full": {"disk": rig.disk_note, "journal_full_alerts": journal_full_alerts,
                      "console_requests_refused_journal_full": rig.console.journal_full},
        "broadcast_delay_s": rig.delay,
        "note": "our own dealer simulator and antenna emulator; no table hardware",
    }


def request_round_trip(rig: Rig, n: int = 200) -> dict[str, Any]:
    """Request to response through the daemon (a ``set_button`` applied and journaled, and a
    refused request that stops at validation) against a bare broker round trip (publish, QoS 1,
    to a topic the same client subscribes to), in milliseconds, same broker, same process."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    from controller.mqtt.link import set_nodelay

    host, port, t = rig.broker.host, rig.broker.port, rig.topics

    def client(user: str, topic: str) -> tuple[Any, dict[str, threading.Event]]:
        waits: dict[str, threading.Event] = {}
        c = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5,
                        client_id=f"rtt-{user}-{secrets.token_hex(3)}")
        c.username_pw_set(user, rig.passwords[user])
        ready = threading.Event()

        def on_message(cl, ud, msg) -> None:
            key = msg.payload.decode("utf-8", "replace")
            for k, ev in list(waits.items()):
                if k in key:
                    ev.set()

        c.on_message = on_message
        c.on_socket_open = lambda cl, ud, sock: set_nodelay(sock)  # a client as quick as the daemon
        c.on_subscribe = lambda *a: ready.set()
        c.on_connect = lambda cl, ud, f, rc, p: cl.subscribe(topic, qos=1)
        c.connect(host, port, keepalive=10)
        c.loop_start()
        ready.wait(10)
        return c, waits

    def measure(c: Any, waits: dict[str, threading.Event], topic: Callable[[int], str],
                payload: Callable[[int, str], bytes]) -> list[float]:
        out = []
        for i in range(n):
            key = f"rtt{i}x{secrets.token_hex(4)}"
            ev = waits[key] = threading.Event()
            t0 = time.perf_counter()
            c.publish(topic(i), payload(i, key), qos=1)
            if ev.wait(5):
                out.append((time.perf_counter() - t0) * 1000)
            del waits[key]
        return out

    console, cw = client("console", t.response + "/#")
    bare, bw = client("controller", t.root + "/bench/echo")
    try:
        applied = measure(console, cw, lambda i: t.request("set_button"),
                          lambda i, k: json.dumps({"seat": SEATS[i % len(SEATS)], "transaction": k}).encode())
        refused = measure(console, cw, lambda i: t.request("seat"),
                          lambda i, k: json.dumps({"seat": 99, "name": "x", "transaction": k}).encode())
        echo = measure(bare, bw, lambda i: t.root + "/bench/echo", lambda i, k: k.encode())
    finally:
        for c in (console, bare):
            c.disconnect()
            c.loop_stop()

    def p50(xs: list[float]) -> float | None:
        return round(statistics.median(xs), 3) if xs else None

    bare_p50 = p50(echo)
    return {"requests": n, "applied_p50_ms": p50(applied), "refused_p50_ms": p50(refused),
            "bare_round_trip_p50_ms": bare_p50,
            "ratio_applied_to_bare": round(statistics.median(applied) / bare_p50, 2) if applied and bare_p50 else None,
            "journal_sync": "normal", "answered": [len(applied), len(refused), len(echo)]}


def request_burst(rig: Rig, n: int = 2000, timeout: float = 60.0) -> dict[str, Any]:
    """``n`` QoS 1 requests published at once (cheap ones: an acknowledgement with nothing to
    acknowledge, refused, nothing journaled); how many are answered, and how fast."""
    tag = uuid.uuid4().hex[:6]
    t0 = time.monotonic()
    for i in range(n):
        rig.console.rec.c.publish(rig.topics.request("acknowledge"),
                                  json.dumps({"transaction": f"burst-{tag}-{i}"}).encode(), qos=1)

    def answered() -> int:
        marker = f"burst-{tag}-".encode()
        return len({r.payload for r in rig.console.rec.snapshot() if r.payload and marker in r.payload})

    deadline = t0 + timeout
    while answered() < n and time.monotonic() < deadline:
        time.sleep(0.1)
    return {"sent": n, "answered": answered(), "seconds": round(time.monotonic() - t0, 2)}


def run_bench(hands: int = 60, seed: int = 1, delay: int = 2, pace: float = 0.08, log_mode: str = "json",
              fault_weights: dict[str, float] | None = None, schedule: list[str] | None = None,
              progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Deal ``hands`` hands, each with one fault drawn by ``fault_weights`` (or taken in turn from
    ``schedule``), and count what went wrong (see the module's docstring)."""
    progress = progress or (lambda msg: None)
    weights = fault_weights or {"none": 2, "kill": 1, "outage": 1, "unplug": 1, "reset": 1, "misdeal": 1, "stall": 1,
                                "corrupt": 1, "retained": 1, "slowclients": 1, "diskfull": 1}
    work = Path(tempfile.mkdtemp(prefix="tablectl-faults-"))
    rig = Rig(work, seed, delay, log_mode, pace)
    t_start = time.monotonic()
    logs: list[HandLog] = []
    rtt = None
    burst = None
    retained: list[Record] = []
    try:
        rig.recovery["restart"].append(rig.wait_online(rig.start_daemon()))
        for seat in SEATS:
            rig.console.request("seat", {"seat": seat, "name": f"Player {seat}", "post": True})
        rtt = request_round_trip(rig) if hands else None
        rig.console.request("set_button", {"seat": SEATS[-1]})
        kinds = list(weights)
        # SIGUSR1 ends the session after the hand being dealt: the burst and the verdict follow, over
        # the hands dealt (a long session cut to fit the time there is, with a result).
        cut = threading.Event()
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGUSR1, lambda *_: cut.set())
        for n in range(hands):
            if cut.is_set():
                progress(f"SIGUSR1: the session ends after {n} hands")
                break
            if schedule:
                fault = schedule[n % len(schedule)]
            else:
                fault = rig.rng.choices(kinds, weights=[weights[k] for k in kinds])[0]
            logs.append(deal_hand(rig, n, fault, progress))
        time.sleep(delay + 1.0)  # the last broadcast messages leave
        # No hand's hole cards may stay retained on the overlay's topic.
        late = Recorder(rig.broker.host, rig.broker.port, "overlay", rig.passwords["overlay"],
                        [rig.topics.broadcast("holecards")])
        late.connected.wait(10)
        time.sleep(1.0)
        retained = [r for r in late.snapshot() if r.payload]
        late.close()
        burst = request_burst(rig) if hands else None
    finally:
        rig.stop()
    try:
        result = analyse(rig, logs, retained)
    finally:
        rig.unmount()
    result["request_burst"] = burst
    result["request_to_response"] = rtt
    result["hands_asked"] = hands
    result["seconds"] = round(time.monotonic() - t_start, 1)
    result["workdir"] = str(work)
    return result


__all__ = ["run_bench"]
