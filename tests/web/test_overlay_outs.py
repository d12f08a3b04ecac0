"""Issue 27, what a producer expects: the outs on air are the cards that win.

Hold'em and Omaha hands (the dealer simulator's) published as the daemon publishes them, with a
delay in seconds, on a real Mosquitto: at the start of the betting on the flop and on the turn,
the overlay in Chromium must show, for each hand behind, exactly the outs a brute-force count
with the rules engine's own evaluator gives for the same cards (tests/equity/test_outs.py), and
none for the hand ahead.
"""

from __future__ import annotations

import random

import pytest

from controller.app.daemon import STATE_DEBOUNCE
from controller.rules.cards import Card
from controller.rules.events import Act, SeatPlayer, StartHand
from controller.rules.scenario import Scenario
from controller.rules.table import Table
from controller.service import Rejected, TableService
from controller.sim import dealer as dealer_sim
from tests.equity.test_outs import _brute
from tests.web.test_overlay_equity import DELAY
from tests.web_helpers import (
    needs_browser,
    open_page,
    wait_until,
    web_broker,  # noqa: F401 - fixtures
    web_browser,  # noqa: F401
    web_feed,  # noqa: F401
    web_passwords,  # noqa: F401
    web_server,  # noqa: F401
)

READ = """() => Object.fromEntries([...document.querySelectorAll('.player .outs[data-outs]')]
  .map((o) => [o.closest('.player').dataset.seat, o.dataset.outs.split(' ').filter(Boolean).sort()]))"""


def _want(service: TableService, evaluator: str) -> dict[str, list[str]]:
    engine = service.engine
    hole = {int(s): [Card.parse(c) for c in cards] for s, cards in service.hole_cards().items()}
    live = {s: hole[s] for s in sorted(engine.active) if hole.get(s)}
    dead = [c for s in sorted(engine.folded) for c in hole.get(s, [])]
    board = [Card.parse(c) for c in service.public_state()["hand"]["board"]]
    return {str(s): v for s, v in _brute(evaluator, live, board, dead).items()}


def _rounds(service: TableService, submit, hand: dict, evaluator: str, before_round=None) -> list[tuple[str, int]]:
    """Play ``hand`` (each event through ``submit``); at the start of the betting on the flop and
    on the turn, the brute-force outs (told to ``before_round``, counted in the result)."""
    scenario = Scenario.from_dict(hand)
    submit(StartHand(scenario.setup))
    checked: list[tuple[str, int]] = []
    last = None
    for ev in scenario.events:
        engine = service.engine
        rnd = (engine.street_i, id(engine))
        board = service.public_state()["hand"]["board"]
        if isinstance(ev, Act) and engine.phase.value == "bet" and rnd != last and len(board) in (3, 4):
            last = rnd
            want = _want(service, evaluator)
            if before_round is not None:
                before_round(want, engine.street.name)
            checked.append((engine.street.name, sum(len(v) for v in want.values())))
        try:
            submit(ev)
        except Rejected:
            continue
    return checked


def _hand_with_outs(game: str, evaluator: str) -> dict:
    """A seeded showdown hand where a hand behind has outs on the flop and on the turn."""
    for seed in range(1, 400):
        hand = dealer_sim.legal_hand(random.Random(seed), game=game, rules="robert", event="cash")
        if len(hand["seats"]) > 6:
            continue
        svc = TableService(Table(size=10, game=game))
        for s in hand["seats"]:
            svc.submit(SeatPlayer(s, f"P{s}"))
        rounds = _rounds(svc, svc.submit, hand, evaluator)
        if [s for s, _ in rounds] == ["flop", "turn"] and all(n > 0 for _, n in rounds):
            return hand
    raise AssertionError(f"no {game} hand with outs on the flop and the turn")


@pytest.mark.parametrize(("game", "evaluator"), [("holdem", "high"), ("omaha", "omaha_high")])
def test_the_outs_on_air_are_the_cards_that_win(game, evaluator, web_browser, web_server, web_feed):  # noqa: F811
    needs_browser()
    hand = _hand_with_outs(game, evaluator)
    table = f"outs-{game}"
    f = web_feed(table, size=10, game=game, broadcast_delay=DELAY, debounce=STATE_DEBOUNCE)
    f.seat({s: f"P{s}" for s in hand["seats"]})
    page, errors = open_page(web_browser, web_server.page_url("overlay", table=table))
    try:
        def look(want: dict, street: str) -> None:
            f.idle()
            wait_until(lambda: page.evaluate(READ) == want, 20, f"{game} outs on {street}")

        checked = _rounds(f.service, f.submit, hand, evaluator, before_round=look)
        assert [s for s, _ in checked] == ["flop", "turn"] and all(n > 0 for _, n in checked), checked
        assert not errors, errors
    finally:
        page.close()
