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
* Missed blinds (RRoP s4 9-10): a cash player sitting out misses the big blind when it passes
  his seat, then the small blind; coming back he posts what he missed (the small one dead), or
  waits for the big blind and then owes nothing more.  Blinds are never made up between the big
  blind and the button (RRoP s4 7): such a player waits until the button passes.
* A table too short for anyone to wait (fewer than two players could be dealt in) starts afresh
  with everyone seated, as a newly started game where nobody owes a blind (RRoP s4 12); the first
  hand's blinds follow the button among the players present.
* A misdeal's redeal is an exact replay: the button does not move (TDA 33-C).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from controller.rules.blinds import ButtonAndBlinds, Player, Positions, TableError
from controller.rules.cards import Card
from controller.rules.chips import ChipsError, Stakes
from controller.rules.engine import HandEngine, clockwise
from controller.rules.events import HandSetup
from controller.rules.games import GameError, draw_winner, get_game
from controller.rules.profiles import get_profile
from controller.rules.rotations import Rotation


@dataclass
class Table(ButtonAndBlinds):
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
    posts: dict[int, list[str]] = field(default_factory=dict)  # this hand's posts besides the blinds
    # This hand's players dealt in on making up missed blinds (RRoP s4 9): what each owes.  RRoP s4 10
    # rules on one of them who is dealt in without posting (controller.rules.owed_blinds).
    owing: dict[int, list[str]] = field(default_factory=dict)
    # Chips (controller.rules.chips): the forced bets and limits of the next hand ({"blinds": [1, 2],
    # "ante": 0, ...}: Stakes keys without stacks), a new player's stack, and a tournament's levels.
    stakes: dict | None = None
    starting_stack: int | None = None
    levels: list[dict] = field(default_factory=list)
    level_index: int | None = None
    level_started_at: float | None = None
    pending_level: int | None = None
    # The draw for the button (RRoP s2 Seating 6): the last draw's cards and winner; ``drawn`` until
    # the deal it placed the button for is dealt.
    last_draw: dict | None = None
    drawn: bool = False
    # False: a game with antes only, a button and no blinds (RRoP s12 Draw High: "played with a
    # button and an ante"); the button moves forward each deal and nobody owes a blind.
    blinds: bool = True
    # TDA 9-A: a mixed game's button frozen through stud rounds; ``last_button_game``: whether the
    # last deal was a button game.
    frozen: bool = False
    last_button_game: bool = False
    # A mixed-game rotation (controller.rules.rotations): the game of each deal; ``rotation_deal``
    # counts the deals played under it (a misdeal's redeal is the same deal).
    rotation: Rotation | None = None
    rotation_deal: int = 0
    rotation_level: int = 0  # a rotation per level: the level it started at (its first game's)
    rotations: dict[str, Rotation] = field(default_factory=dict)  # the ones the console may start, by name

    # ------------------------------------------------------------------ seating
    def seat(self, seat: int, name: str, post: bool = False, stack: int | None = None) -> None:
        if not 1 <= seat <= self.size:
            raise TableError(f"seat {seat} is not on a {self.size}-seat table")
        if seat in self.players:
            raise TableError(f"seat {seat} is taken by {self.players[seat].name}")
        if stack is not None and stack < 0:
            raise TableError(f"a stack cannot be negative ({stack})")
        # RRoP s4 12(b): in a newly started game (no hand dealt yet) a new player is dealt in at once.
        # RRoP s12 Draw High 11: in a game with antes only a player may "pay the ante at any time and
        # receive a hand": nobody waits for a blind.
        waiting = self.event == "cash" and self.hand_number > 0 and self.blinds
        self.players[seat] = Player(name, waiting_for_big_blind=waiting, posted=post and waiting, new=waiting,
                                    stack=stack if stack is not None else self.starting_stack,
                                    joining=self.event != "cash" and self.hand_number > 0)

    def unseat(self, seat: int) -> None:
        if seat not in self.players:
            raise TableError(f"seat {seat} is empty")
        del self.players[seat]

    def sit_out(self, seat: int) -> None:
        """The player stays seated but is not dealt in; in a cash game he misses the blinds that
        pass his seat (RRoP s4 9)."""
        self._player(seat).sitting_out = True

    def sit_in(self, seat: int, post: bool = False) -> None:
        """Back from sitting out: ``post`` makes up the missed blinds at once (dealt in unless the
        seat is between the big blind and the button, RRoP s4 7); otherwise the player waits for
        the big blind (RRoP s4 9), which settles what he owes."""
        p = self._player(seat)
        if not p.sitting_out:
            raise TableError(f"seat {seat} ({p.name}) is not sitting out")
        p.sitting_out = False
        if p.new:
            p.posted = post  # still a new player: post a big blind now or wait for it (RRoP s4 4)
        elif p.missed:
            p.make_up = post
            p.waiting_for_big_blind = not post

    def owe_again(self, seat: int, blinds: list[str]) -> None:
        """RRoP s4 10: a player dealt in without posting what he owed, who then acted, plays his
        hand and "is required to post on the next deal"."""
        p = self._player(seat)
        p.missed = [b for b in ("small", "big") if b in blinds]
        p.make_up = bool(p.missed)
        p.waiting_for_big_blind = False
        self.owing.pop(seat, None)

    def _player(self, seat: int) -> Player:
        if seat not in self.players:
            raise TableError(f"seat {seat} is empty")
        return self.players[seat]

    def set_button(self, seat: int) -> None:
        """The floor places the button (first hand, or correcting it: RRoP s3 Irregularities 1)."""
        if not 1 <= seat <= self.size:
            raise TableError(f"seat {seat} is not on a {self.size}-seat table")
        live = self._live()
        if len(live) < 2:
            raise TableError("need at least two players to place the button")
        self.positions = self._positions_from_button(seat, live)

    def draw_for_button(self, cards: dict[int, Card]) -> int:
        """A card face up to each player decides the button (RRoP s2 Seating 6; s3 Ties 1-2; RRoP
        s15 Tournaments 29): the winner's seat has it for the next deal, a newly started game where
        every player who drew is active (RRoP s4 12(a)).  Returns the winning seat."""
        if not cards:
            raise TableError("a draw for the button needs a card for each player")
        for seat in cards:
            if seat not in self.players:
                raise TableError(f"seat {seat} is empty: it cannot draw for the button")
            if self.players[seat].sitting_out:
                raise TableError(f"seat {seat} is sitting out: it cannot draw for the button")
        faces = [c.face for c in cards.values()]
        if len(set(faces)) != len(faces):
            raise TableError(f"the same card twice in the draw for the button: {sorted(faces)}")
        try:
            winner = draw_winner(get_game(self.game), cards)
        except GameError as exc:
            raise TableError(str(exc)) from exc
        live = self._live()
        if len(live) < 2:
            raise TableError("need at least two players to place the button")
        for seat in cards:
            p = self.players[seat]
            p.waiting_for_big_blind = p.posted = p.make_up = p.new = False
            p.missed = []
        self.positions = self._positions_from_button(winner, live)
        self.drawn = True
        self.last_draw = {"cards": {s: c.face for s, c in sorted(cards.items())}, "winner": winner}
        return winner

    # ------------------------------------------------------------------ hands
    def next_setup(self, redeal: bool = False) -> HandSetup:
        """The setup of the next hand; ``redeal`` replays the last one exactly (TDA 33-C)."""
        if redeal:
            if self.last_setup is None:
                raise TableError("no hand to redeal")
            return self.last_setup
        if self.rotation is not None:
            turn = self.rotation.games[self._rotation_index(self.rotation_deal)]
            if (turn.game, turn.structure) != (self.game, self.structure):
                self.change_game(turn.game, structure=turn.structure)
            if turn.stakes is not None:
                self.stakes = dict(turn.stakes)  # each game its own structure and stakes
        game = get_game(self.game)
        live = self._live()
        if len(live) < 2:
            raise TableError("need at least two players for a hand")
        self.posts = {}
        self.owing = {}
        previous = self.last_setup.button if self.last_setup else None
        if not game.button:
            if self.last_button_game and self.positions is not None and self.hand_number > 0 and not self.frozen:
                # TDA 9-A: "when the game shifts from hold'em to stud, after the last hold'em hand the
                # button moves to the position it would be if the next hand was hold'em and is frozen
                # there during stud."
                before = self.positions
                self.positions = self._next_positions()
                self._miss_blinds(before, self.positions)
                self.frozen = True
            setup = HandSetup(game=self.game, rules=self.rules, seats=tuple(live), structure=self.structure,
                              event=self.event, table_size=self.size, deck=self.deck, chips=self.hand_chips(live))
            return setup
        if not self.blinds:
            return self._ante_setup(live, previous)
        if self.positions is None:
            self.positions = self._positions_from_button(live[-1], live)
        elif self.hand_number == 0 or self.drawn:
            # The first hand: the blinds follow the button among the players present now.
            self.positions = self._positions_from_button(self.positions.button, live)
        elif self.frozen:
            # TDA 9-A: "Shifting to hold'em the button starts where it was frozen" (moving on only
            # past a player who left the table meanwhile).
            pos = self.positions
            if not self.dead_button and not all(s in live for s in (pos.button, pos.small_blind, pos.big_blind)):
                button = pos.button if pos.button in live else clockwise(live, pos.button, self.size)[0]
                self.positions = self._positions_from_button(button, live)
        elif self.hand_number > 0:
            before = self.positions
            self.positions = self._next_positions()
            self._miss_blinds(before, self.positions)
        pos = self.positions
        seats = self.dealt_in(pos)
        self.posts = self.posting(pos, seats)
        self.owing = {s: list(b) for s, b in self.posts.items() if self.players[s].make_up}
        sb = pos.small_blind if pos.small_blind in seats else None
        bb = pos.big_blind if pos.big_blind in seats else None
        return HandSetup(
            game=self.game, rules=self.rules, seats=tuple(seats), button=pos.button, structure=self.structure,
            event=self.event, table_size=self.size, small_blind=sb, big_blind=bb, blinds_given=True,
            deck=self.deck, previous_button=previous, chips=self.hand_chips(seats),
        )

    def _ante_setup(self, live: list[int], previous: int | None) -> HandSetup:
        """A button game with antes only (RRoP s12 Draw High: "played with a button and an ante"):
        every player present is dealt in (Draw High 11), nobody posts a blind, and the button moves
        forward to the next player each deal, a deal nobody opened included (RRoP s12
        Jacks-or-Better 1: "If no player opens the pot, the button moves forward")."""
        if self.positions is None:
            button = live[-1]
        elif self.hand_number == 0 or self.drawn:
            button = self.positions.button
        else:
            button = clockwise(live, self.positions.button, self.size)[0]
        self.positions = Positions(button, button, button)
        for s in live:
            p = self.players[s]
            p.waiting_for_big_blind = p.posted = p.make_up = p.new = p.joining = False
            p.missed = []
        return HandSetup(
            game=self.game, rules=self.rules, seats=tuple(live), button=button, structure=self.structure,
            event=self.event, table_size=self.size, small_blind=None, big_blind=None, blinds_given=True,
            deck=self.deck, previous_button=previous, chips=self.hand_chips(live),
        )

    def start_hand(self, redeal: bool = False) -> HandEngine:
        setup = self.next_setup(redeal=redeal)
        engine = HandEngine(setup)
        if not redeal:
            self.hand_number += 1
            self.drawn = False
            self.last_button_game = engine.game.button
            if self.rotation is not None:
                self.rotation_deal += 1
            if engine.game.button:
                self.frozen = False
            for s in setup.seats:
                p = self.players.get(s)
                if p is not None:
                    # Dealt in: a new player has posted or taken the big blind; a returning one
                    # has made up his missed blinds or taken the big blind (RRoP s4 5, 9).
                    p.waiting_for_big_blind = False
                    p.posted = False
                    p.make_up = False
                    p.missed = []
                    p.new = False
                    p.joining = False
        self.last_setup = setup
        return engine

    def change_game(self, game: str, rules: str | None = None, structure: str | None = None,
                    event: str | None = None) -> None:
        get_game(game)
        if rules:
            get_profile(rules)
        if event not in (None, "cash", "tournament"):
            raise TableError(f"event must be cash or tournament, got {event!r}")
        self.game = game
        self.rules = rules or self.rules
        self.structure = structure
        self.event = event or self.event
        self.last_setup = None

    def set_rotation(self, rotation: Rotation | None) -> None:
        """Play a mixed game's rotation from the next deal (None: stop; the game in play stays).
        A rotation per level needs the tournament's level schedule."""
        if rotation is not None and rotation.per_level and not self.levels:
            raise TableError(f"rotation {rotation.name!r} changes the game per level: no level schedule "
                             "is configured")
        self.rotation = rotation
        self.rotation_deal = 0
        self.rotation_level = self.level_index or 0
        self.last_setup = None

    def _rotation_index(self, deal: int) -> int:
        """The rotation's game for a deal: every ``hands`` deals, or with each level."""
        assert self.rotation is not None
        if self.rotation.per_level:
            level = self.level_index if self.level_index is not None else self.rotation_level
            return (level - self.rotation_level) % len(self.rotation.games)
        return self.rotation.index_at(deal)

    def rotation_state(self) -> dict | None:
        """The rotation as the display and overlay name it: this deal's game, the next game and the
        deals left before it (None without a rotation); ``per_level``: it changes with the level."""
        if self.rotation is None:
            return None
        deal = max(self.rotation_deal - 1, 0)  # the deal in progress (or the first, before any)
        games = self.rotation.games
        i = self._rotation_index(deal)
        if self.rotation.per_level:
            left = None
        else:
            left = self.rotation.next_game(deal)[1]
        return {"name": self.rotation.name, "current": games[i].describe(),
                "next": games[(i + 1) % len(games)].describe(), "deals_left": left,
                "per_level": self.rotation.per_level}

    def waiting(self) -> list[int]:
        """Seated players not dealt in this hand (waiting for the big blind, sitting out)."""
        dealt = set(self.last_setup.seats) if self.last_setup else set()
        return sorted(s for s in self.players if s not in dealt)
    # ------------------------------------------------------------------ chips
    def forced_bets(self) -> dict | None:
        """The forced bets and limits of the next hand: the current level's, else the table's."""
        if self.level_index is not None and self.levels:
            return {k: v for k, v in self.levels[self.level_index].items() if k not in ("number", "minutes")}
        return self.stakes

    def hand_chips(self, seats: list[int]) -> Stakes | None:
        """Stacks and forced bets of a hand, when every dealt-in player's stack is counted."""
        bets = self.forced_bets()
        if bets is None or any(self.players.get(s) is None or self.players[s].stack is None for s in seats):
            return None
        try:
            return Stakes.from_dict({"stacks": {s: self.players[s].stack for s in seats}, **bets})
        except ChipsError as exc:
            raise TableError(str(exc)) from exc

    def set_stack(self, seat: int, stack: int | None = None, add: int | None = None) -> int:
        """Between hands: a stack set, or chips added (rebuy, add-on, chip-up)."""
        p = self.players.get(seat)
        if p is None:
            raise TableError(f"seat {seat} is empty")
        if (stack is None) == (add is None):
            raise TableError("give either stack (the new count) or add (chips added)")
        new = stack if stack is not None else (p.stack or 0) + (add or 0)
        if new < 0:
            raise TableError(f"a stack cannot be negative ({new})")
        p.stack = new
        return new

    def carry_stacks(self, stacks: dict[int, int]) -> None:
        """The stacks a hand ended with go into the next hand."""
        for seat, chips in stacks.items():
            if seat in self.players:
                self.players[seat].stack = chips

    def request_level(self, number: int | None = None, advance: bool = False) -> int:
        """The level the next hand is played at (a new level never takes effect mid-hand)."""
        if not self.levels:
            raise TableError("no level schedule is configured")
        if advance:
            base = self.pending_level if self.pending_level is not None else self.level_index
            target = (base if base is not None else -1) + 1
        else:
            if number is None or not 1 <= number <= len(self.levels):
                raise TableError(f"level must be 1..{len(self.levels)}, got {number}")
            target = number - 1
        if target >= len(self.levels):
            raise TableError(f"level {target + 1} is past the last level ({len(self.levels)})")
        self.pending_level = target
        return target + 1

    def level_for_hand(self, at: float) -> None:
        """At a new hand: a requested level, or the next one once the clock ran out, takes effect."""
        if not self.levels:
            return
        if self.level_index is None and self.pending_level is None:
            self.pending_level = 0
        if self.pending_level is None and self.level_index is not None and self.level_started_at is not None:
            minutes = self.levels[self.level_index].get("minutes")
            if minutes and at >= self.level_started_at + minutes * 60 and self.level_index + 1 < len(self.levels):
                self.pending_level = self.level_index + 1
        if self.pending_level is not None:
            self.level_index, self.pending_level = self.pending_level, None
            self.level_started_at = at

    def describe_level(self) -> dict | None:
        if self.level_index is None or not self.levels:
            return None

        def one(i: int) -> dict:
            lv = self.levels[i]
            minutes = lv.get("minutes")
            return {"number": i + 1, "blinds": lv.get("blinds"), "ante": lv.get("ante", 0),
                    "bb_ante": lv.get("bb_ante", 0), "bring_in": lv.get("bring_in"), "limits": lv.get("limits"),
                    "minutes": minutes}

        out = one(self.level_index)
        started = self.level_started_at
        minutes = out.pop("minutes")
        out["started_at"] = started
        out["ends_at"] = started + minutes * 60 if started is not None and minutes else None
        nxt = self.pending_level if self.pending_level is not None else self.level_index + 1
        out["next"] = None
        if nxt < len(self.levels):
            out["next"] = one(nxt)
            out["next"].pop("minutes")
            out["next"] |= {"started_at": None, "ends_at": None}  # not started yet
        return out

    def describe(self) -> dict:
        pos = self.positions
        return {
            "size": self.size,
            "game": self.game,
            "rules": get_profile(self.rules).name,  # a cardroom's file is published by its profile's name
            "event": self.event,
            "dead_button": self.dead_button,
            "players": {str(s): {"name": p.name, "waiting_for_big_blind": p.waiting_for_big_blind,
                                 "sitting_out": p.sitting_out, "missed": list(p.missed), "stack": p.stack}
                        for s, p in sorted(self.players.items())},
            "button": pos.button if pos else None,
            "small_blind": pos.small_blind if pos and self.blinds else None,
            "big_blind": pos.big_blind if pos and self.blinds else None,
            "hand_number": self.hand_number,
            "level": self.describe_level(),
        } | self._describe_mixed()

    def _describe_mixed(self) -> dict:
        """A mixed game's rotation and the last draw for the button, when there are any (optional
        keys of the state's table)."""
        out: dict = {}
        if self.rotations:
            out["rotations"] = sorted(self.rotations)
        if self.rotation is not None:
            out["rotation"] = self.rotation_state()
        if self.last_draw is not None:
            out["draw"] = {"cards": {str(s): c for s, c in self.last_draw["cards"].items()},
                           "winner": self.last_draw["winner"]}
        return out


__all__ = ["Player", "Positions", "Table", "TableError", "replace"]
