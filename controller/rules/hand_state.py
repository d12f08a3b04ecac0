"""The state of one hand and what is read off it: the setup, the seats, where every card lies.

``HandState`` holds every field a hand's rules read and write; the concerns that change it are
layered on top (``betting.py``, ``dealing.py``, ``board.py``) and ``engine.HandEngine`` puts them
together.  Also here: the setup checks, the derived state a display reads (the seat to act, the
next seat to receive a card, who shows first) and the helpers that raise rulings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from controller.errors import PokerTableError
from controller.rules.cards import Card
from controller.rules.chips import ChipBook
from controller.rules.events import HandSetup
from controller.rules.games import Family, Game, Street, get_game
from controller.rules.profiles import Profile, get_profile
from controller.rules.rulings import IRREGULARITY, MISDEAL, VOID, Ruling, make_ruling
from controller.rules.upcards import bring_in_seat


class Phase(StrEnum):
    DEAL = "deal"  # a street's cards are being dealt to the seats
    BET = "bet"  # a betting round is open
    BOARD = "board"  # waiting for the street's community cards
    DRAW = "draw"  # the draw is in progress
    DONE = "done"  # the hand is over: showdown reached or one player left
    DEAD = "dead"  # misdeal or void: nothing more counts


class SetupError(PokerTableError, ValueError):
    """The hand setup is inconsistent (seats, button, blinds)."""


@dataclass(slots=True)
class Slot:
    seat: int
    face: str
    round: int = 0


@dataclass(slots=True)
class Held:
    """A card at a seat."""

    card: Card
    up: bool
    order: int  # how many cards had come off the deck before it (0 = first card of the hand)
    street: int
    exposed: bool = False  # exposed by dealer error
    scrap: bool = False  # not part of the hand: a joker (a scrap of paper) or a premature stud card
    premature: bool = False  # stud: dealt before the betting round was complete (RRoP s8 14)


@dataclass(slots=True)
class Betting:
    need: set[int] = field(default_factory=set)
    pointer: int = 0
    open: bool = False
    level: int = 0  # how many bets/raises (a blind or bring-in counts as one) this round
    matched: dict[int, int] = field(default_factory=dict)  # seat -> level it has put in
    anchor: int = 0  # the pointer the round opened with: the first to act is the next seat after it
    aggressor: int | None = None  # the last seat to bet or raise in this round (TDA 15-A)
    acted: int = 0  # actions taken in this round


def clockwise(seats: Sequence[int], start: int, size: int) -> list[int]:
    """``seats`` in clockwise order beginning with the first seat after ``start``."""
    return sorted(seats, key=lambda s: (s - start - 1) % size)



class HandState:
    """One hand's state under one game and one rule profile (the engine's fields)."""

    def __init__(self, setup: HandSetup) -> None:
        self.setup = setup
        self.game: Game = get_game(setup.game)
        self.profile: Profile = get_profile(setup.rules)
        self.structure = setup.structure or self.game.default_structure
        self.size = setup.table_size
        self._check_setup()
        self.button = setup.button
        self.small_blind, self.big_blind = self._blinds()
        start = self.button if self.game.button and self.button is not None else self.size
        self.order: list[int] = clockwise(setup.seats, start, self.size)  # dealing order
        self.active: set[int] = set(self.order)  # not folded, not dead
        self.folded: set[int] = set()
        self.dead: set[int] = set()
        self.all_in: set[int] = set()
        self.hands: dict[int, list[Held]] = {s: [] for s in self.order}
        self.unknown_discards: dict[int, int] = {s: 0 for s in self.order}
        self.where: dict[Card, str] = {}  # face+deck -> 'seat:N', 'board', 'burn', 'muck', 'aside', 'boxed'
        self.board: list[Card] = []
        self.premature: set[Card] = set()
        self.burns: list[Card] = []
        self.muck: list[Card] = []
        self.aside: list[Card] = []
        self.boxed: list[Card] = []
        self.rulings: list[Ruling] = []
        self.street_i = 0
        self.phase = Phase.DEAL
        self.slots: list[Slot] = []
        self.owed: list[Slot] = []  # replacements due once the street's slots are dealt
        self.scrap_seat: int | None = None  # a joker at this seat awaits its replacement
        self.button_short: int | None = None  # button still owed its last starting card (RRoP s11 11)
        self.cards_off = 0
        self.exposed_count = 0
        self.boxed_count = 0
        self.extra_count = 0
        self.exposed_by_seat: dict[int, int] = {}
        self.next_down: set[int] = set()  # stud: this seat's next upcard comes face down (RRoP s8 5)
        self.actions = 0
        self.chip_actions = 0
        self.acted_seats: set[int] = set()
        self.any_action = False
        self.opener: int | None = None
        self.draw_declared: dict[int, int] = {}
        self.bet = Betting()
        self.board_target = 0
        self.flop_overfull = False
        self.winner: int | None = None
        self.showdown_reached = False  # the last betting round ended with two or more players
        self.passed_out = False  # jacks-or-better: nobody opened (RRoP s12 Jacks-or-Better 1)
        # Turn order (RRoP s3 Betting and Raising 10; TDA 39): out-of-turn actions waiting for the
        # turn to reach their seat, as [action, changed since]; seats limited to call or fold.
        self.pending_oot: dict[int, list] = {}
        self.oot_echo: tuple[int, str] | None = None  # a bound OOT action the console may repeat
        self.call_or_fold: set[int] = set()
        self.forced_seat: int | None = None  # stud: the seat whose first action is the forced bet
        # Stud dealing procedure (RRoP s8 Seven-Card Stud 13-15).
        self.burns_since_card = 0  # burns since a card last went to a seat (or the common card)
        self.common: list[Card] = []  # stud: a common card when the deck runs out (RRoP s8 15)
        self.premature_round: int | None = None  # the betting round a premature card broke into
        self.rounds_opened = 0
        # RRoP s8 Seven-Card Stud 13: after a burn error the dealer corrects the cards' positions;
        # until the next action a card of this street named again moves from where it lies.
        self.correcting = False
        self.round_burns: list[Card] = []
        # RRoP s8 Seven-Card Stud 7: a stud hand folded when there is no wager goes on receiving
        # cards until a bet kills it (out of the betting and the showdown meanwhile).
        self.dealt_folded: set[int] = set()  # burn cards since the last betting round ended
        self.mucked: set[int] = set()  # hands thrown away at the showdown: out of every pot
        self.chips: ChipBook | None = self._chip_book()

    # ------------------------------------------------------------------ setup
    def _check_setup(self) -> None:
        s = self.setup
        if not s.seats:
            raise SetupError("no seats dealt in")
        if len(set(s.seats)) != len(s.seats):
            raise SetupError(f"seats repeated: {list(s.seats)}")
        bad = [x for x in s.seats if not 1 <= x <= self.size]
        if bad:
            raise SetupError(f"seats {bad} outside 1..{self.size}")
        if len(s.seats) < 2:
            raise SetupError("a hand needs at least two seats dealt in")
        if self.game.button:
            if s.button is None or not 1 <= s.button <= self.size:
                raise SetupError(f"{self.game.name} needs a button seat in 1..{self.size}")
        for name in ("small_blind", "big_blind"):
            v = getattr(s, name)
            if v is not None and v not in s.seats:
                raise SetupError(f"{name} seat {v} is not dealt in")

    def _blinds(self) -> tuple[int | None, int | None]:
        """FORMAT defaults: first and second dealt-in seats left of the button; heads-up the
        button posts the small blind (RRoP s4 Rules for Using Blinds 3, TDA 32)."""
        s = self.setup
        if not self.game.button:
            return None, None
        if s.blinds_given:
            return s.small_blind, s.big_blind
        assert s.button is not None  # _check_setup: a button game has a button
        order = clockwise(s.seats, s.button, self.size)
        if len(order) == 2 and s.button in order:
            return s.button, next(x for x in order if x != s.button)
        return order[0], order[1]

    def _chip_book(self) -> ChipBook | None:
        """Stacks and forced bets, when the hand counts chips (``HandSetup.chips``)."""
        if self.setup.chips is None:
            return None
        book = ChipBook(self.setup.chips, order=self.order, structure=self.structure,
                        rules=self.profile.betting, rounds=len(self.game.streets),
                        big_from=self.game.big_bet_from,
                        small_blind=self.small_blind, big_blind=self.big_blind,
                        stud=self.game.family is Family.STUD)
        self.all_in |= book.all_in
        return book


    # ------------------------------------------------------------------ derived state
    @property
    def street(self) -> Street:
        return self.game.streets[self.street_i]

    @property
    def over(self) -> bool:
        return self.phase in (Phase.DONE, Phase.DEAD)

    @property
    def substantial_action(self) -> bool:
        return self.profile.substantial.reached(len(self.acted_seats), self.actions, self.chip_actions)

    @property
    def to_act(self) -> int | None:
        if self.phase is not Phase.BET or not self.bet.open or not self.bet.need:
            return None
        return self._next_in(self.bet.need, self.bet.pointer)

    @property
    def next_seat(self) -> int | None:
        """The seat that should receive the next card, if a card to a seat is due."""
        if self.phase is Phase.DEAD or self.phase is Phase.DONE:
            return None
        if self.slots:
            return self.slots[0].seat
        if self.owed:
            return self.owed[0].seat
        if self.button_short is not None:
            return self.button_short
        return None

    @property
    def to_show(self) -> int | str | None:
        """Who tables first once the betting is over with two or more hands live.

        TDA 14 (RRoP s15 Tournaments 34): a player all in and all betting over, every hand is
        tabled: ``"all"``.  Otherwise, once the last round is over, TDA 15-A and RRoP s3 Showdown 7:
        the last aggressor of the final round, or with no bet on it the seat that would have acted
        first (left of the button in flop games, the high hand showing in stud, the low in razz).
        """
        if self.phase is Phase.DEAD or len(self.active) < 2:
            return None
        over = self.phase is Phase.DONE and self.showdown_reached
        if self.active & self.all_in:
            able = self.active - self.all_in
            if over or (len(able) <= 1 and (not self.bet.open or not self.bet.need)):
                return "all"
            return None
        if not over:
            return None
        if self.bet.aggressor is not None and self.bet.aggressor in self.active:
            return self.bet.aggressor
        return self._next_in(self.active - self.mucked or self.active, self.bet.anchor)

    def cards_at(self, seat: int) -> int:
        return sum(1 for h in self.hands.get(seat, []) if not h.scrap) - self.unknown_discards.get(seat, 0)

    def bring_in(self) -> int | None:
        if self.game.family is not Family.STUD or self.street_i != 0 or self.phase is not Phase.BET:
            return None
        return self._bring_in_seat()[0]

    # ------------------------------------------------------------------ a street on hold
    def missing_board(self) -> dict | None:
        """The board cards the street still waits for, or None.

        A board card that has not reached the engine (a dead tag the camera has not read yet)
        holds the street: no betting round opens on an incomplete board (issue 15)."""
        if self.phase is not Phase.BOARD or self.flop_overfull:
            return None
        have = self._settled_board()
        if have >= self.board_target:
            return None
        first = self.board_target - self.street.board  # board cards of earlier streets
        seen = max(have - first, 0)
        return {"street": self.street.name, "have": seen, "need": self.street.board,
                "missing": list(range(first + seen + 1, self.board_target + 1))}

    # ------------------------------------------------------------------ rulings
    def _rule(self, kind: str, reason: str, remedy: str | None = None, **ctx) -> Ruling:
        ctx.setdefault("street", self.street.name)
        r = make_ruling(kind, reason, remedy, profile=self.profile.name, game=self.game.name, **ctx)
        self.rulings.append(r)
        if kind in (MISDEAL, VOID):
            self.phase = Phase.DEAD
        return r

    def _misdeal(self, reason: str, **ctx) -> bool:
        """Declare a misdeal, or ``misdeal_too_late`` once substantial action has occurred
        (RRoP s3 Misdeals 2; TDA 33-D, 34).  Returns True when the hand is over."""
        if self.substantial_action:
            self._rule(IRREGULARITY, "misdeal_too_late", "play_on", cause=reason, **ctx)
            return False
        self._rule(MISDEAL, reason, **ctx)
        return True

    def _identity_void(self, card: Card, from_deck: bool) -> bool:
        """RRoP s3 Irregularities 3 (a different back: all action void) takes precedence over
        Irregularities 4 (two cards of the same rank and suit)."""
        if card.deck != self.setup.deck:
            self._rule(VOID, "foreign_card", card=card.label(self.setup.deck))
            return True
        if from_deck and card in self.where:
            self._rule(VOID, "duplicate_card", card=card.face, place=self.where[card])
            return True
        return False

    def _joker(self, card: Card) -> bool:
        """RRoP s3 Irregularities 8: a joker where none is used is a scrap of paper."""
        if card.is_joker and not self.game.uses_joker:
            self._rule(IRREGULARITY, "joker", "scrap", card="joker")
            return True
        return False

    # ------------------------------------------------------------------ streets
    def _live(self) -> list[int]:
        return [s for s in self.order if s in self.active]

    def _dealt(self) -> list[int]:
        """The seats a street's cards go to: the live hands and, in stud, a hand folded when there
        was no wager and not yet killed by a bet (RRoP s8 Seven-Card Stud 7)."""
        return [s for s in self.order if s in self.active or s in self.dealt_folded]

    # ------------------------------------------------------------------ seats and upcards
    def _next_in(self, seats: set[int], after: int) -> int | None:
        """The first of ``seats`` clockwise after ``after`` (a plain loop: this runs on every action)."""
        best, nearest, size = None, self.size, self.size
        for s in seats:
            d = (s - after - 1) % size
            if d < nearest:
                best, nearest = s, d
        return best

    def _prev_seat(self, seat: int) -> int:
        return (seat - 2) % self.size + 1

    def _boards(self) -> dict[int, list[Card]]:
        """Each live seat's upcards, with a stud common card (RRoP s8 15: it plays in every hand)."""
        return {s: [h.card for h in self.hands[s] if h.up and not h.scrap] + self.common for s in self._live()}

    def _bring_in_seat(self) -> tuple[int, bool]:
        doors: dict[int, Card] = {}
        for s in self._live():
            ups = [h.card for h in self.hands[s] if h.up and not h.scrap]
            if ups:
                doors[s] = ups[-1] if len(ups) == 1 else min(ups, key=lambda c: (c.high, c.suit_order))
        if not doors:
            return self._live()[0], False
        seat = bring_in_seat(self.game.bring_in or "low", doors)
        exposed = any(h.exposed for h in self.hands[seat] if h.up)
        return seat, exposed

    @property
    def dealt_in(self) -> set[int]:
        return set(self.order) - self.dead

    # ------------------------------------------------------------------ where the cards lie
    def _settled_board(self) -> int:
        return sum(1 for c in self.board if c not in self.premature and not c.is_joker)

    def _first_board_i(self) -> int:
        return next(i for i, st in enumerate(self.game.streets) if st.board)

    def _add_board(self, cards: list[Card]) -> None:
        for card in cards:
            self.board.append(card)
            self.where[card] = "board"

    def _take(self, card: Card) -> str | None:
        """Remove a card from wherever it lies; returns where it was."""
        place = self.where.pop(card, None)
        if place is None:
            return None
        if place.startswith("seat:"):
            seat = int(place[5:])
            hand = self.hands.get(seat, [])
            for i, h in enumerate(hand):
                if h.card == card:
                    del hand[i]
                    break
        elif place == "board":
            self.board.remove(card)
            self.premature.discard(card)
        elif place == "burn":
            self.burns.remove(card)
        elif place == "muck":
            self.muck.remove(card)
        elif place == "aside":
            self.aside.remove(card)
        elif place == "boxed":
            self.boxed.remove(card)
        return place

    if TYPE_CHECKING:  # defined by a later concern (dealing.py), called from an earlier one
        def _start_street(self) -> None: ...
