"""Issue 27 item 1: the amounts a viewer and a dealer see once a hand is over.

A pot won without a showdown (with an uncalled bet handed back), a misdeal and a split pot, each
played through the daemon's publishing path (``TableService`` -> ``Publisher`` -> ``MqttLink``, a
broadcast delay, the state debounced as the daemon does it) on a real Mosquitto, read by the
broadcast overlay and the dealer's console in Chromium.  The expected amounts are worked out here
from the chips each seat put in (the hand's contributions), not read back from the controller's
own result:

* won without a showdown: the winner wins the pot, which is everything put in less his uncalled
  excess; his stack is what he had less what he put in plus everything put in; no percentage is
  left on anybody's box; no bet is left in front of anyone;
* a misdeal: labelled a misdeal (not SHOWDOWN), no pot shown, every stack back where it started;
* a split pot: each winner is shown with half the pot (the odd chip to one of them).
"""

from __future__ import annotations

import random
from contextlib import contextmanager
from typing import Any

from controller.app.daemon import STATE_DEBOUNCE
from controller.rules.events import CallMisdeal, Deal, UnseatPlayer
from controller.rules.scenario import Scenario
from controller.rules.table import Table
from controller.service import TableService
from controller.sim import dealer as dealer_sim
from tests.web_helpers import (
    TIMEOUT_MS,
    open_page,
    play_scenario,
    save_screenshot,
    submit_hand,
)

DELAY = 0.3


def _find(want: str) -> dict[str, Any]:
    """A dealer_sim hold'em hand with chips that ends as ``want`` says (searched, deterministic)."""
    for seed in range(1, 2000):
        hand = dealer_sim.legal_hand(random.Random(seed), game="holdem", rules="robert", event="cash", chips=True)
        scenario = Scenario.from_dict(hand)
        if len(scenario.setup.seats) > 6:
            continue
        svc = TableService(Table(size=scenario.setup.table_size))
        end = next((out.payload for out in reversed(submit_hand(svc, scenario)) if out.kind == "hand_end"), None)
        engine = svc.engine
        if end is None or engine is None or engine.chips is None:
            continue
        paid = engine.chips.contributions()
        if want == "uncalled" and end["result"] == "uncontested" and len(engine.board) >= 3:
            live = sorted((paid[s] - engine.chips.dead[s] for s in paid), reverse=True)
            if live[0] - live[1] > 2:
                return hand
        if want == "split" and end["result"] == "showdown" and len({w["seat"] for w in end["winners"]}) == 2 \
                and len(engine.chips.pots()) == 1 and {w["part"] for w in end["winners"]} == {"pot"}:
            return hand
    raise AssertionError(f"no {want} hand found")


def _names(hand: dict[str, Any]) -> dict[int, str]:
    return {s: f"Player {s}" for s in Scenario.from_dict(hand).setup.seats}


def _overlay_numbers(page) -> dict[str, Any]:
    return page.evaluate("""() => ({
      street: document.querySelector('#street').textContent,
      potHidden: document.querySelector('#pot').hidden,
      pot: document.querySelector('#pot').dataset.pot,
      winners: [...document.querySelectorAll('#winner:not([hidden]) div')].map((d) => ({
        seat: d.dataset.seat, won: d.dataset.won, text: d.textContent })),
      stacks: Object.fromEntries([...document.querySelectorAll('.player')].map((p) =>
        [p.dataset.seat, p.querySelector('.stack').dataset.stack])),
      bets: [...document.querySelectorAll('.player .bet')].map((b) => b.dataset.bet),
      odds: [...document.querySelectorAll('.player .odds, .player .odds-sub')].map((o) => o.textContent)
        .filter(Boolean),
    })""")


def _display_numbers(page) -> dict[str, Any]:
    return page.evaluate("""() => ({
      potHidden: document.querySelector('#pot').hidden,
      pot: document.querySelector('#pot').dataset.pot,
      result: document.querySelector('#result').hidden ? '' : document.querySelector('#result').textContent,
      stacks: Object.fromEntries([...document.querySelectorAll('.seat[data-in-hand="true"]')].map((p) =>
        [p.dataset.seat, p.querySelector('.stack').dataset.stack])),
      bets: [...document.querySelectorAll('.seat .bet')].map((b) => b.dataset.bet),
    })""")


@contextmanager
def _watched(web_browser, web_server, web_feed, web_passwords, table: str, want: str, upto: int | None = None):
    """A hand found by :func:`_find` (``want``), its players seated on a feed published as the
    daemon does, the overlay and the dealer's console open on it (closed after), and the hand
    played (its first ``upto`` events only, if given): the feed, the scenario played, the two
    pages and their errors."""
    hand = _find(want)
    f = web_feed(table, size=10, broadcast_delay=DELAY, debounce=STATE_DEBOUNCE)
    f.seat(_names(hand))
    overlay, o_err = open_page(web_browser, web_server.page_url("overlay", table=table))
    url = web_server.page_url("display", table=table) + f"&user=console&pass={web_passwords['console']}"
    display, d_err = open_page(web_browser, url, (800, 480))
    try:
        yield f, play_scenario(f, hand, upto=upto), overlay, display, o_err + d_err
    finally:
        overlay.close()
        display.close()


def _settled(overlay, display, feed, hand_id: int, phase: str) -> None:
    overlay.wait_for_selector(f'body[data-hand-id="{hand_id}"][data-phase="{phase}"]', timeout=TIMEOUT_MS)
    feed.idle()
    overlay.wait_for_timeout(int(DELAY * 1000) + 300)  # everything delayed (hand_end, the clear) is in
    display.wait_for_selector(f'#phase:text-is("{phase}")', timeout=TIMEOUT_MS)


def test_a_pot_won_without_a_showdown(web_browser, web_server, web_feed, web_passwords):
    watched = _watched(web_browser, web_server, web_feed, web_passwords, "amt1", "uncalled")
    with watched as (f, _, overlay, display, errors):
        engine = f.service.engine
        assert engine is not None and engine.phase.value == "done"
        paid = engine.chips.contributions()
        start = dict(engine.chips.start)
        live = sorted(((paid[s] - engine.chips.dead[s], s) for s in paid), reverse=True)
        winner, excess = live[0][1], live[0][0] - live[1][0]
        total = sum(paid.values())
        pot = total - excess
        stacks = {str(s): str(start[s] - paid[s] + (total if s == winner else 0)) for s in start}
        _settled(overlay, display, f, f.service.hand_id, "done")
        got = _overlay_numbers(overlay)
        save_screenshot(overlay, "amounts-uncontested-overlay.png")
        assert got["street"].lower() != "showdown"
        assert got["pot"] == str(pot), (got, pot, excess)
        assert [(w["seat"], w["won"]) for w in got["winners"]] == [(str(winner), str(pot))], got
        assert f"wins {pot:,}" in got["winners"][0]["text"]
        assert got["stacks"] == stacks
        assert set(got["bets"]) == {"0"}, got["bets"]
        assert got["odds"] == [], "a pot won without a showdown keeps no percentage on the screen"
        d = _display_numbers(display)
        save_screenshot(display, "amounts-uncontested-display.png")
        assert d["pot"] == str(pot) and not d["potHidden"]
        assert f"wins {pot:,}" in d["result"] and f"{excess:,} returned" in d["result"], d["result"]
        assert d["stacks"] == stacks
        assert set(d["bets"]) == {"0"}
        # The winner stands up before the next hand: the banner keeps his name, not "Seat N".
        f.submit(UnseatPlayer(winner))
        overlay.wait_for_timeout(int(DELAY * 1000) + 300)
        assert _overlay_numbers(overlay)["winners"][0]["text"].startswith(f"Player {winner} wins")
        assert not errors, errors


def test_a_misdeal_shows_no_pot_and_every_stack_back(web_browser, web_server, web_feed, web_passwords):
    # any hand: it is stopped by a misdeal after the first cards
    watched = _watched(web_browser, web_server, web_feed, web_passwords, "amt2", "split", upto=3)
    with watched as (f, scenario, overlay, display, errors):
        assert all(isinstance(e, Deal) for e in scenario.events[:3])
        start = {str(s): str(c) for s, c in f.service.engine.chips.start.items()}
        assert f.service.engine.chips.pot > 0  # the blinds are in
        f.submit(CallMisdeal("wrong_card_count"))
        assert f.service.engine.phase.value == "dead"
        _settled(overlay, display, f, f.service.hand_id, "dead")
        got = _overlay_numbers(overlay)
        save_screenshot(overlay, "amounts-misdeal-overlay.png")
        assert got["street"].lower() == "misdeal"
        assert got["potHidden"]
        assert got["winners"] == []
        assert got["stacks"] == start
        assert set(got["bets"]) == {"0"}
        assert got["odds"] == []
        d = _display_numbers(display)
        assert d["potHidden"]
        assert d["stacks"] == start
        assert set(d["bets"]) == {"0"}
        assert "Misdeal" in d["result"]
        assert not errors, errors


def test_a_split_pot_shows_each_half(web_browser, web_server, web_feed, web_passwords):
    watched = _watched(web_browser, web_server, web_feed, web_passwords, "amt3", "split")
    with watched as (f, _, overlay, display, errors):
        engine = f.service.engine
        paid = engine.chips.contributions()
        pot = sum(paid.values())  # both hands called to the end: nothing uncalled
        _settled(overlay, display, f, f.service.hand_id, "done")
        got = _overlay_numbers(overlay)
        save_screenshot(overlay, "amounts-split-overlay.png")
        assert got["street"].lower() == "showdown"
        assert got["pot"] == str(pot)
        won = sorted(int(w["won"]) for w in got["winners"])
        assert len(won) == 2 and won[0] == pot // 2 and sum(won) == pot, (won, pot)
        for w in got["winners"]:
            assert f"wins {int(w['won']):,}" in w["text"]
        assert set(got["bets"]) == {"0"}
        d = _display_numbers(display)
        for amount in won:
            assert f"wins {amount:,}" in d["result"], d["result"]
        assert d["pot"] == str(pot)
        assert not errors, errors
