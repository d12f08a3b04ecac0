"""The demo's and the tests' table config: self-contained, no serial link, panel or NFC."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from controller.app.config import CoreConfig, validate_config
from controller.geometry import ZoneMap
from controller.rules.games import Family, get_game


def demo_config(table_id: str = "demo", *, size: int = 9, game: str = "holdem", rules: str = "robert",
                journal: str | Path | None = None, mqtt_url: str = "mqtt://localhost:1883",
                broadcast_delay: int | str = 0, journal_sync: str = "full",
                starting_stack: int | None = None, event: str = "cash") -> CoreConfig:
    """A self-contained config for the demo: no serial link, panel or NFC; reference antennas."""
    fam = get_game(game).family
    stakes: dict[str, int] = {"ante": 0}
    if fam is Family.STUD:
        stakes |= {"ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10}
    else:
        stakes |= {"small_blind": 1, "big_blind": 2, "small_bet": 2, "big_bet": 4}
    if starting_stack is not None:
        stakes["starting_stack"] = starting_stack
    data: dict[str, Any] = {
        "table": {"id": table_id, "size": size, "game": game, "rules": rules, "event": event},
        "stakes": stakes,
        "antennas": ZoneMap.standard(size).to_dict(),
        "serial": {"enabled": False},
        "mqtt": {"url": mqtt_url},
        "broadcast": {"delay": broadcast_delay},
    }
    data["journal"] = {"sync": journal_sync}
    if journal is not None:
        data["journal"]["path"] = str(journal)
    return validate_config(data)
