"""The table across hands: who sits where, the button and the blinds, one engine per hand.

Rules applied:

* Moving button (RRoP s4 Rules for Using Blinds 1(a)): the button moves to the next
  player and the blinds follow.
* Dead button (RRoP s4 1(b), RRoP s15 Tournaments 30, TDA 30): the big blind moves to
  the next player due; the small blind and the button follow into the seats the
  blinds held, even when that leaves a dead small blind or a button on an empty seat.
* Heads-up the button posts the small blind (RRoP s4 3, TDA 32), and on the way to
  heads-up nobody takes the big blind twice in a row.
* New players in a cash game wait for the big blind or post one (RRoP s4 4-7); a
  player may not come in between the big blind and the button.  Tournament players
  are dealt in at once.
* A misdeal's redeal is an exact replay: the button does not move (TDA 33-C).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from controller.errors import PokerTableError
from controller.rules.engine import HandEngine, clockwise
from controller.rules.events import HandSetup
from controller.rules.games import get_game
from controller.rules.profiles import get_profile


class TableError(PokerTableError, ValueError):
    """A seating or button request the table cannot honour (the message says why)."""


@dataclass(slots=True)
class Player:
    name: str
    waiting_for_big_blind: bool = False  # a new cash player who has not posted
    posted: bool = False  # posted a big blind to come in at once
    sitting_out: bool = False


@dataclass(slots=True)
class Positions:
    """Seat positions of the button and blinds; a position may be an empty seat (dead)."""

    button: int
    small_blind: int
    big_blind: int


@dataclass
class Table:
    """Seats, the game and profile, and the button's journey from hand to hand."""

    size: int = 9
    game: str = "holdem"
    rules: str = "robert"
    event: str = "cash"
    structure: str | None = None
    deck: str = "A"
    players: dict[int, Player] = field(default_factory=dict)
    positions: Positions | None = None
    hand_number: int = 0
    last_setup: HandSetup | None = None

    # ------------------------------------------------------------------ seating
    def seat(self, seat: int, name: str, post: bool = False) -> None:
        if not 1 <= seat <= self.size:
            raise TableError(f"seat {seat} is not on a {self.size}-seat table")
        if seat in self.players:
            raise TableError(f"seat {seat} is taken by {self.players[seat].name}")
        waiting = self.event == "cash" and self.positions is not None
        self.players[seat] = Player(name, waiting_for_big_blind=waiting, posted=post and waiting)

    def unseat(self, seat: int) -> None:
        if seat not in self.players:
            raise TableError(f"seat {seat} is empty")
        del self.players[seat]

    def set_button(self, seat: int) -> None:
        """The floor places the button (first hand, or correcting it: RRoP s3 Irregularities 1)."""
        if not 1 <= seat <= self.size:
            raise TableError(f"seat {seat} is not on a {self.size}-seat table")
        live = self._live()
        if len(live) < 2:
            raise TableError("need at least two players to place the button")
        self.positions = self._positions_from_button(seat, live)

    def _live(self) -> list[int]:
        return sorted(s for s, p in self.players.items() if not p.sitting_out)

    # ------------------------------------------------------------------ button and blinds
    @property
    def dead_button(self) -> bool:
        return self.event in get_profile(self.rules).dead_button_events

    def _positions_from_button(self, button: int, live: list[int]) -> Positions:
        order = clockwise(live, button, self.size)
        if len(order) == 2:
            btn = button if button in order else order[0]
            return Positions(btn, btn, next(s for s in order if s != btn))
        return Positions(button, order[0], order[1])

    def _next_positions(self) -> Positions:
        assert self.positions is not None
        live = self._live()
        pos = self.positions
        if len(live) < 2:
            raise TableError("need at least two players for a hand")
        if len(live) == 2:
            # RRoP s4 3, TDA 32: heads-up the button is the small blind.  The big blind goes to
            # the player who did not have it last hand, so nobody posts it twice in a row.
            bb = clockwise(live, pos.big_blind, self.size)[0]
            btn = next(s for s in live if s != bb)
            return Positions(btn, btn, bb)
        if not self.dead_button:
            # The button and the small blind pass over newcomers waiting for the big blind; the big
            # blind reaches them (RRoP s4 4-5).
            playing = [s for s in live if not self.players[s].waiting_for_big_blind]
            btn = clockwise(playing, pos.button, self.size)[0]
            sb = clockwise(playing, btn, self.size)[0]
            bb = clockwise(live, sb, self.size)[0]
            return Positions(btn, sb, bb)
        # Dead button: the big blind moves on to the next player; the small blind and the button
        # take the positions the blinds had, whether anyone still sits there or not.
        bb = clockwise(live, pos.big_blind, self.size)[0]
        return Positions(pos.small_blind, pos.big_blind, bb)

    def dealt_in(self, pos: Positions) -> list[int]:
        """Who gets cards: everyone live, except a new cash player who waits for the big blind,
        or who posted but sits between the big blind and the button (RRoP s4 4-7)."""
        between = set()
        if self.event == "cash":
            seat = pos.button
            while True:
                seat = seat % self.size + 1
                if seat == pos.big_blind:
                    break
                between.add(seat)
        seats = []
        for s in self._live():
            p = self.players[s]
            if p.waiting_for_big_blind and s != pos.big_blind and (not p.posted or s in between):
                continue
            seats.append(s)
        return seats

    # ------------------------------------------------------------------ hands
    def next_setup(self, redeal: bool = False) -> HandSetup:
        """The setup of the next hand; ``redeal`` replays the last one exactly (TDA 33-C)."""
        if redeal:
            if self.last_setup is None:
                raise TableError("no hand to redeal")
            return self.last_setup
        game = get_game(self.game)
        live = self._live()
        if len(live) < 2:
            raise TableError("need at least two players for a hand")
        previous = self.last_setup.button if self.last_setup else None
        if not game.button:
            setup = HandSetup(game=self.game, rules=self.rules, seats=tuple(live), structure=self.structure,
                              event=self.event, table_size=self.size, deck=self.deck)
            return setup
        if self.positions is None:
            self.positions = self._positions_from_button(live[-1], live)
        elif self.hand_number > 0:
            self.positions = self._next_positions()
        pos = self.positions
        seats = self.dealt_in(pos)
        sb = pos.small_blind if pos.small_blind in seats else None
        bb = pos.big_blind if pos.big_blind in seats else None
        return HandSetup(
            game=self.game, rules=self.rules, seats=tuple(seats), button=pos.button, structure=self.structure,
            event=self.event, table_size=self.size, small_blind=sb, big_blind=bb, blinds_given=True,
            deck=self.deck, previous_button=previous,
        )

    def start_hand(self, redeal: bool = False) -> HandEngine:
        setup = self.next_setup(redeal=redeal)
        engine = HandEngine(setup)
        if not redeal:
            self.hand_number += 1
            for s in setup.seats:
                p = self.players.get(s)
                if p is not None:
                    p.waiting_for_big_blind = False
                    p.posted = False
        self.last_setup = setup
        return engine

    def change_game(self, game: str, rules: str | None = None, structure: str | None = None) -> None:
        get_game(game)
        if rules:
            get_profile(rules)
        self.game = game
        self.rules = rules or self.rules
        self.structure = structure
        self.last_setup = None

    def describe(self) -> dict:
        pos = self.positions
        return {
            "size": self.size,
            "game": self.game,
            "rules": self.rules,
            "event": self.event,
            "dead_button": self.dead_button,
            "players": {str(s): {"name": p.name, "waiting_for_big_blind": p.waiting_for_big_blind,
                                 "sitting_out": p.sitting_out} for s, p in sorted(self.players.items())},
            "button": pos.button if pos else None,
            "small_blind": pos.small_blind if pos else None,
            "big_blind": pos.big_blind if pos else None,
            "hand_number": self.hand_number,
        }


__all__ = ["Player", "Positions", "Table", "TableError", "replace"]
