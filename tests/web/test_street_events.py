"""Issue 27 item 8: ``event/street`` is published once per street (a board street used to be
announced twice: once while it waited for its cards, again when its betting began).  Read with
the display's credential on a real Mosquitto, through the daemon's publishing path."""

from __future__ import annotations

import json
import random

from controller.mqtt.contract import Topics
from controller.rules.games import GAMES
from controller.sim import dealer as dealer_sim
from tests.web_helpers import (
    Recorder,
    play_scenario,
    wait_until,
)


def test_each_street_is_announced_once(web_broker, web_passwords, web_feed) -> None:
    t = Topics("poker", "st1")
    display = Recorder(web_broker, "display", web_passwords["display"], [t.event("street"), t.event("hand_end")])
    try:
        f = web_feed("st1", size=10)
        played = 0
        for i, game in enumerate(GAMES):
            hand = dealer_sim.legal_hand(random.Random(100 + i), game=game, rules="robert", chips=True)
            play_scenario(f, hand)
            played += 1
            f.idle()
            wait_until(lambda n=played: len(display.on(t.event("hand_end"))) >= n, 5, "hand_end")
            hand_id = f.service.hand_id
            names = [json.loads(m.payload)["name"] for m in display.on(t.event("street"))
                     if json.loads(m.payload)["hand_id"] == hand_id]
            assert names, game
            assert len(names) == len(set(names)), (game, names)
            order = [st.name for st in GAMES[game].streets]
            assert names == sorted(names, key=order.index), (game, names)
    finally:
        display.close()
