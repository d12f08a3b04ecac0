"""Session statistics per player for the broadcast overlay: hands, VPIP, PFR, hands won.

Counted from the service's own outputs as the publisher sends them (``hand_start``, ``street``,
``action``, ``hand_end``), so they say exactly what the public topics said, and published on
``broadcast/stats`` with the broadcast delay once a hand is over (docs/mqtt.md):

* a hand counts for every seat dealt in (``hand_start.seats``) once it ends; a misdeal or a
  void hand counts for nobody (it is dealt again);
* VPIP: the player called, bet, raised or completed on the hand's first betting round
  (preflop; third street in stud; before the draw) - a forced bet (blind, ante, bring-in) is
  not voluntary;
* PFR: the player bet, raised or completed on that round;
* won: the player took a pot or a part of one (a high-low half, a split).

Players are keyed by their name at the hand's start ("Seat N" when the seat has none), so a
player who changes seats keeps his numbers.  Pure bookkeeping: no I/O, no clock.  At start the
daemon feeds it the journal's replayed outputs (``controller.app.publisher.count_published``), so a
session's numbers survive a restart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_VOLUNTARY = frozenset({"call", "bet", "raise", "complete"})
_AGGRESSIVE = frozenset({"bet", "raise", "complete"})


@dataclass
class PlayerStats:
    hands: int = 0
    vpip: int = 0
    pfr: int = 0
    won: int = 0

    def payload(self) -> dict[str, Any]:
        n = self.hands
        return {"hands": n, "vpip": round(self.vpip / n, 4) if n else 0.0, "pfr": round(self.pfr / n, 4) if n else 0.0,
                "won": self.won}


@dataclass
class SessionStats:
    players: dict[str, PlayerStats] = field(default_factory=dict)
    hands: int = 0
    _names: dict[int, str] = field(default_factory=dict)  # the hand in play: seat -> name
    _streets: int = 0  # betting rounds begun in the hand in play
    _vpip: set[int] = field(default_factory=set)
    _pfr: set[int] = field(default_factory=set)

    def hand_start(self, seats: list[int], names: dict[int, str | None]) -> None:
        self._names = {s: names.get(s) or f"Seat {s}" for s in seats}
        self._streets = 0
        self._vpip, self._pfr = set(), set()

    def street(self) -> None:
        self._streets += 1

    def action(self, seat: int, action: str) -> None:
        if self._streets <= 1 and seat in self._names:  # the first betting round
            if action in _VOLUNTARY:
                self._vpip.add(seat)
            if action in _AGGRESSIVE:
                self._pfr.add(seat)

    def hand_end(self, result: str, winners: list[int]) -> bool:
        """Count the hand; False (nothing counted) for a misdeal, a void hand or no hand."""
        names, self._names = self._names, {}
        if not names or result in ("misdeal", "void"):
            return False
        self.hands += 1
        for seat, name in names.items():
            p = self.players.setdefault(name, PlayerStats())
            p.hands += 1
            p.vpip += seat in self._vpip
            p.pfr += seat in self._pfr
            p.won += seat in winners
        return True

    def payload(self, seats: dict[int, str | None]) -> dict[str, Any]:
        """The body of ``broadcast/stats`` (the publisher adds schema, seq, ts and hand_id)."""
        return {"hands": self.hands, "players": {name: p.payload() for name, p in sorted(self.players.items())},
                "seats": {str(s): n for s, n in sorted(seats.items()) if n}}
