"""Issue 26 item 4: the dealer display's service screen (Chromium on a real Mosquitto with the shipped
ACL, the display's own login).  The table's retained ``diagnostics`` (built by the link's own
diagnostics from a dead reader, a collision, reads, a miss and two heartbeats) turns the bar's
"service" pill amber; the screen lists every antenna with its reads, misses, collisions and whether
it answers, and the scan cycle.  Read from the page."""

from __future__ import annotations

import time

from controller.geometry import ZoneMap
from controller.mqtt.contract import validate
from firmware_bridge.diagnostics import ReaderDiagnostics
from tests.web_helpers import (
    TIMEOUT_MS,
    needs_browser,
    open_page,
    web_broker,  # noqa: F401 - fixtures
    web_browser,  # noqa: F401
    web_feed,  # noqa: F401
    web_passwords,  # noqa: F401
    web_server,  # noqa: F401
)


def _payload(table: str) -> dict:
    diag = ReaderDiagnostics(ZoneMap.standard(seats=4))
    for antenna in (0, 2, 4, 6):
        diag.presence(antenna, True)
    diag.fault(5, 1, 0)  # reader 5 not answering
    diag.fault(13, 3, 8)  # the burn antenna: too many tags
    diag.heartbeat(1000, 100)
    diag.heartbeat(1500, 140)  # 500 ms over 40 cycles: 12.5 ms a cycle
    diag.miss("seat:1", {0: frozenset({"04AA"})})  # seat 1's other antenna (1) held no tag
    link = {"state": "synced", "synced": True, "firmware_version": "1.3.0", "last_heartbeat_age": 0.2,
            "corrupt_frames": 0}
    payload = {"schema": 1, "ts": round(time.time(), 3), "table_id": table, "rfid": {"link": link, **diag.snapshot()},
               "camera": {"running": True, "failures": 0}}
    validate("diagnostics", payload)
    return payload


def test_the_service_screen_shows_each_antenna_and_turns_amber_on_a_dead_reader(
        web_browser, web_server, web_passwords, web_feed) -> None:  # noqa: F811
    needs_browser()
    f = web_feed("svc1", size=4)
    f.link.publish(f.topics.diagnostics, _payload("svc1"), retain=True)
    assert f.link.wait_idle(5)
    url = web_server.page_url("display", table="svc1", user="display", **{"pass": web_passwords["display"]})
    page, errors = open_page(web_browser, url, (1024, 600))
    page.wait_for_selector('#btn-service[data-trouble="yes"]', timeout=TIMEOUT_MS)
    page.click("#btn-service")
    page.wait_for_selector("#svc-antennas tbody tr", timeout=TIMEOUT_MS)
    rows = {int(r.get_attribute("data-antenna")): r for r in page.locator("#svc-antennas tbody tr").all()}
    assert len(rows) == len(ZoneMap.standard(seats=4).antennas)
    assert rows[5].locator(".answering").inner_text() == "NO"
    assert rows[13].locator(".collisions").inner_text() == "1"
    assert rows[1].locator(".misses").inner_text() == "1"
    assert [rows[a].locator(".reads").inner_text() for a in (0, 2, 4, 6, 7)] == ["1", "1", "1", "1", "0"]
    assert "Not answering: antenna 5" in page.locator("#svc-dead").inner_text()
    assert "12.5 ms" in page.locator("#svc-cycle").inner_text()
    # The reader answers again: the pill is no longer amber, the screen (open) says so.
    good = _payload("svc1")
    good["rfid"]["not_answering"] = []
    good["rfid"]["antennas"] = [dict(a, answering=True) for a in good["rfid"]["antennas"]]
    f.link.publish(f.topics.diagnostics, good, retain=True)
    page.wait_for_selector('#btn-service[data-trouble="no"]', timeout=TIMEOUT_MS)
    assert page.locator("#svc-dead").count() == 0
    assert page.locator('#svc-antennas tr[data-antenna="5"] .answering').inner_text() == "yes"
    assert not errors, errors
    page.close()
