"""What a viewer and a dealer see: nothing clipped, nobody's cards under somebody else's.

Every game at 2, 6, 9 and 10 seats, each player with a 20-character name, a seven-figure stack
and a bet, the longest hand names the controller's evaluator gives ("Full House, Queens over
Sevens", a low beside it in high-low games) and every card a hand can hold at once (stud: seven,
the draw games: five).  The broadcast overlay is measured at 1920x1080 and the dealer display
(the console, as the demo opens it) at 800x480, in headless Chromium: element boxes as the
browser lays them out, not the CSS we meant.

One page load per size: each table state is published by the controller's credential on a real
Mosquitto and read by the page through its own MQTT path; the test waits for the page to draw
that hand, then measures.  The states are the service's own (``TableService.public_state`` of a
seated table), filled with the cards of the fullest street: stud at 9 or 10 seats holds more
cards than a deck has, which is the layout's worst case, not a hand anyone deals.
"""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from controller.mqtt.contract import Topics, state_payload, validate
from controller.rules.events import NewHand, SeatPlayer
from controller.rules.games import GAMES, Family
from controller.rules.table import Table
from controller.service import TableService
from tests.web_helpers import (
    TIMEOUT_MS,
    Recorder,
    needs_browser,
    open_page,
    save_screenshot,
)

SIZES = (2, 6, 9, 10)
STACK = 1_234_567
BET = 250_000
HIGH = "Full House, Queens over Sevens"  # the longest name the evaluator gives a high hand
LOW = "8-7-6-5-4 low"
RANKS = "23456789TJQKA"
DECK = [r + s for s in "shdc" for r in RANKS]


def name_of(seat: int) -> str:
    """20 characters: odd seats two words, even seats one (which can only wrap mid-word)."""
    name = f"Maximiliana Oberh{seat:03d}" if seat % 2 else f"Bartholomew_Fitzg{seat:03d}"
    assert len(name) == 20
    return name


def _states(game: str, size: int, hand_id: int) -> dict[str, Any]:
    """The overlay's and the display's payloads of one crowded hand, from the service's own state."""
    stud = GAMES[game].family is Family.STUD
    stakes = {"ante": 25, "bring_in": 50, "limits": [200, 400]} if stud else {"blinds": [100, 200],
                                                                            "limits": [200, 400]}
    svc = TableService(Table(size=size, game=game, stakes=stakes, starting_stack=STACK))
    for s in range(1, size + 1):
        svc.submit(SeatPlayer(s, name_of(s)))
    svc.submit(NewHand())
    view = svc.public_state()
    hand = view["hand"]
    hole_n = GAMES[game].hole_cards
    board_n = 5 if GAMES[game].family is Family.BOARD else 0
    seats = sorted(hand["seats"], key=int)
    hole: dict[str, list[str]] = {}
    for i, key in enumerate(seats):
        cards = [DECK[(i * hole_n + j) % 47 + 5] for j in range(hole_n)]
        hole[key] = cards
        hand["seats"][key]["cards"] = hole_n
        hand["seats"][key]["up"] = cards[2:6] if stud else []
    hand["board"] = DECK[:board_n]
    hand["phase"], hand["street"], hand["to_act"], hand["next_seat"] = "bet", hand["street"], int(seats[1]), None
    hand["chips"]["bets"] = {k: BET for k in seats}
    hand["chips"]["stacks"] = {k: STACK - BET for k in seats}
    hilo = len(GAMES[game].showdown) == 2
    eq = {}
    for key in seats:
        e: dict[str, Any] = {"win": 0.123, "tie": 0.045, "equity": 0.1234, "hand": HIGH}
        if hilo:
            e |= {"low_hand": LOW, "high": 0.0712, "low": 0.0523}
        eq[key] = e
    state = state_payload(seq=hand_id, ts=time.time(), table_id="x", table=view["table"], hand_id=hand_id,
                          hand=hand, alert=None)
    equity = {"schema": 1, "seq": hand_id, "ts": time.time(), "hand_id": hand_id, "game": game, "method": "exact",
              "stderr": 0.0, "seats": eq}
    holecards = {"schema": 1, "seq": hand_id, "ts": time.time(), "hand_id": hand_id, "seats": hole, "delay": 0.0}
    # The hand over: two winners (high and low, or a split pot), the longest names again.
    done = json.loads(json.dumps(state))
    done["hand_id"] = hand_id + 1
    done["hand"]["phase"], done["hand"]["to_act"] = "done", None
    done["hand"]["chips"]["bets"] = {k: 0 for k in seats}
    end = {"schema": 1, "seq": hand_id + 1, "ts": time.time(), "hand_id": hand_id + 1, "kind": "hand_end",
           "result": "showdown", "shown": hole,
           "winners": [{"seat": int(seats[0]), "part": "high" if hilo else "pot", "hand": HIGH, "share": 1_234_567},
                       {"seat": int(seats[-1]), "part": "low" if hilo else "pot", "hand": LOW if hilo else HIGH,
                        "share": 1_234_567}],
           "payouts": {seats[0]: 1_234_567, seats[-1]: 1_234_567}}
    validate("broadcast_state", state)
    validate("broadcast_equity", equity)
    validate("event", end)
    return {"state": state, "equity": equity, "holecards": holecards, "done": done, "end": end}


# Seat boxes, cards, everything that carries text, and what a seat box must stay clear of.
MEASURE = (Path(__file__).with_name("layout_measure.js")).read_text()

OVERLAY = (".player", ".card", ".player .who, .player .money, .player .hand-name, .player .odds, .player .odds-sub, "
           "#label span, #pot .main, #pot .side, #winner div, #last-action, #clock",
           ["#winner", "#board", "#pot", "#label", "#last-action"])
DISPLAY = (".seat", ".card", ".seat .num, .seat .name, .seat .badge, .seat .money span, .seat .state, #game, #hand-id, "
           "#street, #level, #pot, #result, #next-seat, #next-name, #to-act-seat, #to-act-name, #last-action, #range, "
           "#center-info span, .cmd",
           ["#center", "#console"])


class Publisher:
    """The controller's credential, publishing retained payloads as the daemon would."""

    def __init__(self, broker, password: str, table: str) -> None:
        self.rec = Recorder(broker, "controller", password)
        self.t = Topics("poker", table)

    def send(self, topic: str, payload: Any, retain: bool = True) -> None:
        info = self.rec.c.publish(topic, json.dumps(payload), qos=1, retain=retain)
        info.wait_for_publish(5)

    def close(self) -> None:
        self.rec.close()


@contextmanager
def _published(web_broker, web_passwords, table: str, browser, url: str, size: tuple[int, int]):
    """The controller's publisher on ``table`` and a page at ``url`` with its errors, both closed after."""
    pub = Publisher(web_broker, web_passwords["controller"], table)
    try:
        page, errors = open_page(browser, url, size)
        try:
            yield pub, page, errors
        finally:
            page.close()
    finally:
        pub.close()


def _cases():
    return [(game, size) for game in GAMES for size in SIZES]


def test_overlay_layout_every_game_and_size(web_browser, web_server, web_broker, web_passwords):
    needs_browser()
    problems: dict[str, list[str]] = {}
    with _published(web_broker, web_passwords, "lay1", web_browser, web_server.page_url("overlay", table="lay1"),
                    (1920, 1080)) as (pub, page, errors):
        for i, (game, size) in enumerate(_cases()):
            hid = 10 + 2 * i
            p = _states(game, size, hid)
            pub.send(pub.t.broadcast("holecards"), p["holecards"])
            pub.send(pub.t.broadcast("equity"), p["equity"])
            pub.send(pub.t.broadcast("state"), p["state"])
            page.wait_for_selector(f'body[data-hand-id="{hid}"][data-equity-seq="{hid}"]', timeout=TIMEOUT_MS)
            assert page.locator(".player").count() == size
            assert page.locator(".player .card.face").count() == size * GAMES[game].hole_cards
            found = page.evaluate(MEASURE, [OVERLAY[0], OVERLAY[1], OVERLAY[2], OVERLAY[3]])
            if found or (game, size) in (("jacks_or_better", 6), ("omaha8", 9), ("stud8", 10)):
                save_screenshot(page, f"layout-overlay-{game}-{size}.png")
            if found:
                problems[f"{game} {size} in play"] = found
            pub.send(pub.t.broadcast("holecards"), dict(p["holecards"], hand_id=hid + 1))
            pub.send(pub.t.broadcast("equity"), dict(p["equity"], hand_id=hid + 1, seq=hid + 1))
            pub.send(pub.t.broadcast("state"), p["done"])
            pub.send(pub.t.broadcast("hand_end"), p["end"], retain=False)
            page.wait_for_selector(f'body[data-hand-id="{hid + 1}"] #winner:not([hidden]) div >> nth=1',
                                   timeout=TIMEOUT_MS)
            found = page.evaluate(MEASURE, [OVERLAY[0], OVERLAY[1], OVERLAY[2], OVERLAY[3]])
            if found:
                problems[f"{game} {size} over"] = found
                save_screenshot(page, f"layout-overlay-{game}-{size}-over.png")
            if (game, size) in (("jacks_or_better", 6), ("omaha8", 9), ("stud8", 10)):
                save_screenshot(page, f"layout-overlay-{game}-{size}-over.png")
        assert not problems, json.dumps(problems, indent=1)[:6000]
        assert not errors, errors


@pytest.mark.parametrize("role", ["console", "display"])
def test_display_layout_every_game_and_size(role, web_browser, web_server, web_broker, web_passwords):
    needs_browser()
    table = f"lay-{role}"
    url = web_server.page_url("display", table=table) + f"&user={role}&pass={web_passwords[role]}"
    problems: dict[str, list[str]] = {}
    with _published(web_broker, web_passwords, table, web_browser, url, (800, 480)) as (pub, page, errors):
        for i, (game, size) in enumerate(_cases()):
            hid = 10 + 2 * i
            p = _states(game, size, hid)
            public = json.loads(json.dumps(p["state"]))
            public["table_id"] = "Main Event Table 12"
            pub.send(pub.t.state, public)
            page.wait_for_selector(f'#hand-id:text-is("hand {hid}")', timeout=TIMEOUT_MS)
            found = page.evaluate(MEASURE, list(DISPLAY[:3]) + [DISPLAY[3]])
            if found:
                problems[f"{game} {size} in play"] = found
                save_screenshot(page, f"layout-{role}-{game}-{size}.png")
            done = p["done"]
            end = dict(p["end"], shown=None, result="showdown")
            pub.send(pub.t.state, done)
            pub.send(pub.t.event("hand_end"), end, retain=False)
            page.wait_for_selector(f'#hand-id:text-is("hand {hid + 1}")', timeout=TIMEOUT_MS)
            page.wait_for_selector("#result:not([hidden])", timeout=TIMEOUT_MS)
            found = page.evaluate(MEASURE, list(DISPLAY[:3]) + [DISPLAY[3]])
            if found:
                problems[f"{game} {size} over"] = found
                save_screenshot(page, f"layout-{role}-{game}-{size}-over.png")
            if (game, size) in (("holdem", 10), ("stud", 9)):
                save_screenshot(page, f"layout-{role}-{game}-{size}.png")
        assert not problems, json.dumps(problems, indent=1)[:6000]
        assert not errors, errors
