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

from controller.rules.engine import HandEngine
from controller.rules.rulings import IRREGULARITY, Ruling


def owed_blind_looked(engine: HandEngine, seat: int, owed: list[str]) -> Ruling:
    """Rule on ``seat`` (dealt in owing ``owed``) having looked at his hand: a dead hand if he has
    not acted yet; a live hand with the blinds posted on the next deal if he has (the table then
    makes him owe them again: :meth:`controller.rules.table.Table.owe_again`)."""
    blinds = " and ".join(owed) or "blind"
    if seat in engine.acted_seats:
        return engine._rule(IRREGULARITY, "owed_blind_acted", "post_next_deal", seat=seat, blinds=blinds)
    ruling = engine._rule(IRREGULARITY, "owed_blind_looked", "dead_hand", seat=seat, blinds=blinds)
    engine.kill_hand(seat)
    return ruling
