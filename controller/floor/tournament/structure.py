"""A tournament's structure as data, and which level a hand plays.

TDA 21: "A new level will not be announced until the clock reaches zero. The new level applies to
the next hand. A hand begins on the first riffle; push of the shuffler button, or on the dealer
push." (RRoP s15 7 says the same: "the new limits apply on the next deal. (A deal begins with the
first riffle of the shuffle.)"). So the level of a hand is the level in force at the moment the
hand began, whatever the clock says while it is played; during a break no hand begins.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.errors import PokerTableError, reject_unknown_keys


class StructureError(PokerTableError, ValueError):
    """A structure file or value that cannot describe a tournament."""


@dataclass(frozen=True)
class Level:
    """One level of play: its blinds and antes, how long it lasts, what follows it."""

    number: int
    small_blind: int
    big_blind: int
    minutes: float
    ante: int = 0
    big_blind_ante: int = 0
    #: a break after this level, in minutes (0: none)
    break_minutes: float = 0
    #: chip denominations removed at the break after this level (a colour-up, TDA 22)
    colour_up: tuple[int, ...] = ()

    def describe(self) -> dict[str, Any]:
        return {"level": self.number, "small_blind": self.small_blind, "big_blind": self.big_blind,
                "ante": self.ante, "big_blind_ante": self.big_blind_ante, "minutes": self.minutes}


@dataclass(frozen=True)
class Structure:
    """Levels in order, the chips in play at the start, the starting stack and the table size."""

    name: str
    levels: tuple[Level, ...]
    denominations: tuple[int, ...]
    starting_stack: int
    table_size: int = 9
    #: TDA 10: nine players at the final table (six in a six-max event)
    final_table: int = 9
    #: places paid; hand-for-hand starts when this many plus ``hand_for_hand_margin`` are left
    paid_places: int = 0
    hand_for_hand_margin: int = 1
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.levels:
            raise StructureError(f"{self.name}: a structure needs at least one level")
        for i, lvl in enumerate(self.levels, 1):
            if lvl.number != i:
                raise StructureError(f"{self.name}: level {lvl.number} is listed {i}th; number them 1, 2, ...")
            if not 0 < lvl.small_blind <= lvl.big_blind or lvl.minutes <= 0:
                raise StructureError(f"{self.name}: level {i}: blinds must be 0 < small <= big and minutes > 0")
            removed = set(lvl.colour_up) - set(self.denominations)
            if removed:
                raise StructureError(f"{self.name}: level {i} colours up {sorted(removed)}, not in play")
        if sorted(set(self.denominations)) != list(self.denominations) or not self.denominations:
            raise StructureError(f"{self.name}: denominations must be listed once each, smallest first")
        if self.final_table < 2 or self.final_table > self.table_size:
            raise StructureError(f"{self.name}: final table of {self.final_table} at tables of {self.table_size}")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Structure:
        known = {"name", "levels", "denominations", "starting_stack", "table_size", "final_table",
                 "paid_places", "hand_for_hand_margin"}
        unknown = set(data) - known
        if unknown:
            raise StructureError(f"unknown structure keys {sorted(unknown)}")
        level_keys = {"small_blind", "big_blind", "minutes", "ante", "big_blind_ante", "break_minutes",
                      "colour_up"}
        levels = []
        for i, raw in enumerate(data.get("levels") or [], 1):
            reject_unknown_keys(raw, level_keys, StructureError, f"level {i}")
            try:
                levels.append(Level(number=i, small_blind=int(raw["small_blind"]), big_blind=int(raw["big_blind"]),
                                    minutes=float(raw["minutes"]), ante=int(raw.get("ante", 0)),
                                    big_blind_ante=int(raw.get("big_blind_ante", 0)),
                                    break_minutes=float(raw.get("break_minutes", 0)),
                                    colour_up=tuple(int(d) for d in raw.get("colour_up", ()))))
            except KeyError as exc:
                raise StructureError(f"level {i}: missing {exc.args[0]!r}") from None
        try:
            return cls(name=str(data["name"]), levels=tuple(levels),
                       denominations=tuple(int(d) for d in data["denominations"]),
                       starting_stack=int(data["starting_stack"]), table_size=int(data.get("table_size", 9)),
                       final_table=int(data.get("final_table", 9)), paid_places=int(data.get("paid_places", 0)),
                       hand_for_hand_margin=int(data.get("hand_for_hand_margin", 1)))
        except KeyError as exc:
            raise StructureError(f"structure: missing {exc.args[0]!r}") from None

    @classmethod
    def load(cls, path: Path) -> Structure:
        try:
            data = tomllib.loads(path.read_text())
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise StructureError(f"{path}: {exc}") from None
        try:
            return cls.from_dict(data)
        except StructureError as exc:
            raise StructureError(f"{path}: {exc}") from None

    def denominations_after(self, level: int) -> tuple[int, ...]:
        """The chips still in play once the colour-ups up to ``level`` (inclusive) are done."""
        gone = {d for lvl in self.levels[:level] for d in lvl.colour_up}
        return tuple(d for d in self.denominations if d not in gone)


@dataclass(frozen=True)
class ClockReading:
    """Where the tournament clock stands: a level in play or a break, and the time left in it."""

    level: Level
    on_break: bool
    seconds_left: float
    next_level: Level | None

    def describe(self) -> dict[str, Any]:
        return {**self.level.describe(), "on_break": self.on_break, "seconds_left": round(self.seconds_left, 1),
                "next": self.next_level.describe() if self.next_level else None}


class TournamentClock:
    """The clock of the levels and breaks, started at ``start`` (seconds) and paused on demand.

    ``reading(t)`` is what the clock page shows; ``level_for_hand(t)`` is the level of a hand that
    began at ``t`` (TDA 21): a hand begun a second before zero plays the old level to its end.
    """

    def __init__(self, structure: Structure, start: float) -> None:
        self.structure = structure
        self.start = start
        self._paused_at: float | None = None
        self._paused_total = 0.0

    def pause(self, t: float) -> None:
        if self._paused_at is None:
            self._paused_at = t

    def resume(self, t: float) -> None:
        if self._paused_at is not None:
            self._paused_total += t - self._paused_at
            self._paused_at = None

    def _elapsed(self, t: float) -> float:
        now = self._paused_at if self._paused_at is not None else t
        return max(0.0, now - self.start - self._paused_total)

    def reading(self, t: float) -> ClockReading:
        elapsed = self._elapsed(t)
        levels = self.structure.levels
        for i, lvl in enumerate(levels):
            nxt = levels[i + 1] if i + 1 < len(levels) else None
            play = lvl.minutes * 60
            if elapsed < play:
                return ClockReading(lvl, False, play - elapsed, nxt)
            elapsed -= play
            pause = lvl.break_minutes * 60
            if elapsed < pause:
                return ClockReading(lvl, True, pause - elapsed, nxt)
            elapsed -= pause
        # past the last level: it goes on (the structure's last level lasts until the end)
        return ClockReading(levels[-1], False, 0.0, None)

    def level_for_hand(self, began: float) -> Level | None:
        """The level a hand that began at ``began`` plays (TDA 21), or None when on a break."""
        reading = self.reading(began)
        return None if reading.on_break else reading.level
