"""What the floor's director decides: one instruction to the floor and the dealers, with its rule.

Shared by the tournament's seating (:mod:`.tournament.seating`) and the cash room
(:mod:`.cashroom`), so the page, the journal's replay and MQTT see one shape; and how both replay
their journal (:func:`replay_entries`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
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


def replay_entries(events: Iterable[Mapping[str, Any]], calls: Mapping[str, Callable[[Mapping[str, Any]], Any]],
                   refused: type[Exception], what: str) -> None:
    """Apply journaled requests again, in order: each ``op`` through its call.

    A request refused when it was made is journaled too, and is refused the same way now, so
    ``refused`` is passed over; an entry of an unknown kind is an error (a journal of another kind).
    """
    for ev in events:
        call = calls.get(ev.get("op", ""))
        if call is None:
            raise refused(f"unknown {what} journal entry {ev.get('op')!r}")
        try:
            call(ev)
        except refused:
            pass
