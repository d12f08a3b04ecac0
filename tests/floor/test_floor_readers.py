"""Issue 26 item 4 on the floor: a table's retained ``diagnostics`` reaches the one-machine floor
(real Mosquitto, the shipped ACL's ``floor`` login), ``/api/tables`` carries its readers, and the
floor page's tile (Chromium) says which reader is not answering, the misses and the scan cycle."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from controller.floor.sources import wait_for
from controller.mqtt.contract import Topics
from tests.floor.test_floor_local import deal, local_floor, table
from tests.web.test_display_service import _payload
from tests.web_helpers import TIMEOUT_MS, launch_browser, needs_browser, watch_console


def test_the_floor_shows_each_tables_readers(tmp_path: Path) -> None:
    needs_browser()
    with local_floor(tmp_path) as (broker, users, floor):
        t1, link = table(broker, users["controller"], "t1", seed=3)
        try:
            deal(t1, 1)
            link.publish(Topics("poker", "t1").diagnostics, _payload("t1"), retain=True)
            assert link.wait_idle(10)

            def readers() -> dict | None:
                with urllib.request.urlopen(floor.server.url + "/api/tables", timeout=5) as r:
                    rows = json.loads(r.read())
                return next((t["readers"] for t in rows if t["table_id"] == "t1"), None)

            assert floor.server is not None
            wait_for(lambda: readers() is not None, 10, "t1's readers on /api/tables")
            got = readers()
            assert got is not None
            assert got["not_answering"] == [5] and got["misses"] == 1 and got["collisions"] == 1
            assert got["cycle_ms"] == 12.5 and got["synced"] is True
            with launch_browser({"width": 1100, "height": 800}) as ctx:
                page = ctx.new_page()
                errors = watch_console(page)
                page.goto(floor.url)
                line = page.wait_for_selector('.tile[data-table="t1"] .readers.trouble', timeout=TIMEOUT_MS)
                text = line.inner_text()
                assert "antenna 5 not answering" in text and "1 missed" in text and "scan 12.5 ms" in text, text
                assert not errors, errors
        finally:
            link.stop()
