"""Issue 26: a card the dealer enters himself (``request/confirm`` when the display lacks a card he
pitched: the bench's dealer after a corruption burst, or his answer racing the ring replay after a
kill -9) and whose tag the board reports afterwards is that card where he put it, not a second deal
(before, the late tag was dealt again: a false ``duplicate_card`` void)."""

from __future__ import annotations

import json
import time

from controller.mqtt.broker import Broker
from tests.app.rfid_rig import FACES, rfid_table
from tests.mqtt_util import require_mosquitto, wait_until


def test_a_late_tag_of_a_card_the_dealer_entered_is_not_dealt_again(tmp_path) -> None:
    from controller.app.daemon import request_event
    from controller.mqtt.contract import parse_request

    require_mosquitto()
    with Broker.start() as broker, rfid_table(broker, tmp_path / "journal.sqlite", tmp_path / "tty") as rig:
        d = rig.daemon
        for n in range(3):
            rig.deal(n)
        # The fourth card's tag has not been heard: the dealer enters it.
        answer = {"cards": [{"to": f"seat:{rig.slots[3][0]}", "card": FACES[3]}]}
        d.submit(request_event("confirm", parse_request("confirm", json.dumps(answer))))
        assert rig.dealt() == 3 and sum(len(h) for h in d.service.engine.hands.values()) == 4
        rig.place(3)  # then its tag is reported
        rig.place(4)  # and the next card comes in, in order
        engine = d.service.engine
        wait_until(lambda: rig.dealt() == 4, timeout=10, what="the fifth card journaled")
        time.sleep(0.3)  # nothing more comes
        assert rig.dealt() == 4 and sum(len(h) for h in engine.hands.values()) == 5
        assert [a.data["reason"] for a in d.service.alerts] == [], [a.data for a in d.service.alerts]
        assert not engine.over
        assert [h.card.face for s in engine.order for h in engine.hands[s]] == \
            [FACES[n] for s in engine.order for n in range(5) if rig.slots[n][0] == s]
