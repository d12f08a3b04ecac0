"""A finished hand's result in a line of words (the demo's terminal, ``tablectl replay``): who won
what, the pots, and an uncalled bet handed back said apart (it is no winnings).  ``end`` is an
``event/hand_end`` payload or a journaled hand's outcome (the same fields)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def result_words(end: Mapping[str, Any]) -> str:
    """One line of a hand's result: who won what (an uncalled bet handed back said apart), the pots."""
    if end.get("result") in ("misdeal", "void"):
        return f"{end['result']}: no pot, every chip back"
    payouts = end.get("payouts") or {}
    seen: dict[int, str] = {}
    for w in end.get("winners") or []:
        won = f" wins {w['share']:,}" if payouts and w.get("share") is not None else " wins"
        part = f" ({w['part']})" if w.get("part") not in (None, "pot", "high") else ""
        hand = f" with {w['hand']}" if w.get("hand") else ""
        seen.setdefault(w["seat"], f"seat {w['seat']}{won}{part}{hand}")
    words = "; ".join(seen.values()) or end.get("result", "")
    pots = end.get("pots") or []
    if pots:
        words += "  (pots: " + ", ".join(f"{p['amount']:,}" for p in pots) + ")"
    back = end.get("returned")
    if back:
        words += f"; {back['amount']:,} returned to seat {back['seat']} (not called)"
    return words
