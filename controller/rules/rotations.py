"""Mixed-game rotations as data: a table plays a list of games, changing every N deals.

HORSE is hold'em, Omaha hi-lo, razz, seven-card stud and stud hi-lo, all limit; a house writes its
own list (dealer's choice, a big-bet mix) the same way, as a mapping
``{"name": ..., "hands": N, "games": [{"game": ..., "structure": ..., "stakes": {...}}, ...]}``, or
``"per_level": true`` for a game that changes with each level instead of every N deals.  A game's
``stakes`` (the forced bets and limits of :class:`controller.rules.chips.Stakes`, without stacks) are
the table's while it is dealt: limit hold'em's blinds and bets are not stud's bring-in.  The table applies
the rotation between deals (:meth:`controller.rules.table.Table.next_setup`), so the button is frozen
through the stud games as TDA 9-A says (the table's rule, not the rotation's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from controller.errors import PokerTableError, reject_unknown_keys
from controller.rules.chips import ChipsError, Stakes
from controller.rules.events import SetRotation
from controller.rules.games import STRUCTURES, get_game


class RotationError(PokerTableError, ValueError):
    """A rotation that names an unknown game or structure, or no games."""


@dataclass(frozen=True, slots=True)
class RotationGame:
    game: str
    structure: str
    stakes: dict | None = None  # the game's own forced bets and limits (None: the table's)

    def describe(self) -> dict[str, str]:
        return {"game": self.game, "structure": self.structure, "title": get_game(self.game).title}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"game": self.game, "structure": self.structure}
        if self.stakes is not None:
            out["stakes"] = dict(self.stakes)
        return out


@dataclass(frozen=True, slots=True)
class Rotation:
    """Games in order, each dealt ``hands`` times before the next (then round again)."""

    name: str
    games: tuple[RotationGame, ...]
    hands: int = 8
    per_level: bool = False  # the game changes with each new level (a tournament), not every N deals

    def to_dict(self) -> dict[str, Any]:
        """The journal's form (:class:`controller.rules.events.SetRotation`)."""
        return {"name": self.name, "hands": self.hands, "per_level": self.per_level,
                "games": [g.to_dict() for g in self.games]}

    def index_at(self, deal: int) -> int:
        """The game of the ``deal``-th deal of the rotation (0 is the first)."""
        return (deal // self.hands) % len(self.games)

    def game_at(self, deal: int) -> RotationGame:
        return self.games[self.index_at(deal)]

    def next_game(self, deal: int) -> tuple[RotationGame, int]:
        """The game after the current one and how many deals remain before it (the current deal
        included), for the display and the overlay."""
        left = self.hands - deal % self.hands
        return self.games[(self.index_at(deal) + 1) % len(self.games)], left


def rotation_from_mapping(data: Any, where: str = "rotation") -> Rotation:
    if not isinstance(data, dict):
        raise RotationError(f"{where}: expected a mapping with name, hands and games")
    reject_unknown_keys(data, ("name", "hands", "games", "per_level"), RotationError, where)
    hands = data.get("hands", 8)
    if isinstance(hands, bool) or not isinstance(hands, int) or hands < 1:
        raise RotationError(f"{where}.hands: a whole number of deals >= 1, got {hands!r}")
    games = data.get("games")
    if not isinstance(games, list) or not games:
        raise RotationError(f"{where}.games: a non-empty list of {{game, structure}}")
    out = []
    for i, g in enumerate(games, 1):
        if isinstance(g, str):
            g = {"game": g}
        if not isinstance(g, dict) or set(g) - {"game", "structure", "stakes"} or "game" not in g:
            raise RotationError(f"{where}.games[{i}]: expected {{game, structure, stakes}}, got {g!r}")
        try:
            game = get_game(str(g["game"]))
        except PokerTableError as exc:
            raise RotationError(f"{where}.games[{i}]: {exc}") from exc
        structure = g.get("structure") or game.default_structure
        if structure not in STRUCTURES:
            raise RotationError(f"{where}.games[{i}].structure: one of {STRUCTURES}, got {structure!r}")
        stakes = g.get("stakes")
        if stakes is not None:
            stakes = _game_stakes(stakes, structure, f"{where}.games[{i}].stakes")
        out.append(RotationGame(game.name, structure, stakes))
    per_level = data.get("per_level", False)
    if not isinstance(per_level, bool):
        raise RotationError(f"{where}.per_level: true or false, got {per_level!r}")
    return Rotation(str(data.get("name", "rotation")), tuple(out), hands, per_level)


def _game_stakes(stakes: Any, structure: str, where: str) -> dict:
    """A game's forced bets and limits, checked as the chips layer reads them (no stacks)."""
    if not isinstance(stakes, dict) or "stacks" in stakes:
        raise RotationError(f"{where}: a mapping of forced bets and limits (blinds, ante, bring_in, limits...)")
    try:
        Stakes.from_dict({"stacks": {1: 1, 2: 1}, **stakes})
    except (ChipsError, TypeError, ValueError) as exc:
        raise RotationError(f"{where}: {exc}") from exc
    if structure == "limit" and "limits" not in stakes:
        raise RotationError(f"{where}: a limit game needs limits: [small_bet, big_bet]")
    return dict(stakes)


#: HORSE: hold'em, Omaha hi-lo 8 or better, razz, seven-card stud, stud hi-lo 8 or better, all limit.
#: Eight-game: 2-7 triple draw and HORSE, all limit, then no-limit hold'em and pot-limit Omaha.
ROTATIONS: dict[str, Rotation] = {
    "horse": rotation_from_mapping({"name": "horse", "hands": 8, "games": [
        {"game": g, "structure": "limit"} for g in ("holdem", "omaha8", "razz", "stud", "stud8")]}),
    "eight_game": rotation_from_mapping({"name": "eight_game", "hands": 8, "games": [
        *({"game": g, "structure": "limit"} for g in ("triple_draw_27", "holdem", "omaha8", "razz", "stud", "stud8")),
        {"game": "holdem", "structure": "no_limit"}, {"game": "omaha", "structure": "pot_limit"}]}),
}


def get_rotation(name_or_data: str | dict) -> Rotation:
    if isinstance(name_or_data, dict):
        return rotation_from_mapping(name_or_data)
    try:
        return ROTATIONS[name_or_data]
    except KeyError:
        raise RotationError(f"unknown rotation {name_or_data!r}; expected one of {sorted(ROTATIONS)} "
                            "or a mapping {name, hands, games}") from None


def rotation_event(name: str | None, available: dict[str, Rotation]) -> SetRotation:
    """The journaled form of starting rotation ``name`` (one of ``available``), or of ending the one
    in play (None): the whole rotation is journaled, so a replay plays the same games."""
    if name is None:
        return SetRotation(None)
    try:
        r = available[name]
    except KeyError:
        raise RotationError(f"no rotation {name!r}; known: {', '.join(sorted(available)) or 'none'}") from None
    return SetRotation(r.name, tuple(g.to_dict() for g in r.games), r.hands, r.per_level)
