"""A player the floor sends somewhere else while he is walking between two tables (issue 23, found by
the 100-player room test under load).

He was moved from table A to table B (a balance, RRoP s15 14); A let him go, and the floor told B to
seat him (``arrive``). Before B's confirmation comes back, B is broken (TDA 9) or the room redrawn
(RRoP s15 17), and he gets a new seat. The new order must go to the table he is on his way to: A has
let him go already and would never answer an order naming it, so he would stay "moving" for ever and
the new table would wait for him for ever. The tables here follow the orders as a table does
(:mod:`controller.app.floor_orders`), with B's orders held back to open the window; the director hears
their ``event/seating`` as the ingest hands it over.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from controller.floor.director import Director
from controller.floor.ingest import Parsed
from controller.floor.store import Store

STRUCTURE = tomllib.loads((Path(__file__).resolve().parents[2] / "examples" / "tournament.toml").read_text())
TABLES = ["t1", "t2", "t3", "t4"]


class Tables:
    """Each table's seats, changed only by the floor's orders (as TableOnTheRoom in test_room_nats.py)."""

    def __init__(self, director: Director) -> None:
        self.d = director
        self.seats: dict[str, dict[int, tuple[str, int]]] = {t: {} for t in TABLES}
        self.inbox: dict[str, list[dict[str, Any]]] = {t: [] for t in TABLES}
        self.held: set[str] = set()

    def send(self, topic: str, payload: dict[str, Any]) -> None:
        if topic.startswith("floor/room/table/"):
            self.inbox[topic.rsplit("/", 1)[1]].append(payload)

    def deliver(self) -> None:
        """Every order not held back, in the order sent; each table's answer reaches the floor at once."""
        while any(self.inbox[t] for t in TABLES if t not in self.held):
            for me in TABLES:
                while me not in self.held and self.inbox[me]:
                    self._follow(me, self.inbox[me].pop(0))

    def _follow(self, me: str, d: dict[str, Any]) -> None:
        kind, name, seats = d.get("kind"), d.get("player"), self.seats[me]
        if kind == "bust" and me in (d.get("table"), d.get("to_table")):
            for seat in [s for s, (n, _) in seats.items() if n == name]:
                self._answer(me, "unseat", seat, *seats.pop(seat))
        if kind in ("move", "seat") and d.get("from_table") == me and seats.get(d["from_seat"], ("",))[0] == name:
            self._answer(me, "unseat", d["from_seat"], *seats.pop(d["from_seat"]))
        if (kind == "arrive" or (kind == "seat" and "from_table" not in d)) and d.get("table") == me:
            seats[d["seat"]] = (name, d.get("stack") if kind == "arrive" else STRUCTURE["starting_stack"])
            self._answer(me, "seat", d["seat"], *seats[d["seat"]])

    def _answer(self, me: str, change: str, seat: int, name: str, stack: int) -> None:
        self.d.observe(Parsed(me, "event/seating", {"change": change, "seat": seat, "name": name, "stack": stack}))

    def names(self, table: str) -> dict[int, str]:
        return {s: n for s, (n, _) in self.seats[table].items()}

    def staying(self, table: str) -> list[str]:
        """Who still has chips at ``table`` (one out waits in his seat until the floor's bust reaches it)."""
        return sorted(n for n, st in self.seats[table].values() if st)

    def hand(self, table: str, out: list[str]) -> None:
        """A hand at ``table`` in which the players ``out`` lose all their chips."""
        seats = self.seats[table]
        started = {str(s): st for s, (_, st) in seats.items()}
        stacks = {str(s): (0 if n in out else st) for s, (n, st) in seats.items()}
        names = {str(s): n for s, (n, _) in seats.items()}
        end = {"hand_id": self.d.tournament.started.get(table, 0) + 1, "result": "showdown", "started": started,
               "stacks": stacks, "names": names}
        self.d.observe(Parsed(table, "event/hand_end", end))
        for s in [s for s, (n, _) in seats.items() if n in out]:
            seats[s] = (seats[s][0], 0)


def _room(tmp_path: Path, players: int) -> tuple[Director, Tables]:
    sent: list[Any] = []
    d = Director(Store.open(f"sqlite:///{tmp_path / 'floor.db'}"), lambda topic, p: sent.append((topic, p)))
    d.restore()
    tables = Tables(d)
    d.publish = tables.send
    d.request("tournament.create", {"structure": {**STRUCTURE, "paid_places": 3}, "seed": 2})
    for i in range(players):
        d.request("tournament.register", {"name": f"p{i:02d}"})
    d.request("tournament.start", {"tables": TABLES})
    tables.deliver()
    return d, tables


def _agreed(d: Director, tables: Tables) -> bool:
    tour = d.tournament
    return not any(p.moving_to for p in tour.active()) and all(
        tables.names(str(t.number)) == tour.planned(t.number) for t in tour.open_tables())


def _in_transit(d: Director, tables: Tables) -> tuple[str, str]:
    """Bust players at the next table to break until the floor moves somebody there; his table lets him
    go, while the receiving table's orders are held back. Returns (player, receiving table)."""
    tour = d.tournament
    assert _agreed(d, tables)
    target = str(tour.break_order[0])
    while not any(p.moving_to for p in tour.active()):
        tables.held = {target}
        tables.hand(target, tables.staying(target)[:1])
    (mover,) = [p for p in tour.active() if p.moving_to]
    assert str(mover.moving_to[0]) == target
    tables.deliver()  # the giving table lets him go: the floor tells the receiving table to seat him
    assert any(o["kind"] == "arrive" and o["player"] == mover.name for o in tables.inbox[target])
    return mover.name, target


def _bust_elsewhere(d: Director, tables: Tables, target: str, until: Any) -> None:
    """A player out at the fullest other open table, hand after hand, until ``until()``."""
    tour = d.tournament
    while not until():
        other = max((t for t in TABLES if t != target and tour.tables[t].open), key=lambda t: len(tables.staying(t)))
        tables.hand(other, tables.staying(other)[-1:])
        tables.deliver()


def test_a_table_broken_while_a_player_walks_to_it(tmp_path: Path) -> None:
    d, tables = _room(tmp_path, 30)  # 8, 8, 7, 7 at four tables of nine
    tour = d.tournament
    name, target = _in_transit(d, tables)
    # players out elsewhere: once three tables hold them, the next table to break is the one he walks to
    _bust_elsewhere(d, tables, target, lambda: not tour.tables[target].open)  # TDA 9, before he sat down
    assert tour.players[name].active and tour.players[name].moving_to is not None
    assert str(tour.players[name].moving_to[0]) != target
    tables.held = set()
    tables.deliver()  # the broken table seats him (the arrive came first), then lets him go to his new seat
    assert _agreed(d, tables), [(p.name, p.moving_to) for p in tour.active() if p.moving_to]
    assert not tables.names(target)
    assert name in tables.names(str(tour.players[name].table)).values()
    # the room's log replays to the same seats
    again = Director(d.store, now=d.now).restore()
    assert again.tournament.describe() == tour.describe()


def test_a_redraw_while_a_player_walks_to_his_table(tmp_path: Path) -> None:
    d, tables = _room(tmp_path, 30)
    tour = d.tournament
    _bust_elsewhere(d, tables, "", lambda: len(tour.open_tables()) == 3 and _agreed(d, tables))
    name, target = _in_transit(d, tables)
    # players out elsewhere until the room is redrawn at two tables (RRoP s15 17)
    _bust_elsewhere(d, tables, target, lambda: any(x.kind == "redraw" for x in tour.decisions))
    assert tour.players[name].active
    tables.held = set()
    tables.deliver()
    assert _agreed(d, tables), [(p.name, p.moving_to) for p in tour.active() if p.moving_to]
    for t in tour.tables.values():
        if not t.open:
            assert not tables.names(str(t.number)), t.number
    again = Director(d.store, now=d.now).restore()
    assert again.tournament.describe() == tour.describe()
