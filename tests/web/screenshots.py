"""Regenerate the README screenshots (run by hand): ``.venv/bin/python tests/web/screenshots.py``.

Starts a throwaway Mosquitto with the shipped config and ACL, serves ``web/``, drives a
table through the daemon's real publishing path (TableService -> Publisher -> MqttLink)
and photographs the pages in Debian's Chromium:

* ``docs/screenshots/display.png``        the dealer display mid-deal (800x480);
* ``docs/screenshots/display-alert.png``  a card to the wrong seat: the misdeal alert;
* ``docs/screenshots/tracker.png``        the action tracker with a seat to act (1024x768);
* ``docs/screenshots/overlay.png``        the broadcast overlay on the flop, themed (``themes/emerald.json``,
  its logo) with the chip-count leaderboard, the outs of the hands behind, the session statistics
  and the players' photos and flags (1920x1080; the page is transparent, so the picture puts a
  dark gradient behind it where OBS would put the video);
* ``docs/screenshots/producer.png``       the producer's control page, with the broadcast delay it just
  set to 30 s (1024x700).

Copies also go to ``artifacts/screenshots/``.  Needs mosquitto, chromium and playwright.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from controller.app.webserver import WebServer  # noqa: E402
from controller.rules.cards import Card  # noqa: E402
from controller.rules.events import Act, BoardCards, Burn, Deal, NewHand, SetBroadcastDelay, SetButton  # noqa: E402
from tests.web_helpers import (  # noqa: E402
    WEB,
    TableFeed,
    browser_missing,
    launch_browser,
    new_passwords,
    save_screenshot,
    start_broker,
)

DOCS = REPO / "docs" / "screenshots"


def _photo(initial: str, colour: str) -> str:
    """A stand-in portrait (a coloured disc with an initial), as a data: URL the page may load."""
    svg = (f"<svg xmlns='http://www.w3.org/2000/svg' width='40' height='40'><circle cx='20' cy='20' r='20' "
           f"fill='{colour}'/><text x='20' y='27' font-size='20' text-anchor='middle' fill='white' "
           f"font-family='DejaVu Sans'>{initial}</text></svg>")
    return "data:image/svg+xml," + svg.replace("<", "%3C").replace(">", "%3E").replace("#", "%23")


#: Players' photos and flags, as a producer puts them in the overlay's config.json.
PEOPLE = {"Ann": {"photo": _photo("A", "#7c3aed"), "flag": "SE"},
          "Bob": {"photo": _photo("B", "#0891b2"), "flag": "BR"},
          "Chen": {"photo": _photo("C", "#be123c"), "flag": "CN"},
          "Dara": {"photo": _photo("D", "#b45309"), "flag": "IE"}}
NAMES = ["Ann", "Bob", "Chen", "Dara", "Eli", "Fern", "Gus", "Hana", "Ivo", "Jo"]
TIMEOUT_MS = 10000
# A tournament table counting chips: blinds, starting stacks and a level clock.
CHIPS = {"event": "tournament", "stakes": {"blinds": [100, 200]}, "starting_stack": 20_000,
         "levels": [{"blinds": [100, 200], "minutes": 20}, {"blinds": [200, 400], "minutes": 20}]}


def main() -> int:
    missing = browser_missing()
    if missing:
        print(missing, file=sys.stderr)
        return 2
    passwords = new_passwords()
    broker = start_broker(passwords)
    ws = f"ws://127.0.0.1:{broker.websockets_port}"
    web = WebServer(WEB, config={"ws": ws,
                                 "overlay": {"user": "overlay", "pass": passwords["overlay"], "players": PEOPLE},
                                 "producer": {"user": "producer", "pass": passwords["producer"]}})
    feeds: list[TableFeed] = []
    try:
        with launch_browser() as browser:
            # -- the dealer display, mid-deal
            f = TableFeed(broker, passwords["controller"], "main", size=9, table_kw=CHIPS)
            feeds.append(f)
            f.seat({1: "Ann", 2: "Bob", 4: "Chen", 5: "Dara", 7: "Eli", 8: "Fern"})
            f.submit(SetButton(2))
            f.submit(NewHand())
            for card in ("Ah", "7c", "Qd", "2s", "9h"):
                f.submit(Deal(f.hand["next_seat"], Card.parse(card)))
            page = browser.new_page()
            page.set_viewport_size({"width": 800, "height": 480})
            page.goto(web.page_url("display", table="main", user="console", **{"pass": passwords["console"]}))
            nxt = f.hand["next_seat"]
            page.wait_for_selector(f'[data-seat="{nxt}"][data-next="true"]', timeout=TIMEOUT_MS)
            page.wait_for_timeout(300)  # let the pulse settle for a steady picture
            save_screenshot(page, "display.png", DOCS / "display.png")
            # -- a card to the wrong seat
            wrong = next(s for s in (1, 2, 4, 5, 7, 8) if s != nxt and f.hand["seats"][str(s)]["cards"] == 1)
            f.submit(Deal(wrong, Card.parse("Kd")))
            page.wait_for_selector("#alert:not([hidden])", timeout=TIMEOUT_MS)
            save_screenshot(page, "display-alert.png", DOCS / "display-alert.png")
            page.close()

            # -- the action tracker, preflop, a seat to act
            k = TableFeed(broker, passwords["controller"], "tracker", size=9, table_kw=CHIPS)
            feeds.append(k)
            k.seat({1: "Ann", 3: "Bob", 4: "Chen", 6: "Dara"})
            k.submit(SetButton(1))
            k.submit(NewHand())
            for card in ("Ah", "7c", "Qd", "2s", "9h", "9c", "Kd", "Ks"):
                k.submit(Deal(k.hand["next_seat"], Card.parse(card)))
            k.submit(Act(k.hand["to_act"], "raise", amount=600))  # a raise to 600: pot, bets, last action
            tracker = browser.new_page()
            tracker.set_viewport_size({"width": 1024, "height": 768})
            tracker.goto(web.page_url("tracker", table="tracker", user="console", **{"pass": passwords["console"]}))
            tracker.wait_for_selector(".pad .pad-quick", timeout=TIMEOUT_MS)
            save_screenshot(tracker, "tracker.png", DOCS / "tracker.png")
            tracker.close()

            # -- the overlay on the flop: stacks, bets, pot, the seat to act, the last action, equities
            o = TableFeed(broker, passwords["controller"], "booth", size=9, broadcast_delay=0.2, table_kw=CHIPS)
            feeds.append(o)
            o.seat({1: "Ann", 3: "Bob", 5: "Chen", 7: "Dara"})
            o.submit(SetButton(7))
            overlay = browser.new_page()
            overlay.set_viewport_size({"width": 1920, "height": 1080})
            overlay.goto(web.page_url("overlay", table="booth", theme="emerald", add="leaderboard,stats"))
            overlay.wait_for_selector('body[data-conn="online"]', timeout=TIMEOUT_MS)
            o.submit(NewHand())  # a first hand, folded to the big blind: the session statistics start
            for card in ("2h", "3d", "4c", "5s", "6h", "8d", "9c", "Ts"):
                o.submit(Deal(o.hand["next_seat"], Card.parse(card)))
            while o.hand["phase"] not in ("done", "dead"):
                o.submit(Act(o.hand["to_act"], "call" if o.hand["to_act"] == 1 else "fold"))
            o.submit(NewHand())
            for card in ("Ah", "Qs", "7c", "Td", "Kh", "Jc", "7d", "9s"):
                o.submit(Deal(o.hand["next_seat"], Card.parse(card)))
            raised = False
            while o.hand["street"] == "preflop":  # a raise to 600, everyone calls
                seat, owed = o.hand["to_act"], o.hand["chips"]["to_call"]
                o.submit(Act(seat, "raise", amount=600) if not raised else Act(seat, "call" if owed else "check"))
                raised = True
            o.submit(Burn(Card.parse("2c")))
            o.submit(BoardCards(tuple(Card.parse(c) for c in ("Ks", "8h", "7s"))))
            o.submit(Act(o.hand["to_act"], "bet", amount=1200))
            o.submit(Act(o.hand["to_act"], "fold"))
            overlay.wait_for_function("() => document.querySelector('#last-action').textContent.includes('folds')",
                                      timeout=TIMEOUT_MS)
            overlay.wait_for_function("() => [...document.querySelectorAll('.player[data-folded=\"false\"] .hand')]"
                                      ".every((e) => e.textContent.trim())", timeout=TIMEOUT_MS)  # the server's names
            overlay.add_style_tag(content="html { background: linear-gradient(160deg, #23313f, #0b1118) !important; }")
            overlay.wait_for_function("() => [...document.querySelectorAll('.player .outs')].some((e) => e.textContent)"
                                      " && [...document.querySelectorAll('.player .stats')].some((e) => e.textContent)",
                                      timeout=TIMEOUT_MS)  # outs on the flop, statistics of the session
            save_screenshot(overlay, "overlay.png", DOCS / "overlay.png")
            overlay.close()
            # -- the producer's control page (statistics and chip counts on, as in the overlay above)
            producer = browser.new_page()
            producer.set_viewport_size({"width": 1024, "height": 700})
            producer.goto(web.page_url("producer", table="booth"))
            producer.wait_for_selector('body[data-conn="online"]', timeout=TIMEOUT_MS)
            o.submit(SetBroadcastDelay(30))  # as the page's request would: announced on broadcast/delay
            producer.wait_for_selector('body[data-delay="30"]', timeout=TIMEOUT_MS)
            for part in ("leaderboard", "stats"):
                producer.click(f'button[data-part="{part}"]')
                producer.wait_for_selector(f'button[data-part="{part}"][aria-pressed="true"]', timeout=TIMEOUT_MS)
            save_screenshot(producer, "producer.png", DOCS / "producer.png")
            producer.close()
    finally:
        for f in feeds:
            f.close()
        web.stop()
        broker.stop()
    for name in ("display.png", "display-alert.png", "tracker.png", "overlay.png", "producer.png"):
        print(DOCS / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
