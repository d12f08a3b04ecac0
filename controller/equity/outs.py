"""Outs for the broadcast overlay: the cards that win for a hand that is behind.

A viewer's question on the flop and the turn is "what does he need?".  For community-card games
with one showdown (hold'em, Omaha high), when exactly one board card comes next, every unseen
card is tried as that card; a seat that is behind now (some other live hand is better on the
board as it stands) has as outs the cards after which its hand is the best one alone.  On the
turn these are exactly the cards that win the pot; on the flop they are the turn cards that put
the hand ahead.  Cards known to be out of the deck (folded hands, exposed burns) are never outs.
A hand that does not hold all its hole cards has none listed (nor do the others: who is behind
depends on the card it lacks).

High-low games and draw and stud games have no outs here: a "winning card" there depends on
both halves or on cards still to come in several hands, which a list of cards cannot say.

Pure computation on the hands the equity worker already has (the delayed broadcast's data).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from controller.equity import fasteval as fe
from controller.rules.cards import Card
from controller.rules.games import Family, GameError, get_game


def outs(game: str, hands: Mapping[int, Sequence[Card]], board: Sequence[Card],
         dead: Sequence[Card] = ()) -> dict[int, list[Card]]:
    """Each trailing seat's outs (seats ahead or level now are not listed); empty when the game
    or the street has none (see the module's docstring)."""
    try:
        spec = get_game(game)
    except GameError:
        return {}
    if spec.family is not Family.BOARD or len(spec.showdown) != 1 or len(hands) < 2:
        return {}
    if len(board) not in (3, 4) or len(board) >= spec.board_cards:
        return {}
    if any(len(cards) != spec.hole_cards for cards in hands.values()):
        # A hand not yet whole (a card the table holds back, a desync): the cards that win now
        # depend on one nobody has seen; the equity deals it out, a list of outs cannot.
        return {}
    evaluator = spec.showdown[0]
    seats = sorted(hands)
    now = {s: fe.evaluate(evaluator, list(hands[s]), list(board)) for s in seats}
    best_now = max(now.values())
    behind = [s for s in seats if now[s] < best_now]
    if not behind:
        return {}
    seen = {fe.card_code(c) for c in [*(c for cards in hands.values() for c in cards), *board, *dead]
            if not c.is_joker}
    codes = [code for code in range(52) if code not in seen]
    unseen = fe.decode(codes)
    if not unseen:
        return {}
    boards = np.array([[*fe.encode(board), code] for code in codes], dtype=np.int8)
    values = np.stack([
        fe.evaluate_batch(evaluator, np.broadcast_to(fe.encode(hands[s]), (len(unseen), len(hands[s]))), boards)
        for s in seats])  # (seats, unseen)
    top = values.max(axis=0)
    alone = (values == top[None, :]).sum(axis=0) == 1
    found: dict[int, list[Card]] = {}
    for i, s in enumerate(seats):
        if s in behind:
            found[s] = [c for j, c in enumerate(unseen) if alone[j] and values[i, j] == top[j]]
    return found
