"""What the service shows: the retained state (``state`` and ``broadcast/state``) and the hole cards.

The snapshot is read from the table and the hand's engine as they stand; once a hand is over its
chips are shown as the table shows them after the push (:func:`_settled_chips`).
"""

from __future__ import annotations

from typing import Any

from controller.rules.engine import HandEngine
from controller.service.table_side import TableSide


class TableViews(TableSide):
    """The views of :class:`~controller.service.table_service.TableService`."""

    def public_state(self) -> dict[str, Any]:
        hand = None
        if self.engine is not None:
            hand = self.engine.snapshot()
            hand.pop("rulings", None)
        table = self.table.describe()
        if hand is not None and hand.get("chips") and self.engine is not None and not self.engine.over:
            for seat, player in table["players"].items():  # during a hand: the chips behind
                player["stack"] = hand["chips"]["stacks"].get(seat, player["stack"])
        elif hand is not None and hand.get("chips") and self.engine is not None:
            hand["chips"] = _settled_chips(self.engine, hand["chips"])
        if self.drawing is not None:  # a draw for the button under way: the cards read so far
            drawn = self._button_drawn().payload()
            table["draw"] = {k: v for k, v in drawn.items() if k in ("cards", "waiting", "winner")}
        return {
            "table": table,
            "hand_id": self.hand_id if self.engine is not None else None,
            "hand": hand,
            "alert": self.alerts[0].payload() if self.alerts else None,
            "hard_stop": self.hard_stop,
        }

    def hole_cards(self) -> dict[str, list[str]]:
        return _str_keys(self.engine.hole_cards()) if self.engine is not None else {}


def _settled_chips(engine: HandEngine, chips: dict[str, Any]) -> dict[str, Any]:
    """The chips once the hand is over, as the table shows them after the push: the stacks paid
    (a misdeal or void: every chip back where it was), no bets in front of anyone, and the pot
    that was awarded (an uncalled bet returned is no part of it).  When nothing could be awarded
    automatically the chips stay as they lie, for the floor to settle."""
    settled = engine.settlement()
    if settled is None or settled.stacks is None:
        return chips
    none = {str(s): 0 for s, _ in settled.stacks}
    base = {**chips, "bets": none, "to_call": None, "min_raise": None, "max_raise": None,
            "stacks": {str(s): c for s, c in settled.stacks}}
    if settled.void:
        return {**base, "pot": 0, "pots": []}
    pots = [{"amount": p.amount, "eligible": list(p.eligible)} for p in settled.pots]
    return {**base, "pot": sum(p.amount for p in settled.pots), "pots": pots}


def _str_keys(d: dict) -> dict[str, Any]:
    return {str(k): v for k, v in d.items()}
