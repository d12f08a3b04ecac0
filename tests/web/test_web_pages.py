"""The dealer's display and the broadcast overlay in a REAL browser, on a REAL broker.

Mosquitto runs the shipped config and ACL (``systemd/mosquitto/``) with a websockets
listener; the pages are served by :class:`controller.webserver.WebServer` and opened in
Debian's Chromium through Playwright; the table is driven by the daemon's own publishing
path (``TableService`` -> ``Publisher`` -> ``MqttLink`` as the ``controller`` user), so the
pages read exactly what the daemon publishes.

Without Playwright or Chromium the browser tests are skipped, and fail when ``CI`` is set.
The secrecy test needs no browser: it reads everything the display's credential can read
through a whole session of dealt hands and finds no face-down card before its showdown.
"""

from __future__ import annotations

import json
import random
import urllib.request
from typing import Any

import pytest

from controller.app.webserver import WebServer
from controller.mqtt.contract import Topics, public_cards, validate
from controller.rules.cards import Card
from controller.rules.events import Acknowledge, Deal, NewHand, SetButton
from controller.rules.scenario import Scenario
from controller.service import Rejected
from tests.mqtt_util import require_mosquitto  # noqa: E402
from tests.web_helpers import (
    REPO,
    Recorder,
    card_tokens,
    needs_browser,
    play_scenario,
    save_screenshot,
    showdown_holdem,
    wait_until,
    watch_console,
)

require_mosquitto()

PLAYERS = {1: "Ann", 3: "Bob", 5: "Cy", 7: "Dee"}
TIMEOUT_MS = 8000


# ---------------------------------------------------------------------- fixtures (tests/web_helpers.py)


@pytest.fixture(scope="module")
def passwords(web_passwords) -> dict[str, str]:
    return web_passwords


@pytest.fixture(scope="module")
def broker(web_broker):
    return web_broker


@pytest.fixture(scope="module")
def web(web_server) -> WebServer:
    # The overlay gets its credential from /overlay/config.json; the display from the URL query.
    return web_server


@pytest.fixture(scope="module")
def browser(web_browser):
    return web_browser


@pytest.fixture
def feed(web_feed):
    return web_feed


def open_display(browser, web, passwords, table: str, user: str = "console", size=(800, 480)):
    page = browser.new_page()
    page.set_viewport_size({"width": size[0], "height": size[1]})
    errors = watch_console(page)
    page.goto(web.page_url("display", table=table, user=user, **{"pass": passwords[user]}))
    page.wait_for_selector('body[data-conn="online"]', timeout=TIMEOUT_MS)
    return page, errors


# ---------------------------------------------------------------------- web server


def test_webserver_serves_pages_and_split_config(web, passwords):
    def get(path: str) -> tuple[int, bytes, Any]:
        try:
            with urllib.request.urlopen(web.url + path, timeout=5) as r:
                return r.status, r.read(), r.headers
        except urllib.error.HTTPError as exc:
            return exc.code, b"", exc.headers

    status, body, headers = get("/display/")
    assert status == 200 and b'id="alert"' in body and "Content-Security-Policy" in headers
    assert get("/vendor/mqtt.min.js")[0] == 200
    assert get("/common/cards.js")[2]["Content-Type"].startswith("text/javascript")
    shared = json.loads(get("/config.json")[1])
    assert shared == {"ws": web.config["ws"], "table": "t1"}  # no page's password
    overlay = json.loads(get("/overlay/config.json")[1])
    assert overlay["user"] == "overlay" and overlay["pass"] == passwords["overlay"]
    assert "pass" not in json.loads(get("/display/config.json")[1])  # the overlay's secret stays with the overlay
    for path in ("/screenshots.py", "/display/../screenshots.py", "/display/%2e%2e/screenshots.py",
                 "/display/%2E%2E/%2e%2e/README.md", "/display/..%2fscreenshots.py", "/display%2f..%2fscreenshots.py",
                 "/display/%5c..%5cscreenshots.py", "/vendor/",
                 "/.git/config", "/etc/passwd"):
        assert get(path)[0] == 404, path


# ---------------------------------------------------------------------- display


def test_display_follows_the_deal_and_raises_a_misdeal(browser, web, passwords, feed, broker):
    t = Topics("poker", "disp1")
    f = feed("disp1")
    f.seat(PLAYERS)
    f.submit(SetButton(1))
    f.submit(NewHand())
    f.idle()
    console_rec = Recorder(broker, "controller", passwords["controller"], [t.request("acknowledge")])
    page, errors = open_display(browser, web, passwords, "disp1")
    try:
        first = f.hand["next_seat"]
        page.wait_for_selector(f'[data-seat="{first}"][data-next="true"]', timeout=TIMEOUT_MS)
        assert page.inner_text("#street").strip().lower() == "preflop"
        assert page.get_attribute(".seat[data-seat='1'] .badge.button", "class") is not None  # the button at seat 1
        assert "credential" not in page.url and "pass=" not in page.url  # the password left the address bar

        # A card to the right seat: it shows as a back there, and the next-card seat moves on.
        f.submit(Deal(first, Card.parse("Ah")))
        second = f.hand["next_seat"]
        assert second != first
        page.wait_for_selector(f'[data-seat="{second}"][data-next="true"]', timeout=TIMEOUT_MS)
        assert page.locator(f'[data-seat="{first}"] .card.back').count() == 1
        assert page.locator('.card.face[data-card="Ah"]').count() == 0  # a face-down card is never drawn
        assert page.locator(f'[data-seat="{first}"][data-next="true"]').count() == 0
        save_screenshot(page, "display.png")

        # A card to the wrong seat: a misdeal, full screen, with its reason and citations.
        wrong = next(s for s in PLAYERS if s not in (first, second))
        outputs = f.submit(Deal(wrong, Card.parse("Kd")))
        alert = next(o.payload for o in outputs if o.kind == "alert")
        assert alert["ruling"] == "misdeal"
        page.wait_for_selector(f'#alert:not([hidden])[data-reason="{alert["reason"]}"]', timeout=TIMEOUT_MS)
        assert page.get_attribute("#alert", "data-severity") == "misdeal"
        assert alert["citations"] and alert["citations"][0] in page.inner_text("#alert-citations")
        assert page.inner_text("#alert-message") == alert["message"]
        assert page.locator("#alert-steps li").count() == len(alert["steps"])
        box = page.locator("#alert").bounding_box()
        assert box and box["width"] >= 800 and box["height"] >= 480  # full screen
        assert "Kd" not in page.inner_text("body")
        save_screenshot(page, "display-alert.png")

        # Acknowledge: the console's request reaches the broker, with a transaction and response topic.
        page.click("#ack")
        wait_until(lambda: console_rec.on(t.request("acknowledge")), 5, "request/acknowledge")
        msg = console_rec.on(t.request("acknowledge"))[0]
        body = json.loads(msg.payload)
        assert body["alert"] == alert["id"] and body["transaction"]
        props = msg.properties
        assert props.ResponseTopic.startswith(f"{t.root}/response/")
        assert props.CorrelationData == body["transaction"].encode()
        assert page.is_visible("#alert")  # it stays until the controller clears it

        # The controller clears it (retained empty alert/active): the alert goes away.
        f.submit(Acknowledge(body["alert"]))
        f.link.respond(props.ResponseTopic, props.CorrelationData,
                       {"schema": 1, "transaction": body["transaction"], "ok": True, "error": None, "result": None})
        page.wait_for_selector("#alert", state="hidden", timeout=TIMEOUT_MS)
        page.wait_for_selector('#toast[data-ok="true"]', timeout=TIMEOUT_MS)
        assert not errors, errors
    finally:
        console_rec.close()
        page.close()


def test_console_requests_carry_transaction_and_show_the_answer(browser, web, passwords, feed, broker):
    t = Topics("poker", "disp2")
    f = feed("disp2")
    f.seat(PLAYERS)
    f.submit(SetButton(1))
    f.idle()
    rec = Recorder(broker, "controller", passwords["controller"], [t.requests])
    page, errors = open_display(browser, web, passwords, "disp2")
    try:
        page.wait_for_selector('.seat[data-seat="3"][data-empty="false"]', timeout=TIMEOUT_MS)
        page.click("#btn-button")
        page.click('#dialog [data-pick-seat="5"]')
        wait_until(lambda: rec.on(t.request("set_button")), 5, "request/set_button")
        msg = rec.on(t.request("set_button"))[0]
        body = json.loads(msg.payload)
        assert body["seat"] == 5 and body["transaction"]
        f.link.respond(msg.properties.ResponseTopic, msg.properties.CorrelationData,
                       {"schema": 1, "transaction": body["transaction"], "ok": False,
                        "error": "the button cannot move during a hand", "result": None})
        page.wait_for_selector('#toast[data-ok="false"]', timeout=TIMEOUT_MS)
        assert "cannot move" in page.inner_text("#toast")

        page.click("#btn-new-hand")
        wait_until(lambda: rec.on(t.request("new_hand")), 5, "request/new_hand")
        f.submit(NewHand())
        page.wait_for_selector('#btn-misdeal:not([disabled])', timeout=TIMEOUT_MS)
        page.click("#btn-misdeal")
        page.click('#dialog [data-reason="button_out_of_position"]')
        wait_until(lambda: rec.on(t.request("misdeal")), 5, "request/misdeal")
        assert json.loads(rec.on(t.request("misdeal"))[0].payload)["reason"] == "button_out_of_position"
        page.click("#btn-action")
        page.click('#dialog [data-pick-seat="3"]')
        page.click('#dialog [data-action="call"]')
        wait_until(lambda: rec.on(t.request("action")), 5, "request/action")
        action = json.loads(rec.on(t.request("action"))[0].payload)
        assert (action["seat"], action["action"], action["all_in"]) == (3, "call", False)
        for m in rec.all():  # every request the page sends is valid against the contract
            validate(f"request_{m.topic.rsplit('/', 1)[-1]}", json.loads(m.payload))
        assert not errors, errors
    finally:
        rec.close()
        page.close()


def test_display_fits_800x480_without_scrolling(browser, web, passwords, feed):
    f = feed("disp3", size=10)
    f.seat({n: f"Player {n}" for n in range(1, 11)})
    f.submit(SetButton(4))
    f.submit(NewHand())
    page, errors = open_display(browser, web, passwords, "disp3")
    try:
        page.wait_for_selector('[data-seat="10"][data-in-hand="true"]', timeout=TIMEOUT_MS)
        dims = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight,"
                             " innerWidth, innerHeight]")
        assert dims[0] <= dims[2] and dims[1] <= dims[3], dims
        for sel in ("#btn-new-hand", "#btn-action", "#btn-button", "#btn-misdeal"):
            box = page.locator(sel).bounding_box()
            assert box and box["height"] >= 44 and box["width"] >= 44, (sel, box)  # touch targets
        for n in range(1, 11):  # every seat on screen
            box = page.locator(f'.seat[data-seat="{n}"]').bounding_box()
            assert box and box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= 800, (n, box)
        assert not errors, errors
    finally:
        page.close()


# ---------------------------------------------------------------------- overlay


def test_overlay_shows_nothing_before_the_delay_then_the_hole_cards(browser, web, passwords, feed):
    needs_browser()
    delay = 1.5
    hand = showdown_holdem()
    f = feed("ovl1", size=10, broadcast_delay=delay)
    f.seat({s: name for s, name in zip(hand["seats"], ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay"], strict=False)})
    page = browser.new_page()
    page.set_viewport_size({"width": 1920, "height": 1080})
    errors = watch_console(page)
    try:
        page.goto(web.page_url("overlay", table="ovl1"))  # credential from /overlay/config.json
        page.wait_for_selector('body[data-conn="online"]', timeout=TIMEOUT_MS)
        assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgba(0, 0, 0, 0)"
        # The first cards: the display would see them at once; the overlay sees nothing yet.
        play_scenario(f, hand, upto=4)
        f.idle()
        dealt = f.service.hole_cards()
        assert sum(len(v) for v in dealt.values()) == 4
        assert page.locator(".player").count() == 0 and page.locator(".card.face").count() == 0
        assert page.get_attribute("body", "data-hand-id") == ""
        # After the delay: the hole cards, face up, exactly the dealt ones.
        page.wait_for_function("n => document.querySelectorAll('.player .card.face').length >= n", arg=4,
                               timeout=TIMEOUT_MS)
        for seat, cards in dealt.items():
            for c in cards:
                assert page.locator(f'.player[data-seat="{seat}"] .card.face[data-card="{c}"]').count() == 1

        # Play the hand to its showdown: the board, names, folds dimmed, the winner.
        for event in Scenario.from_dict(hand).events[4:]:
            try:
                f.submit(event)
            except Rejected:
                pass
        final = f.hand
        assert final is not None and final["phase"] == "done"
        page.wait_for_selector('body[data-phase="done"]', timeout=TIMEOUT_MS)
        page.wait_for_selector("#winner:not([hidden])", timeout=TIMEOUT_MS)
        assert page.locator("#board .card.face").count() == 5
        folded = [s for s, v in final["seats"].items() if v["folded"]]
        for s in folded:
            assert page.get_attribute(f'.player[data-seat="{s}"]', "data-folded") == "true"
        award = f.service.engine.showdown()
        won = {str(s) for part in award.parts for s in part.winners}
        shown_winners = set(page.eval_on_selector_all('.player[data-winner="true"]',
                                                      "els => els.map(e => e.dataset.seat)"))
        assert shown_winners == won
        page.wait_for_function("() => [...document.querySelectorAll('.player[data-folded=\"false\"] .hand')]"
                               ".every((e) => e.textContent.trim())", timeout=TIMEOUT_MS)  # the server's hand names
        save_screenshot(page, "overlay.png")
        assert not errors, errors
    finally:
        page.close()


def test_overlay_reads_only_the_broadcast_feed(browser, web, passwords, feed):
    """The overlay's credential cannot read the live topics, whatever the page subscribes to."""
    needs_browser()
    f = feed("ovl2", broadcast_delay=30.0)
    f.seat(PLAYERS)
    f.submit(SetButton(1))
    f.submit(NewHand())
    f.submit(Deal(f.hand["next_seat"], Card.parse("Qs")))
    f.idle()
    page = browser.new_page()
    try:
        page.goto(web.page_url("overlay", table="ovl2"))
        page.wait_for_selector('body[data-conn="online"]', timeout=TIMEOUT_MS)
        got = page.evaluate("""async ([url, password]) => {
            const seen = [];
            const c = mqtt.connect(url, {protocolVersion: 5, username: "overlay", password});
            c.on("message", (t) => seen.push(t));
            await new Promise((res) => c.on("connect", res));
            await c.subscribeAsync("#", {qos: 1});
            await new Promise((res) => setTimeout(res, 700));
            c.end(true);
            return seen;
        }""", [web.config["ws"], passwords["overlay"]])
        live = [t for t in got if t.startswith("poker/ovl2/") and not t.startswith("poker/ovl2/broadcast/")
                and t != "poker/ovl2/availability"]
        assert not live, live
        assert page.locator(".card.face").count() == 0
    finally:
        page.close()


# ---------------------------------------------------------------------- secrecy


def test_display_credential_never_sees_a_hole_card_before_showdown(broker, passwords, feed):
    """A whole session of realistic hands of every game; the display's credential reads `#`."""
    from controller.sim import dealer as dealer_sim

    t = Topics("poker", "sec1")
    display = Recorder(broker, "display", passwords["display"], ["#"])
    controller = Recorder(broker, "controller", passwords["controller"], [t.private_holecards])
    f = feed("sec1", size=10, broadcast_delay=0.05)
    secret_at: dict[int, set[str]] = {}

    def note(event, outputs) -> None:
        engine = f.service.engine
        hole = {c.split("@")[0] for cards in f.service.hole_cards().values() for c in cards}
        public = {c.split("@")[0] for c in public_cards(engine.snapshot())} if engine else set()
        shown = set()
        for o in outputs:
            if o.kind == "hand_end" and o.payload.get("shown"):
                shown = {c.split("@")[0] for cards in o.payload["shown"].values() for c in cards}
        secret_at[f.service.seq] = hole - public - shown

    rng = random.Random(20240601)
    try:
        for hand in dealer_sim.session(rng, 30):
            play_scenario(f, hand, after=note)
        f.idle(10)
        last_seq = f.service.seq
        wait_until(lambda: any(json.loads(m.payload or b"{}").get("seq") == last_seq
                               for m in display.on(t.state)), 20, "the display to read the last state")
    finally:
        display.close()
        controller.close()
    received = display.all()
    assert received, "the display read nothing"
    topics = {m.topic for m in received}
    assert all(Topics("poker", "sec1").is_public(tp) or not tp.startswith("poker/sec1/") for tp in topics), topics
    assert not any("/private/" in tp or "/broadcast/" in tp for tp in topics), topics
    leaks = []
    checked = 0
    for m in received:
        if not m.topic.startswith(t.root + "/") or not m.payload or m.topic == t.availability:
            continue
        data = json.loads(m.payload)
        seq = data.get("seq") if isinstance(data, dict) else None
        if seq is None:
            continue
        checked += 1
        found = card_tokens(m.payload) & secret_at.get(seq, set())
        if found:
            leaks.append((m.topic, seq, sorted(found)))
    assert checked > 300 and not leaks, leaks[:5]
    # The secrets were there to steal: the controller's own credential did read them.
    private = [json.loads(m.payload) for m in controller.all() if m.payload]
    assert private and any(secret_at.get(p["seq"]) & {c.split("@")[0] for v in p["seats"].values() for c in v}
                           for p in private)
    # And showdowns did reveal cards to the display (the check above had something to compare with).
    ends = [json.loads(m.payload) for m in received if m.topic == t.event("hand_end")]
    assert any(e.get("shown") for e in ends)


def test_docs_screenshots_exist_or_are_generated():
    """The README screenshots come from tests/web/screenshots.py (run by hand); check they are sane PNGs."""
    for name in ("display.png", "display-alert.png", "tracker.png", "overlay.png"):
        path = REPO / "docs" / "screenshots" / name
        if not path.exists():
            pytest.skip(f"{path} not generated yet: python tests/web/screenshots.py")
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
