"""Issue 12 "Done when", in a real browser: a hand entered on the operator page (the action
tracker) with amounts shows the same pot and stacks on the dealer display and, after the
broadcast delay, on the overlay; a silent 1,400 push facing 1,000 shows the TDA 42-A ruling on
the display.

Everything is real: Mosquitto with the shipped config and ACL, the daemon (its MQTT requests,
engine, publisher and broadcast delay), the web server, three pages in Chromium.  The cards are
the dealer's (``daemon.submit(Deal(...))``, as the antennas would report them); every action,
seat, stack and push comes from the pages.
"""

from __future__ import annotations

import secrets
import tempfile
import time
from pathlib import Path

import pytest

from controller.rules.cards import Card
from controller.rules.events import BoardCards, Burn, Deal
from tests.mqtt_util import shipped_broker
from tests.web_helpers import REPO, TIMEOUT_MS, needs_browser, open_page, wait_until

DELAY = 2
STACK = 10_000


def _chips_merged() -> bool:
    from controller.mqtt import contract as mqtt_contract

    return "put" in getattr(mqtt_contract, "REQUEST_NAMES", ())


needs_chips = pytest.mark.skipif(not _chips_merged(), reason="needs the chips engine and requests (issue 12)")


@pytest.fixture
def rig():
    needs_browser()
    from tests.mqtt_util import require_mosquitto

    require_mosquitto()
    from controller.app.config import validate_config
    from controller.app.daemon import Daemon
    from controller.app.webserver import WebServer, launch_chromium
    from controller.rules.decks import DeckRegistry
    from firmware_bridge.table_sim import enroll_deck

    passwords = {r: secrets.token_urlsafe(9) for r in ("controller", "display", "console", "overlay")}
    work = Path(tempfile.mkdtemp(prefix="tablectl-e2e-"))
    with shipped_broker(passwords) as broker:
        settings = {"table": {"id": "e2e", "size": 6, "game": "holdem", "rules": "tda"},
                    "stakes": {"small_blind": 100, "big_blind": 200, "ante": 0},
                    "mqtt": {"url": f"mqtt://127.0.0.1:{broker.port}"},
                    "journal": {"path": str(work / "journal.sqlite")},
                    "broadcast": {"delay": DELAY}}
        if _chips_merged():  # chips counted from a starting stack, with a level clock
            settings["stakes"]["starting_stack"] = STACK
            settings["levels"] = [{"small_blind": 100, "big_blind": 200, "ante": 0, "minutes": 20},
                                  {"small_blind": 200, "big_blind": 400, "ante": 0, "minutes": 20}]
        config = validate_config(settings)
        daemon = Daemon(config, registry=DeckRegistry([enroll_deck("A")]), mqtt_username="controller",
                        mqtt_password=passwords["controller"]).start()
        web = WebServer(root=REPO / "web", config={
            "ws": f"ws://127.0.0.1:{broker.websockets_port}", "table": "e2e", "base": "poker",
            "display": {"user": "console", "pass": passwords["console"]},
            "tracker": {"user": "console", "pass": passwords["console"]},
            "overlay": {"user": "overlay", "pass": passwords["overlay"]}})
        try:
            with launch_chromium() as browser:
                pages = {}
                for name, size in (("tracker", (1024, 768)), ("display", (800, 480)), ("overlay", (1920, 1080))):
                    pages[name] = open_page(browser, web.page_url(name), size)
                yield daemon, pages
                for _page, errors in pages.values():
                    assert not errors, errors
        finally:
            web.stop()
            daemon.stop()


def new_hand_dealt(daemon, tracker) -> None:
    """The tracker starts a hand; the dealer deals two cards to each seat (the antennas' events)."""
    tracker.click("#btn-new-hand")
    wait_until(lambda: daemon.service.engine is not None, 5, "the hand to start")
    engine = daemon.service.engine
    cards = iter(["Ah", "Kd", "7c", "As", "Kh", "2d"])
    for _ in range(2):
        for seat in list(engine.order):
            daemon.submit(Deal(seat, Card.parse(next(cards))))


def chips_on(page, selector: str) -> str:
    return page.get_attribute(selector, "data-stack") or ""


def test_tracker_seats_players_and_runs_a_hand_through_the_daemon(rig):
    """The tracker's requests reach the daemon through the broker's ACL and change the table:
    players seated by name, a new hand, every action of a hand; the display follows at once,
    the overlay after the delay."""
    daemon, pages = rig
    tracker, display, overlay = (pages[n][0] for n in ("tracker", "display", "overlay"))
    for seat, name in ((1, "Ann"), (2, "Bob"), (3, "Cy")):
        tracker.click(f'#seats [data-edit="{seat}"]')
        tracker.fill('#pad input[name="name"]', name)
        tracker.click('#pad [data-send="seat"]')
        display.wait_for_selector(f'.seat[data-seat="{seat}"] .name:text("{name}")', timeout=TIMEOUT_MS)
    assert {int(k): v["name"] for k, v in daemon.service.public_state()["table"]["players"].items()} == \
        {1: "Ann", 2: "Bob", 3: "Cy"}
    new_hand_dealt(daemon, tracker)
    acted = 0
    while daemon.service.public_state()["hand"]["street"] == "preflop":
        hand = daemon.service.public_state()["hand"]
        seat = hand["to_act"]
        tracker.wait_for_selector(f'.pad[data-seat="{seat}"]', timeout=TIMEOUT_MS)
        display.wait_for_selector(f'.seat[data-seat="{seat}"][data-to-act="true"]', timeout=TIMEOUT_MS)
        before = daemon.service.seq
        quick = "check" if acted == 2 else "call"
        tracker.click(f'.pad [data-quick="{quick}"]')
        wait_until(lambda b=before: daemon.service.seq > b, 5, f"seat {seat} {quick}")
        acted += 1
        assert acted <= 3
    daemon.submit(Burn(Card.parse("3c")))
    daemon.submit(BoardCards(tuple(Card.parse(c) for c in ("9s", "8s", "4h"))))
    display.wait_for_selector('#board[data-count="3"]', timeout=TIMEOUT_MS)
    assert overlay.get_attribute("#board", "data-count") != "3"  # the overlay waits out its delay...
    overlay.wait_for_selector('#board[data-count="3"]', timeout=int((DELAY + 8) * 1000))  # ...then shows it
    seat = daemon.service.public_state()["hand"]["to_act"]
    overlay.wait_for_selector(f'.player[data-seat="{seat}"][data-to-act="true"]', timeout=TIMEOUT_MS)


@needs_chips
def test_a_hand_entered_on_the_tracker_shows_on_the_display_and_the_overlay(rig):
    daemon, pages = rig
    tracker, display, overlay = (pages[n][0] for n in ("tracker", "display", "overlay"))
    # Seat three players with their stacks from the tracker.
    for seat, name in ((1, "Ann"), (2, "Bob"), (3, "Cy")):
        tracker.click(f'#seats [data-edit="{seat}"]')
        tracker.fill('#pad input[name="name"]', name)
        tracker.fill('#pad input[name="stack"]', str(STACK))
        tracker.click('#pad [data-send="seat"]')
        tracker.wait_for_selector(f'#seats tr[data-seat="{seat}"] td[data-stack="{STACK}"]', timeout=TIMEOUT_MS)
    display.wait_for_selector('.seat[data-seat="3"] .stack[data-stack="10000"]', timeout=TIMEOUT_MS)
    new_hand_dealt(daemon, tracker)
    tracker.wait_for_selector(".pad .pad-range[data-to-call]", timeout=TIMEOUT_MS)

    def act(quick: str, amount: str | None = None) -> None:
        seat = daemon.service.public_state()["hand"]["to_act"]
        before = daemon.service.seq
        if amount is not None:
            for key in amount:
                tracker.click(f'.pad [data-key="{key}"]')
            tracker.click('.pad [data-quick="amount"]')
        else:
            tracker.click(f'.pad [data-quick="{quick}"]')
        wait_until(lambda: daemon.service.seq > before, 5, f"the controller to apply {quick} {amount or ''} ({seat})")
        time.sleep(0.1)

    act("amount", "600")   # the first to act raises to 600
    act("call")
    act("call")
    daemon.submit(Burn(Card.parse("3c")))
    daemon.submit(BoardCards(tuple(Card.parse(c) for c in ("9s", "8s", "4h"))))
    tracker.wait_for_selector('.pad [data-quick="check"]', timeout=TIMEOUT_MS)
    act("check")
    act("amount", "1000")  # a bet of 1,000
    public = daemon.service.public_state()["hand"]["chips"]
    pot, stacks = public["pot"], public["stacks"]
    # The display shows the same pot and stacks at once...
    display.wait_for_selector(f'#pot[data-pot="{pot}"]', timeout=TIMEOUT_MS)
    for seat, stack in stacks.items():
        assert chips_on(display, f'.seat[data-seat="{seat}"] .stack') == str(stack)
    # ...the overlay only after the delay.
    shown_at = time.monotonic()
    overlay.wait_for_selector(f'#pot[data-pot="{pot}"]', timeout=int((DELAY + 8) * 1000))
    assert time.monotonic() - shown_at > DELAY * 0.5
    for seat, stack in stacks.items():
        assert chips_on(overlay, f'.player[data-seat="{seat}"] .stack') == str(stack)
    assert "1,000" in overlay.inner_text("#last-action")

    # A silent push of 1,400 (1,000 + 400) facing the 1,000 bet, entered chip by chip on the display.
    facing = daemon.service.public_state()["hand"]["to_act"]
    display.click("#btn-action")
    for chip in ("1000", "100", "100", "100", "100"):
        display.click(f'.put [data-chip="{chip}"]')
    display.click('.put [data-quick="put"]')
    display.wait_for_selector("#alert:not([hidden])", timeout=TIMEOUT_MS)
    # TDA 42-A: 400 over the call is less than half the 1,000 raise a full raise needs: a call.
    assert display.get_attribute("#alert", "data-reason") == "short_raise"
    assert "TDA 42-A" in display.inner_text("#alert-citations").split(" \u00b7 "), display.inner_text("#alert")
    assert f"seat {facing}" in display.inner_text("#alert-title").lower()
