"""What the floor's director decides: one instruction to the floor and the dealers, with its rule.

Shared by the tournament's seating (:mod:`.tournament.seating`) and the cash room
(:mod:`.cashroom`), so the page, the journal's replay and MQTT see one shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Decision:
    """One instruction to the floor and the dealers, with the rule it applies."""

    kind: str
    text: str
    citations: tuple[str, ...]
    data: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "citations": list(self.citations), **self.data}
