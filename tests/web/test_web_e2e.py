"""The dealer display through the whole table: emulator -> serial link -> daemon -> Mosquitto ->
Chromium.  What the page shows is read back from the page itself."""

from __future__ import annotations

import os
import time

import pytest

from controller.bench.alert import table_rig, wrong_card_to_alert
from controller.mqtt.broker import mosquitto_available
from controller.rules.events import Acknowledge, CallMisdeal, NewHand
from tests.web_helpers import ARTIFACTS, browser_missing, rig_parts, wait_until

_missing = browser_missing() or (None if mosquitto_available() else "mosquitto not installed")
if _missing:
    if os.environ.get("CI"):
        pytest.fail(_missing, pytrace=False)
    pytest.skip(_missing, allow_module_level=True)


ARTIFACTS.mkdir(parents=True, exist_ok=True)


def _wait(page, js: str, timeout: float = 10.0):
    return wait_until(lambda: page.evaluate(f"() => {js}"), timeout, what=js)


def test_display_follows_the_antennas_and_shows_the_misdeal() -> None:
    with table_rig() as rig:
        daemon, emu, page, layout, uids = rig_parts(rig)
        daemon.submit(NewHand())
        order = daemon.service.engine.order
        _wait(page, f"document.querySelector('[data-seat=\"{order[0]}\"][data-next=\"true\"]')")
        emu.place(layout.seat_antenna(order[0], 0), uids["Ah"])
        # The next-card marker moves on and the card shows as a back at its seat.
        _wait(page, f"document.querySelector('[data-seat=\"{order[1]}\"][data-next=\"true\"]')")
        assert page.evaluate(f"() => document.querySelectorAll('[data-seat=\"{order[0]}\"] .card').length") >= 1
        assert "Ah" not in page.content()  # a face-down card's identity never reaches the display
        page.screenshot(path=str(ARTIFACTS / "e2e-next-seat.png"))
        emu.remove(layout.seat_antenna(order[0], 0), uids["Ah"])
        # A wrong-seat first card on the next hand: the full-screen misdeal with its rule.
        daemon.submit(CallMisdeal("called_misdeal"))
        daemon.submit(Acknowledge())
        time.sleep(0.4)
        run = wrong_card_to_alert(rig, 7)
        assert run["reason"] in ("first_card_wrong_seat", "button_out_of_position") and run["ms"] is not None
        # wrong_card_to_alert acknowledged it: the alert is gone from the page.
        _wait(page, "document.querySelector('#alert').hidden")


def test_alert_shows_citation_until_acknowledged() -> None:
    with table_rig() as rig:
        daemon, emu, page, layout, uids = rig_parts(rig)
        daemon.submit(NewHand())
        order = daemon.service.engine.order
        emu.place(layout.seat_antenna(order[1], 0), uids["Kd"])
        _wait(page, "!document.querySelector('#alert').hidden")
        assert "RRoP s3 Misdeals" in page.inner_text("#alert-citations")
        assert page.get_attribute("#alert", "data-severity") == "misdeal"
        page.screenshot(path=str(ARTIFACTS / "e2e-misdeal.png"))
        page.click("#ack")  # the console's acknowledge goes through request/acknowledge
        _wait(page, "document.querySelector('#alert').hidden")
        assert not daemon.service.alerts
