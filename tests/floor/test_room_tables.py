"""The tables follow the floor (issue 23): two real table daemons and the floor on one real Mosquitto
with the shipped ACL. The floor's draw seats the players at their tables (TDA 6), and a balancing move
(RRoP s15 14, TDA 9-B) updates both tables with no console typing: the giving table lets the player go
with his chips, the receiving table seats him, and the floor sees it confirmed. Each step is journaled
at the table that made it and in the floor's ``room_log``."""

from __future__ import annotations

import contextlib
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.floor.service import FloorService
from controller.rules.cards import standard_deck
from controller.rules.events import Act, CallClock, Deal, NewHand, Report, SeatPlayer, SetStack, UnseatPlayer
from tests.floor.room_util import start_tournament
from tests.mqtt_util import ROLES, new_passwords, shipped_broker, start_daemon, wait_until
from tests.web_helpers import browse, launch_browser, needs_browser, watch_console

STRUCTURE = tomllib.loads((Path(__file__).resolve().parents[2] / "examples" / "tournament.toml").read_text())


@pytest.fixture(scope="module")
def passwords() -> dict[str, str]:
    """The suite's logins plus the floor's (systemd/mosquitto/acl)."""
    return new_passwords((*ROLES, "floor"))


def _players(daemon) -> dict[int, tuple[str, int | None]]:
    return {s: (p.name, p.stack) for s, p in daemon.service.table.players.items()}


def _journal(daemon, source: str) -> list[tuple[str, dict]]:
    return [(e.event.kind, e.event) for e in daemon.journal.entries() if e.source == source]


@contextlib.contextmanager
def _room(tmp_path: Path, passwords: dict[str, str], websockets: bool = False) -> Iterator[dict[str, Any]]:
    """A real Mosquitto (the shipped config and ACL), tournament tables t1 and t2 (the suite's daemon,
    9 seats) and the floor; 12 players drawn, each table's daemon seating its own (TDA 6)."""
    with shipped_broker(passwords, websockets=websockets) as broker:
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
            tour = start_tournament(director, STRUCTURE, 12, ["t1", "t2"], seed=3)
            for t, d in tables.items():
                wait_until(lambda t=t, d=d: {s: n for s, (n, _) in _players(d).items()} == tour.planned(t), 10,
                           f"{t} seated as drawn")
            yield {"broker": broker, "tables": tables, "floor": floor, "director": director, "tour": tour}
        finally:
            floor.stop()
            for d in tables.values():
                d.stop()


def _balance_move(room: dict[str, Any]) -> dict[str, Any]:
    """Two busts at t2 (its dealer lets them go): 6 players against 4, so t1 gives one (RRoP s15 14)."""
    tables, tour = room["tables"], room["tour"]
    gone = dict(sorted(tour.planned("t2").items())[:2])
    for seat in gone:
        tables["t2"].submit(UnseatPlayer(seat))
    decided = room["director"].request("tournament.bust", {"hand": [{"table": "t2", "players": {
        n: 100 * s for s, n in gone.items()}}]})
    return next(x for x in decided if x["kind"] == "move")


def test_a_move_updates_both_tables_seating_with_no_console_typing(tmp_path: Path, passwords) -> None:
    with _room(tmp_path, passwords) as room:
        tables, tour, director = room["tables"], room["tour"], room["director"]
        # TDA 6: each table's daemon seated the players the floor drew for it, journaled as the floor's
        for t, d in tables.items():
            assert {e.seat for k, e in _journal(d, "floor") if k == "seat_player"} == set(tour.planned(t))
        # chips differ at t1, so the chips that travel can be told apart
        for seat in sorted(_players(tables["t1"])):
            tables["t1"].submit(SetStack(seat, 1000 * seat))
        move = _balance_move(room)
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
        # (the floor's "seated" decision is made just after moving_to is cleared, in the director's thread)
        wait_until(lambda: any(x.kind == "seated" and x.data["player"] == mover for x in tour.decisions), 10,
                   "the floor's seated decision")
        assert tour.counts() == {"t1": 5, "t2": 5}
        assert len(_players(tables["t1"])) == len(_players(tables["t2"])) == 5


def test_the_dealer_display_shows_the_level_a_move_and_a_clock_from_the_floor(tmp_path: Path, passwords) -> None:
    """The display page of each table in Chromium, logged in as the console: the floor's level and the
    next (TDA 21), the move from the giving table's side and the receiving table's, and a clock called
    on a player counting its 50 seconds, then its 10-second count, then the dead hand (TDA 26)."""
    from controller.app.webserver import WebServer

    needs_browser()
    with _room(tmp_path, passwords, websockets=True) as room:
        broker, director = room["broker"], room["director"]
        web = WebServer(root=Path(__file__).resolve().parents[2] / "web", config={
            "ws": f"ws://127.0.0.1:{broker.websockets_port}", "base": "poker",
            "display": {"user": "console", "pass": passwords["console"]}})
        try:
            with launch_browser({"width": 800, "height": 480}) as ctx:
                pages = {}
                for t in ("t1", "t2"):
                    page = ctx.new_page()
                    errors = watch_console(page)
                    page.goto(web.page_url("display") + f"?table={t}")
                    page.wait_for_function("() => document.getElementById('conn').dataset.state === 'online'",
                                           timeout=10000)
                    pages[t] = (page, errors)
                director.request("tournament.clock_start", {})
                director.tick()
                for page, _ in pages.values():  # the level the floor announced (retained), and the next
                    page.wait_for_function("() => document.getElementById('room-level').dataset.level === '1'",
                                           timeout=5000)
                    assert page.text_content("#room-level").startswith("Level 1 \u00b7 100/200")
                    assert "next 100/300 BB ante 300" in page.text_content("#room-level")
                move = _balance_move(room)
                mover = move["player"]
                t1, t2 = pages["t1"][0], pages["t2"][0]
                sel = f'#room-orders .order[data-player="{mover}"]'
                t1.wait_for_selector(sel, timeout=5000)
                t2.wait_for_selector(sel, timeout=5000)
                # the receiving table: seated; the giving table: he left (the same order, seen from each side)
                t2.wait_for_function(f"() => document.querySelector('{sel}').dataset.kind === 'seated'",
                                     timeout=10000)
                assert t2.text_content(sel) == f"{mover} is seated in seat {move['seat']}"
                t1.wait_for_function(f"() => document.querySelector('{sel}').dataset.kind === 'seated'",
                                     timeout=10000)
                assert t1.text_content(sel) == f"{mover} is seated at table t2"
                assert "comes from table t1" not in t2.text_content("#room-orders")
                # TDA 26: a hand at t2; the dealer calls the clock on the player to act from the console. The
                # floor's clock is set 55.5 seconds back while it is called: the display is in its 10-second count,
                # 4.5 s left (the page counts whole seconds up: at exactly 5 s left it read 6 once under the full
                # suite's load; the page's clock, Date.now, and Python's need not agree to the millisecond).
                daemon = room["tables"]["t2"]
                daemon.submit(NewHand())
                engine = daemon.service.engine
                deck = iter(standard_deck())
                for _ in range(2):
                    for seat in list(engine.order):
                        daemon.submit(Deal(seat, next(deck)))
                on = engine.to_act
                t2.wait_for_function("() => !document.getElementById('btn-clock').disabled", timeout=5000)
                director.now = lambda: time.time() - 55.5
                try:
                    t2.click("#btn-clock")
                    t2.click(f'#dialog [data-pick-seat="{on}"]')
                    t2.wait_for_function("() => document.getElementById('room-clock').dataset.phase === 'count'",
                                         timeout=5000)
                finally:
                    director.now = time.time
                assert [e.event for e in daemon.journal.entries() if e.event.kind == "call_clock"] == [CallClock(on)]
                left = int(t2.get_attribute("#room-clock", "data-left"))
                assert 1 <= left <= 5 and t2.text_content("#room-clock").startswith(f"Seat {on}: ")
                assert t1.is_hidden("#room-clock")  # another table's clock
                # zero: the floor's clock rules the hand dead, with its rule; the table's engine kills it, journaled
                t2.wait_for_function("() => document.getElementById('room-clock').dataset.phase === 'dead'",
                                     timeout=10000)
                assert t2.text_content("#room-clock") == f"Seat {on}: hand dead (TDA 26)"
                ruled = [e for e in director.store.room_log("room") if e["op"] == "clock.expire"]
                assert len(ruled) == 1 and ruled[0]["body"] == {"table": "t2"}
                wait_until(lambda: on not in engine.active, 5, "the dead hand out of the betting")
                assert on in engine.dead and engine.to_act not in (None, on)
                assert [(e.event, e.source) for e in daemon.journal.entries()][-1] == (
                    Report("clock_expired", on), "floor")
                t2.wait_for_selector(f'.seat[data-seat="{on}"][data-dead="true"]', timeout=5000)
                t2.wait_for_selector("#alert:not([hidden])", timeout=5000)  # the table's own ruling
                assert t2.get_attribute("#alert", "data-reason") == "clock_expired"
                assert "RRoP s14 No-Limit Rules 13" in t2.text_content("#alert-citations")  # the table's Robert's
                for _page, errors in pages.values():
                    assert not errors, errors
        finally:
            web.stop()


def test_the_floor_calls_a_clock_from_the_room_page_reached_from_its_index(tmp_path: Path) -> None:
    """The floor's pages in Chromium: the index links the room page (and the clock page); on the room
    page the floor calls a clock on a player (TDA 26), which the director runs and the page counts."""
    from controller.floor.director import Director
    from controller.floor.server import FloorApi, FloorServer
    from controller.floor.sources import Hub
    from controller.floor.store import Store

    needs_browser()
    hub = Hub()
    db = f"sqlite:///{tmp_path / 'floor.db'}"
    director = Director(Store.open(db), lambda topic, payload: hub.publish({"type": "room", "topic": topic})).restore()
    store = Store.open(db)
    server = FloorServer(FloorApi(store, director=director), hub)
    try:
        with browse(server.url + "/floor/", 1280, 800) as (page, errors):
            assert page.get_attribute("#nav-clock", "href") == "/floor/clock.html"
            page.click("#nav-room")
            page.wait_for_url("**/floor/room.html")
            page.fill("#clock-table", "t7")
            page.fill("#clock-seat", "4")
            page.click("#call-clock button")
            page.wait_for_function("() => document.querySelector('#a-clocks li')", timeout=5000)
            shown = page.text_content("#a-clocks li")
            assert shown.startswith("Table t7, seat 4: running, ") and shown.endswith(" s (TDA 26)")
            assert [e["op"] for e in director.store.room_log("room")] == ["clock.call"]
            assert director.action_clocks["t7"][0].seat == 4
            assert not errors, errors
    finally:
        server.stop()
        store.close()


class _Daemon:
    """The daemon's side FloorOrders uses (its service, its listeners, ``post``), applying at once."""

    def __init__(self) -> None:
        from controller.rules.table import Table
        from controller.service import TableService

        self.service = TableService(Table(size=9, event="tournament", starting_stack=5000))
        self.listeners: list = []
        self.posted: list = []

    def post(self, event, source: str) -> None:
        self.posted.append((event, source))
        outputs = self.service.submit(event, source=source)
        for listener in self.listeners:
            listener(outputs)


def test_a_player_moved_during_a_hand_leaves_when_it_is_over_and_bad_orders_change_nothing() -> None:
    from controller.app.floor_orders import FloorOrders
    from controller.rules.events import EndHand

    daemon = _Daemon()
    orders = FloorOrders(daemon, None, "t1")  # type: ignore[arg-type]  # no MQTT: the orders are handed in
    daemon.listeners.append(orders.let_go)
    for seat, name in ((2, "ann"), (5, "bob"), (7, "cy")):
        orders.on_order({"kind": "seat", "table": "t1", "seat": seat, "player": name})
    orders.on_order({"kind": "seat", "table": "t1", "seat": 2, "player": "dee"})  # taken: not seated
    orders.on_order({"kind": "seat", "table": "t9", "seat": 3, "player": "eve"})  # another table's
    assert _players(daemon) == {2: ("ann", 5000), 5: ("bob", 5000), 7: ("cy", 5000)}
    daemon.post(NewHand(), "console")
    orders.on_order({"kind": "move", "player": "bob", "from_table": "t1", "from_seat": 5, "table": "t2", "seat": 1})
    orders.on_order({"kind": "move", "player": "zed", "from_table": "t1", "from_seat": 7, "table": "t2", "seat": 4})
    assert 5 in _players(daemon)  # he plays the hand out
    orders.on_order({"kind": "ruling", "ruling": "dead_hand", "table": "t1", "seat": 4})  # nobody's seat
    orders.on_order({"kind": "ruling", "ruling": "dead_hand", "table": "t9", "seat": 5})  # another table's
    assert not any(isinstance(e, Report | Act) for e, _ in daemon.posted)
    daemon.post(EndHand(), "console")
    assert _players(daemon) == {2: ("ann", 5000), 7: ("cy", 5000)}  # bob got up; zed was never at seat 7
    assert [(e, s) for e, s in daemon.posted if isinstance(e, UnseatPlayer)] == [(UnseatPlayer(5), "floor")]
    # a redraw swaps ann and cy during a hand (RRoP s15 17): each gets up when it is over, and sits down
    # on the floor's arrive (with the chips he carried) once his new seat is free
    daemon.post(NewHand(), "console")
    orders.on_order({"kind": "seat", "table": "t1", "seat": 7, "player": "ann", "from_table": "t1", "from_seat": 2})
    orders.on_order({"kind": "seat", "table": "t1", "seat": 2, "player": "cy", "from_table": "t1", "from_seat": 7})
    orders.on_order({"kind": "arrive", "table": "t1", "seat": 7, "player": "ann", "stack": 4000, "from_table": "t1"})
    orders.on_order({"kind": "arrive", "table": "t1", "seat": 2, "player": "cy", "stack": 6000, "from_table": "t1"})
    assert _players(daemon) == {2: ("ann", 5000), 7: ("cy", 5000)}  # the hand plays on
    daemon.post(EndHand(), "console")
    assert _players(daemon) == {7: ("ann", 4000), 2: ("cy", 6000)}


def test_the_tables_events_call_and_stop_a_clock_and_the_floor_expires_it_itself(tmp_path: Path) -> None:
    """TDA 26 through the floor's ingest: a table's ``event/clock`` (the dealer's request) calls the clock,
    the seat's ``event/action`` stops it ("acted in time"); another clock left to run out is ruled dead by
    the floor's own tick, journaled and cited; a restarted floor replays to the same state."""
    import json

    from controller.floor.director import Director
    from controller.floor.sources import Ingestor
    from controller.floor.store import Store

    now = [1_000_000.0]
    sent: list = []
    db = f"sqlite:///{tmp_path / 'floor.db'}"
    director = Director(Store.open(db), lambda topic, payload: sent.append((topic, payload)),
                        now=lambda: now[0]).restore()
    ingest = Ingestor(Store.open(f"sqlite:///{tmp_path / 'ingest.db'}"))
    ingest.observers.append(director.observe)

    def event(table: str, seq: int, kind: str, **fields) -> tuple[str, bytes]:
        ev = {"schema": 1, "seq": seq, "ts": now[0], "hand_id": 3, "kind": kind, **fields}
        return f"poker/{table}/event/{kind}", json.dumps(ev).encode()

    ingest.handle([event("t4", 10, "clock", seat=6), event("t5", 20, "clock", seat=2)])
    assert set(director.action_clocks) == {"t4", "t5"}
    now[0] += 30
    ingest.handle([event("t4", 11, "action", seat=3, action="fold", all_in=False, amount=None),  # not him
                   event("t4", 12, "action", seat=6, action="call", all_in=False, amount=400)])
    assert set(director.action_clocks) == {"t5"}
    assert ("floor/room/table/t4", {"kind": "action_clock", "table": "t4", "seat": 6, "text": "Acted in time",
                                    "citations": ["TDA 26"], "phase": "acted"}) in [
        (topic, {k: v for k, v in order.items() if k != "id"}) for topic, order in sent]  # an order's id
    now[0] += 29  # 59 s: t5's 10-second count still runs
    assert director.tick() == []
    now[0] += 1.5
    (ruling,) = director.tick()
    assert ruling["ruling"] == "dead_hand" and ruling["table"] == "t5" and ruling["seat"] == 2
    assert ruling["citations"] == ["TDA 26"] and not director.action_clocks
    assert ("floor/room/table/t5", ruling) in sent
    ops = [e["op"] for e in director.store.room_log("room")]
    assert ops == ["clock.call", "clock.call", "clock.acted", "clock.expire"]
    again = Director(Store.open(db), now=lambda: now[0]).restore()
    assert again.state() == director.state()


def test_a_player_out_gets_up_when_the_hand_is_over_and_is_not_seated_where_he_was_going() -> None:
    """RRoP s15 20: the floor's ``bust`` (read from the table's own hand end) lets the player go between
    hands, wherever he sits at the table; at the table a redraw was sending him to, his arrival is
    called off."""
    from controller.app.floor_orders import FloorOrders
    from controller.rules.events import EndHand

    daemon = _Daemon()
    orders = FloorOrders(daemon, None, "t1")  # type: ignore[arg-type]  # no MQTT: the orders are handed in
    daemon.listeners.append(orders.let_go)
    for seat, name in ((2, "ann"), (5, "bob"), (7, "cy")):
        orders.on_order({"kind": "seat", "table": "t1", "seat": seat, "player": name})
    daemon.post(NewHand(), "console")
    orders.on_order({"kind": "bust", "player": "bob", "table": "t1", "seat": 5, "place": 9})
    assert 5 in _players(daemon)  # the hand plays on
    daemon.post(EndHand(), "console")
    assert _players(daemon) == {2: ("ann", 5000), 7: ("cy", 5000)}
    # eve, on her way here for seat 2 (ann still in it), went out at t3 before she left it
    orders.on_order({"kind": "arrive", "player": "eve", "table": "t1", "seat": 2, "stack": 900, "from_table": "t3"})
    assert "eve" in orders.arrivals
    orders.on_order({"kind": "bust", "player": "eve", "table": "t3", "seat": 4, "to_table": "t1", "place": 8})
    orders.on_order({"kind": "bust", "player": "ann", "table": "t1", "seat": 2, "place": 7})
    assert not orders.arrivals and _players(daemon) == {7: ("cy", 5000)}  # seat 2 free, and nobody sits


class _OwnerDaemon(_Daemon):
    """A daemon whose owner thread journals the floor's orders later (``post_once`` queues them; ``flush``
    applies them, then sets each order's future, as Daemon._apply does)."""

    def __init__(self) -> None:
        super().__init__()
        self.queued: list = []

    def post_once(self, event, source: str, transaction: str):
        from concurrent.futures import Future

        fut: Future = Future()
        self.queued.append((event, source, fut))
        return fut

    def flush(self) -> None:
        while self.queued:
            event, source, fut = self.queued.pop(0)
            self.post(event, source)
            fut.set_result([])


def test_a_player_sent_on_before_his_seat_here_is_journaled_gets_up_once_he_has_sat_down() -> None:
    """The floor moves a player on while he walks to this table (it is broken, TDA 9): the ``arrive`` and
    the ``move`` from here come back to back. His seat is posted to the owner thread and not journaled
    yet when the move comes: the move waits for it, and he gets up once seated (the floor then sends him
    on); it is not dropped as "not there", which left him seated at a broken table for ever."""
    from controller.app.floor_orders import FloorOrders

    daemon = _OwnerDaemon()
    orders = FloorOrders(daemon, None, "t1")  # type: ignore[arg-type]  # no MQTT: the orders are handed in
    daemon.listeners.append(orders.let_go)
    orders.on_order({"kind": "seat", "table": "t1", "seat": 2, "player": "ann", "id": "o1"})
    daemon.flush()
    orders.on_order({"kind": "arrive", "table": "t1", "seat": 5, "player": "bob", "stack": 7000, "from_table": "t3",
                     "id": "o2"})
    orders.on_order({"kind": "move", "player": "bob", "table": "t2", "seat": 4, "from_table": "t1", "from_seat": 5,
                     "id": "o3"})
    assert _players(daemon) == {2: ("ann", 5000)}  # nothing journaled yet
    daemon.flush()  # he sits down, then gets up for his new seat
    daemon.flush()
    assert _players(daemon) == {2: ("ann", 5000)}
    assert [e for e, _ in daemon.posted if isinstance(e, SeatPlayer | UnseatPlayer)][-2:] == [
        SeatPlayer(5, "bob", False, 7000), UnseatPlayer(5)]
    assert not orders.departures and not orders.arrivals and not orders.sitting
