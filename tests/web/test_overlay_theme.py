"""Issue 27, what a producer expects: the overlay themed from one file, and a chip-count
leaderboard, both on the delayed broadcast topics only.

The overlay page in Chromium, ``?theme=emerald&add=leaderboard``, reads a crowded 10-handed state
published with the controller's credential on ``broadcast/*`` (as tests/web/test_page_fit.py does).
Checked in the browser: the theme's colours, font, card faces and logo are what Chromium draws;
the leaderboard lists the delayed state's players biggest stack first; nothing is clipped and the
new graphics overlap nothing.  Without ``add=leaderboard`` the leaderboard stays off.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.web.test_page_fit import MEASURE, OVERLAY, Publisher, _states
from tests.web_helpers import (
    TIMEOUT_MS,
    needs_browser,
    open_page,
    save_screenshot,
)

THEME = json.loads((Path(__file__).resolve().parents[2] / "web" / "overlay" / "themes" / "emerald.json").read_text())


def test_a_themed_overlay_with_a_leaderboard(web_browser, web_server, web_broker, web_passwords):
    needs_browser()
    pub = Publisher(web_broker, web_passwords["controller"], "th1")
    url = web_server.page_url("overlay", table="th1", theme="emerald", add="leaderboard")
    page, errors = open_page(web_browser, url)
    plain, plain_errors = open_page(web_browser, web_server.page_url("overlay", table="th1"))
    try:
        p = _states("omaha8", 10, 10)
        stacks = {str(s): 10_000 * s + 7 for s in range(1, 11)}
        for k, v in stacks.items():
            p["state"]["table"]["players"][k]["stack"] = v
        pub.send(pub.t.broadcast("holecards"), p["holecards"])
        pub.send(pub.t.broadcast("equity"), p["equity"])
        pub.send(pub.t.broadcast("state"), p["state"])
        page.wait_for_selector('body[data-hand-id="10"][data-theme="Emerald"]', timeout=TIMEOUT_MS)
        page.wait_for_function("() => document.querySelector('#logo').naturalWidth > 0", timeout=TIMEOUT_MS)
        drawn = page.evaluate("""() => {
          const cs = (sel) => getComputedStyle(document.querySelector(sel));
          return { panel: cs('.player').backgroundColor, font: cs('.player').fontFamily,
                   face: cs('.player .card.face').backgroundColor, radius: cs('.player').borderTopLeftRadius,
                   logo: !document.querySelector('#logo').hidden,
                   rows: [...document.querySelectorAll('#leaderboard li')].map((li) => [li.dataset.seat,
                     Number(li.dataset.stack), li.querySelector('.name').textContent]) };
        }""")
        assert drawn["panel"] == THEME["colors"]["panel"] == "rgba(4, 38, 28, 0.9)"
        assert "DejaVu Serif" in drawn["font"] and drawn["radius"] == "4px"
        assert drawn["face"] == "rgb(255, 250, 240)" and drawn["logo"]
        want = sorted(stacks.items(), key=lambda kv: -kv[1])
        assert [(r[0], r[1]) for r in drawn["rows"]] == want
        assert drawn["rows"][0][2] == p["state"]["table"]["players"]["10"]["name"]
        texts = OVERLAY[2] + ", #leaderboard .name, #leaderboard .chips"
        found = page.evaluate(MEASURE, [OVERLAY[0], OVERLAY[1], texts, OVERLAY[3] + ["#leaderboard", "#logo"]])
        save_screenshot(page, "overlay-themed.png")
        assert not found, found
        plain.wait_for_selector('body[data-hand-id="10"]', timeout=TIMEOUT_MS)
        assert not plain.locator("#leaderboard").is_visible() and not plain.locator("#logo").is_visible()
        assert not errors and not plain_errors, errors + plain_errors
    finally:
        page.close()
        plain.close()
        pub.close()
