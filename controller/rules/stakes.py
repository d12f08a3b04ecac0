"""A hand's stakes: the starting stacks and forced bets it is dealt with (FORMAT header keys), and
the one error of the chips (:class:`ChipsError`).  The chip book (:mod:`controller.rules.chips`)
counts a hand from them; the hand's setup (:mod:`controller.rules.events`) carries them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from controller.errors import PokerTableError, reject_unknown_keys


class ChipsError(PokerTableError, ValueError):
    """A betting input the chips cannot mean (more chips than the player has, a check facing a
    bet, an amount a limit game cannot take): the message says what is legal."""


@dataclass(frozen=True, slots=True)
class Stakes:
    """Starting stacks and forced bets of one hand (FORMAT header keys)."""

    stacks: Mapping[int, int]
    blinds: tuple[int, ...] = ()  # (small, big) or (big,)
    straddle: int | None = None
    ante: int = 0
    bb_ante: int = 0
    bring_in: int | None = None
    limits: tuple[int, int] | None = None  # (small bet, big bet)
    raise_cap: int | None = None  # raises allowed after the bet (limit)

    def __post_init__(self) -> None:
        for seat, chips in self.stacks.items():
            if not isinstance(chips, int) or isinstance(chips, bool) or chips < 0:
                raise ChipsError(f"stack of seat {seat} must be a whole number of chips >= 0, got {chips!r}")
        for name in ("ante", "bb_ante"):
            if getattr(self, name) < 0:
                raise ChipsError(f"{name} cannot be negative")
        if len(self.blinds) > 2 or any(b <= 0 for b in self.blinds):
            raise ChipsError(f"blinds are [small, big] or [big] in chips > 0, got {list(self.blinds)}")
        if self.limits is not None and (len(self.limits) != 2 or not 0 < self.limits[0] <= self.limits[1]):
            raise ChipsError(f"limits are [small_bet, big_bet] with 0 < small <= big, got {self.limits}")
        for name in ("straddle", "bring_in", "raise_cap"):
            v = getattr(self, name)
            if v is not None and v < 0:
                raise ChipsError(f"{name} cannot be negative")

    @property
    def big_blind(self) -> int | None:
        return self.blinds[-1] if self.blinds else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"stacks": {str(s): c for s, c in self.stacks.items()}}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name != "stacks" and v not in (None, 0, ()):
                out[f.name] = list(v) if isinstance(v, tuple) else v
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Stakes:
        reject_unknown_keys(data, (f.name for f in fields(cls)), ChipsError, "stakes")
        if "stacks" not in data or not isinstance(data["stacks"], Mapping):
            raise ChipsError("stakes: 'stacks' must map seats to chips")
        kw: dict[str, Any] = {"stacks": {int(s): _chips(c, f"stack of seat {s}") for s, c in data["stacks"].items()}}
        for key in ("blinds", "limits"):
            if data.get(key) is not None:
                v = data[key]
                if not isinstance(v, list | tuple):
                    raise ChipsError(f"{key} must be a list of chip amounts, got {v!r}")
                kw[key] = tuple(_chips(x, key) for x in v)
        for key in ("straddle", "ante", "bb_ante", "bring_in", "raise_cap"):
            if data.get(key) is not None:
                kw[key] = _chips(data[key], key)
        return cls(**kw)


def _chips(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ChipsError(f"{what} must be a whole number of chips, got {value!r}")
    return value
