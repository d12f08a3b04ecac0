"""Busts read from the tables' own hand ends (issue 23), not reported to the floor.

A tournament table's ``event/hand_end`` carries each dealt-in seat's chips when the hand began
(``started``) and once the pot was pushed (``stacks``). The floor reads who is out from them and
places the players by the rulebook. The seeds' TDA rules (``../shared/seeds``, rules 1-65) say
nothing about players out in the same hand; the rules that do are:

* RRoP s15 35: "If two (or more) players go broke during the same hand, the player starting the
  hand with the larger amount of money finishes in the higher tournament place";
* Highland's house rules, "Upon nearing the Money" (hand-for-hand): "If two players are eliminated
  during the same hand at different tables, both players will "tie" for that place finish. If two
  players are eliminated during the same hand at the same table, the player who began that hand
  with the highest chip count will receive the higher place finish";
* RRoP s15 20: "All players must leave their seat immediately after being eliminated".

Pure model and the director on SQLite here; the same read through a real daemon and Mosquitto is
``test_room_busts.py``.
"""

from __future__ import annotations

from pathlib import Path

from controller.floor.director import Director
from controller.floor.ingest import Parsed
from controller.floor.store import Store
from controller.floor.tournament.seating import Tournament
from controller.floor.tournament.structure import Level, Structure


def _structure(**kw) -> Structure:
    return Structure(name="t", levels=(Level(1, 100, 200, 20),), denominations=(25, 100), starting_stack=1000,
                     **kw)


def _tournament(players: int, tables: int, **kw) -> Tournament:
    t = Tournament(_structure(**kw), seed=11)
    for i in range(players):
        t.register(f"p{i:02d}")
    t.start(list(range(1, tables + 1)))
    return t


def _hand(t: Tournament, table: int, out: dict[str, int], hand_id: int) -> tuple[dict[str, int], dict[str, int]]:
    """The chips a table publishes at a hand's end: ``out`` (player -> chips at the start) lose
    everything to the first other player at the table."""
    seats = {n: s for s, n in t.present(table).items()}
    winner = next(n for n in seats if n not in out)
    started = {str(seats[n]): out.get(n, 1000) for n in seats}
    stacks = {str(seats[n]): 0 if n in out else 1000 for n in seats}
    stacks[str(seats[winner])] += sum(out.values())
    return started, stacks


def test_a_player_with_no_chips_left_is_out_and_leaves_his_seat_rrop_s15_20() -> None:
    t = _tournament(18, 2)
    seat = min(t.present(1))
    victim = t.present(1)[seat]
    started, stacks = _hand(t, 1, {victim: 1000}, hand_id=4)
    out = t.hand_end(1, 4, started, stacks)
    bust = next(d for d in out if d.kind == "bust")
    assert bust.data["player"] == victim and bust.data["place"] == 18 and not bust.data["tied"]
    # his table is told which seat empties (the table's daemon lets him go between hands)
    assert bust.data["table"] == 1 and bust.data["seat"] == seat
    assert bust.citations == ("RRoP s15 20",)
    assert not t.players[victim].active and len(t.active()) == 17


def test_a_hand_read_twice_counts_once_and_a_replay_reaches_the_same_places() -> None:
    """A message redelivered, or a table's journal replayed, brings the same hand again: nothing changes."""
    t = _tournament(18, 2)
    victim = t.present(2)[max(t.present(2))]
    started, stacks = _hand(t, 2, {victim: 1000}, hand_id=9)
    first = t.hand_end(2, 9, started, stacks)
    assert [d.kind for d in first][:1] == ["bust"]
    assert t.hand_end(2, 9, started, stacks) == []
    assert len(t.active()) == 17
    replayed = Tournament.replay(t.structure, t.events)
    assert [d.describe() for d in replayed.decisions] == [d.describe() for d in t.decisions]
    assert replayed.hands_read == {("2", 9)} and len(replayed.active()) == 17


def test_busts_in_one_hand_at_one_table_finish_by_their_starting_chips_rrop_s15_35() -> None:
    t = _tournament(18, 2)
    a, b, c = list(t.present(1).values())[:3]
    started, stacks = _hand(t, 1, {a: 400, b: 900, c: 400}, hand_id=3)
    out = {d.data["player"]: d for d in t.hand_end(1, 3, started, stacks) if d.kind == "bust"}
    # b began with more: 16th; a and c began level: they tie for 17th
    assert out[b].data["place"] == 16 and not out[b].data["tied"]
    assert out[a].data["place"] == out[c].data["place"] == 17 and out[a].data["tied"] and out[c].data["tied"]
    assert all("RRoP s15 35" in d.citations and "Highland Hand-for-Hand" not in d.citations for d in out.values())


def test_a_misdealt_or_even_hand_busts_nobody() -> None:
    t = _tournament(18, 2)
    seats = t.present(1)
    same = {str(s): 1000 for s in seats}
    assert t.hand_end(1, 1, same, same) == []
    # a seat that began with nothing (never dealt chips) is not "out" again
    started = dict(same, **{str(min(seats)): 0})
    assert t.hand_end(1, 2, started, dict(started)) == [] and len(t.active()) == 18


def test_hand_for_hand_busts_at_different_tables_in_one_round_tie_highland() -> None:
    """Three tables of six, 17 players, 14 paid, hand-for-hand within 3 of the money (15-17 left)."""
    t = Tournament(_structure(table_size=6, final_table=6, paid_places=14, hand_for_hand_margin=3), seed=5)
    for i in range(17):
        t.register(f"p{i:02d}")
    t.start([1, 2, 3])
    for table in (1, 2, 3):
        t.positions(table, min(t.present(table)), None, sorted(t.present(table))[1], hand_id=10)
    # the money is 3 away: the floor calls hand-for-hand once it knows 17 are left, at the first hand end
    first = t.hand_end(1, 10, *_hand(t, 1, {}, 10))
    assert t.hand_for_hand is False and first == []
    # reach hand-for-hand the way the floor does: one bust (17 -> 16 is within 3 of 14 paid)
    victim = t.present(2)[min(t.present(2))]
    out = t.hand_end(2, 10, *_hand(t, 2, {victim: 1000}, 10))
    assert [d.kind for d in out if d.kind in ("bust", "hand_for_hand")] == ["bust", "hand_for_hand"]
    assert t.hand_for_hand and t.h4h_from == {1: 11, 2: 11, 3: 11}
    # table 3's hand 10 was in progress when hand-for-hand was called: it completes and counts alone
    late = t.present(3)[min(t.present(3))]
    alone = [d for d in t.hand_end(3, 10, *_hand(t, 3, {late: 1000}, 10)) if d.kind == "bust"]
    assert [(d.data["player"], d.data["place"], d.data["tied"]) for d in alone] == [(late, 16, False)]
    # the first hand-for-hand hand: table 1 loses two players (one began with more), table 3 one
    a, b = list(t.present(1).values())[:2]
    c = t.present(3)[max(t.present(3))]
    assert t.hand_end(1, 11, *_hand(t, 1, {a: 700, b: 300}, 11)) == []  # waits for the other tables
    assert t.hand_end(3, 11, *_hand(t, 3, {c: 700}, 11)) == []
    assert t.players[a].active and t.players[c].active
    placed = {d.data["player"]: d for d in t.hand_end(2, 11, *_hand(t, 2, {}, 11)) if d.kind == "bust"}
    # 15 left, three out in one hand: a and c (700 at the start, different tables) tie for 13th,
    # b (300, a's table) is 15th
    assert {n: (d.data["place"], d.data["tied"]) for n, d in placed.items()} == {
        a: (13, True), c: (13, True), b: (15, False)}
    assert all("Highland Hand-for-Hand" in d.citations for d in placed.values())
    assert not t.hand_for_hand  # 12 left: the money is reached
    replayed = Tournament.replay(t.structure, t.events)
    assert [d.describe() for d in replayed.decisions] == [d.describe() for d in t.decisions]


def _msg(table: str, path: str, payload: dict) -> Parsed:
    return Parsed(table, path, payload)


def test_the_director_reads_busts_from_hand_ends_once_and_after_a_restart(tmp_path: Path) -> None:
    """The floor journals each hand end it reads (``tournament.hand_end``); a redelivery of the same
    hand is not journaled again; a restarted floor replays to the same places and still knows the
    hands it read."""
    db = str(tmp_path / "floor.db")
    store = Store.open(db)
    sent: list[tuple[str, dict]] = []
    director = Director(store, lambda topic, payload: sent.append((topic, payload)), now=lambda: 1000.0)
    structure = {"name": "t", "levels": [{"small_blind": 100, "big_blind": 200, "minutes": 20}],
                 "denominations": [25, 100], "starting_stack": 1000}
    director.request("tournament.create", {"structure": structure, "seed": 4})
    for i in range(12):
        director.request("tournament.register", {"name": f"p{i:02d}"})
    director.request("tournament.start", {"tables": ["t1", "t2"]})
    tour = director.tournament
    assert tour is not None
    seats = tour.present("t1")
    victim_seat = min(seats)
    victim = seats[victim_seat]
    started = {str(s): 1000 for s in seats}
    stacks = dict(started, **{str(victim_seat): 0, str(max(seats)): 2000})
    end = {"seq": 50, "ts": 1.0, "hand_id": 7, "result": "showdown", "winners": [], "shown": None,
           "started": started, "stacks": stacks}
    director.observe(_msg("t1", "event/hand_end", end))
    director.observe(_msg("t1", "event/hand_end", end))  # redelivered
    logged = [e for e in store.room_log("room") if e["op"] == "tournament.hand_end"]
    assert len(logged) == 1 and not tour.players[victim].active
    orders = [p for topic, p in sent if topic == "floor/room/table/t1" and p["kind"] == "bust"]
    assert [(o["player"], o["seat"]) for o in orders] == [(victim, victim_seat)]
    # a misdeal is no hand played; a hand whose pot was not awarded gives no stacks
    director.observe(_msg("t1", "event/hand_end", dict(end, hand_id=8, result="misdeal", stacks=dict(started))))
    director.observe(_msg("t1", "event/hand_end", dict(end, hand_id=9, stacks=None)))
    assert len([e for e in store.room_log("room") if e["op"] == "tournament.hand_end"]) == 1
    store.close()
    again = Director(Store.open(db), now=lambda: 1000.0).restore()
    assert again.tournament is not None and not again.tournament.players[victim].active
    assert [d.describe() for d in again.tournament.decisions] == [d.describe() for d in tour.decisions]
    again.observe(_msg("t1", "event/hand_end", end))  # redelivered to the restarted floor
    assert len([e for e in again.store.room_log("room") if e["op"] == "tournament.hand_end"]) == 1
    again.store.close()


def test_a_hand_end_stored_before_the_floor_stopped_is_still_read_on_its_redelivery(tmp_path: Path) -> None:
    """The floor stored a hand's end and stopped before its director journaled it (the broker or JetStream
    redelivers what was not acknowledged): the redelivery finds the rows already stored, and the
    director still reads the hand, once."""
    import json

    from controller.floor.sources import Ingestor

    db = f"sqlite:///{tmp_path / 'floor.db'}"
    structure = {"name": "t", "levels": [{"small_blind": 100, "big_blind": 200, "minutes": 20}],
                 "denominations": [25, 100], "starting_stack": 1000}
    director = Director(Store.open(db), now=lambda: 1000.0)
    director.request("tournament.create", {"structure": structure, "seed": 4})
    for i in range(6):
        director.request("tournament.register", {"name": f"p{i:02d}"})
    director.request("tournament.start", {"tables": ["t1"]})
    seats = director.tournament.present("t1")
    victim = min(seats)
    end = {"schema": 1, "seq": 30, "ts": 5.0, "hand_id": 2, "kind": "hand_end", "result": "showdown",
           "winners": [], "shown": None, "started": {str(s): 1000 for s in seats},
           "stacks": {str(s): 0 if s == victim else 1000 + 1000 // (len(seats) - 1) for s in seats}}
    message = ("poker/t1/event/hand_end", json.dumps(end).encode())
    Ingestor(Store.open(db)).handle([message])  # stored; the floor stops before acting on it
    director.store.close()
    again = Director(Store.open(db), now=lambda: 1000.0).restore()
    ingest = Ingestor(Store.open(db))
    ingest.observers.append(again.observe)
    assert ingest.handle([message]) == 0  # nothing new to store ...
    assert not again.tournament.players[seats[victim]].active  # ... and the bust is read
    ingest.handle([message])
    assert len([e for e in again.store.room_log("room") if e["op"] == "tournament.hand_end"]) == 1


def test_a_player_out_at_the_table_a_redraw_is_taking_him_from_is_read_by_the_tables_names() -> None:
    """RRoP s15 17: a redraw seats everyone again at once for the floor, while at the tables each plays
    on in his old seat until he leaves. The table's hand end names who sat where, so the bust is his;
    the order to leave goes to the table he went out at and to the one he was sent to."""
    t = _tournament(19, 3)
    old = {n: (table, s) for table in (1, 2, 3) for s, n in t.present(table).items()}
    victim = t.present(3)[min(t.present(3))]
    out = t.hand_end(3, 1, *_hand(t, 3, {victim: 1000}, 1))
    assert [d.kind for d in out][:2] == ["bust", "redraw"]  # 18 left: two tables, drawn again
    moved = next(n for n, p in t.players.items() if p.active and p.table != old[n][0])
    table, seat = old[moved]
    names = {str(s): n for n, (tb, s) in old.items() if tb == table and n != victim}
    started = {s: 1000 for s in names}
    stacks = dict(started, **{str(seat): 0})
    stacks[next(s for s in names if s != str(seat))] = 2000
    (bust,) = [d for d in t.hand_end(table, 2, started, stacks, names) if d.kind == "bust"]
    assert bust.data["player"] == moved and (bust.data["table"], bust.data["seat"]) == (table, seat)
    assert bust.data["to_table"] == t.players[moved].table != table
    # the floor's own seats would have named whoever the redraw put in that seat instead
    assert t.present(table).get(seat) != moved
