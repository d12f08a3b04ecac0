"""The action clock a floor puts on a player (TDA 26).

"If the floor approves the request, a player has up to 50 seconds to act. If action is not taken
before time expires, there will be a 10-second count. If the player does not act by the end of the
count, the hand is dead. A tie goes to the player." The clock is a pure function of when it was
called and when the player acted: the display counts it down, the journal keeps both moments, and
the replay reaches the same ruling.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

ACT_SECONDS = 50.0
COUNT_SECONDS = 10.0
CITATION = "TDA 26"

Phase = Literal["running", "count", "dead", "acted"]


@dataclass(frozen=True)
class ActionClock:
    """A clock on ``seat`` at table ``table``, called at ``called`` (seconds)."""

    table: str
    seat: int
    called: float
    act_seconds: float = ACT_SECONDS
    count_seconds: float = COUNT_SECONDS

    @property
    def expires(self) -> float:
        return self.called + self.act_seconds + self.count_seconds

    def phase(self, t: float, acted: float | None = None) -> Phase:
        """Where the clock stands at ``t``; ``acted`` is when the player acted, if he did.

        An action at the very end of the count is in time: "a tie goes to the player".
        """
        if acted is not None and acted <= self.expires:
            return "acted"
        if t < self.called + self.act_seconds:
            return "running"
        if t <= self.expires:
            return "count"
        return "dead"

    def seconds_left(self, t: float) -> float:
        """What the display shows: the 50 seconds, then the 10-second count."""
        if t < self.called + self.act_seconds:
            return self.called + self.act_seconds - t
        return max(0.0, self.expires - t)

    def ruling(self, t: float, acted: float | None = None) -> dict[str, Any] | None:
        """The dead-hand ruling once the count has ended without an action, else None."""
        if self.phase(t, acted) != "dead":
            return None
        return {"ruling": "dead_hand", "reason": "clock_expired", "table": self.table, "seat": self.seat,
                "what_happened": f"Seat {self.seat} did not act within {self.act_seconds:g} seconds and the "
                                 f"{self.count_seconds:g}-second count after a clock was called.",
                "what_to_do": f"Kill seat {self.seat}'s hand; the action moves to the next player.",
                "citations": [CITATION]}
