"""Issue 27, what a producer expects: a "no cards" output for the screens in the room.

``/overlay/?room=1`` never subscribes to ``broadcast/holecards`` or ``broadcast/equity``: the page
cannot show a hole card it never received.  It shows backs while the hand is played and, once it
is over, only the cards tabled at the showdown (``hand_end.shown``, public then).  Played through
the daemon's publishing path on a real Mosquitto, beside the ordinary overlay, which does receive
the hole cards (so the test would see them if the room page did).
"""

from __future__ import annotations

from controller.app.daemon import STATE_DEBOUNCE
from tests.web_helpers import (
    TIMEOUT_MS,
    needs_browser,
    open_page,
    play_scenario,
    save_screenshot,
    showdown_holdem,
)

DELAY = 0.3
FACES = "() => [...document.querySelectorAll('.player .hole .card.face')].map((c) => c.dataset.card)"


def test_the_room_output_never_receives_a_hole_card(web_browser, web_server, web_feed):
    needs_browser()
    f = web_feed("room1", size=10, broadcast_delay=DELAY, debounce=STATE_DEBOUNCE)
    hand = showdown_holdem()
    f.seat({s: f"P{s}" for s in hand["seats"]})
    room, room_errors = open_page(web_browser, web_server.page_url("overlay", table="room1", room="1"))
    booth, booth_errors = open_page(web_browser, web_server.page_url("overlay", table="room1"))
    try:
        assert "holecards" not in room.get_attribute("body", "data-subscribed")
        seen_mid_hand: list[list[str]] = []

        def look(event, outputs) -> None:
            in_play = f.hand is not None and f.hand["phase"] not in ("done", "dead")
            if in_play and any(o.kind == "board" for o in outputs):  # a street of the hand in play
                room.wait_for_timeout(int(DELAY * 1000) + 200)
                seen_mid_hand.append(room.evaluate(FACES))

        play_scenario(f, hand, after=look)
        assert f.hand is not None and f.hand["phase"] == "done"
        f.idle()
        room.wait_for_selector('body[data-phase="done"] #winner:not([hidden])', timeout=TIMEOUT_MS)
        booth.wait_for_selector('body[data-phase="done"]', timeout=TIMEOUT_MS)
        room.wait_for_timeout(int(DELAY * 1000) + 300)
        assert seen_mid_hand and all(faces == [] for faces in seen_mid_hand), seen_mid_hand
        assert "broadcast/holecards" in booth.get_attribute("body", "data-received")  # they were published
        received = room.get_attribute("body", "data-received").split()
        assert "broadcast/holecards" not in received and "broadcast/equity" not in received, received
        tabled = {s: c for s, c in f.service.hole_cards().items()
                  if not f.hand["seats"][s]["folded"] and not f.hand["seats"][s]["dead"]}
        assert sorted(room.evaluate(FACES)) == sorted(c for cards in tabled.values() for c in cards)
        save_screenshot(room, "overlay-room.png")
        assert not room_errors and not booth_errors, room_errors + booth_errors
    finally:
        room.close()
        booth.close()
