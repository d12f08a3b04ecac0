"""Issue 27, what a producer expects: outs, the cards that win, from the server's evaluator.

Checked against a brute-force count with the rules engine's own evaluator (controller.rules.evaluate,
not the vectorised tables outs.py uses), and in the broadcast/equity payload the overlay reads.
"""

from __future__ import annotations

import random

from controller.equity.outs import outs
from controller.equity.worker import EquityRequest, equity_payload
from controller.mqtt.contract import validate
from controller.rules.cards import RANKS, SUITS, Card, parse_cards
from controller.rules.evaluate import best_of


def _brute(evaluator: str, hands: dict[int, list[Card]], board: list[Card], dead: list[Card]) -> dict[int, list]:
    seen = {str(c) for c in [*board, *dead, *(c for h in hands.values() for c in h)]}
    unseen = [Card.parse(r + s) for r in RANKS for s in SUITS if r + s not in seen]
    now = {s: best_of(evaluator, h, board) for s, h in hands.items()}
    behind = [s for s in hands if now[s] < max(now.values())]
    found: dict[int, list] = {s: [] for s in behind}
    for c in unseen:
        vals = {s: best_of(evaluator, h, [*board, c]) for s, h in hands.items()}
        top = max(vals.values())
        leaders = [s for s, v in vals.items() if v == top]
        if len(leaders) == 1 and leaders[0] in found:
            found[leaders[0]].append(str(c))
    return {s: sorted(v) for s, v in found.items()}


def test_a_flush_and_overcards_draw_on_the_turn() -> None:
    hands = {1: parse_cards(["Ah", "Kh"]), 2: parse_cards(["Qs", "Qd"])}
    got = outs("holdem", hands, parse_cards(["2h", "7h", "Jc", "3s"]))
    assert sorted(str(c) for c in got[1]) == sorted(
        ["3h", "4h", "5h", "6h", "8h", "9h", "Th", "Jh", "Qh", "Kc", "Kd", "Ks", "Ac", "Ad", "As"])
    assert 2 not in got  # the leader has no outs to show
    # A folded hand's cards are out of the deck: never an out.
    folded = outs("holdem", hands, parse_cards(["2h", "7h", "Jc", "3s"]), dead=parse_cards(["9h", "Ks"]))
    assert {"9h", "Ks"}.isdisjoint(str(c) for c in folded[1]) and len(folded[1]) == 13


def test_outs_agree_with_brute_force_hold_em_and_omaha() -> None:
    rng = random.Random(27)
    deck = [Card.parse(r + s) for r in RANKS for s in SUITS]
    checked = 0
    for game, evaluator, hole in (("holdem", "high", 2), ("omaha", "omaha_high", 4)):
        for _ in range(12):
            cards = rng.sample(deck, 3 * hole + 4 + 2)
            hands = {s + 1: cards[s * hole:(s + 1) * hole] for s in range(3)}
            board = cards[3 * hole:3 * hole + rng.choice((3, 4))]
            dead = cards[-2:]
            got = {s: sorted(str(c) for c in v) for s, v in outs(game, hands, board, dead).items()}
            assert got == {s: v for s, v in _brute(evaluator, hands, board, dead).items()}, (game, hands, board)
            checked += bool(got)
    assert checked >= 10


def test_no_outs_where_a_card_list_cannot_say_it() -> None:
    hands = {1: parse_cards(["Ah", "Kh"]), 2: parse_cards(["Qs", "Qd"])}
    assert outs("holdem", hands, []) == {}  # preflop: three cards to come
    assert outs("holdem", hands, parse_cards(["2h", "7h", "Jc", "3s", "4d"])) == {}  # the river is out
    assert outs("omaha8", {1: parse_cards(["Ah", "Kh", "2c", "3d"]), 2: parse_cards(["Qs", "Qd", "Js", "Tc"])},
                parse_cards(["2h", "7h", "Jc", "8s"])) == {}  # high-low: two halves
    assert outs("nonsense", hands, parse_cards(["2h", "7h", "Jc"])) == {}


def test_the_equity_payload_carries_the_outs() -> None:
    req = EquityRequest(4, 9, "holdem", {1: tuple(parse_cards(["Ah", "Kh"])), 2: tuple(parse_cards(["Qs", "Qd"]))},
                        tuple(parse_cards(["2h", "7h", "Jc", "3s"])), (), after_draw=False)
    payload = equity_payload(req, 1.0)
    assert payload is not None
    validate("broadcast_equity", payload)
    assert len(payload["seats"]["1"]["outs"]) == 15 and "outs" not in payload["seats"]["2"]
    assert abs(payload["seats"]["1"]["equity"] - 15 / 44) < 1e-3  # the outs are the equity on the turn


def test_a_hand_short_of_a_card_after_a_desync_has_no_outs_and_no_error() -> None:
    """The fault bench's daemons logged ``equity failed`` with a FastEvalError ("4 cards cannot make
    a five-card hand", "Omaha needs at least two hole cards"): a seat holding one hole card of its
    two (a card held behind an "order unknown" question, a premature board) with a flop out.  The
    equity deals the missing card out as it deals the board; outs, the cards that win *now*,
    cannot be said for a hand not yet whole: none are listed, the payload still goes out.  Nor is
    such a hand named (it read "Ace high" with one hole card and a four-card board)."""
    for board in (parse_cards(["2h", "7h", "Jc"]), parse_cards(["2h", "7h", "Jc", "3d"])):
        for game, short, full in (("holdem", ["Ah"], ["Qs", "Qd"]), ("omaha", ["Ah"], ["Qs", "Qd", "9c", "8c"]),
                                  ("omaha", ["Ah", "Kh", "Kc"], ["Qs", "Qd", "9c", "8c"])):
            hands = {1: parse_cards(short), 2: parse_cards(full)}
            assert outs(game, hands, board) == {}, game
            req = EquityRequest(3, 7, game, {s: tuple(c) for s, c in hands.items()}, tuple(board), (),
                                after_draw=False)
            payload = equity_payload(req, 1.0)
            assert payload is not None, game
            validate("broadcast_equity", payload)
            assert all("outs" not in seat for seat in payload["seats"].values()), payload
            assert "hand" not in payload["seats"]["1"], payload  # not named: its name waits for its card
