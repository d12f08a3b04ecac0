"""Mixed-game rotations as data: a table plays a list of games, changing every N deals.

HORSE is hold'em, Omaha hi-lo, razz, seven-card stud and stud hi-lo, all limit; a house writes its
own list (dealer's choice, a big-bet mix) the same way, as a mapping
``{"name": ..., "hands": N, "games": [{"game": ..., "structure": ...}, ...]}``.  The table applies
the rotation between deals (:meth:`controller.rules.table.Table.next_setup`), so the button is frozen
through the stud games as TDA 9-A says (the table's rule, not the rotation's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from controller.errors import PokerTableError
from controller.rules.games import STRUCTURES, get_game


class RotationError(PokerTableError, ValueError):
    """A rotation that names an unknown game or structure, or no games."""


@dataclass(frozen=True, slots=True)
class RotationGame:
    game: str
    structure: str

    def describe(self) -> dict[str, str]:
        return {"game": self.game, "structure": self.structure, "title": get_game(self.game).title}


@dataclass(frozen=True, slots=True)
class Rotation:
    """Games in order, each dealt ``hands`` times before the next (then round again)."""

    name: str
    games: tuple[RotationGame, ...]
    hands: int = 8

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
    extra = set(data) - {"name", "hands", "games"}
    if extra:
        raise RotationError(f"{where}: unknown keys {sorted(extra)}")
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
        if not isinstance(g, dict) or set(g) - {"game", "structure"} or "game" not in g:
            raise RotationError(f"{where}.games[{i}]: expected {{game, structure}}, got {g!r}")
        try:
            game = get_game(str(g["game"]))
        except PokerTableError as exc:
            raise RotationError(f"{where}.games[{i}]: {exc}") from exc
        structure = g.get("structure") or game.default_structure
        if structure not in STRUCTURES:
            raise RotationError(f"{where}.games[{i}].structure: one of {STRUCTURES}, got {structure!r}")
        out.append(RotationGame(game.name, structure))
    return Rotation(str(data.get("name", "rotation")), tuple(out), hands)


#: HORSE: hold'em, Omaha hi-lo 8 or better, razz, seven-card stud, stud hi-lo 8 or better, all limit.
ROTATIONS: dict[str, Rotation] = {
    "horse": rotation_from_mapping({"name": "horse", "hands": 8, "games": [
        {"game": g, "structure": "limit"} for g in ("holdem", "omaha8", "razz", "stud", "stud8")]}),
}


def get_rotation(name_or_data: str | dict) -> Rotation:
    if isinstance(name_or_data, dict):
        return rotation_from_mapping(name_or_data)
    try:
        return ROTATIONS[name_or_data]
    except KeyError:
        raise RotationError(f"unknown rotation {name_or_data!r}; expected one of {sorted(ROTATIONS)} "
                            "or a mapping {name, hands, games}") from None
