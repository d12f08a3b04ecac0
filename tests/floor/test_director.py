"""The floor's director (issue 23): requests journaled in the store, replayed after a restart, served
over HTTP, and the tournament clock page read in a real browser (Debian's Chromium via Playwright)."""

from __future__ import annotations

import json
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from controller.floor.director import Director, DirectorError
from controller.floor.server import FloorApi, FloorServer
from controller.floor.sources import Hub
from controller.floor.store import Store
from tests.web_helpers import browse, needs_browser

STRUCTURE = tomllib.loads((Path(__file__).resolve().parents[2] / "examples" / "tournament.toml").read_text())


class FakeTime:
    def __init__(self, t: float = 1_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _director(tmp_path: Path, now: FakeTime, sent: list | None = None) -> Director:
    publish = (lambda topic, payload: sent.append((topic, payload))) if sent is not None else None
    return Director(Store.open(f"sqlite:///{tmp_path / 'floor.db'}"), publish, now=now).restore()


def _run_tournament(d: Director, now: FakeTime) -> None:
    d.request("tournament.create", {"structure": STRUCTURE})
    for i in range(26):
        d.request("tournament.register", {"name": f"p{i:02d}"})
    d.request("tournament.start", {"tables": [1, 2, 3, 4]})
    d.request("tournament.clock_start", {})
    now.t += 31 * 60  # level 2 begins at 30 minutes (TDA 21)
    table1 = d.tournament.planned(1)
    out = d.request("tournament.bust", {"hand": [{"table": 1, "players": {n: 1000 for n in
                                                                         list(table1.values())[:3]}}]})
    assert [x["kind"] for x in out].count("bust") == 3


def test_requests_are_journaled_and_a_restarted_floor_reaches_the_same_decisions(tmp_path: Path) -> None:
    now, sent = FakeTime(), []
    d = _director(tmp_path, now, sent)
    _run_tournament(d, now)
    reading = d.reading()
    assert reading["level"] == 2 and reading["big_blind"] == 300 and reading["players_left"] == 23
    assert reading["average_stack"] == 20000 * 26 // 23
    assert any(topic == "floor/room/bust" for topic, _ in sent)
    assert any(topic.startswith("floor/room/table/") for topic, _ in sent)  # a table's own instructions
    # TDA 26: a clock called on seat 4 of table 2; no action: after 60 seconds the hand is dead
    d.request("clock.call", {"table": "2", "seat": 4})
    with pytest.raises(DirectorError, match="has not run out"):
        d.request("clock.expire", {"table": "2"})
    now.t += 60.5
    ruling = d.request("clock.expire", {"table": "2"})[0]
    assert ruling["ruling"] == "dead_hand" and ruling["citations"] == ["TDA 26"]
    d.request("cash.open_game", {"table": "C1", "form": "holdem", "stakes": "1/2"})
    d.request("cash.join_list", {"player": "zoe", "form": "holdem", "stakes": "1/2", "present": True})
    assert d.request("cash.seat_opens", {"table": "C1", "seat": 3})[0]["player"] == "zoe"
    with pytest.raises(DirectorError, match="missing 'present'"):
        d.request("cash.join_list", {"player": "x", "form": "holdem", "stakes": "1/2"})
    before = d.state()
    again = _director(tmp_path, now)  # the floor restarts: it replays the room's log
    after = again.state()
    assert after["tournament"] == before["tournament"] and after["decisions"] == before["decisions"]
    assert after["cash"] == before["cash"] and after["clock"] == before["clock"]


def test_the_clock_page_and_the_room_api_in_a_browser(tmp_path: Path) -> None:
    needs_browser()
    now = FakeTime()
    d = _director(tmp_path, now)
    _run_tournament(d, now)
    store = Store.open(f"sqlite:///{tmp_path / 'floor.db'}")
    server = FloorServer(FloorApi(store, director=d), Hub())
    try:
        req = urllib.request.Request(server.url + "/api/room/tournament/late_entry",
                                     data=json.dumps({"name": "late"}).encode(), method="POST")
        decided = json.loads(urllib.request.urlopen(req, timeout=5).read())["decisions"]
        assert decided[0]["citations"] == ["TDA 7"]
        bad = urllib.request.Request(server.url + "/api/room/tournament/teleport", data=b"{}", method="POST")
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(bad, timeout=5)
        assert err.value.code == 400 and "unknown tournament request" in err.value.read().decode()
        with browse(server.url + "/floor/clock.html", 1280, 720) as (page, errors):
            page.wait_for_function("() => document.getElementById('bb').textContent === '300'", timeout=8000)
            assert page.text_content("#phase") == "Level 2"
            assert page.text_content("#left") == "24" and page.text_content("#entries") == "27"
            assert page.text_content("#next-level") == "level 3: 200 / 400 (big blind ante 400)"
            page.wait_for_function("() => document.getElementById('time').textContent !== '--:--'", timeout=8000)
            shown = page.text_content("#time")
            assert shown is not None and shown.startswith(("28:", "29:"))  # 29 minutes left in level 2
            for box in ("#time", "#blinds", "#next", "#field"):  # nothing clipped on a 720p TV
                assert page.evaluate("(sel) => { const e = document.querySelector(sel);"
                                     " return e.scrollWidth <= e.clientWidth + 1; }", box), box
            assert not errors, errors
    finally:
        server.stop()
        store.close()


def test_a_tournament_table_reports_its_blinds_through_its_own_hand_start(tmp_path: Path) -> None:
    """The balancing rule (RRoP s15 14) needs each table's big blind: the director reads it from the
    table's published ``event/hand_start`` through the floor's ingest, and journals it."""
    from controller.floor.sources import Ingestor

    now = FakeTime()
    d = _director(tmp_path, now)
    ingest = Ingestor(Store.open(f"sqlite:///{tmp_path / 'ingest.db'}"))
    ingest.observers.append(d.observe)
    d.request("tournament.create", {"structure": STRUCTURE})
    for i in range(18):
        d.request("tournament.register", {"name": f"p{i:02d}"})
    d.request("tournament.start", {"tables": ["t1", "t2"]})
    seats = sorted(d.tournament.planned("t1"))
    start = {"schema": 1, "seq": 1, "ts": now.t, "hand_id": 1, "kind": "hand_start", "game": "holdem",
             "button": seats[2], "blinds": {"small": seats[3], "big": seats[4]}}
    ingest.handle([("poker/t1/event/hand_start", json.dumps(start).encode()),
                   ("poker/t9/event/hand_start", json.dumps(start).encode())])  # not in the tournament
    t1 = d.tournament.tables["t1"]
    assert (t1.button, t1.small_blind, t1.big_blind) == (seats[2], seats[3], seats[4])
    ingest.handle([("poker/t1/event/hand_start", json.dumps(start).encode())])  # a redelivery: nothing new
    logged = [e["op"] for e in d.store.room_log("room")]
    assert logged.count("tournament.positions") == 1
    # the player due for the big blind at t1 moves when t2 runs short (two busts: 9 against 7)
    t2 = list(d.tournament.planned("t2").values())
    out = d.request("tournament.bust", {"hand": [{"table": "t2", "players": {t2[0]: 10, t2[1]: 20}}]})
    move = next(x for x in out if x["kind"] == "move")
    mover = d.tournament.players[move["player"]]
    assert (mover.table, mover.seat) == ("t1", seats[5])  # the first seat after t1's big blind


def test_a_break_is_drawn_with_the_cards_the_breaking_tables_antennas_read(tmp_path: Path) -> None:
    """TDA 9: players from a broken table get new seats by a 2-step random process; the floor takes
    step 2 (one card face up to each player) from the table's own card events."""
    from controller.floor.sources import Ingestor

    now = FakeTime()
    d = _director(tmp_path, now)
    ingest = Ingestor(Store.open(f"sqlite:///{tmp_path / 'ingest.db'}"))
    ingest.observers.append(d.observe)
    d.request("tournament.create", {"structure": STRUCTURE, "draw": "antennas"})
    for i in range(36):
        d.request("tournament.register", {"name": f"p{i:02d}"})
    d.request("tournament.start", {"tables": ["t1", "t2", "t3", "t4"]})
    tour = d.tournament
    d.request("tournament.bust", {"hand": [{"table": "t1", "players": {n: 5 for n in
                                                                      list(tour.planned("t1").values())[:5]}}]})
    out = d.request("tournament.bust", {"hand": [{"table": "t2", "players": {n: 5 for n in
                                                                            list(tour.planned("t2").values())[:4]}}]})
    brk = next(x for x in out if x["kind"] == "break")
    assert brk["table"] == "t4" and "t4" in tour.pending_breaks
    seats = sorted(s for s, n in tour.present("t4").items() if n in brk["players"])
    faces = ["2c", "Ah", "Kd", "Ks", "9h", "Tc", "3d", "4s", "5h"][: len(seats)]
    msgs = []
    for seq, (seat, face) in enumerate(zip(seats, faces, strict=True), 1):
        ev = {"schema": 1, "seq": seq, "ts": now.t, "hand_id": 0, "kind": "card", "seat": seat, "face": "up",
              "card": face, "source": "rfid"}
        msgs.append(("poker/t4/event/card", json.dumps(ev).encode()))
    ingest.handle(msgs[:-1])
    assert "t4" in tour.pending_breaks  # one player still waits for his card
    ingest.handle(msgs[-1:])
    assert "t4" not in tour.pending_breaks
    first = next(x for x in d.tournament.decisions[::-1] if x.kind == "move" and x.data.get("card") == "Ah")
    assert [first.data["table"], first.data["seat"]] == brk["seat_cards"][0]  # the highest card, the first seat card
    again = _director(tmp_path, now)
    assert again.state()["tournament"] == d.state()["tournament"]


@pytest.mark.parametrize("db", ["sqlite", "postgresql"])
def test_a_hundred_player_tournament_on_the_floor_one_machine_and_the_room_database(tmp_path: Path, db: str) -> None:
    """From seating to the final table through the director's requests, journaled in SQLite (one
    machine) or PostgreSQL (the room's database), then replayed by a restarted floor to the same seats
    and decisions. The rules themselves are checked step by step in test_tournament.py."""
    import random

    from controller.floor.room import Postgres

    pg = Postgres().start() if db == "postgresql" else None
    url = pg.url if pg else f"sqlite:///{tmp_path / 'floor.db'}"
    try:
        now = FakeTime()
        d = Director(Store.open(url), now=now).restore()
        d.request("tournament.create", {"structure": {**STRUCTURE, "paid_places": 12}, "seed": 5})
        for i in range(100):
            d.request("tournament.register", {"name": f"p{i:03d}"})
        d.request("tournament.start", {"tables": [f"t{n}" for n in range(1, 13)]})
        d.request("tournament.clock_start", {})
        rng = random.Random(9)
        tour = d.tournament
        while len(tour.active()) > 1:
            now.t += 90
            table = rng.choice(sorted(str(t.number) for t in tour.open_tables()))
            staying = [n for n in tour.present(table).values() if tour.players[n].moving_to is None]
            if len(staying) < 2 or rng.random() < 0.4:
                continue
            d.request("tournament.bust", {"hand": [{"table": table, "players": {rng.choice(staying): 100}}]})
            for p in [p for p in tour.active() if p.moving_to]:
                d.request("tournament.confirm_move", {"name": p.name})
            counts = tour.counts()
            assert max(counts.values()) - min(counts.values()) <= (2 if len(counts) > 6 else 1)
            if len(tour.active()) <= 9:
                assert len(counts) == 1  # TDA 10
        assert d.reading()["players_left"] == 1 and d.reading()["level"] > 1
        again = Director(Store.open(url), now=now).restore()
        assert again.state() == d.state()
    finally:
        if pg:
            pg.stop()


def test_the_chip_race_at_the_scheduled_colour_up_tda_22(tmp_path: Path) -> None:
    """TDA 22-A: "At scheduled colour-ups, chips will be raced off starting in seat 1"; the floor takes
    the removed chips from the structure (the example colours up the 25s after level 2)."""
    from controller.floor.tournament.chiprace import ChipRaceError

    now = FakeTime()
    d = _director(tmp_path, now)
    _run_tournament(d, now)  # level 2 is running
    with pytest.raises(DirectorError, match="no colour-up is scheduled now \\(level 2 in play\\)"):
        d.request("tournament.chip_race", {"table": 1, "stacks": {}, "cards": []})
    now.t += 30 * 60  # the break after level 2
    out = d.request("tournament.chip_race", {"table": 1, "stacks": {"1": {"25": 3, "100": 10}, "4": {"25": 2}},
                                            "cards": ["2c", "3c", "4c", "Ah", "Kh"]})
    seat4 = next(x for x in out if x["seat"] == 4)
    assert seat4["after"] == 100 and "raced out" in seat4["why"] and seat4["citations"] == ["TDA 22", "RRoP s15 8"]
    with pytest.raises(ChipRaceError):
        d.request("tournament.chip_race", {"table": 1, "stacks": {"1": {"25": 3}}, "cards": []})


def test_the_room_page_shows_lists_open_seats_who_is_next_and_each_decision_live(tmp_path: Path) -> None:
    """The floor's room page in Chromium: the tournament's tables and halts with their rules, the cash
    games with open and held seats, the waiting list with who is next, updated as requests come in."""
    needs_browser()
    hub = Hub()
    now = FakeTime()
    d = Director(Store.open(f"sqlite:///{tmp_path / 'floor.db'}"),
                 lambda topic, payload: hub.publish({"type": "room", "topic": topic}), now=now).restore()
    _run_tournament(d, now)
    d.request("cash.open_game", {"table": "C1", "form": "holdem", "stakes": "1/2", "seats": 2})
    d.request("cash.open_game", {"table": "C2", "form": "holdem", "stakes": "1/2", "seats": 2, "feeds": "C1"})
    for name in ("ann", "bob", "cy", "dee", "eve"):
        d.request("cash.join_list", {"player": name, "form": "holdem", "stakes": "1/2", "present": True})
    for table in ("C1", "C2"):
        for seat in (1, 2):
            d.request("cash.seat_opens", {"table": table, "seat": seat})
    d.request("cash.seat_opens", {"table": "C1", "seat": 2})  # bob leaves: cy must move from C2
    store = Store.open(f"sqlite:///{tmp_path / 'floor.db'}")
    server = FloorServer(FloorApi(store, director=d), hub)
    try:
        with browse(server.url + "/floor/room.html", 1280, 900) as (page, errors):
            page.wait_for_selector('#c-lists [data-game="1/2 holdem"]', timeout=8000)
            assert page.text_content('#c-lists [data-game="1/2 holdem"] h4') == "1/2 holdem: next is eve"
            c1 = page.text_content('#c-games [data-table="C1"]')
            assert "2: held for cy" in c1 and "(must-move for C1)" in page.text_content('#c-games [data-table="C2"]')
            decisions = page.text_content("#t-decisions")
            assert "finishes" in decisions and "RRoP s15 35" in decisions
            # a new name on the list reaches the page through the live stream, without a reload
            loads = int(page.get_attribute("body", "data-loaded"))
            req = urllib.request.Request(server.url + "/api/room/cash/join_list", method="POST", data=json.dumps(
                {"player": "fay", "form": "holdem", "stakes": "1/2", "present": True}).encode())
            urllib.request.urlopen(req, timeout=5).read()
            page.wait_for_function(f"() => Number(document.body.dataset.loaded) > {loads}", timeout=4000)
            page.wait_for_function("() => document.querySelector('#c-lists ol').textContent.includes('fay')",
                                   timeout=4000)
            assert not errors, errors
    finally:
        server.stop()
        store.close()


def test_a_new_level_reaches_every_tournament_table_as_its_own_request_under_the_shipped_acl(tmp_path: Path) -> None:
    """TDA 21: "A new level will not be announced until the clock reaches zero. The new level applies to
    the next hand." The floor (its login in systemd/mosquitto/acl) sends each open tournament table
    ``request/level``, which the table's daemon keeps for its next hand; the display hears the level."""
    import secrets
    import threading

    import paho.mqtt.client as mqtt

    from controller.floor.service import FloorService
    from controller.mqtt import contract as mc
    from tests.floor.test_floor_local import start

    users = {"controller": secrets.token_urlsafe(8), "floor": secrets.token_urlsafe(8),
             "display": secrets.token_urlsafe(8)}
    got: list[tuple[str, dict]] = []
    ready = threading.Event()
    with start(users) as broker:
        subs = []
        for user, filt in (("controller", "poker/+/request/level"), ("display", "floor/room/level")):
            c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"sub-{user}")
            c.username_pw_set(user, users[user])
            c.on_message = lambda _c, _u, m: got.append((m.topic, json.loads(m.payload)))
            c.on_subscribe = lambda *a: ready.set()
            c.connect(broker.host, broker.port)
            c.subscribe(filt, qos=1)
            c.loop_start()
            subs.append(c)
            assert ready.wait(5)
            ready.clear()
        floor = FloorService(db=f"sqlite:///{tmp_path / 'floor.db'}", mqtt=(broker.host, broker.port),
                             mqtt_user="floor", mqtt_password=users["floor"]).start()
        try:
            from controller.floor.sources import wait_for

            wait_for(lambda: floor.source.connected.is_set(), 10, "the floor online")
            d = floor.director
            d.request("tournament.create", {"structure": STRUCTURE})
            for i in range(18):
                d.request("tournament.register", {"name": f"p{i:02d}"})
            d.request("tournament.start", {"tables": ["t1", "t2"]})
            d.request("tournament.clock_start", {})
            started = d.clock.start
            assert d.tick(started + 5)[0]["level"] == 1
            assert d.tick(started + 6) == []  # nothing new: no message
            assert d.tick(started + 31 * 60)[0]["level"] == 2
            wait_for(lambda: len([g for g in got if "request" in g[0]]) == 4, 5, "four level requests")
            requests = sorted((t, p["number"]) for t, p in got if "request" in t)
            assert requests == [("poker/t1/request/level", 1), ("poker/t1/request/level", 2),
                                ("poker/t2/request/level", 1), ("poker/t2/request/level", 2)]
            assert all(not mc.errors("request_level", p) for t, p in got if "request" in t)
            wait_for(lambda: any(t == "floor/room/level" and p["level"] == 2 for t, p in got), 5, "the display")
        finally:
            floor.stop()
            for c in subs:
                c.loop_stop()
                c.disconnect()
