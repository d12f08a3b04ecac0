"""Item 2 of issue 26: the overlay opens the sealed hole cards in the browser (WebCrypto).

The table's own sealer (controller/app/sealer.py, on a real MqttLink with the controller's
credential) seals a snapshot of nine hands with a 1.5 s delay; the overlay page in Chromium,
reading ``broadcast/#`` with the overlay's credential, gets the ciphertext at once and draws
backs; its key arrives after the delay, and the page opens it (AES-GCM, ``crypto.subtle``) and
draws exactly the dealt cards.  No plaintext ``broadcast/holecards`` is published here: what the
page shows can only come from the sealed snapshot.  A snapshot altered on its way never opens.
"""

from __future__ import annotations

import json
import secrets
import time

from controller.app.sealer import Sealer
from controller.mqtt.link import MqttLink, MqttSettings
from controller.mqtt.sealed import b64, unb64
from tests.web.test_page_fit import Publisher, _states
from tests.web_helpers import (
    TIMEOUT_MS,
    Recorder,
    needs_browser,
    open_page,
    wait_until,
    web_broker,  # noqa: F401 - fixtures
    web_browser,  # noqa: F401
    web_passwords,  # noqa: F401
    web_server,  # noqa: F401
)

TABLE = "seal1"
DELAY = 1.5
FACES = "() => [...document.querySelectorAll('.player .card.face')].map((c) => c.dataset.card)"


def test_the_overlay_opens_sealed_hole_cards_only_with_their_key(web_browser, web_server, web_broker,  # noqa: F811
                                                                  web_passwords) -> None:  # noqa: F811
    needs_browser()
    pub = Publisher(web_broker, web_passwords["controller"], TABLE)
    link = MqttLink(MqttSettings(url=web_broker.url, username="controller", password=web_passwords["controller"],
                                 client_id=f"controller-{TABLE}-{secrets.token_hex(3)}"),
                    availability_topic=pub.t.availability)
    link.start()
    assert link.connected_event.wait(5)
    page, errors = open_page(web_browser, web_server.page_url("overlay", table=TABLE))
    try:
        page.wait_for_selector('body[data-conn="online"]', timeout=TIMEOUT_MS)
        p = _states("holdem", 9, 10)
        pub.send(pub.t.broadcast("state"), p["state"])
        page.wait_for_selector('body[data-hand-id="10"]', timeout=TIMEOUT_MS)
        dealt = p["holecards"]["seats"]
        sealer = Sealer(link, pub.t, TABLE)
        sealer.start(100)
        sent = time.monotonic()
        sealer.holecards(101, time.time(), 10, dealt, DELAY)
        page.wait_for_selector('body[data-sealed-waiting="1"]', timeout=TIMEOUT_MS)
        assert page.evaluate(FACES) == []  # sealed: backs only, until the key
        page.wait_for_selector('body[data-sealed-opened="1"]', timeout=TIMEOUT_MS)
        assert time.monotonic() - sent >= DELAY - 0.05
        page.wait_for_function(f"() => ({FACES})().length === {2 * len(dealt)}", timeout=TIMEOUT_MS)
        assert sorted(page.evaluate(FACES)) == sorted(c for cards in dealt.values() for c in cards)

        # Altered on its way (one bit of the ciphertext), or replayed as another snapshot (the same
        # ciphertext under another seq: the seal binds table, deal and seq), each with its key: refused.
        sealed_msg = _retained(web_broker, web_passwords, pub.t.broadcast("sealed"))
        key_msg = _retained(web_broker, web_passwords, pub.t.broadcast("key"))
        assert sealed_msg["seq"] == key_msg["seq"] == 101
        ct = bytearray(unb64(sealed_msg["ciphertext"]))
        ct[-1] ^= 1
        for seq, ciphertext in ((103, b64(bytes(ct))), (104, sealed_msg["ciphertext"])):
            pub.send(pub.t.broadcast("sealed"), dict(sealed_msg, ciphertext=ciphertext, seq=seq))
            pub.send(pub.t.broadcast("key"), dict(key_msg, seq=seq))
        page.wait_for_selector('body[data-sealed-bad="2"]', timeout=TIMEOUT_MS)
        assert page.evaluate("document.body.dataset.sealedOpened") == "1"
        assert not errors, errors
    finally:
        page.close()
        link.stop()
        pub.close()


def _retained(broker, passwords, topic: str) -> dict:
    """The retained payload on ``topic``, read with the overlay's credential."""
    r = Recorder(broker, "overlay", passwords["overlay"], [topic])
    try:
        wait_until(lambda: r.on(topic), 5, f"the retained {topic}")
        return json.loads(r.on(topic)[-1].payload)
    finally:
        r.close()
