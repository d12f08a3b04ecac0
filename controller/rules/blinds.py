"""The button and the blinds from hand to hand: who is the button, who posts which blind, who is
dealt in and who misses a blind (a base of :class:`controller.rules.table.Table`, whose module
docstring lists the rules applied: RRoP s4, RRoP s15 30, TDA 7, 9, 30 and 32)."""

from __future__ import annotations

from dataclasses import dataclass, field

from controller.errors import PokerTableError
from controller.rules.hand_state import clockwise
from controller.rules.profiles import get_profile


class TableError(PokerTableError, ValueError):
    """A seating or button request the table cannot honour (the message says why)."""


@dataclass(slots=True)
class Player:
    name: str
    waiting_for_big_blind: bool = False  # a new cash player who has not posted
    posted: bool = False  # posted a big blind to come in at once
    sitting_out: bool = False
    missed: list[str] = field(default_factory=list)  # blinds missed while sitting out: "small", "big"
    make_up: bool = False  # back from sitting out, posting the missed blinds (RRoP s4 9)
    new: bool = False  # not dealt in since sitting down: misses no blind (RRoP s4 5)
    stack: int | None = None  # chips in front of the player between hands (None: not counted)
    joining: bool = False  # a tournament newcomer not dealt in yet (TDA 7, 9)


@dataclass(slots=True)
class Positions:
    """Seat positions of the button and blinds; a position may be an empty seat (dead)."""

    button: int
    small_blind: int
    big_blind: int


class ButtonAndBlinds:
    """The table's button and blinds (``Table`` keeps the fields below from hand to hand)."""

    size: int
    rules: str
    event: str
    players: dict[int, Player]
    positions: Positions | None

    def _live(self) -> list[int]:
        return sorted(s for s, p in self.players.items() if not p.sitting_out)

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
        if len(live) < 2:
            raise TableError("need at least two players for a hand")
        playing = [s for s in live if not (self.players[s].waiting_for_big_blind or self.players[s].make_up)]
        nxt = self._rotate(live, playing)
        if nxt is None or len(self.dealt_in(nxt)) < 2:
            # Too few players for anyone to wait on the blinds: the game starts afresh with everyone
            # seated (RRoP s4 12: a newly started game, where nobody owes a blind yet).
            for s in live:
                p = self.players[s]
                p.waiting_for_big_blind = p.posted = p.make_up = p.new = False
                p.missed = []
            nxt = self._rotate(live, live) or self._behind_big_blind(live)
        dealt = self.dealt_in(nxt)
        if len(dealt) == 2 and nxt.button != nxt.small_blind:
            return self._heads_up_for(dealt)  # RRoP s4 3, TDA 32, whoever else waits
        return nxt

    def _rotate(self, live: list[int], playing: list[int]) -> Positions | None:
        """The next positions, or None when fewer than two players could play."""
        pos = self.positions
        assert pos is not None
        if len(live) == 2:
            return self._heads_up_for(live)
        if not self.dead_button:
            # The button and the small blind pass over newcomers waiting for the big blind; the big
            # blind reaches them (RRoP s4 4-5).
            if len(playing) < 2:
                return None
            btn = clockwise(playing, pos.button, self.size)[0]
            sb = clockwise(playing, btn, self.size)[0]
            bb = clockwise(live, sb, self.size)[0]
            if bb == btn:
                # Two players and the newcomers not due yet: heads-up between the two; the big blind
                # reaches a waiting newcomer when the button moves on (RRoP s4 3-4).
                return self._heads_up_for(playing)
            return Positions(btn, sb, bb)
        # Dead button: the big blind moves on to the next player; the small blind and the button
        # take the positions the blinds had, whether anyone still sits there or not.
        bb = clockwise(live, pos.big_blind, self.size)[0]
        return Positions(pos.small_blind, pos.big_blind, bb)

    def _behind_big_blind(self, live: list[int]) -> Positions:
        """The big blind to the next player after the last one; small blind and button behind it."""
        assert self.positions is not None
        if len(live) == 2:
            return self._heads_up_for(live)
        bb = clockwise(live, self.positions.big_blind, self.size)[0]
        back = list(reversed(clockwise(live, bb, self.size)))  # bb, then counter-clockwise
        return Positions(back[2], back[1], bb)

    def _heads_up_for(self, players: list[int]) -> Positions:
        """Heads-up positions: the button posts the small blind (RRoP s4 3, TDA 32).  A moving button
        (RRoP s4 Rules for Using Blinds 1(a): "The button always moves forward to the next player
        and the blinds adjust accordingly") goes to the next player even when that gives one player
        the big blind twice; TDA 32's adjustment, and a dead button, give the big blind to the
        player who did not have it."""
        assert self.positions is not None
        if self.dead_button or get_profile(self.rules).heads_up_button_adjust:
            return self._heads_up(players)
        btn = clockwise(players, self.positions.button, self.size)[0]
        return Positions(btn, btn, next(s for s in players if s != btn))

    def _heads_up(self, players: list[int]) -> Positions:
        """RRoP s4 3, TDA 32: heads-up the button is the small blind.  The big blind goes to the
        player who did not have it last hand, so nobody posts it twice in a row."""
        assert self.positions is not None
        bb = clockwise(players, self.positions.big_blind, self.size)[0]
        btn = next(s for s in players if s != bb)
        return Positions(btn, btn, bb)

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
        gap = set()
        if self.event in get_profile(self.rules).newcomer_gap_events and pos.small_blind != pos.button:
            seat = pos.button
            while True:  # TDA 7, 9: "dealt in except between SB and button"
                seat = seat % self.size + 1
                if seat == pos.small_blind:
                    break
                gap.add(seat)
        seats = []
        for s in self._live():
            p = self.players[s]
            if p.joining and s in gap:
                continue
            if p.waiting_for_big_blind and s != pos.big_blind and (not p.posted or s in between):
                continue
            if p.make_up and s in between:
                continue  # RRoP s4 7: blinds are not made up between the big blind and the button
            seats.append(s)
        return seats

    def posting(self, pos: Positions, seats: list[int]) -> dict[int, list[str]]:
        """Who posts besides the blinds, and what: a new player's big blind (RRoP s4 4(b)), a
        returning player's missed blinds, the small one dead (RRoP s4 9)."""
        out: dict[int, list[str]] = {}
        for s in seats:
            p = self.players.get(s)
            if p is None or s == pos.big_blind:
                continue
            if p.waiting_for_big_blind and p.posted:
                out[s] = ["big"]
            elif p.make_up and p.missed:
                out[s] = [b for b in ("small", "big") if b in p.missed]
        return out

    def _miss_blinds(self, before: Positions, after: Positions) -> None:
        """RRoP s4 9 and Glossary ("missed blind: a required bet that is not posted when it is your
        turn"): a cash player sitting out misses each blind that moves past his seat."""
        if self.event != "cash":
            return
        moves = [("big", before.big_blind, after.big_blind)]
        if not self.dead_button:
            # With a dead button the small blind is posted by last hand's big blind: a player the
            # big blind passed by was never due the small one.
            moves.append(("small", before.small_blind, after.small_blind))
        for blind, old, new in moves:
            seat = old
            for _ in range(self.size):
                seat = seat % self.size + 1
                if seat == new:
                    break
                p = self.players.get(seat)
                # RRoP s4 5: a new player letting the button go by has missed no blind.
                if p is not None and p.sitting_out and not p.new and blind not in p.missed:
                    p.missed.append(blind)
