"""The floor page in a REAL browser (Debian's Chromium through Playwright), served by the floor
service reading a real Mosquitto that the daemon's own publishing path writes to.

Tables at a glance (game, hand, street, dealer; an active alert in red with its age), the alert
feed with acknowledge, a misdeal raised while the page is open reaching it, the hand history with
a step-by-step replay, and the dealer report's charts and CSV export.
"""

from __future__ import annotations

import urllib.request
from pathlib import Path

from controller.floor.sources import wait_for
from controller.rules.events import CallMisdeal, StartHand
from tests.floor.test_floor_local import deal, local_floor, table
from tests.mqtt_util import require_mosquitto
from tests.web_helpers import TIMEOUT_MS, browse, needs_browser, save_screenshot

require_mosquitto()


def test_the_floor_page_in_a_browser(tmp_path: Path) -> None:
    needs_browser()
    with local_floor(tmp_path) as (broker, users, floor):
        t1, link1 = table(broker, users["controller"], "t1", seed=11)
        t2, link2 = table(broker, users["controller"], "t2", seed=12)
        try:
            deal(t1, 3)
            deal(t2, 3)
            for link in (link1, link2):
                assert link.wait_idle(10)
            store = floor.read_store
            wait_for(lambda: store.counts()["hands"] == 6, 10, "six hands")
            for r in store.query("SELECT table_id, alert_id FROM rulings"):  # the floor has seen to these
                store.acknowledge(r["table_id"], r["alert_id"], "earlier")
            with browse(floor.url, 1100, 800) as (page, errors):
                page.wait_for_selector('.tile[data-table="t1"] .dealer', timeout=TIMEOUT_MS)
                page.wait_for_function("() => document.querySelector('#live').classList.contains('up')",
                                       timeout=TIMEOUT_MS)
                tile = page.locator('.tile[data-table="t2"]')
                assert t2.service.dealer and tile.locator(".dealer").inner_text() == t2.service.dealer
                assert tile.locator(".hand").inner_text() == str(t2.service.hand_id)

                # A misdeal raised at t2 while the page is open: the tile turns red, the feed lists it.
                steps = t2.steps()
                ev = next(steps)
                while not isinstance(ev, StartHand):
                    t2.submit(ev)
                    ev = next(steps)
                t2.submit(ev)
                t2.submit(CallMisdeal("called_misdeal"))
                page.wait_for_selector('.tile.alerting[data-table="t2"] .alert', timeout=TIMEOUT_MS)
                text = page.locator('.tile[data-table="t2"] .alert').inner_text()
                # Issue 27: words on the tile (the ruling and its message), the reason code kept as data.
                assert text.startswith("Misdeal: ") and "_" not in text and " s)" in text
                assert page.get_attribute('.tile[data-table="t2"] .alert', "data-reason") == "called_misdeal"
                seen = page.evaluate("() => window.floorAlertsSeen")
                assert any(k.startswith("t2/") for k in seen)
                save_screenshot(page, "floor-tables.png")

                page.click('nav button[data-tab="alerts"]')
                item = page.locator('#alert-feed li[data-table="t2"]').first
                item.wait_for(timeout=TIMEOUT_MS)
                assert "RRoP" in item.inner_text() or "TDA" in item.inner_text()  # its citations
                item.locator("button.ack").click()
                page.wait_for_function(
                    "() => { const li = document.querySelector('#alert-feed li[data-table=\"t2\"]');"
                    " return li && li.classList.contains('acked'); }", timeout=TIMEOUT_MS)
                acked = store.query("SELECT acked_by FROM rulings WHERE table_id = 't2' AND reason = 'called_misdeal'")
                assert acked and acked[0]["acked_by"] == "floor"

                # The hand history and a step-by-step replay.
                page.click('nav button[data-tab="hands"]')
                page.fill('#hand-filter input[name="table"]', "t1")
                page.click('#hand-filter button[type="submit"]')
                page.wait_for_function("() => document.querySelectorAll('#hand-list tbody tr').length === 3 && "
                                       "[...document.querySelectorAll('#hand-list tbody tr')].every("
                                       "r => r.dataset.hand.startsWith('t1/'))", timeout=TIMEOUT_MS)
                hand = store.query("SELECT hand_id, start_seq FROM hands WHERE table_id = 't1' AND result = "
                                   "'showdown' ORDER BY start_seq LIMIT 1") or store.query(
                    "SELECT hand_id, start_seq FROM hands WHERE table_id = 't1' ORDER BY start_seq LIMIT 1")
                key = f"t1/{hand[0]['hand_id']}/{hand[0]['start_seq']}"
                page.click(f'#hand-list tr[data-hand="{key}"]')
                page.wait_for_selector("#replay:not([hidden]) #replay-log li", timeout=TIMEOUT_MS)
                total = page.locator("#replay-log li").count()
                assert page.locator("#step-label").inner_text() == f"step 1 / {total}"
                assert page.locator("#replay-log li.now").inner_text().startswith("hand starts")
                page.click("#step-next")
                page.click("#step-next")
                assert page.locator("#step-label").inner_text() == f"step 3 / {total}"
                assert page.locator("#replay-log li.future").count() == total - 3
                page.click("#step-last")
                assert page.locator("#replay-log li.now").inner_text().startswith("hand ends")
                # At the end: the cards (face up, tabled or the delayed broadcast copy) are on the table.
                assert page.locator("#replay-seats .card.face").count() > 0
                page.click("#step-prev")
                assert page.locator("#step-label").inner_text() == f"step {total - 1} / {total}"
                save_screenshot(page, "floor-replay.png")

                # The dealer report: one series per dealer; the CSV export.
                page.click('nav button[data-tab="report"]')
                page.wait_for_selector("#chart-hph polyline.series", timeout=TIMEOUT_MS)
                dealers = {r["dealer"] for r in store.query("SELECT DISTINCT dealer FROM hands")}
                drawn = set(page.eval_on_selector_all("#chart-hph polyline.series",
                                                      "els => els.map(e => e.dataset.dealer)"))
                assert drawn == dealers
                assert page.locator("#chart-dur rect.bar").count() == len(dealers)
                assert page.locator("#chart-rate rect.bar").count() >= 1  # the misdeal, at least
                href = page.get_attribute("#csv", "href")
                with urllib.request.urlopen(floor.server.url + href, timeout=5) as r:
                    body = r.read().decode()
                    assert r.headers["Content-Type"].startswith("text/csv")
                assert body.splitlines()[0] == "dealer,metric,reason,value"
                assert "misdeals_per_100,called_misdeal" in body
                save_screenshot(page, "floor-report.png")
                assert errors == []
        finally:
            for link in (link1, link2):
                link.stop()
