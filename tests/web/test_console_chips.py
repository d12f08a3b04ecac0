"""Chips on the pages (issue 12 "Console" and "Outputs", issue 15 item 5), in Chromium, on a real
Mosquitto with the shipped ACL.

The table is published by a real MQTT client with the ``controller`` credential, in the shapes
of docs/mqtt.md and the chips contract (``state.hand.chips``, ``state.table.level``,
``players[n].stack``, ``hand_end.payouts``); the requests the pages send are read back by that
client and checked field by field against the contract.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from controller.mqtt.contract import Topics, validate
from tests.web_helpers import (
    TIMEOUT_MS,
    Recorder,
    needs_browser,
    open_page,
    save_screenshot,
    wait_until,
)

NAMES = {1: "Ann", 3: "Bob", 5: "Cy", 7: "Dee"}


def level(now: float) -> dict[str, Any]:
    nxt = {"number": 4, "blinds": [150, 300], "ante": 0, "bb_ante": 300, "bring_in": None, "limits": None,
           "started_at": None, "ends_at": None}
    return {"number": 3, "blinds": [100, 200], "ante": 0, "bb_ante": 200, "bring_in": None, "limits": None,
            "started_at": now - 60, "ends_at": now + 600, "next": nxt}


def table(now: float, stacks: dict[int, int], size: int = 9, game: str = "holdem") -> dict[str, Any]:
    return {"size": size, "game": game, "rules": "tda", "event": "tournament", "dead_button": False,
            "players": {str(s): {"name": NAMES.get(s, f"Player {s}"), "waiting_for_big_blind": False,
                                 "sitting_out": False, "stack": stacks.get(s)} for s in stacks},
            "button": 1, "small_blind": 3, "big_blind": 5, "hand_number": 12, "level": level(now)}


def flop_state(structure: str = "no_limit", to_call: int = 1000) -> dict[str, Any]:
    """Seat 7 bet 1,000 on the flop; seat 1 (all in preflop for 1,200 in all) is in the main pot only."""
    now = time.time()
    chips = {
        "stacks": {"1": 0, "3": 8800, "5": 9800, "7": 7600},
        "bets": {"7": 1000},
        "pot": 5000,
        "pots": [{"amount": 4800, "eligible": [1, 3, 5, 7]}, {"amount": 200, "eligible": [3, 5, 7]}],
        "to_call": to_call, "min_raise": 2000, "max_raise": 8800 if structure == "no_limit" else 6000,
        "last_action": {"seat": 7, "action": "bet", "amount": 1000, "text": "Seat 7 bets 1,000"},
    }
    seats = {str(s): {"cards": 2, "up": [], "folded": False, "dead": False, "all_in": s == 1} for s in NAMES}
    hand = {"game": "holdem", "structure": structure, "rules": "tda", "event": "tournament", "phase": "bet",
            "street": "flop", "button": 1, "small_blind": 3, "big_blind": 5, "seats": seats,
            "board": ["Ah", "7c", "2d"], "burns": 1, "next_seat": None, "to_act": 3, "bring_in": None,
            "substantial_action": True, "winner": None, "chips": chips}
    return {"schema": 1, "seq": 100, "ts": now, "table_id": "x", "table": table(now, {1: 0, 3: 8800, 5: 9800, 7: 7600}),
            "hand_id": 12, "hand": hand, "alert": None}


def idle_state() -> dict[str, Any]:
    now = time.time()
    return {"schema": 1, "seq": 200, "ts": now, "table_id": "x",
            "table": table(now, {1: 10000, 3: 8800, 5: 9800, 7: 7600}), "hand_id": None, "hand": None, "alert": None}


class Table:
    """The controller's side: retained state out, the pages' requests in."""

    def __init__(self, broker, passwords, table_id: str) -> None:
        self.t = Topics("poker", table_id)
        self.rec = Recorder(broker, "controller", passwords["controller"], [self.t.requests])

    def state(self, payload: dict[str, Any], topic: str | None = None) -> None:
        payload = dict(payload, table_id=self.t.table_id)
        validate("broadcast_state" if topic and topic.endswith("broadcast/state") else "state", payload)
        self.rec.c.publish(topic or self.t.state, json.dumps(payload), qos=1, retain=True).wait_for_publish(5)

    def publish(self, topic: str, payload: Any, retain: bool = False) -> None:
        if not isinstance(payload, bytes):  # contract-shaped: it fits its schema
            validate("broadcast_" + topic.rsplit("/", 1)[-1], payload)
        data = payload if isinstance(payload, bytes) else json.dumps(payload)
        self.rec.c.publish(topic, data, qos=1, retain=retain).wait_for_publish(5)

    def requests(self, name: str, n: int = 1) -> list[dict[str, Any]]:
        wait_until(lambda: len(self.rec.on(f"{self.t.root}/request/{name}")) >= n, 5, f"request/{name} x{n}")
        bodies = [json.loads(m.payload) for m in self.rec.on(f"{self.t.root}/request/{name}")]
        for body in bodies:  # every request a page sends fits the contract's schema
            validate(f"request_{name}", body)
        return bodies

    def answer(self, name: str, ok: bool, error: str | None = None) -> None:
        msg = self.rec.on(f"{self.t.root}/request/{name}")[-1]
        body = json.loads(msg.payload)
        self.rec.c.publish(msg.properties.ResponseTopic, json.dumps(
            {"schema": 1, "transaction": body["transaction"], "ok": ok, "error": error, "result": None}), qos=1)

    def close(self) -> None:
        self.rec.close()


@contextmanager
def page_on(tb: Table, browser, url: str, size: tuple[int, int] = (1920, 1080)) -> Iterator[tuple[Any, list[str]]]:
    """A page at ``url`` on ``tb``'s table, with its JavaScript errors; the page and ``tb`` are closed after."""
    try:
        page, errors = open_page(browser, url, size)
        try:
            yield page, errors
        finally:
            page.close()
    finally:
        tb.close()


@contextmanager
def console_page(browser, server, broker, passwords, table_id: str, state: dict[str, Any], page_name: str,
                 size: tuple[int, int]) -> Iterator[tuple[Table, Any, list[str]]]:
    """The controller's side publishing ``state``, and a console page (console credential) on it."""
    tb = Table(broker, passwords, table_id)
    tb.state(state)
    with page_on(tb, browser, server.page_url(page_name, table=table_id, user="console",
                                              **{"pass": passwords["console"]}), size) as (page, errors):
        yield tb, page, errors


def strip(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k != "transaction"}


def test_display_shows_chips_and_enters_amounts_fast(web_browser, web_server, web_broker, web_passwords):
    needs_browser()
    with console_page(web_browser, web_server, web_broker, web_passwords, "chip1", flop_state(),
                      "display", (800, 480)) as (tb, page, errors):
        page.wait_for_selector('#pot[data-pot="5000"]', timeout=TIMEOUT_MS)
        assert "Pot 5,000" in page.inner_text("#pot") and "side 1: 200" in page.inner_text("#pot")
        assert page.get_attribute('.seat[data-seat="3"] .stack', "data-stack") == "8800"
        assert page.get_attribute('.seat[data-seat="7"] .bet', "data-bet") == "1000"
        assert page.get_attribute("#range", "data-min-raise") == "2000"
        assert "to call 1,000" in page.inner_text("#range") and "raise to 2,000\u20138,800" in page.inner_text("#range")
        assert "Seat 7 bets 1,000" in page.inner_text("#last-action")
        clock = page.inner_text("#level")
        assert clock.startswith("Level 3") and "100/200" in clock and "BB ante 200" in clock
        assert clock.endswith(("10:00", "9:59", "9:58", "9:57"))
        dims = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
        assert dims[0] <= 800 and dims[1] <= 480, dims
        save_screenshot(page, "display-chips.png")

        # The pad: call, min raise, a typed amount, all in.
        page.click("#btn-action")
        page.wait_for_selector('.pad[data-seat="3"]', timeout=TIMEOUT_MS)
        save_screenshot(page, "display-action-pad.png")
        page.click('.pad [data-quick="min"]')
        assert strip(tb.requests("action")[-1]) == {"seat": 3, "action": "raise", "amount": 2000, "all_in": False}
        page.click("#btn-action")
        for key in ("2", "4", "00"):
            page.click(f'.pad [data-key="{key}"]')
        assert page.get_attribute(".pad-amount", "data-amount") == "2400"
        page.click('.pad [data-quick="amount"]')
        assert strip(tb.requests("action", 2)[-1]) == {"seat": 3, "action": "raise", "amount": 2400, "all_in": False}
        tb.answer("action", False, "request/action: raise to 2400 is legal only from 2,000 to 8,800")
        page.wait_for_selector('#toast[data-ok="false"]', timeout=TIMEOUT_MS)
        page.click("#btn-action")
        page.click('.pad [data-quick="allin"]')
        assert strip(tb.requests("action", 3)[-1]) == {"seat": 3, "action": "raise", "amount": 8800, "all_in": True}
        page.click("#btn-action")
        page.click('.pad [data-quick="call"]')
        assert strip(tb.requests("action", 4)[-1]) == {"seat": 3, "action": "call", "all_in": False}

        # A push entered chip by chip, silent: 1,000 + 500 facing 1,000 (the controller rules, TDA 42-A).
        page.click("#btn-action")
        page.click('.put [data-chip="1000"]')
        page.click('.put [data-chip="500"]')
        assert page.get_attribute(".put-chips", "data-total") == "1500"
        page.click('.put [data-quick="put"]')
        assert strip(tb.requests("put")[-1]) == {"seat": 3, "chips": [1000, 500]}
        page.click("#btn-action")
        page.click('.put [data-chip="5000"]')
        page.click('.put [data-declare="raise"]')
        page.click('.put [data-quick="put"]')
        assert strip(tb.requests("put", 2)[-1]) == {"seat": 3, "chips": [5000], "declare": "raise"}
        for body in tb.requests("action", 4):  # the action requests fit today's contract too
            validate("request_action", body)
        assert not errors, errors


def test_pot_limit_pad_offers_the_pot(web_browser, web_server, web_broker, web_passwords):
    needs_browser()
    with console_page(web_browser, web_server, web_broker, web_passwords, "chip2",
                      flop_state("pot_limit"), "display", (800, 480)) as (tb, page, errors):
        page.wait_for_selector('#pot[data-pot="5000"]', timeout=TIMEOUT_MS)
        page.click("#btn-action")
        assert page.inner_text('.pad [data-quick="pot"]') == "Pot 6,000"
        page.click('.pad [data-quick="pot"]')
        assert strip(tb.requests("action")[-1]) == {"seat": 3, "action": "raise", "amount": 6000, "all_in": False}
        assert not errors, errors


def test_console_seats_players_sets_stacks_changes_game_and_level(web_browser, web_server, web_broker,
                                                                  web_passwords):
    needs_browser()
    with console_page(web_browser, web_server, web_broker, web_passwords, "chip3", idle_state(),
                      "display", (800, 480)) as (tb, page, errors):
        page.wait_for_selector('.seat[data-seat="3"] .stack[data-stack="8800"]', timeout=TIMEOUT_MS)
        page.click("#btn-players")
        page.click('#dialog [data-pick-seat="4"]')
        page.fill('#dialog input[name="name"]', "Eve")
        page.fill('#dialog input[name="stack"]', "5000")
        page.click('#dialog [data-send="seat"]')
        assert strip(tb.requests("seat")[-1]) == {"seat": 4, "name": "Eve", "stack": 5000}
        page.click("#btn-players")
        page.click('#dialog [data-pick-seat="3"]')
        assert page.input_value('#dialog input[name="name"]') == "Bob"
        assert page.input_value('#dialog input[name="stack"]') == "8800"
        page.fill('#dialog input[name="add"]', "2000")
        page.click('#dialog [data-send="add"]')
        assert strip(tb.requests("stack")[-1]) == {"seat": 3, "add": 2000}
        page.click("#btn-players")
        page.click('#dialog [data-pick-seat="3"]')
        page.fill('#dialog input[name="stack"]', "12000")
        page.click('#dialog [data-send="stack"]')
        assert strip(tb.requests("stack", 2)[-1]) == {"seat": 3, "stack": 12000}
        page.click("#btn-players")
        page.click('#dialog [data-pick-seat="7"]')
        page.click('#dialog [data-send="unseat"]')
        assert strip(tb.requests("unseat")[-1]) == {"seat": 7}

        page.click("#btn-game")
        page.click('#dialog [data-game="omaha"]')
        page.click('#dialog [data-structure="pot_limit"]')
        page.click('#dialog [data-send="change_game"]')
        body = strip(tb.requests("change_game")[-1])
        assert body == {"game": "omaha", "structure": "pot_limit", "rules": "tda", "event": "tournament"}
        validate("request_change_game", body)

        page.click("#btn-level")
        assert "Level 3" in page.inner_text("#dialog") and "Next: Level 4" in page.inner_text("#dialog")
        page.click('#dialog [data-send="advance"]')
        assert strip(tb.requests("level")[-1]) == {"advance": True}
        page.click("#btn-level")
        page.fill('#dialog input[name="level"]', "6")
        page.click('#dialog [data-send="level"]')
        assert strip(tb.requests("level", 2)[-1]) == {"number": 6}
        validate("request_unseat", tb.requests("unseat")[-1])
        assert not errors, errors


def test_action_tracker_on_a_tablet(web_browser, web_server, web_broker, web_passwords):
    needs_browser()
    with console_page(web_browser, web_server, web_broker, web_passwords, "trk1", flop_state(),
                      "tracker", (1024, 768)) as (tb, page, errors):
        page.wait_for_selector('#pot[data-pot="5000"]', timeout=TIMEOUT_MS)
        assert page.get_attribute('#seats tr[data-seat="3"]', "data-to-act") == "true"
        assert page.get_attribute('#seats tr[data-seat="3"] td[data-stack]', "data-stack") == "8800"
        assert "Bob" in page.inner_text("#pad-title")
        assert "raise to 2,000\u20138,800" in page.inner_text(".pad-range")
        assert page.inner_text("#level").startswith("Level 3")
        for sel in ('.pad [data-quick="fold"]', '.pad [data-quick="call"]', '.pad [data-quick="min"]',
                    '.pad [data-quick="allin"]', '.pad [data-key="5"]'):
            box = page.locator(sel).bounding_box()
            assert box and box["height"] >= 44 and box["y"] + box["height"] <= 768, (sel, box)  # touch, on screen
        save_screenshot(page, "tracker.png")
        page.click('.pad [data-quick="call"]')
        assert strip(tb.requests("action")[-1]) == {"seat": 3, "action": "call", "all_in": False}
        # A state that changes nothing the pad offers keeps an amount being typed.
        page.click('.pad [data-key="3"]')
        tb.state(dict(flop_state(), seq=101))
        page.wait_for_timeout(300)
        assert page.get_attribute(".pad-amount", "data-amount") == "3"

        # Between hands: stacks and names.
        tb.state(idle_state())
        page.wait_for_selector("#btn-new-hand:not([disabled])", timeout=TIMEOUT_MS)
        page.click('#seats [data-edit="5"]')
        page.fill('#pad input[name="add"]', "10000")
        page.click('#pad [data-send="add"]')
        assert strip(tb.requests("stack")[-1]) == {"seat": 5, "add": 10000}
        page.click("#btn-new-hand")
        tb.requests("new_hand")
        assert not errors, errors


def test_overlay_shows_chips_turn_last_action_and_payout(web_browser, web_server, web_broker,
                                                         web_passwords):
    needs_browser()
    tb = Table(web_broker, web_passwords, "ochip")
    t = tb.t
    state = flop_state()
    tb.state(state, topic=t.broadcast("state"))
    with page_on(tb, web_browser, web_server.page_url("overlay", table="ochip")) as (page, errors):
        page.wait_for_selector('#pot:not([hidden])', timeout=TIMEOUT_MS)
        assert page.inner_text("#pot .main") == "Pot 5,000"
        assert page.inner_text("#pot .side") == "Side pot 1: 200"
        assert page.get_attribute('.player[data-seat="3"]', "data-to-act") == "true"
        assert page.inner_text('.player[data-seat="3"] .stack') == "8,800"
        assert page.inner_text('.player[data-seat="7"] .bet') == "1,000"
        assert page.inner_text('.player[data-seat="1"] .stack') == "ALL IN"
        assert page.inner_text("#last-action") == "Seat 7 bets 1,000"
        assert page.inner_text("#clock").startswith("Level 3 \u00b7 100/200")
        save_screenshot(page, "overlay-chips.png")
        # The hand ends: what the winner won.
        done = json.loads(json.dumps(state))
        done["hand"]["phase"] = "done"
        done["hand"]["chips"]["bets"] = {}
        done["hand"]["chips"]["last_action"] = None
        tb.publish(t.broadcast("hand_end"), {"schema": 1, "seq": 120, "ts": time.time(), "hand_id": 12,
                                             "kind": "hand_end", "result": "showdown",
                                             "winners": [{"seat": 5, "hand": "Three Sevens", "share": 5000}],
                                             "shown": {"5": ["7h", "7s"]}, "payouts": {"5": 5000},
                                             "pots": [{"amount": 5000, "eligible": [1, 3, 5, 7], "winners": [5]}]})
        tb.state(dict(done, seq=121), topic=t.broadcast("state"))
        page.wait_for_selector("#winner:not([hidden])", timeout=TIMEOUT_MS)
        assert page.inner_text("#winner") == "Cy wins 5,000 \u2013 Three Sevens"
        assert page.get_attribute('#winner [data-seat="5"]', "data-won") == "5000"  # the share won (issue 27)
        assert not errors, errors


def omaha_eight(table_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    import random

    rng = random.Random(8)
    deck = [r + s for r in "23456789TJQKA" for s in "hdcs"]
    rng.shuffle(deck)
    now = time.time()
    seats = list(range(1, 9))  # eight players: the most the issue saw spill
    hole = {str(s): [deck.pop() for _ in range(4)] for s in seats}
    board = [deck.pop() for _ in range(3)]
    chips = {"stacks": {str(s): 123_456 for s in seats}, "bets": {str(s): 12_000 for s in seats}, "pot": 96_000,
             "pots": [{"amount": 96_000, "eligible": seats}], "to_call": 0, "min_raise": 2000, "max_raise": 98_000,
             "last_action": None}
    names = {s: f"Longname Player {s}" for s in seats}
    state = {"schema": 1, "seq": 50, "ts": now, "table_id": table_id,
             "table": {"size": 9, "game": "omaha", "rules": "robert", "event": "cash", "dead_button": False,
                       "players": {str(s): {"name": names[s], "waiting_for_big_blind": False, "sitting_out": False,
                                            "stack": 123_456} for s in seats},
                       "button": 1, "small_blind": 2, "big_blind": 3, "hand_number": 3, "level": None},
             "hand_id": 3,
             "hand": {"game": "omaha", "structure": "pot_limit", "rules": "robert", "event": "cash", "phase": "bet",
                      "street": "flop", "button": 1, "small_blind": 2, "big_blind": 3,
                      "seats": {str(s): {"cards": 4, "up": [], "folded": False, "dead": False, "all_in": False}
                                for s in seats},
                      "board": board, "burns": 1, "next_seat": None, "to_act": 4, "bring_in": None,
                      "substantial_action": True, "winner": None, "chips": chips},
             "alert": None}
    holecards = {"schema": 1, "seq": 50, "ts": now, "hand_id": 3, "seats": hole, "delay": 5.0}
    return state, holecards


def omaha_eight_on_air(broker, passwords, table_id: str) -> Table:
    """The controller's side with :func:`omaha_eight` on the broadcast topics (state, hole cards)."""
    tb = Table(broker, passwords, table_id)
    state, hole = omaha_eight(table_id)
    tb.state(state, topic=tb.t.broadcast("state"))
    tb.publish(tb.t.broadcast("holecards"), hole, retain=True)
    return tb


def test_overlay_fits_eight_omaha_players(web_browser, web_server, web_broker, web_passwords):
    needs_browser()
    tb = omaha_eight_on_air(web_broker, web_passwords, "om8")
    with page_on(tb, web_browser, web_server.page_url("overlay", table="om8")) as (page, errors):
        page.wait_for_function("() => document.querySelectorAll('.player .card.face').length === 32",
                               timeout=TIMEOUT_MS)
        boxes = page.eval_on_selector_all(".player", "els => els.map(e => e.getBoundingClientRect().toJSON())")
        cards = page.eval_on_selector_all(".player", """els => els.map(e => [...e.querySelectorAll('.card')]
            .map(c => c.getBoundingClientRect().toJSON()))""")
        assert len(boxes) == 8
        for i, box in enumerate(boxes):
            assert box["left"] >= 0 and box["right"] <= 1920, (i, box)
            if i:
                assert box["left"] >= boxes[i - 1]["right"], (i, box, boxes[i - 1])  # no overlap
            for c in cards[i]:  # every card inside its own player's box
                assert c["left"] >= box["left"] and c["right"] <= box["right"], (i, c, box)
            assert box["height"] < 330, box
        save_screenshot(page, "overlay-omaha8.png")
        assert not errors, errors


def test_overlay_parts_can_be_hidden(web_browser, web_server, web_broker, web_passwords):
    needs_browser()
    tb = omaha_eight_on_air(web_broker, web_passwords, "ohide")
    try:
        page, errors = open_page(web_browser, web_server.page_url("overlay", table="ohide", hide="stacks,bets,pot"))
        page.wait_for_selector(".player .card.face", timeout=TIMEOUT_MS)
        assert not page.is_visible("#pot") and not page.is_visible(".player .stack")
        assert not page.is_visible(".player .bet") and page.is_visible("#board")
        page.close()
        page, errors = open_page(web_browser, web_server.page_url("overlay", table="ohide", show="board,label"))
        page.wait_for_selector("#board .card", timeout=TIMEOUT_MS)
        assert page.is_visible("#board") and page.is_visible("#label") and not page.is_visible("#players")
        assert not errors, errors
        page.close()
    finally:
        tb.close()


def test_display_fits_ten_seats_with_chips(web_browser, web_server, web_broker, web_passwords):
    needs_browser()
    state = flop_state()
    now = time.time()
    seats = range(1, 11)
    state["table"] = table(now, {s: 1_234_567 for s in seats}, size=10)
    state["hand"]["seats"] = {str(s): {"cards": 2, "up": [], "folded": s == 4, "dead": False, "all_in": False}
                              for s in seats}
    state["hand"]["chips"]["stacks"] = {str(s): 1_234_567 for s in seats}
    state["hand"]["chips"]["bets"] = {str(s): 25_000 for s in seats if s != 4}
    with console_page(web_browser, web_server, web_broker, web_passwords, "chip10", state, "display",
                      (800, 480)) as (tb, page, errors):
        page.wait_for_selector('.seat[data-seat="10"] .stack[data-stack="1234567"]', timeout=TIMEOUT_MS)
        boxes = {n: page.locator(f'.seat[data-seat="{n}"]').bounding_box() for n in seats}
        for n, box in boxes.items():
            assert box and box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= 800, (n, box)
        save_screenshot(page, "display-ten-chips.png")
        for a in seats:  # no seat covers another
            for b in seats:
                if a < b:
                    p, q = boxes[a], boxes[b]
                    overlap_x = min(p["x"] + p["width"], q["x"] + q["width"]) - max(p["x"], q["x"])
                    overlap_y = min(p["y"] + p["height"], q["y"] + q["height"]) - max(p["y"], q["y"])
                    assert overlap_x <= 0 or overlap_y <= 0, (a, b, p, q)
        save_screenshot(page, "display-ten-chips.png")
        assert not errors, errors
