"""Issue 27 item 4: a superseded alert is replaced, and a lowball misdeal cites lowball's rules.

Two extra cards reach the starting hands one after the other: the first is an irregularity ("put
it back, it is the next burn"), the second makes it a misdeal.  The dealer's display must then
show the misdeal, not the outdated instruction, until he acknowledges: the retained
``alert/active`` (read with the display's own credential on a real Mosquitto, through the
daemon's publishing path) and the console page in Chromium both carry the misdeal, and one
acknowledgement clears the table.  The misdeal of a lowball hand cites Robert's Rules' lowball
section and the general misdeal rule, never a hold'em rule.
"""

from __future__ import annotations

import json
import random
from typing import Any

from controller.mqtt.contract import Topics
from controller.rules.events import Acknowledge
from controller.sim import dealer as dealer_sim
from tests.web_helpers import (
    TIMEOUT_MS,
    Recorder,
    needs_browser,
    open_page,
    play_scenario,
    wait_until,
)


def _two_extra_cards(game: str) -> dict[str, Any]:
    for seed in range(1, 200):
        hand = dealer_sim.legal_hand(random.Random(seed), game=game, rules="robert", event="cash")
        bad = dealer_sim.corrupt(random.Random(seed), hand, kind="two_extra_cards")
        if bad is not None:
            return bad
    raise AssertionError(f"no {game} hand takes two extra cards")


def _run(feed, hand) -> list[dict[str, Any]]:
    alerts: list[dict[str, Any]] = []
    play_scenario(feed, hand, after=lambda ev, outs: alerts.extend(o.payload for o in outs if o.kind == "alert"))
    return alerts


def test_a_misdeal_replaces_the_instruction_it_supersedes(web_broker, web_passwords, web_feed, web_browser,
                                                          web_server):
    needs_browser()
    f = web_feed("al1", size=10)
    hand = _two_extra_cards("holdem")
    f.seat({s: f"P{s}" for s in hand["seats"]})
    t = Topics("poker", "al1")
    url = web_server.page_url("display", table="al1") + f"&user=console&pass={web_passwords['console']}"
    page, errors = open_page(web_browser, url, (800, 480))
    display = Recorder(web_broker, "display", web_passwords["display"], [t.alert_active])
    try:
        alerts = _run(f, hand)
        assert [a["reason"] for a in alerts] == ["extra_card", "extra_cards"]
        f.idle()

        def active() -> Any:
            got = display.on(t.alert_active)
            return json.loads(got[-1].payload) if got and got[-1].payload else None

        wait_until(lambda: (active() or {}).get("reason") == "extra_cards", 5, "alert/active = the misdeal")
        assert [a.id for a in f.service.alerts] == [alerts[1]["id"]], "the superseded instruction is still pending"
        page.wait_for_selector('#alert:not([hidden])[data-reason="extra_cards"]', timeout=TIMEOUT_MS)
        f.submit(Acknowledge())
        f.idle()
        wait_until(lambda: active() is None, 5, "alert/active cleared by one acknowledgement")
        page.wait_for_selector("#alert[hidden]", state="attached", timeout=TIMEOUT_MS)
        assert not errors, errors
    finally:
        display.close()
        page.close()


def test_a_lowball_misdeal_cites_lowball_not_holdem(web_feed):
    for game in ("lowball_27", "lowball_a5"):
        f = web_feed(f"al-{game}", size=10, game=game)
        hand = _two_extra_cards(game)
        f.seat({s: f"P{s}" for s in hand["seats"]})
        misdeal = [a for a in _run(f, hand) if a["ruling"] == "misdeal"]
        assert misdeal, game
        cites = misdeal[-1]["citations"]
        assert not any("Hold'em" in c for c in cites), (game, cites)
        assert any(c.startswith("RRoP s11 Lowball") for c in cites), (game, cites)
