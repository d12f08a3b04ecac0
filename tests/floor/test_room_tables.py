"""The tables follow the floor (issue 23): two real table daemons and the floor on one real Mosquitto
with the shipped ACL. The floor's draw seats the players at their tables (TDA 6), and a balancing move
(RRoP s15 14, TDA 9-B) updates both tables with no console typing: the giving table lets the player go
with his chips, the receiving table seats him, and the floor sees it confirmed. Each step is journaled
at the table that made it and in the floor's ``room_log``."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from controller.floor.service import FloorService
from controller.rules.events import SetStack, UnseatPlayer
from tests.mqtt_util import ROLES, new_passwords, shipped_broker, start_daemon, wait_until

STRUCTURE = tomllib.loads((Path(__file__).resolve().parents[2] / "examples" / "tournament.toml").read_text())


@pytest.fixture(scope="module")
def passwords() -> dict[str, str]:
    """The suite's logins plus the floor's (systemd/mosquitto/acl)."""
    return new_passwords((*ROLES, "floor"))


def _players(daemon) -> dict[int, tuple[str, int | None]]:
    return {s: (p.name, p.stack) for s, p in daemon.service.table.players.items()}


def _journal(daemon, source: str) -> list[tuple[str, dict]]:
    return [(e.event.kind, e.event) for e in daemon.journal.entries() if e.source == source]


def test_a_move_updates_both_tables_seating_with_no_console_typing(tmp_path: Path, passwords) -> None:
    with shipped_broker(passwords, websockets=False) as broker:
        tables = {t: start_daemon(tmp_path / f"{t}.sqlite", broker, passwords, table=t, size=9,
                                  event="tournament", starting_stack=STRUCTURE["starting_stack"])
                  for t in ("t1", "t2")}
        floor = FloorService(db=f"sqlite:///{tmp_path / 'floor.db'}", mqtt=(broker.host, broker.port),
                             mqtt_user="floor", mqtt_password=passwords["floor"]).start()
        try:
            for d in tables.values():
                assert d.floor_orders is not None and d.floor_orders.connected.wait(10)
            wait_until(lambda: floor.source.connected.is_set(), 10, "the floor online")
            director = floor.director
            director.request("tournament.create", {"structure": STRUCTURE, "seed": 3})
            for i in range(12):
                director.request("tournament.register", {"name": f"p{i:02d}"})
            director.request("tournament.start", {"tables": ["t1", "t2"]})
            tour = director.tournament
            # TDA 6: each table's daemon seats the players the floor drew for it
            for t, d in tables.items():
                wait_until(lambda t=t, d=d: {s: n for s, (n, _) in _players(d).items()} == tour.planned(t), 10,
                           f"{t} seated as drawn")
                assert {e.seat for k, e in _journal(d, "floor") if k == "seat_player"} == set(tour.planned(t))
            # chips differ at t1, so the chips that travel can be told apart
            for seat in sorted(_players(tables["t1"])):
                tables["t1"].submit(SetStack(seat, 1000 * seat))
            # two busts at t2 (the dealer lets them go): 6 against 4, so t1 gives the player due for the BB
            t2 = tour.planned("t2")
            gone = dict(sorted(t2.items())[:2])
            for seat in gone:
                tables["t2"].submit(UnseatPlayer(seat))
            decided = director.request("tournament.bust", {"hand": [{"table": "t2", "players": {
                n: 100 * s for s, n in gone.items()}}]})
            move = next(x for x in decided if x["kind"] == "move")
            mover, from_seat, seat = move["player"], move["from_seat"], move["seat"]
            assert move["from_table"] == "t1" and move["table"] == "t2"
            assert move["citations"] == ["RRoP s15 14", "RRoP s15 16", "TDA 9-B"]
            carried = 1000 * from_seat
            # the giving table lets him go, the receiving table seats him with his chips, the floor confirms
            wait_until(lambda: _players(tables["t2"]).get(seat) == (mover, carried), 10, "the receiving table")
            assert from_seat not in _players(tables["t1"])
            wait_until(lambda: tour.players[mover].moving_to is None, 10, "the floor's confirmation")
            assert (tour.players[mover].table, tour.players[mover].seat) == ("t2", seat)
            assert [k for k, e in _journal(tables["t1"], "floor") if k == "unseat_player"] == ["unseat_player"]
            arrived = [e for k, e in _journal(tables["t2"], "floor") if k == "seat_player" and e.name == mover]
            assert [(e.seat, e.stack) for e in arrived] == [(seat, carried)]
            ops = [(e["op"], e["body"].get("name")) for e in director.store.room_log("room")]
            assert ("tournament.departed", mover) in ops and ("tournament.confirm_move", mover) in ops
            assert ops.index(("tournament.departed", mover)) < ops.index(("tournament.confirm_move", mover))
            assert any(x.kind == "seated" and x.data["player"] == mover for x in tour.decisions)
            counts = tour.counts()
            assert counts == {"t1": 5, "t2": 5} and len(_players(tables["t1"])) == len(_players(tables["t2"])) == 5
        finally:
            floor.stop()
            for d in tables.values():
                d.stop()
