"""Issue 15 item 1: with a delay in seconds (the demo's mode), the overlay keeps the hole cards
through the showdown.

The clear of the retained ``broadcast/holecards`` belongs after the hand's final state: the
overlay reads a clear that arrives while its (delayed) state still shows the hand in play as
"cleared mid-hand" and draws backs.  The table is published exactly as the daemon does it
(each event's outputs first, the debounced state 5 ms later), on a real Mosquitto with the
shipped ACL, and read by the overlay's own credential and by the overlay page in Chromium.
"""

from __future__ import annotations

import json

from controller.app.daemon import STATE_DEBOUNCE
from controller.mqtt.contract import Topics
from tests.web_helpers import (
    TIMEOUT_MS,
    Recorder,
    needs_browser,
    open_page,
    play_scenario,
    save_screenshot,
    showdown_holdem,
    wait_until,
)

DELAY = 0.6


def test_holecards_clear_reaches_the_overlay_after_the_final_state(web_broker, web_passwords, web_feed):
    t = Topics("poker", "ord1")
    overlay = Recorder(web_broker, "overlay", web_passwords["overlay"], [f"{t.root}/broadcast/#"])
    try:
        f = web_feed("ord1", size=10, broadcast_delay=DELAY, debounce=STATE_DEBOUNCE)
        hand = showdown_holdem()
        f.seat({s: f"P{s}" for s in hand["seats"]})
        play_scenario(f, hand)
        assert f.hand is not None and f.hand["phase"] == "done"
        f.idle()
        def done(m) -> bool:
            return bool(m.payload) and (json.loads(m.payload).get("hand") or {}).get("phase") == "done"

        wait_until(lambda: any(not m.payload for m in overlay.on(t.broadcast("holecards")))
                   and any(done(m) for m in overlay.on(t.broadcast("state"))), 5 + DELAY,
                   "the final state and the clear of broadcast/holecards")
        order = overlay.all()
        clear_at = next(i for i, m in enumerate(order) if m.topic == t.broadcast("holecards") and not m.payload)
        finals = [i for i, m in enumerate(order) if m.topic == t.broadcast("state") and done(m)]
        assert finals[0] < clear_at, "the clear of the hole cards overtook the hand's final state"
        ends = [i for i, m in enumerate(order) if m.topic == t.broadcast("hand_end")]
        assert ends and ends[0] < clear_at
    finally:
        overlay.close()


def test_overlay_shows_the_hole_cards_through_the_showdown(web_browser, web_server, web_feed):
    needs_browser()
    f = web_feed("ord2", size=10, broadcast_delay=DELAY, debounce=STATE_DEBOUNCE)
    hand = showdown_holdem()
    f.seat({s: f"P{s}" for s in hand["seats"]})
    page, errors = open_page(web_browser, web_server.page_url("overlay", table="ord2"))
    try:
        play_scenario(f, hand)
        final = f.hand
        assert final is not None and final["phase"] == "done"
        live = [s for s, v in final["seats"].items() if not v["folded"] and not v["dead"]]
        hole = f.service.hole_cards()
        page.wait_for_selector('body[data-phase="done"]', timeout=TIMEOUT_MS)
        f.idle()
        page.wait_for_timeout(int(DELAY * 1000) + 300)  # everything delayed has arrived, the clear included
        for seat in live:
            for card in hole[seat]:
                assert page.locator(f'.player[data-seat="{seat}"] .card.face[data-card="{card}"]').count() == 1, \
                    (seat, card)
            assert page.locator(f'.player[data-seat="{seat}"] .card.back').count() == 0, seat
        save_screenshot(page, "overlay-showdown.png")
        assert not errors, errors
    finally:
        page.close()
