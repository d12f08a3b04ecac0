"""RRoP s4 Rules for Using Blinds 10: a player who owes a missed blind and is dealt in without posting.

    "If a player who owes a blind (as a result of a missed blind) is dealt in without posting, the
    hand is dead if the player looks at it before putting up the required chips, and has not yet
    acted. If the player acts on the hand and plays it, putting chips into the pot before the error
    is discovered, the hand is live, and the player is required to post on the next deal."

No sensor sees a player look at his cards: the dealer says so on the console (``looked``), and the
table (:attr:`controller.rules.table.Table.owing`) knows who was dealt in on owing missed blinds.
Whether the player has acted is the hand's own record (a voluntary action, not a forced bet).
"""

from __future__ import annotations

from typing import Any

from controller.rules.rulings import IRREGULARITY, Ruling


def owed_blind_looked(engine: Any, seat: int, owed: list[str]) -> Ruling:
    """Rule on ``seat`` (dealt in owing ``owed``) having looked at his hand: a dead hand if he has
    not acted yet; a live hand with the blinds posted on the next deal if he has (the table then
    makes him owe them again: :meth:`controller.rules.table.Table.owe_again`)."""
    blinds = " and ".join(owed) or "blind"
    if seat in engine.acted_seats:
        return engine._rule(IRREGULARITY, "owed_blind_acted", "post_next_deal", seat=seat, blinds=blinds)
    ruling = engine._rule(IRREGULARITY, "owed_blind_looked", "dead_hand", seat=seat, blinds=blinds)
    kill_hand(engine, seat)
    return ruling


def kill_hand(engine: Any, seat: int) -> None:
    """The seat's hand is dead (RRoP s3 Dead Hands): out of every pot and of the turn; the deal
    and the betting go on without it, and a hand left alone wins what is in the pot."""
    from controller.rules.engine import Phase

    engine.active.discard(seat)
    engine.dead.add(seat)
    engine.slots = [s for s in engine.slots if s.seat != seat]
    engine.owed = [s for s in engine.owed if s.seat != seat]
    engine.bet.need.discard(seat)
    if engine.chips is not None:
        engine.chips.folded.add(seat)  # chips he put in stay in the pot; he is eligible for none
    if len(engine.active) <= 1:
        engine._finish()
    elif engine.phase is Phase.BET and engine.bet.open and not engine.bet.need:
        engine._advance()
    elif engine.phase is Phase.DEAL and not engine.slots:
        engine._open_betting()
