"""Issue 22, the table side, as the pages show it (Chromium on a real Mosquitto with the shipped ACL,
the table published through the daemon's own publishing path; what is checked is read from the page).

* TDA 15-A: "If there was no bet on the final street, the player who would act first if it were a
  betting round must table first (i.e. first seat left of the button in flop games ...)"; RRoP s3
  Showdown 7: "If there is no wagering on the final round, the player to the left of the button is
  the first to show the hand."  The dealer display and the overlay name that seat, from the
  engine's ``to_show`` (the same field for both: neither page decides who shows).
* TDA 14: "All hands will be tabled without delay once a player is all-in and all betting action by
  all other players in the hand is complete" (RRoP s15 Tournaments 34): both pages say "All hands
  face up", and the room's overlay (no hole cards) shows every tabled hand once they are public.
* TDA 9-A and the rotation as data: both pages name the current game and the next one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from controller.rules.events import SetRotation
from controller.rules.rotations import ROTATIONS, rotation_event
from tests.web_helpers import (
    TIMEOUT_MS,
    needs_browser,
    open_page,
    play_scenario,
    save_screenshot,
    web_broker,  # noqa: F401 - fixtures
    web_browser,  # noqa: F401
    web_feed,  # noqa: F401
    web_passwords,  # noqa: F401
    web_server,  # noqa: F401
)

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
DELAY = 0.3  # the overlay's broadcast delay, in seconds


def _hand(name: str) -> dict[str, Any]:
    return yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text())


def _text(page, sel: str) -> str:
    return page.locator(sel).inner_text().strip()


def _display_url(server, passwords: dict[str, str], table: str) -> str:
    return server.page_url("display", table=table, user="display", **{"pass": passwords["display"]})


def test_both_pages_name_the_seat_that_tables_first(web_browser, web_server, web_passwords,  # noqa: F811
                                                    web_feed):  # noqa: F811
    needs_browser()
    f = web_feed("sh1", size=10, broadcast_delay=DELAY)
    hand = _hand("holdem_order_of_show_no_river_bet")
    f.seat({s: f"P{s}" for s in hand["seats"]})
    display, d_err = open_page(web_browser, _display_url(web_server, web_passwords, "sh1"), (800, 480))
    overlay, o_err = open_page(web_browser, web_server.page_url("overlay", table="sh1"))
    try:
        play_scenario(f, hand, upto=27)  # the river is being checked: nobody has to show yet
        assert f.hand is not None and f.hand["to_show"] is None
        display.wait_for_selector('#show-order[hidden][data-to-show=""]', state="attached", timeout=TIMEOUT_MS)
        play_scenario_rest(f, hand, 27)
        assert f.hand is not None and f.hand["to_show"] == 9  # the engine: first live seat left of the button
        display.wait_for_selector('#show-order:not([hidden])[data-to-show="9"]', timeout=TIMEOUT_MS)
        assert _text(display, "#show-order").lower() == "seat 9 p9 shows first"
        assert display.locator('.seat[data-show-first="true"]').count() == 1
        assert display.locator('.seat[data-seat="9"][data-show-first="true"] .badge.show-first').count() == 1
        overlay.wait_for_selector('#show-order:not([hidden])[data-to-show="9"]', timeout=TIMEOUT_MS)
        assert _text(overlay, "#show-order").lower() == "p9 shows first"
        assert overlay.locator('.player[data-show-first="true"]').count() == 1
        assert overlay.locator('.player[data-seat="9"][data-show-first="true"] .shows-first').count() == 1
        save_screenshot(display, "display-shows-first.png")
        assert not d_err and not o_err, d_err + o_err
    finally:
        display.close()
        overlay.close()


def play_scenario_rest(feed, hand: dict[str, Any], done: int) -> None:
    """The steps of ``hand`` after the first ``done`` (its hand already started)."""
    from controller.rules.scenario import Scenario

    for event in Scenario.from_dict(hand).events[done:]:
        feed.submit(event)


def test_all_hands_face_up_at_an_all_in(web_browser, web_server, web_passwords, web_feed):  # noqa: F811
    needs_browser()
    f = web_feed("sh2", size=10, broadcast_delay=DELAY)
    hand = _hand("holdem_all_in_every_hand_tabled")
    f.seat({1: "Ann", 2: "Bob"})
    display, d_err = open_page(web_browser, _display_url(web_server, web_passwords, "sh2"), (800, 480))
    overlay, o_err = open_page(web_browser, web_server.page_url("overlay", table="sh2"))
    room, r_err = open_page(web_browser, web_server.page_url("overlay", table="sh2", room="1"))
    try:
        play_scenario(f, hand, upto=14)  # seat 1 all in on the turn, seat 2 calls
        assert f.hand is not None and f.hand["to_show"] == "all" and f.hand["phase"] != "done"
        for page in (display, overlay, room):
            page.wait_for_selector('#show-order:not([hidden])[data-to-show="all"]', timeout=TIMEOUT_MS)
            assert _text(page, "#show-order").lower() == "all hands face up"
        assert display.locator('.seat[data-show-first="true"]').count() == 0
        play_scenario_rest(f, hand, 14)
        assert f.hand is not None and f.hand["phase"] == "done"
        hole = f.service.hole_cards()
        f.idle()
        # The room's screens never read the hole cards; the tabled hands are public once the hand
        # ends (hand_end.shown): every one of them shows, face up.
        room.wait_for_selector('body[data-phase="done"]', timeout=TIMEOUT_MS)
        for seat in ("1", "2"):
            for card in hole[seat]:
                room.wait_for_selector(f'.player[data-seat="{seat}"] .card.face[data-card="{card}"]',
                                       timeout=TIMEOUT_MS)
            assert room.locator(f'.player[data-seat="{seat}"] .card.back').count() == 0
        assert "broadcast/holecards" not in (room.get_attribute("body", "data-subscribed") or "")
        save_screenshot(overlay, "overlay-all-in-tabled.png")
        assert not d_err and not o_err and not r_err, d_err + o_err + r_err
    finally:
        display.close()
        overlay.close()
        room.close()


def test_both_pages_name_the_current_and_the_next_game(web_browser, web_server, web_passwords,  # noqa: F811
                                                      web_feed):  # noqa: F811
    needs_browser()
    f = web_feed("sh3", size=10, broadcast_delay=DELAY)
    f.seat({1: "Ann", 2: "Bob", 3: "Cy"})
    ev = rotation_event("horse", ROTATIONS)
    assert isinstance(ev, SetRotation)
    f.submit(ev)
    display, d_err = open_page(web_browser, _display_url(web_server, web_passwords, "sh3"), (800, 480))
    overlay, o_err = open_page(web_browser, web_server.page_url("overlay", table="sh3"))
    try:
        rot = f.service.public_state()["table"]["rotation"]
        assert (rot["current"]["game"], rot["next"]["game"], rot["deals_left"]) == ("holdem", "omaha8", 8)
        for page in (display, overlay):
            page.wait_for_selector('#rotation:not([hidden])[data-current="holdem"][data-next="omaha8"]',
                                   timeout=TIMEOUT_MS)
        assert _text(display, "#rotation") == "HORSE: Hold'em \u2192 Omaha hi-lo in 8"
        assert "next: Omaha hi-lo 8 or better in 8 hands" in _text(overlay, "#rotation")
        save_screenshot(display, "display-rotation.png")
        assert not d_err and not o_err, d_err + o_err
    finally:
        display.close()
        overlay.close()
