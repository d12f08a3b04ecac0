"""Issue 27, what a producer expects: a control page that shows and hides each graphic live, and
the graphics it controls beside the old ones (outs, session statistics, photos and flags), all on
the delayed broadcast topics only.

In Chromium: the producer's page (``web/producer/``, the ``producer`` login) and the overlay
(``theme=emerald``, players' photos and flags from its config.json) on one table.  The controller's
credential publishes a crowded 10-handed hold'em hand on ``broadcast/*`` with the outs of the hands
behind and the session statistics.  Checked where a viewer looks: the outs, statistics, photos and
flags are drawn, nothing is clipped and no box overlaps another (element boxes measured as in
tests/web/test_page_fit.py); a click on the producer's page turns a graphic on or off on the
overlay, and what it published is a valid ``broadcast/graphics``.

Secrecy: the producer's login reads nothing but ``broadcast/graphics`` (no hole card, live or
delayed, no state) and can write no other broadcast topic.
"""

from __future__ import annotations

import json
import time

from controller.app.webserver import WebServer
from controller.mqtt.contract import validate
from tests.web.test_page_fit import MEASURE, OVERLAY, Publisher, _states
from tests.web_helpers import (
    TIMEOUT_MS,
    WEB,
    Recorder,
    needs_browser,
    open_page,
    save_screenshot,
    wait_until,
    web_broker,  # noqa: F401 - fixtures
    web_browser,  # noqa: F401
    web_passwords,  # noqa: F401
    web_server,  # noqa: F401
)

PHOTO = ("data:image/svg+xml," + "%3Csvg xmlns='http://www.w3.org/2000/svg' width='40' height='40'%3E"
         "%3Ccircle cx='20' cy='20' r='20' fill='%23c084fc'/%3E%3C/svg%3E")
TEXTS = OVERLAY[2] + ", .player .outs, .player .stats, .player .ident .flag"


def _feed(game: str = "holdem") -> dict:
    p = _states(game, 10, 10)
    seats = sorted(p["state"]["hand"]["seats"], key=int)
    outs = ["Ah", "Kh", "Qh", "Jh", "Th", "9h", "8h", "7h", "6h", "Ks", "Kd", "As", "Ad", "Qs", "Qd"]
    for key in seats[1:]:  # everybody but the first is behind, with 15 outs (the longest line)
        p["equity"]["seats"][key]["outs"] = outs
    stats = {"schema": 1, "seq": 9, "ts": time.time(), "hand_id": 9, "hands": 123,
             "seats": {k: p["state"]["table"]["players"][k]["name"] for k in seats},
             "players": {p["state"]["table"]["players"][k]["name"]: {"hands": 123, "vpip": 0.2846, "pfr": 0.1463,
                                                                    "won": 17} for k in seats}}
    validate("broadcast_equity", p["equity"])
    validate("broadcast_stats", stats)
    p["stats"] = stats
    p["people"] = {p["state"]["table"]["players"][k]["name"]: {"photo": PHOTO, "flag": ["SE", "BR", "JP"][int(k) % 3]}
                   for k in seats}
    return p


def test_the_producer_turns_graphics_on_and_off_live(web_browser, web_server, web_broker, web_passwords):  # noqa: F811
    needs_browser()
    table = "pr1"
    p = _feed()
    pub = Publisher(web_broker, web_passwords["controller"], table)
    seen = Recorder(web_broker, "controller", web_passwords["controller"], [f"poker/{table}/broadcast/graphics"])
    config = {"ws": f"ws://127.0.0.1:{web_broker.websockets_port}", "table": table,
              "overlay": {"user": "overlay", "pass": web_passwords["overlay"], "players": p["people"]}}
    with WebServer(WEB, config=config, pages=("overlay",)) as booth:
        overlay, errors = open_page(web_browser, booth.page_url("overlay", theme="emerald"))
        producer, producer_errors = open_page(web_browser, web_server.page_url("producer", table=table), (1024, 768))
        try:
            pub.send(pub.t.broadcast("stats"), p["stats"])
            pub.send(pub.t.broadcast("holecards"), p["holecards"])
            pub.send(pub.t.broadcast("equity"), p["equity"])
            pub.send(pub.t.broadcast("state"), p["state"])
            overlay.wait_for_selector('body[data-hand-id="10"][data-equity-seq="10"]', timeout=TIMEOUT_MS)
            drawn = overlay.evaluate("""() => [...document.querySelectorAll('.player')].map((el) => ({
              seat: el.dataset.seat, outs: (el.querySelector('.outs') || {}).textContent || '',
              stats: el.querySelector('.stats').textContent, statsShown: el.querySelector('.stats').offsetWidth > 0,
              photo: !!el.querySelector('.ident .photo'),
              flag: (el.querySelector('.ident .flag') || {}).textContent }))""")
            assert len(drawn) == 10
            assert drawn[0]["outs"] == "" and all(d["outs"].startswith("15 outs: ") for d in drawn[1:]), drawn
            assert "\u2665 6789TJQKA" in drawn[1]["outs"] and "\u2660 KAQ" not in drawn[1]["outs"]
            assert all(d["stats"] == "VPIP 28 \u00b7 PFR 15 \u00b7 Won 17/123" for d in drawn)
            assert not any(d["statsShown"] for d in drawn)  # statistics are off until the producer adds them
            assert all(d["photo"] and d["flag"] in ("SE", "BR", "JP") for d in drawn)

            def click(part: str, on: bool) -> None:
                producer.click(f'button[data-part="{part}"]')
                producer.wait_for_selector(f'button[data-part="{part}"][aria-pressed="{str(on).lower()}"]',
                                           timeout=TIMEOUT_MS)
                overlay.wait_for_function(
                    f"() => document.body.classList.contains('hide-{part}') === {str(not on).lower()}",
                    timeout=TIMEOUT_MS)

            click("stats", True)
            assert overlay.locator(".player .stats").first.is_visible()
            click("leaderboard", True)
            assert overlay.locator("#leaderboard").is_visible()
            found = overlay.evaluate(MEASURE, [OVERLAY[0], OVERLAY[1], TEXTS, OVERLAY[3] + ["#leaderboard", "#logo"]])
            save_screenshot(overlay, "overlay-producer-graphics.png")
            assert not found, found
            click("cards", False)
            assert not overlay.locator(".player .hole").first.is_visible()
            assert overlay.locator(".player .who").first.is_visible()
            click("outs", False)
            assert not overlay.locator(".player .outs").nth(1).is_visible()
            click("cards", True)
            assert overlay.locator(".player .hole").first.is_visible()
            save_screenshot(producer, "producer.png")
            wait_until(lambda: len(seen.on(f"poker/{table}/broadcast/graphics")) >= 5, 5, "the producer's messages")
            last = json.loads(seen.on(f"poker/{table}/broadcast/graphics")[-1].payload)
            validate("broadcast_graphics", last)
            assert last["parts"]["stats"] is True and last["parts"]["outs"] is False and last["parts"]["cards"] is True
            # A new overlay gets the producer's choice from the retained message.
            late, late_errors = open_page(web_browser, booth.page_url("overlay"))
            late.wait_for_function("() => document.body.classList.contains('hide-outs')"
                                   " && !document.body.classList.contains('hide-stats')", timeout=TIMEOUT_MS)
            late.close()
            assert not errors and not producer_errors and not late_errors, errors + producer_errors + late_errors
        finally:
            overlay.close()
            producer.close()
            pub.close()
            seen.close()


def test_the_producer_login_reads_no_card_and_writes_only_graphics(web_broker, web_passwords):  # noqa: F811
    table = "pr2"
    spy = Recorder(web_broker, "producer", web_passwords["producer"], [f"poker/{table}/#", "#"])
    watch = Recorder(web_broker, "controller", web_passwords["controller"], [f"poker/{table}/broadcast/#"])
    pub = Publisher(web_broker, web_passwords["controller"], table)
    try:
        p = _feed()
        secret = {"schema": 1, "seq": 10, "ts": time.time(), "hand_id": 10, "seats": p["holecards"]["seats"]}
        pub.send(pub.t.private_holecards, secret, retain=False)
        pub.send(pub.t.broadcast("holecards"), p["holecards"])
        pub.send(pub.t.broadcast("equity"), p["equity"])
        pub.send(pub.t.broadcast("state"), p["state"])
        pub.send(pub.t.broadcast("stats"), p["stats"])
        pub.send(pub.t.state, p["state"])
        graphics = {"schema": 1, "ts": time.time(), "parts": {"odds": False}}
        spy.c.publish(f"poker/{table}/broadcast/graphics", json.dumps(graphics), qos=1, retain=True).wait_for_publish(5)
        forged = dict(p["state"], hand_id=99)
        spy.c.publish(f"poker/{table}/broadcast/state", json.dumps(forged), qos=1, retain=True).wait_for_publish(5)
        wait_until(lambda: spy.on(f"poker/{table}/broadcast/graphics"), 5, "the producer's own topic")
        wait_until(lambda: watch.on(f"poker/{table}/broadcast/graphics"), 5, "graphics at the overlay's side")
        time.sleep(0.5)
        # Through "#" too: only graphics (this table's, and another's retained) and what carries no card
        # (the delay in force, the answers to its own requests), never a card or a state.
        topics = {m.topic for m in spy.all()}
        assert f"poker/{table}/broadcast/graphics" in topics
        assert all(t.endswith(("/broadcast/graphics", "/broadcast/delay")) or "/response/producer/" in t
                   for t in topics), topics
        assert not any("holecards" in t or t.endswith("/state") or "equity" in t for t in topics), topics
        states = [json.loads(m.payload) for m in watch.on(f"poker/{table}/broadcast/state")]
        assert states and all(s["hand_id"] == 10 for s in states)  # the forged state never reached anyone
    finally:
        spy.close()
        watch.close()
        pub.close()


def test_the_producer_changes_the_broadcast_delay_of_a_running_table(  # noqa: F811
        web_browser, web_server, web_broker, web_passwords, tmp_path):  # noqa: F811
    """The delay control (issues 26 and 27): the producer's page asks a real daemon for a longer delay,
    a refused one (over the maximum, under the floor: the table's reason shown), then the end of
    the hand; the page shows the delay in force from ``broadcast/delay``."""
    needs_browser()
    from controller.app.config import BroadcastSection
    from controller.app.daemon import Daemon
    from controller.demo.config import demo_config

    table = "pr3"
    cfg = demo_config(table, size=6, journal=tmp_path / "journal.sqlite",
                      mqtt_url=f"mqtt://127.0.0.1:{web_broker.port}", broadcast_delay=2)
    cfg = cfg.model_copy(update={"broadcast": BroadcastSection(delay=2, min_delay=1, max_delay=4)})
    daemon = Daemon(cfg, mqtt_username="controller", mqtt_password=web_passwords["controller"]).start()
    producer, errors = open_page(web_browser, web_server.page_url("producer", table=table), (1024, 768))
    try:
        producer.wait_for_selector('body[data-delay="2"]', timeout=TIMEOUT_MS)
        assert producer.text_content("#delay-now") == "2 s"
        assert "1 to 4 s" in producer.text_content("#delay-range")

        def ask(seconds: str | None, ok: bool) -> str:
            producer.evaluate("() => { const a = document.querySelector('#delay-answer'); a.textContent = '';"
                              " delete a.dataset.ok; }")
            if seconds is None:
                producer.click("#delay-hand-end")
            else:
                producer.fill("#delay-seconds", seconds)
                producer.click("#delay-set")
            producer.wait_for_selector(f'#delay-answer[data-ok="{str(ok).lower()}"]', timeout=TIMEOUT_MS)
            return producer.text_content("#delay-answer")

        assert ask("3", True) == "Delay set: 3 s."
        producer.wait_for_selector('body[data-delay="3"]', timeout=TIMEOUT_MS)
        assert daemon.publisher.broadcast_delay == 3
        refused = ask("9", False)
        assert refused.startswith("Refused:") and "max_delay = 4" in refused, refused
        assert "min_delay = 1" in ask("0", False)
        assert daemon.publisher.broadcast_delay == 3 and producer.text_content("#delay-now") == "3 s"
        fits = producer.evaluate("""() => [...document.querySelectorAll('#delay, #delay *')].every((el) =>
          el.scrollWidth <= el.clientWidth + 1 && el.getBoundingClientRect().right <= window.innerWidth)""")
        assert fits, "the delay control is clipped at 1024x768"
        save_screenshot(producer, "producer-delay.png")
        assert ask(None, True) == "Delay set: until the hand ends."
        producer.wait_for_selector('body[data-delay="hand_end"]', timeout=TIMEOUT_MS)
        assert daemon.publisher.broadcast_delay == "end_of_hand"
        kinds = [e.event.kind for e in daemon.journal.entries()]
        assert kinds.count("set_broadcast_delay") == 2  # the two taken, journaled; the refused ones not
        assert not errors, errors
    finally:
        producer.close()
        daemon.stop()
