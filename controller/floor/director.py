"""The floor's director: one tournament, the cash room and the action clocks, journaled in the store.

Every request (a registration, a bust a table reported, a seat that opened, a clock called) is first
appended to the store's ``room_log`` with the time it was made, then applied to the pure models
(:mod:`.tournament`, :mod:`.cashroom`); a restarted floor replays the log and reaches the same
seats and decisions (the random source's seed is journaled with the tournament). Decisions go to
the floor page's live stream and, through ``publish``, as ``floor/room/<kind>`` and a table's own
instructions as ``floor/room/table/<table>`` (outside the tables' ``<base>/<table>/`` namespace, so
no table id can collide). When the clock reaches a new level, each open tournament table gets
``<base>/<table>/request/level`` (the table's own request: its daemon applies the level at its next
hand, TDA 21). The floor service publishes all of them on the tables' Mosquitto when it reads one,
and through NATS in a room (each table's bridge brings in its own). A move goes to both tables; what
the tables answer (``event/seating``, ``event/clock``, ``event/action``) comes back through
:meth:`Director.observe` as journaled requests (docs/room.md).
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from controller.errors import PokerTableError
from controller.floor.cashroom import CashRoom
from controller.floor.ingest import Parsed
from controller.floor.store import Row, Store
from controller.floor.tournament.chiprace import CITATIONS, chip_race
from controller.floor.tournament.clock import ActionClock
from controller.floor.tournament.seating import Tournament
from controller.floor.tournament.structure import Structure, TournamentClock

STREAM = "room"

log = logging.getLogger("controller.floor.director")


class DirectorError(PokerTableError, ValueError):
    """A request the director refuses: an unknown operation, a missing field, no tournament yet."""


Publish = Callable[[str, dict[str, Any]], None]


class Director:
    def __init__(self, store: Store, publish: Publish | None = None, now: Callable[[], float] = time.time,
                 base: str = "poker") -> None:
        self.store = store
        self.base = base
        #: the level last sent to the tables (the clock's reading decides the next one)
        self._level_sent: int | None = None
        self.publish = publish or (lambda topic, payload: None)
        self.now = now
        self.lock = threading.Lock()
        self.tournament: Tournament | None = None
        self.clock: TournamentClock | None = None
        self.cash = CashRoom()
        self.action_clocks: dict[str, tuple[ActionClock, float | None]] = {}
        self._seq = 0
        self._replaying = False
        #: face-up cards read so far at a table being broken, by player (TDA 9's step 2)
        self._draw_reads: dict[str, dict[str, str]] = {}
        #: (player, index of the redraw's seat decision) he has left his table for
        self._left: set[tuple[str, int]] = set()

    # ------------------------------------------------------------------ journal
    def restore(self) -> Director:
        """Replay the room's log: the same requests, in order, at the times they were made."""
        self._replaying = True
        try:
            for entry in self.store.room_log(STREAM):
                try:
                    self._apply(entry)
                except PokerTableError:
                    pass  # refused then, refused now: the log keeps what was asked
                self._seq = max(self._seq, int(entry["seq"]))
        finally:
            self._replaying = False
        return self

    def request(self, op: str, body: dict[str, Any]) -> list[dict[str, Any]]:
        """Journal a request, then apply it; returns the decisions it made."""
        with self.lock:
            entry: dict[str, Any] = {"op": op, "body": body, "t": self.now(), "seq": self._seq + 1}
            if op == "tournament.create" and "seed" not in body:
                entry["body"] = {**body, "seed": secrets.randbits(63)}  # journaled: the draws replay
            self.store.write([Row("room", {"stream": STREAM, "seq": entry["seq"], "ts": entry["t"],
                                           "payload": entry})])
            self._seq = entry["seq"]
            return self._apply(entry)

    # ------------------------------------------------------------------ dispatch
    def _apply(self, entry: dict[str, Any]) -> list[dict[str, Any]]:
        op, body, t = entry["op"], entry.get("body") or {}, float(entry["t"])
        family, _, name = op.partition(".")
        handler = {"tournament": self._tournament, "cash": self._cash, "clock": self._clock}.get(family)
        if handler is None:
            raise DirectorError(f"unknown request {op!r}")
        try:
            decisions = handler(name, body, t)
        except KeyError as exc:
            raise DirectorError(f"{op}: missing {exc.args[0]!r}") from None
        except TypeError as exc:
            raise DirectorError(f"{op}: {exc}") from None
        for i, d in enumerate(decisions):
            # the order's id: a table carries each out once however often it arrives (floor_orders.py);
            # the request's time keeps ids apart should a room's log ever start again from seq 1
            d.setdefault("id", f"{t:.6f}-{entry['seq']}-{i}")
        if not self._replaying:
            for d in decisions:
                self._announce(d)
        return decisions

    def _announce(self, decision: dict[str, Any]) -> None:
        self.publish(f"floor/room/{decision['kind']}", decision)
        # A move goes to both tables: the giving table lets the player go, the receiving table seats him;
        # a bust to the table he went out at and the one he was sent to, should he have left for it.
        sent: list[Any] = []
        for key in ("table", "from_table", "to_table"):
            table = decision.get(key)
            if table is not None and table not in sent:
                sent.append(table)
                self.publish(f"floor/room/table/{table}", decision)

    def tick(self, t: float | None = None) -> list[dict[str, Any]]:
        """Called every second: when the clock reaches a new level, every open table hears it.

        TDA 21: "A new level will not be announced until the clock reaches zero. The new level applies
        to the next hand." The table's daemon already keeps a new level for its next hand.
        """
        t = self.now() if t is None else t
        out: list[dict[str, Any]] = []
        with self.lock:
            # TDA 26: a clock whose 50 seconds and 10-second count ran out without an action
            due = [table for table, (c, acted) in self.action_clocks.items() if c.ruling(t, acted) is not None]
            tour, clock = self.tournament, self.clock
            reading = clock.reading(t) if tour is not None and clock is not None else None
            number = reading.level.number if reading is not None and not reading.on_break else None
            if tour is not None and reading is not None and number is not None and number != self._level_sent:
                self._level_sent = number
                level = {"kind": "level", "text": f"Level {number}: {reading.level.small_blind} / "
                         f"{reading.level.big_blind}, from each table's next hand", "citations": ["TDA 21"],
                         **reading.describe(), "at": t}
                self.publish("floor/room/level", level)
                for table in tour.open_tables():
                    self.publish(f"{self.base}/{table.number}/request/level", {"number": number})
                out.append(level)
        for table_id in due:
            try:
                out += self.request("clock.expire", {"table": table_id})
            except DirectorError:  # acted or expired meanwhile by a request
                pass
        return out

    def _tournament(self, name: str, body: dict[str, Any], t: float) -> list[dict[str, Any]]:
        if name == "create":
            self.tournament = Tournament(Structure.from_dict(body["structure"]), int(body["seed"]),
                                         str(body.get("draw", "random")))
            self._draw_reads.clear()
            self._left.clear()
            self.clock = None
            return [{"kind": "tournament", "text": f"Tournament {body['structure']['name']} created",
                     "citations": []}]
        tour = self.tournament
        if tour is None:
            raise DirectorError("no tournament: create one first")
        calls: dict[str, Callable[[], Any]] = {
            "register": lambda: tour.register(str(body["name"])),
            "start": lambda: tour.start(list(body["tables"])),
            "late_entry": lambda: tour.late_entry(str(body["name"])),
            "bust": lambda: tour.bust(body["hand"]),
            "positions": lambda: tour.positions(body["table"], int(body["button"]),
                                                body.get("small_blind"), int(body["big_blind"]), body.get("hand_id")),
            "hand_end": lambda: tour.hand_end(body["table"], int(body["hand_id"]), dict(body["started"]),
                                              dict(body["stacks"]), body.get("names")),
            "confirm_move": lambda: tour.confirm_move(str(body["name"])),
            "break_cards": lambda: tour.break_cards(body["table"], dict(body["cards"])),
            "departed": lambda: self._departed(tour, body),
        }
        if name == "chip_race":
            return self._chip_race(tour, body, t)
        if name == "clock_start":
            self.clock = TournamentClock(tour.structure, t)
            return [{"kind": "level", "text": "The clock starts", "citations": ["TDA 21"], **self.reading(t)}]
        if name in ("pause", "resume"):
            if self.clock is None:
                raise DirectorError("the clock has not started")
            (self.clock.pause if name == "pause" else self.clock.resume)(t)
            return [{"kind": "level", "text": f"The clock {name}s", "citations": [], **self.reading(t)}]
        call = calls.get(name)
        if call is None:
            raise DirectorError(f"unknown tournament request {name!r}")
        return [d if isinstance(d, dict) else d.describe() for d in (call() or [])]

    def _travel(self, tour: Tournament, name: str, table: Any, seat: Any = None) -> tuple[Any, int, list[str]] | None:
        """Where a player leaving ``table`` (from ``seat``, when given) goes, and the rules that send him:
        a move not yet confirmed (TDA 9, RRoP s15 14), or the redraw that last seated him (RRoP s15 17)
        if he has not left for it yet."""
        p = tour.players.get(name)
        if p is None or not p.active:
            return None
        last = _last_travel(tour, name)
        if p.moving_to is not None and str(p.table) == str(table) and seat in (None, p.seat):
            cites = list(last[1].citations) if last and last[1].kind == "move" else []
            return p.moving_to[0], p.moving_to[1], cites
        if last is not None and last[1].kind == "seat" and (name, last[0]) not in self._left \
                and str(last[1].data.get("from_table")) == str(table) and seat in (None, last[1].data.get("from_seat")):
            return last[1].data["table"], last[1].data["seat"], list(last[1].citations)
        return None

    def _departed(self, tour: Tournament, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The giving table let a travelling player go (his ``event/seating``): the receiving table is told
        to seat him with the chips he carries. A move is confirmed when that table seats him."""
        name, table = str(body["name"]), body["table"]
        travel = self._travel(tour, name, table)
        if travel is None:
            raise DirectorError(f"{name} has no move from table {table}")
        to, seat, citations = travel
        last = _last_travel(tour, name)
        if tour.players[name].moving_to is None and last is not None:  # a redraw's seat: he has left for it
            self._left.add((name, last[0]))
        else:  # a move: he is the receiving table's now (a break or a redraw before he sits names it)
            tour.departed(name, table)
        return [{"kind": "arrive", "player": name, "table": to, "seat": seat, "from_table": table,
                 "stack": body.get("stack"), "citations": citations,
                 "text": f"{name} leaves table {table} for table {to}, seat {seat}"}]

    def _chip_race(self, tour: Tournament, body: dict[str, Any], t: float) -> list[dict[str, Any]]:
        """TDA 22 at a scheduled colour-up: the table's stacks by chip and the race's cards in deal order.

        The chips removed are those the structure colours up at the break the clock is in (or
        ``removed`` in the request); what remains is the structure's chips after that level.
        """
        if self.clock is None:
            raise DirectorError("the clock has not started: no colour-up is due")
        reading = self.clock.reading(t)
        scheduled = reading.level.colour_up if reading.on_break else ()
        removed = [int(x) for x in body.get("removed") or scheduled]
        if not removed:
            raise DirectorError(f"no colour-up is scheduled now (level {reading.level.number}"
                                f"{', on its break' if reading.on_break else ' in play'}): name the chips removed")
        remaining = [d for d in tour.structure.denominations if d not in removed]
        stacks = {int(seat): {int(d): int(n) for d, n in chips.items()} for seat, chips in body["stacks"].items()}
        results = chip_race(stacks, removed, remaining, [str(c) for c in body["cards"]])
        return [{"kind": "chip_race", "table": body["table"], "seat": r.seat, "text":
                 f"Seat {r.seat}: {r.value_before} -> {r.value_after} ({r.why})", "citations": list(CITATIONS),
                 **r.describe()} for r in results]

    def _cash(self, name: str, body: dict[str, Any], t: float) -> list[dict[str, Any]]:
        room = self.cash
        calls: dict[str, Callable[[], Any]] = {
            "open_game": lambda: room.open_game(str(body["table"]), str(body["form"]), str(body["stakes"]),
                                                int(body.get("seats", 9)), body.get("feeds")),
            "join_list": lambda: [room.join_list(str(body["player"]), str(body["form"]), str(body["stakes"]),
                                                 bool(body["present"]), t)],
            "seat_opens": lambda: room.seat_opens(str(body["table"]), int(body["seat"])),
            "answer_move": lambda: room.answer_move(str(body["player"]), bool(body["accept"]), t),
            "seat_change": lambda: room.request_seat_change(str(body["player"]), body.get("seat")),
            "table_change": lambda: [room.request_table_change(str(body["player"]), str(body["to"]))],
            "seat_new_player": lambda: room.seat_new_player(str(body["form"]), str(body["stakes"])),
        }
        call = calls.get(name)
        if call is None:
            raise DirectorError(f"unknown cash-room request {name!r}")
        return [d.describe() for d in (call() or [])]

    def _clock(self, name: str, body: dict[str, Any], t: float) -> list[dict[str, Any]]:
        """TDA 26: the floor calls a clock on a seat; the dealer reports the action (or its absence)."""
        table = str(body["table"])
        if name == "call":
            clock = ActionClock(table, int(body["seat"]), t)
            self.action_clocks[table] = (clock, None)
            return [{"kind": "action_clock", "table": table, "seat": clock.seat, "text":
                     f"Clock on seat {clock.seat}: 50 seconds, then a 10-second count", "citations": ["TDA 26"],
                     "phase": "running", "called": clock.called, "count_at": clock.called + clock.act_seconds,
                     "expires": clock.expires}]
        if name == "acted":
            clock, _ = self._clock_on(table)
            del self.action_clocks[table]  # in time or too late, this clock is done
            phase = clock.phase(t, t)
            if phase == "acted":
                return [{"kind": "action_clock", "table": table, "seat": clock.seat, "text": "Acted in time",
                         "citations": ["TDA 26"], "phase": phase}]
            return [dict(clock.ruling(t) or {}, kind="ruling", table=table)]
        if name == "expire":
            clock, acted = self._clock_on(table)
            ruling = clock.ruling(t, acted)
            if ruling is None:
                raise DirectorError(f"the clock on table {table} has not run out")
            del self.action_clocks[table]
            return [dict(ruling, kind="ruling", table=table)]
        raise DirectorError(f"unknown clock request {name!r}")

    def observe(self, msg: Parsed) -> None:
        """What a table publishes that the room acts on; each is journaled as a request, so a replay
        reaches the same decisions.

        * ``event/clock``: the dealer called the clock on a seat; ``event/action`` of a seat with a clock
          on it: the player acted (TDA 26);
        * a tournament table's ``event/hand_start``: where its button and blinds are (for balancing);
        * ``event/seating``: the giving table let a moving player go, the receiving table seated him;
        * the face-up ``event/card`` of a table being broken (TDA 9's draw).
        """
        p = msg.payload
        if not isinstance(p, dict):
            return
        if msg.path == "event/clock" and isinstance(p.get("seat"), int):  # the dealer called it (TDA 26)
            self.request("clock.call", {"table": msg.table_id, "seat": p["seat"], "by": "dealer"})
            return
        running = self.action_clocks.get(msg.table_id)
        if msg.path == "event/action" and running is not None and running[1] is None \
                and p.get("seat") == running[0].seat:
            self.request("clock.acted", {"table": msg.table_id})
            return
        tour = self.tournament
        if tour is None:
            return
        table = next((t for t in tour.tables if str(t) == msg.table_id), None)
        if table is None:
            return
        if msg.path == "event/seating":
            self._seating(tour, table, p)
            return
        if msg.path == "event/card" and table in tour.pending_breaks:
            self._break_read(table, p)
            return
        if msg.path == "event/hand_end":
            self._hand_end(tour, table, p)
            return
        if msg.path != "event/hand_start" or not tour.tables[table].open:
            return
        raw = p.get("blinds")
        blinds: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if not isinstance(p.get("button"), int) or not isinstance(blinds.get("big"), int):
            return
        self.request("tournament.positions", {"table": table, "button": p["button"],
                                              "small_blind": blinds.get("small"), "big_blind": blinds["big"],
                                              "hand_id": p.get("hand_id")})

    def _hand_end(self, tour: Tournament, table: Any, p: dict[str, Any]) -> None:
        """A tournament table's hand is over: its busts are read from the chips it published (each seat's
        when the hand began and once the pot was pushed), journaled as ``tournament.hand_end``. A misdeal
        or a void is no hand played; a hand whose pot could not be awarded says no stacks. The ingestor
        hands this every delivery of a hand's end (a first one may have been stored just before the
        floor stopped): one already read is not journaled again."""
        started, stacks, hand_id, names = p.get("started"), p.get("stacks"), p.get("hand_id"), p.get("names")
        if p.get("result") in ("misdeal", "void") or not isinstance(hand_id, int) \
                or not isinstance(started, dict) or not isinstance(stacks, dict):
            return
        if (str(table), hand_id) in tour.hands_read:
            return
        body = {"table": table, "hand_id": hand_id, "started": started, "stacks": stacks}
        if isinstance(names, dict):
            body["names"] = names
        try:
            self.request("tournament.hand_end", body)
        except PokerTableError as exc:  # journaled and refused (a seat the floor has no player in...)
            log.warning("table %s hand %s: %s", table, hand_id, exc)

    def _seating(self, tour: Tournament, table: Any, p: dict[str, Any]) -> None:
        """A table let go a player the floor sent elsewhere (a move, a redraw), or seated one it moved."""
        player = tour.players.get(str(p.get("name")))
        if player is None:
            return
        if p.get("change") == "unseat" and self._travel(tour, player.name, table, p.get("seat")) is not None:
            self.request("tournament.departed", {"name": player.name, "table": table, "stack": p.get("stack")})
        elif p.get("change") == "seat" and player.moving_to == (table, p.get("seat")):
            self.request("tournament.confirm_move", {"name": player.name})

    def _break_read(self, table: Any, p: dict[str, Any]) -> None:
        """A face-up card the antennas read at a table being broken: once every player has one, the
        seat cards go out (TDA 9 Recommended Procedure, step 2). A second card to a seat replaces the
        first (the dealer corrected a misdealt draw)."""
        tour = self.tournament
        assert tour is not None
        if p.get("face") != "up" or not isinstance(p.get("card"), str) or not isinstance(p.get("seat"), int):
            return
        movers = tour.pending_breaks[table][0]
        player = tour.present(table).get(p["seat"])
        if player not in movers:  # an empty seat, or a player already sent elsewhere to balance
            return
        reads = self._draw_reads.setdefault(str(table), {})
        reads[player] = p["card"].split("@")[0]
        if sorted(reads) == movers:
            del self._draw_reads[str(table)]
            self.request("tournament.break_cards", {"table": table, "cards": reads})

    def _clock_on(self, table: str) -> tuple[ActionClock, float | None]:
        if table not in self.action_clocks:
            raise DirectorError(f"no clock is running at table {table}")
        return self.action_clocks[table]

    # ------------------------------------------------------------------ views
    def reading(self, t: float | None = None) -> dict[str, Any]:
        """The clock page's figures: level, blinds, antes, time left, next level, players, average."""
        t = self.now() if t is None else t
        out: dict[str, Any] = {"running": self.clock is not None, "at": t}
        tour = self.tournament
        if tour is not None:
            left = tour.active()
            out.update(players_left=len(left), entries=len(tour.players), name=tour.structure.name,
                       average_stack=(tour.structure.starting_stack * len(tour.players) // len(left)) if left else 0)
        if self.clock is not None:
            out.update(self.clock.reading(t).describe())
        return out

    def state(self) -> dict[str, Any]:
        tour = self.tournament
        return {"clock": self.reading(),
                "tournament": tour.describe() if tour else None,
                "decisions": [d.describe() for d in (tour.decisions[-50:] if tour else [])],
                "cash": self.cash.describe(),
                "action_clocks": {k: {"seat": c.seat, "phase": c.phase(self.now(), a),
                                      "seconds_left": round(c.seconds_left(self.now()), 1)}
                                  for k, (c, a) in self.action_clocks.items()}}


def _last_travel(tour: Tournament, name: str) -> tuple[int, Any] | None:
    """The newest decision that sent ``name`` somewhere (a move, a seat, a confirmed arrival), and its index."""
    for i in range(len(tour.decisions) - 1, -1, -1):
        d = tour.decisions[i]
        if d.data.get("player") == name and d.kind in ("move", "seat", "seated"):
            return i, d
    return None
