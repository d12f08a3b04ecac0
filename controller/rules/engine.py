"""The rules engine for one hand: every card checked against the dealing procedure.

``HandEngine(setup).apply(event)`` consumes one table event and returns the rulings
it makes conclusive.  The engine is a deterministic function of the event sequence:
no clock, no randomness, no I/O, so the journal can replay it exactly.

How it thinks:

* Each street has an expected sequence of *slots* (seat, face).  A dealt card either
  fills the next slot, fills a replacement the rules owe a seat (an exposed card
  replaced after the deal, a card exposed on the draw), or is an error whose reason
  depends on where it went (RRoP s3 Misdeals 1(f)-(j), TDA 33-A).
* Betting follows a pointer: the seat to act is the next seat clockwise from the
  last seat that acted in turn that still owes an action in this round.
* A misdeal is only a misdeal before substantial action; after it the same finding
  becomes the irregularity ``misdeal_too_late`` and the hand plays on (RRoP s3
  Misdeals 2, TDA 33-D and 34), with the profile deciding what "substantial" means.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from controller.errors import PokerTableError
from controller.rules.cards import Card
from controller.rules.chips import ChipBook, Decision
from controller.rules.evaluate import HandError
from controller.rules.events import (
    CHIP_ACTIONS,
    Act,
    Aside,
    BoardCards,
    Boxed,
    Burn,
    Deal,
    Discard,
    EndHand,
    Event,
    Expose,
    HandSetup,
    Muck,
    Put,
    Report,
    StartHand,
    Stub,
)
from controller.rules.games import Family, FirstToAct, Game, Street, get_game
from controller.rules.profiles import Profile, get_profile
from controller.rules.profiles import chain as profile_chain
from controller.rules.rulings import IRREGULARITY, MISDEAL, VOID, Ruling, kind_of, make_ruling
from controller.rules.showdown import Award, ShowdownError, award_pot, kept_after_draw
from controller.rules.upcards import bring_in_seat, first_showing_seat

AGGRESSIVE = frozenset({"bet", "raise", "complete", "bring_in"})


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


class HandEngine:
    """One hand under one game and one rule profile."""

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
        self._start_street()

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

    def refusal(self, event: Event) -> str | None:
        """Why ``event`` cannot be taken now (so it is neither applied nor journaled), or None."""
        if isinstance(event, Act) and not self.over:
            hold = self.missing_board()
            if hold is not None:
                cards = ", ".join(str(i) for i in hold["missing"])
                which = "board card" + ("s " if len(hold["missing"]) > 1 else " ") + cards
                if hold["have"]:
                    return (f"the {hold['street']} is incomplete: {which} missing "
                            f"({hold['have']} of {hold['need']} read); no action until the board is complete")
                return f"the {hold['street']} has not been dealt ({which}); no action until the board is complete"
        return None

    # ------------------------------------------------------------------ public API
    def apply(self, event: Event) -> list[Ruling]:
        """Apply one event; returns the rulings it raised (possibly none)."""
        before = len(self.rulings)
        if self.phase is Phase.DEAD:
            return []
        handler = _HANDLERS.get(type(event))
        if handler is None:
            raise TypeError(f"engine cannot apply {event.kind!r}")
        handler(self, event)
        return self.rulings[before:]

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

    def _start_street(self) -> None:
        st = self.street
        if st.board:
            self.board_target += st.board
            self.phase = Phase.BOARD
            self._settle_board()
        elif st.draw:
            self.phase = Phase.DRAW
            self.draw_declared = {}
            self.slots = []
        else:
            self.phase = Phase.DEAL
            live = self._dealt()
            slots = []
            for r, face in enumerate(st.hole):
                for seat in live:
                    f = face
                    slots.append(Slot(seat, f, r))
            self.slots = slots
            self._apply_next_down()
            if not self.slots:
                self._open_betting()

    def _apply_next_down(self) -> None:
        """RRoP s8 Seven-Card Stud 5: after an exposed holecard the seat's next upcard is dealt down."""
        for seat in list(self.next_down):
            for slot in self.slots:
                if slot.seat == seat and slot.face == "up":
                    slot.face = "down"
                    self.next_down.discard(seat)
                    break

    def _after_cards(self) -> None:
        """Called after a card reached a seat: open betting when the street's cards are out."""
        if self.phase is Phase.DEAL and not self.slots:
            self._open_betting()
        elif self.phase is Phase.DRAW:
            self._maybe_finish_draw()

    def _advance(self) -> None:
        """The betting round is over: next street, or the end of the hand."""
        self.bet.open = False
        self.round_burns = []
        if len(self.active) <= 1:
            self._finish()
            return
        if self.street_i + 1 >= len(self.game.streets):
            self.showdown_reached = True
            self._finish()
            return
        if (self.street_i == 0 and self.game.openers_required and self.big_blind is None
                and self.opener is None):
            # RRoP s12 Jacks-or-Better 1: nobody opened: no draw, the deal is over (the antes stay
            # for the next deal, and the button moves forward).
            self.passed_out = True
            self._finish()
            return
        self.street_i += 1
        self._start_street()

    def _finish(self) -> None:
        self.phase = Phase.DONE
        if len(self.active) == 1:
            self.winner = next(iter(self.active))

    # ------------------------------------------------------------------ betting
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

    def _open_betting(self) -> None:
        self.phase = Phase.BET
        self._chips_round()
        need = {s for s in self.active if s not in self.all_in}
        self.bet = Betting(need=need, open=True)
        self.rounds_opened += 1
        self.pending_oot = {}
        self.forced_seat = None
        first = self.street.first
        if first is FirstToAct.BLINDS:
            anchor = ((self.chips and self.chips.straddle_seat) or self.big_blind or self.small_blind or self.button
                      or self.size)
            self.bet.pointer = anchor
            if anchor in need and anchor != self.button:
                self.bet.level, self.bet.matched = 1, {anchor: 1}
        elif first is FirstToAct.BRING_IN:
            seat, exposed = self._bring_in_seat()
            # RRoP s8 5: if the exposed holecard would have been the low card, action starts
            # with the first hand to that player's left.
            self.bet.pointer = seat if exposed else self._prev_seat(seat)
            self.forced_seat = self.to_act
        elif first is FirstToAct.SHOWING:
            seat = first_showing_seat(self.game.showing or "high", self._boards(), self.order)
            self.bet.pointer = self._prev_seat(seat)
        elif first is FirstToAct.OPENER and self.big_blind is None and self.small_blind is None:
            # RRoP s12 Draw High: action after the draw starts with the opener, or the next
            # player clockwise if the opener has folded.
            self.bet.pointer = (self._prev_seat(self.opener) if self.opener
                                else self.button if self.button is not None else self.size)
        else:
            self.bet.pointer = self.button if self.button is not None else self.size
        self.bet.anchor = self.bet.pointer
        if self.street.first is not FirstToAct.BLINDS and len(need) <= 1:
            self._advance()  # nobody left to bet against: the cards come without betting
        elif not need:
            self._advance()
        elif len(need) == 1 and self.chips is not None and self._nothing_to_decide(next(iter(need))):
            # The forced bets put every other player all in and the last one has already put in as
            # much (a short blind plays for what it is, RRoP s15 Tournaments 19; PokerKit agrees):
            # the cards come without betting.
            self._advance()

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

    def _on_act(self, ev: Act) -> None:
        if self.over:
            return
        seat = ev.seat
        if self.phase is Phase.DEAL and self.street_i == 0:
            if not self._deal_ends_by_action():
                return
        if self.phase is Phase.DEAL and self.slots and all(s.seat in self.dealt_folded for s in self.slots):
            for folded in {s.seat for s in self.slots}:
                self._pass_folded(folded)
        if self.phase is not Phase.BET or seat not in self.active:
            return
        if isinstance(ev, Put) and self.chips is None:
            return  # a push means nothing without chip accounting
        echo, self.oot_echo = self.oot_echo, None
        to_act = self.to_act
        if to_act is not None and seat != to_act:
            if echo == (seat, _action_of(ev)):
                return  # the console repeats an out-of-turn action that has just bound
            self._out_of_turn(ev)
            return
        self._take_action(ev)

    def _take_action(self, ev: Act | Put) -> None:
        """An action in turn: what it comes to in chips (ruled here), then the turn moves on and it
        counts toward substantial action unless it is the forced bet."""
        seat = ev.seat
        decision = self._chips_decide(ev)
        if decision is not None and decision.withdrawn:
            return
        action = decision.action if decision is not None else _action_of(ev)
        all_in = decision.all_in if decision is not None else bool(getattr(ev, "all_in", False))
        aggressive = decision.aggressive if decision is not None else action in AGGRESSIVE
        self.bet.pointer = seat
        self.bet.acted += 1
        self.correcting = False
        if not self._is_forced_bet(seat, action):
            self.actions += 1
            self.acted_seats.add(seat)
            if action in CHIP_ACTIONS or all_in:
                self.chip_actions += 1
        if seat == self.forced_seat:
            self.forced_seat = None
        self.any_action = True
        self.call_or_fold.discard(seat)
        for pending in self.pending_oot.values():
            if action in self.profile.oot_changed_by:
                pending[1] = True
        if action in ("bet", "raise") and self.opener is None and self.street_i == 0:
            self.opener = seat
        bet = self.bet
        if action == "fold" and self._no_wager(seat):
            self.dealt_folded.add(seat)  # RRoP s8 Seven-Card Stud 7
        elif aggressive:
            self.dealt_folded.clear()  # the bet kills a hand folded with no wager
        if action == "fold":
            self.active.discard(seat)
            self.folded.add(seat)
            bet.need.discard(seat)
        elif aggressive:
            bet.level += 1
            bet.matched[seat] = bet.level
            if action != "bring_in":
                bet.aggressor = seat
            bet.need = {s for s in self.active if s not in self.all_in and s != seat}
        else:
            if action == "call":
                bet.matched[seat] = bet.level
            bet.need.discard(seat)
        if all_in:
            self.all_in.add(seat)
            bet.need.discard(seat)
        able = self.active - self.all_in
        if len(able) == 1:
            # Everyone else is all in: a player with nothing to call has no decision left.
            (last,) = able
            if self._nothing_to_decide(last):
                bet.need.discard(last)
        if len(self.active) <= 1:
            self._finish()
        elif not self.bet.need:
            self._advance()
        else:
            self._resolve_out_of_turn()

    def _pass_folded(self, seat: int) -> None:
        """The dealer passed over a hand folded with no wager (RRoP s8 Seven-Card Stud 7 keeps it
        receiving cards only until it is killed): it is taken as killed, and is no error."""
        self.dealt_folded.discard(seat)
        self.slots = [s for s in self.slots if s.seat != seat]
        if self.phase is Phase.DEAL and not self.slots:
            self._open_betting()

    def _no_wager(self, seat: int) -> bool:
        """Stud: the seat folds facing no bet (RRoP s8 Seven-Card Stud 7)."""
        if self.game.family is not Family.STUD:
            return False
        if self.chips is not None:
            return self.chips.bets[seat] >= self.chips.max_bet
        return self.bet.level == 0

    # ------------------------------------------------------------------ turn order
    def _is_forced_bet(self, seat: int, action: str) -> bool:
        """RRoP s3 Misdeals 2 counts actions "after the blinds/forced bet"; in stud the low card's
        forced bet stays the forced bet when it opens for a full bet (RRoP s8 Seven-Card Stud 2-3)."""
        if action == "bring_in":
            return True
        return seat == self.forced_seat and action in ("complete", "bet")

    def _out_of_turn(self, ev: Act | Put) -> None:
        """RRoP s3 Betting and Raising 10; TDA 39-A.  The action is not taken in turn, so it does
        not count toward substantial action; it binds if the action to that seat does not change
        before its turn, else it is withdrawn and the player may only call or fold.  An out-of-turn
        fold binds at once (TDA 39-A)."""
        seat = ev.seat
        self._rule(IRREGULARITY, "action_out_of_turn", "binding_if_unchanged", seat=seat,
                   expected=self.to_act, action=_action_of(ev))
        self.any_action = True
        if _action_of(ev) == "fold":
            self.pending_oot.pop(seat, None)
            self.active.discard(seat)
            self.folded.add(seat)
            self.bet.need.discard(seat)
            if len(self.active) <= 1:
                self._finish()
            elif not self.bet.need:
                self._advance()
            return
        self.pending_oot[seat] = [ev, False]

    def _resolve_out_of_turn(self) -> None:
        """The turn has reached a seat that acted out of turn: bind or withdraw its action."""
        if not self.pending_oot:
            return
        seat = self.to_act
        if seat is None or seat not in self.pending_oot:
            return
        ev, changed = self.pending_oot.pop(seat)
        if changed:
            self.call_or_fold.add(seat)  # TDA 39-A: no aggressive action; the player acts again
            return
        self.oot_echo = (seat, _action_of(ev))
        self._take_action(ev)

    # ------------------------------------------------------------------ chips (controller.rules.chips)
    def _chip_book(self) -> ChipBook | None:
        """Stacks and forced bets, when the hand counts chips (``HandSetup.chips``)."""
        if self.setup.chips is None:
            return None
        book = ChipBook(self.setup.chips, order=self.order, structure=self.structure,
                        rules=self.profile.betting, rounds=len(self.game.streets),
                        big_from=1 if self.game.family is Family.DRAW else 2,
                        small_blind=self.small_blind, big_blind=self.big_blind,
                        stud=self.game.family is Family.STUD)
        self.all_in |= book.all_in
        return book

    def _chips_round(self) -> None:
        if self.chips is None:
            return
        open_pair = False
        if self.game.open_pair_option and self.street_i == 1:
            # RRoP s8 Seven-Card Stud 4: an open pair on fourth street allows the big bet.
            open_pair = any(len({c.rank for c in ups}) < len(ups) for ups in self._boards().values())
        self.chips.start_round(self.street_i, open_pair=open_pair)

    def _chips_decide(self, ev: Act | Put) -> Decision | None:
        """What an act or a push comes to in chips; its ruling is raised here, the chips moved."""
        if self.chips is None:
            return None
        if isinstance(ev, Put):
            d = self.chips.decide_put(ev.seat, ev.chips, ev.declare, ev.to)
        else:
            d = self.chips.decide_act(ev.seat, ev.action, ev.amount, ev.all_in)
        if d.reason is not None:
            words = {k: f"{v:,}" if isinstance(v, int) else v for k, v in (d.context or {}).items()}
            self._rule(IRREGULARITY, d.reason, d.remedy, seat=ev.seat, **words)
        self.chips.apply(d)
        return d

    def _nothing_to_decide(self, last: int) -> bool:
        """The one player still able to bet has put in as much as anyone: nothing is left for
        him to decide (counted in chips when the hand has them, else in bet levels)."""
        if self.chips is not None:
            return self._chips_matched(last)
        return self.bet.matched.get(last, 0) >= self.bet.level

    def _chips_matched(self, seat: int) -> bool:
        assert self.chips is not None
        return self.chips.bets[seat] >= self.chips.max_bet

    def _deal_ends_by_action(self) -> bool:
        """Action began while the starting deal is incomplete.

        RRoP s11 Lowball 11 and s12 Draw High 4: the button may still receive a missing
        last card after action; any other short hand is a misdeal (RRoP s3 Misdeals 1(e)).
        """
        missing = self.slots
        if self.game.button and len(missing) == 1 and missing[0].seat == self.button:
            self.button_short = self.button
            self.slots = []
            self._open_betting()
            return True
        seat = missing[0].seat if missing else None
        if self._misdeal("wrong_card_count", seat=seat, count=self.cards_at(seat) if seat else None):
            return False
        self.slots = []
        self._open_betting()
        return True

    # ------------------------------------------------------------------ dealing
    def _on_deal(self, ev: Deal) -> None:
        if self.over:
            return
        card = ev.card
        if self.correcting and card in self.where:
            self._correct(card)
        if self._identity_void(card, from_deck=True):
            return
        seat = ev.seat
        if self._joker(card):
            self._place(seat, card, up=True, scrap=True)
            self.scrap_seat = seat
            return
        if self._stud_premature(seat, card, ev.face):
            return
        self._stud_burn_missing(seat)
        slot = self._match_slot(seat)
        if slot is None:
            return
        self.burns_since_card = 0
        face = ev.face or slot.face
        held = self._place(seat, card, up=face == "up")
        if face == "up" and slot.face == "down":
            self._exposed(seat, held, dealt=True)
        if self.phase is not Phase.DEAD:
            self._after_cards()

    def _place(self, seat: int, card: Card, up: bool, scrap: bool = False) -> Held:
        held = Held(card, up, self.cards_off, self.street_i, scrap=scrap)
        self.cards_off += 1
        self.hands.setdefault(seat, []).append(held)
        self.where[card] = f"seat:{seat}"
        return held

    def _match_slot(self, seat: int) -> Slot | None:
        """Find which expected card this is, or rule on the error.  None: nothing to place."""
        if self.phase is Phase.DRAW:
            return self._match_draw(seat)
        slots = self.slots
        if self.phase is Phase.DEAL and slots and slots[0].seat != seat and slots[0].seat in self.dealt_folded \
                and any(s.seat == seat for s in slots):
            self._pass_folded(slots[0].seat)
            slots = self.slots
        if self.phase is Phase.DEAL and slots:
            if slots[0].seat == seat:
                self.scrap_seat = None
                return slots.pop(0)
            return self._wrong_seat(seat)
        # The street's slots are dealt: owed replacements, the button's last card, or an error.
        for i, slot in enumerate(self.owed):
            if slot.seat == seat:
                return self.owed.pop(i)
        if self.button_short == seat:
            self.button_short = None
            return Slot(seat, "down")
        return self._unexpected_card(seat)

    def _wrong_seat(self, seat: int) -> Slot | None:
        slots = self.slots
        expected = slots[0]
        ctx = {"expected": expected.seat}
        if seat not in self.dealt_in or seat not in self.active:
            # RRoP s3 Misdeals 1(i); TDA 33-A-3
            return self._deal_error("card_to_empty_seat", seat, **ctx)
        if self.cards_off == 0:
            prev = self.setup.previous_button
            if prev is not None and prev != self.button and clockwise(self.order, prev, self.size)[0] == seat:
                # RRoP s3 Misdeals 1(g): the deal started from last hand's button.
                return self._deal_error("button_out_of_position", seat, **ctx)
            # RRoP s3 Misdeals 1(h); TDA 33-A-2
            return self._deal_error("first_card_wrong_seat", seat, **ctx)
        nxt = slots[1] if len(slots) > 1 else None
        if nxt is not None and nxt.seat == seat:
            if self.scrap_seat == expected.seat:
                # RRoP s3 Irregularities 7-8: the scrap is replaced after the round.
                self.owed.append(slots.pop(0))
                self.scrap_seat = None
                return slots.pop(0)
            if (self.profile.button_consecutive_cards and self.game.button and self.street_i == 0
                    and expected.seat == self.button):
                # TDA 33-B: the button may be dealt two consecutive cards: its skipped card
                # comes right after its next one.
                skipped = slots.pop(0)
                slot = slots.pop(0)
                later = [i for i, s in enumerate(slots) if s.seat == self.button]
                slots.insert(later[0] + 1 if later else len(slots), skipped)
                return slot
        if self._button_second_in_a_row(seat):
            # TDA 33-B: two consecutive cards on the button, the second now and its next round's
            # card skipped later: the same two cards in a row.
            i = next(i for i, s in enumerate(slots) if s.seat == seat)
            return slots.pop(i)
        if any(s.seat == seat for s in slots):
            # RRoP s3 Misdeals 1(j); TDA 33-A-4: the expected seat was passed over.
            return self._deal_error("seat_dealt_out", seat, skipped=expected.seat, **ctx)
        # RRoP s3 Misdeals 1(f): any other card out of the proper sequence.
        return self._deal_error("out_of_sequence", seat, **ctx)

    def _button_second_in_a_row(self, seat: int) -> bool:
        """The button takes a second card straight after its first (TDA 33-B)."""
        if not (self.profile.button_consecutive_cards and self.game.button and self.street_i == 0):
            return False
        if seat != self.button or not any(s.seat == seat for s in self.slots):
            return False
        last = max((h for hand in self.hands.values() for h in hand), key=lambda h: h.order, default=None)
        return last is not None and self.where.get(last.card) == f"seat:{seat}" and not last.scrap

    def _deal_error(self, reason: str, seat: int, **ctx) -> Slot | None:
        ctx["seat"] = seat
        if self._misdeal(reason, **ctx):
            return None
        # Too late for a misdeal: the card plays where it went (RRoP s3 Misdeals 2).
        for i, s in enumerate(self.slots):
            if s.seat == seat:
                return self.slots.pop(i)
        if seat not in self.hands:
            self.hands[seat] = []
            self.unknown_discards[seat] = 0
        return Slot(seat, "down")

    @property
    def dealt_in(self) -> set[int]:
        return set(self.order) - self.dead

    def _unexpected_card(self, seat: int) -> Slot | None:
        if seat not in self.dealt_in or seat not in self.active:
            return self._deal_error("card_to_empty_seat", seat)
        if self.street_i == 0 and not self.any_action and self.phase in (Phase.BET, Phase.DEAL):
            # RRoP s3 Irregularities 11, s5 Hold'em 5: one extra card before the first betting
            # round goes back as the burn card; two or more are a misdeal (Misdeals 1(d)).
            self.extra_count += 1
            if self.extra_count >= 2:
                return self._deal_error("extra_cards", seat, count=self.extra_count)
            self._rule(IRREGULARITY, "extra_card", "use_as_burn", seat=seat)
            return Slot(seat, "down")
        reason = "wrong_card_count" if self.phase is Phase.BET else "out_of_sequence"
        return self._deal_error(reason, seat, expected=self.next_seat)

    # ------------------------------------------------------------------ stud dealing procedure
    def _stud_premature(self, seat: int, card: Card, face: str | None) -> bool:
        """A stud card dealt to a live seat while the betting round is still open.

        RRoP s8 Seven-Card Stud 14 (``eliminate_round``) and TDA RP-5 D (``set_aside_round``):
        the card does not play; it is held at the seat, out of the hand, until the dealer sets it
        aside.  The round's burn went with it: the dealer burns again for the street."""
        if self.game.family is not Family.STUD or self.phase is not Phase.BET or seat not in self.active:
            return False
        if self.street_i == 0 and not self.any_action:
            return False  # before any action this is an extra card (RRoP s3 Irregularities 11)
        if any(s.seat == seat for s in self.owed):
            return False
        held = Held(card, face == "up", self.cards_off, self.street_i, scrap=True, premature=True)
        self.cards_off += 1
        self.hands[seat].append(held)
        self.where[card] = f"seat:{seat}"
        self.burns_since_card = 0
        if self.premature_round == self.rounds_opened:
            return True  # more cards of the same early round: one error, one ruling
        self.premature_round = self.rounds_opened
        self._rule(IRREGULARITY, "premature_card", self.profile.stud_premature_card, seat=seat,
                   card=card.label(self.setup.deck), street=self._next_street_name())
        return True

    def _next_street_name(self) -> str:
        i = min(self.street_i + 1, len(self.game.streets) - 1)
        return self.game.streets[i].name

    def _stud_street_starts(self) -> bool:
        """No card of the current (later) stud street has reached a seat yet."""
        st = self.street
        return (self.game.family is Family.STUD and self.street_i > 0 and self.phase is Phase.DEAL
                and len(self.slots) == len(st.hole) * len(self._dealt()) and not self.common)

    def _stud_burn_missing(self, seat: int) -> None:
        """RRoP s8 Seven-Card Stud 13: a street dealt without a burn card."""
        if self._stud_street_starts() and self.slots and self.slots[0].seat == seat and self.burns_since_card == 0:
            self._burn_error(seat=seat, count=0)

    def _stud_burn(self) -> None:
        """RRoP s8 Seven-Card Stud 13: two burn cards for one round."""
        self.burns_since_card += 1
        if self.game.family is not Family.STUD or self.burns_since_card != 2:
            return
        if self._stud_street_starts() or (self.phase is Phase.BET and self.street_i > 0):
            self._burn_error(count=2, street=self.street.name)

    def _burn_error(self, **ctx) -> None:
        """RRoP s8 Seven-Card Stud 13: "the cards will be corrected, if at all possible, to their
        proper positions"; the dealer's corrections follow as steps (FORMAT.md ``correct_positions``)."""
        self._rule(IRREGULARITY, "burn_error", "correct_positions", **ctx)
        self.correcting = True

    def _correct(self, card: Card) -> None:
        """A correction after a burn error: a card of this street named again by a ``deal`` or a
        ``burn`` moves from where it lies (a second burn card to its seat, a card dealt without a
        burn to the burn pile) and the street goes on as if dealt right.  Any other card named
        again is left to the duplicate-card rule."""
        place = self.where.get(card)
        if place == "burn" and card in self.round_burns:
            self._take(card)
            self.round_burns.remove(card)
            return
        if place is None or not place.startswith("seat:"):
            return
        seat = int(place[5:])
        held = next((h for h in self.hands.get(seat, []) if h.card == card), None)
        if held is None or held.scrap or held.street != self.street_i:
            return
        if self.phase is Phase.BET and self.bet.acted == 0 and self.street_i > 0:
            # The street looked complete; its betting has not begun: the dealing resumes.
            self.phase = Phase.DEAL
            self.bet = Betting()
            self.rounds_opened -= 1
        if self.phase is not Phase.DEAL:
            return
        self._take(card)
        self.cards_off -= 1
        st = self.street
        live = self._dealt()
        r = sum(1 for h in self.hands[seat] if h.street == self.street_i and not h.scrap)
        if r < len(st.hole):
            self.slots.append(Slot(seat, st.hole[r], r))
            self.slots.sort(key=lambda x: (x.round, live.index(x.seat) if x.seat in live else len(live)))

    def _stud_last_card_up(self, seat: int, label: str) -> None:
        """RRoP s8 Seven-Card Stud 16-17: a final downcard dealt face up."""
        if seat in self.all_in:
            self._rule(IRREGULARITY, "last_card_exposed", "keep_card", seat=seat, card=label)  # rule 16
            return
        others = [s for s in self._live() if s != seat]
        if len(others) == 1:
            later = [slot for slot in self.slots if slot.seat == others[0]]
            if later:
                # 17(b): the second player's final card is dealt face up as well.
                for slot in later:
                    slot.face = "up"
                self._rule(IRREGULARITY, "last_card_exposed", "both_up", seat=seat, card=label)
                return
        # 17(a), and 17(b) second sentence: the others get theirs face down; the player with the
        # face-up card may declare all-in before the betting.
        self._rule(IRREGULARITY, "last_card_exposed", "rest_down", seat=seat, card=label)

    def _stud_common_card(self, cards: list[Card]) -> None:
        """RRoP s8 Seven-Card Stud 15: not enough cards for every player's last card, so one common
        card is turned in the centre; it plays in every hand, the betting opens, and the player
        high using it acts first."""
        for card in cards:
            self.board.append(card)
            self.where[card] = "board"
        if self.street_i != len(self.game.streets) - 1 or self.phase is not Phase.DEAL:
            return
        self.common.extend(cards)
        self.burns_since_card = 0
        self.slots = []
        self._open_betting()

    # ------------------------------------------------------------------ exposed cards
    def _exposed(self, seat: int, held: Held, dealt: bool) -> None:
        held.exposed = True
        held.up = True
        label = held.card.label(self.setup.deck)
        if self.phase is Phase.DRAW:
            # RRoP s11 Lowball 9, s12 Draw High 8: completed in order, then replaced.
            self._rule(IRREGULARITY, "exposed_on_draw", "replace_after_draw", seat=seat, card=label)
            self.owed.append(Slot(seat, "down"))
            return
        if self.game.family is Family.STUD:
            self._stud_exposed(seat, held, label)
            return
        if held.order < 2:
            # RRoP s3 Misdeals 1(a), s5 Hold'em 1; TDA 33-A-6
            self._misdeal("early_card_exposed", seat=seat, card=label)
            return
        self.exposed_count += 1
        if self.exposed_count >= 2:
            # RRoP s3 Misdeals 1(b), s5 Hold'em 1; TDA 33-A-6
            if self._misdeal("two_cards_exposed", seat=seat, card=label):
                return
        remedy = self.game.exposure.remedy(self.structure, held.card.rank)
        self._rule(IRREGULARITY, "exposed_card", remedy, seat=seat, card=label)
        if remedy != "must_take":
            self.owed.append(Slot(seat, "down"))

    def _stud_exposed(self, seat: int, held: Held, label: str) -> None:
        position = self.hands[seat].index(held)
        if position >= 2:
            if held.street == len(self.game.streets) - 1:
                self._stud_last_card_up(seat, label)
            return
        if self.setup.event in self.profile.stud_exposed_misdeal_events:
            # TDA 33-A-5; RRoP s8 5 (tournament): a downcard dealt face up is a misdeal.
            self._misdeal("early_card_exposed", seat=seat, card=label)
            return
        n = self.exposed_by_seat.get(seat, 0) + 1
        self.exposed_by_seat[seat] = n
        if n == 1:
            self._rule(IRREGULARITY, "stud_holecard_exposed", "next_card_down", seat=seat, card=label)
            self.next_down.add(seat)
            self._apply_next_down()
        else:
            # RRoP s8 5: both holecards dealt up, the hand is dead (ante returned).
            self._rule(IRREGULARITY, "stud_holecard_exposed", "dead_hand", seat=seat, card=label)
            self.next_down.discard(seat)
            self.active.discard(seat)
            self.dead.add(seat)
            self.slots = [s for s in self.slots if s.seat != seat]

    def _on_expose(self, ev: Expose) -> None:
        if self.over:
            return
        for held in self.hands.get(ev.seat, []):
            if held.card == ev.card:
                if not held.exposed:
                    self._exposed(ev.seat, held, dealt=False)
                return
        # A card we never saw at that seat: the dealer's word stands, the card joins the hand.
        if self._identity_void(ev.card, from_deck=ev.card not in self.where):
            return
        held = Held(ev.card, True, max(self.cards_off, 2), self.street_i)
        self.hands.setdefault(ev.seat, []).append(held)
        self.where[ev.card] = f"seat:{ev.seat}"
        self._exposed(ev.seat, held, dealt=False)

    # ------------------------------------------------------------------ the draw
    def _match_draw(self, seat: int) -> Slot | None:
        for i, slot in enumerate(self.slots):
            if slot.seat == seat:
                return self.slots.pop(i)
        if not self.slots:
            for i, slot in enumerate(self.owed):
                if slot.seat == seat:
                    return self.owed.pop(i)
        return self._unexpected_card(seat)

    def _on_discard(self, ev: Discard) -> None:
        if self.over or ev.seat not in self.active:
            return
        if self.phase is not Phase.DRAW:
            return
        seat, count = ev.seat, int(ev.count)
        self.draw_declared[seat] = count
        self.unknown_discards[seat] += count
        # RRoP s11 Lowball 10, s12 Draw High 5: up to four at once; a fifth after the others.
        now = min(count, 4)
        self.slots.extend(Slot(seat, "down") for _ in range(now))
        if count > 4:
            self.owed.insert(0, Slot(seat, "down"))
        self._maybe_finish_draw()

    def _maybe_finish_draw(self) -> None:
        if self.phase is not Phase.DRAW:
            return
        if all(s in self.draw_declared for s in self.active) and not self.slots and not self.owed:
            self._open_betting()

    # ------------------------------------------------------------------ board and other cards
    def _settled_board(self) -> int:
        return sum(1 for c in self.board if c not in self.premature and not c.is_joker)

    def _settle_board(self) -> None:
        if self.phase is Phase.BOARD and self._settled_board() == self.board_target:
            self.flop_overfull = False
            self._open_betting()

    def _next_board_street(self) -> Street | None:
        for st in self.game.streets[self.street_i + 1:]:
            if st.board:
                return st
        return None

    def _on_board(self, ev: BoardCards) -> None:
        if self.over:
            return
        for card in ev.cards:
            if self._identity_void(card, from_deck=True):
                return
        cards = list(ev.cards)
        for card in cards:
            if self._joker(card):
                cards.remove(card)
                self.board.append(card)
                self.where[card] = "board"
        if not cards:
            return
        if not self.game.board_cards:
            self._stud_common_card(cards)
            return
        if self.phase is Phase.DEAL and self.street_i == 0:
            seat = self.slots[0].seat if self.slots else None
            if self._misdeal("wrong_card_count", seat=seat, count=self.cards_at(seat) if seat else None):
                return
            self.slots = []
            self._open_betting()
        if self.phase is Phase.BOARD:
            need = self.board_target - self._settled_board()
            first_board = self.board_target == self.street.board and self.street_i == self._first_board_i()
            if len(cards) > need and first_board and not self.flop_overfull:
                # RRoP s5 Hold'em 2-3 (redeal) / TDA 35 (scramble): a flop of four or more.
                self._add_board(cards)
                self.flop_overfull = True
                self._rule(IRREGULARITY, "four_card_flop", self.profile.four_card_flop, count=len(cards))
                return
            now, rest = cards[:need], cards[need:]
            self._add_board(now)
            self._settle_board()
            cards = rest
            if not cards:
                return
        if self.phase is Phase.BET or (self.phase is Phase.BOARD and self.flop_overfull):
            street = self._next_board_street() if self.phase is Phase.BET else self.street
            name = street.name if street else "river"
            remedy = {"flop": "redeal_flop", "turn": "set_aside_turn"}.get(name, "reshuffle_river")
            # RRoP s3 Irregularities 15, s5 Hold'em 3-4; TDA RP-5 A-C.
            self._add_board(cards)
            self.premature.update(cards)
            self._rule(IRREGULARITY, f"premature_{name}", remedy, street=name)
            return
        self._add_board(cards)

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

    def _on_burn(self, ev: Burn) -> None:
        if self.over:
            return
        card = ev.card
        if card not in self.where:
            if self._identity_void(card, from_deck=True) or self._joker(card):
                if self.phase is Phase.DEAD:
                    return
        elif self.where[card] == "burn":
            return  # the same card read twice
        elif self.correcting:
            self._correct(card)
        self._take(card)
        self.burns.append(card)
        self.round_burns.append(card)
        self.where[card] = "burn"
        self._stud_burn()
        self._settle_board()

    def _on_stub(self, ev: Stub) -> None:
        if self.over:
            return
        for card in ev.cards:
            self._take(card)
        self._settle_board()

    def _on_muck(self, ev: Muck) -> None:
        if self.phase is Phase.DEAD:
            return
        card = ev.card
        place = self._take(card)
        if place and place.startswith("seat:"):
            seat = int(place[5:])
            if self.phase is Phase.DONE and self.showdown_reached and seat in self.active:
                self.mucked.add(seat)  # a hand mucked at the showdown is out of every pot
            if self.unknown_discards.get(seat, 0) > 0 and self.phase in (Phase.DRAW, Phase.BET, Phase.DONE):
                # A discard identified by the muck reader.
                if not any(s.seat == seat for s in self.owed):
                    self.unknown_discards[seat] -= 1
        self.muck.append(card)
        self.where[card] = "muck"
        self._settle_board()

    def _on_aside(self, ev: Aside) -> None:
        if self.over:
            return
        self._take(ev.card)
        self.aside.append(ev.card)
        self.where[ev.card] = "aside"
        self._settle_board()

    def _on_boxed(self, ev: Boxed) -> None:
        if self.over:
            return
        card = ev.card
        # RRoP s3 Irregularities 3: a different back "discovered in the stub" leaves all action
        # standing; found boxed in the deck it is a scrap like any boxed card (Irregularities 7).
        if card.deck == self.setup.deck and self._identity_void(card, from_deck=True):
            return
        self.boxed.append(card)
        self.where[card] = "boxed"
        if self._joker(card):
            return
        self._boxed(card.label(self.setup.deck))

    def _boxed(self, label: str | None) -> None:
        initial = self.street_i == 0 and self.phase is Phase.DEAL
        if initial or not self.profile.two_boxed_initial_deal_only:
            self.boxed_count += 1
        if self.boxed_count >= 2 and (initial or not self.profile.two_boxed_initial_deal_only):
            # RRoP s3 Misdeals 1(c); TDA 33-A-1 (on the initial deal)
            if self._misdeal("two_boxed_cards", card=label, count=self.boxed_count):
                return
        # RRoP s3 Irregularities 7: a boxed card is a scrap of paper; the next card replaces it.
        self._rule(IRREGULARITY, "boxed_card", "scrap", card=label)

    # ------------------------------------------------------------------ reports
    def _on_report(self, ev: Report) -> None:
        if self.over:
            return
        reason = ev.reason
        kind = kind_of(reason)
        if reason == "boxed_card":
            self._boxed(None)
        elif kind == MISDEAL:
            self._misdeal(reason, seat=ev.seat, reported=True)
        elif kind == VOID:
            self._rule(VOID, reason, seat=ev.seat, reported=True)
        else:
            self._rule(IRREGULARITY, reason, self._report_remedy(reason), seat=ev.seat, reported=True)

    def _report_remedy(self, reason: str) -> str:
        defaults = {
            "boxed_card": "scrap",
            "joker": "scrap",
            "extra_card": "use_as_burn",
            "four_card_flop": self.profile.four_card_flop,
            "premature_flop": "redeal_flop",
            "premature_turn": "set_aside_turn",
            "premature_river": "reshuffle_river",
            "exposed_card": self.game.exposure.replace_remedy,
            "exposed_on_draw": "replace_after_draw",
            "stud_holecard_exposed": "next_card_down",
        }
        return defaults.get(reason, "play_on")

    def _on_start_hand(self, ev: StartHand) -> None:  # handled by the table, not a hand
        raise TypeError("start_hand begins a new HandEngine")

    def _on_end_hand(self, ev: EndHand) -> None:
        if self.phase is not Phase.DEAD:
            self.phase = Phase.DONE

    # ------------------------------------------------------------------ snapshot
    def snapshot(self) -> dict:
        """What a display needs, with no hole-card identity (those are in :meth:`hole_cards`)."""
        return {
            "game": self.game.name,
            "structure": self.structure,
            "rules": self.profile.name,
            "event": self.setup.event,
            "phase": self.phase.value,
            "street": self.street.name,
            "button": self.button,
            "small_blind": self.small_blind,
            "big_blind": self.big_blind,
            "seats": {
                str(s): {
                    "cards": self.cards_at(s),
                    "up": [h.card.label(self.setup.deck) for h in self.hands[s] if h.up and not h.scrap]
                    if self.game.family is Family.STUD or any(h.exposed for h in self.hands[s]) else [],
                    "folded": s in self.folded,
                    "dead": s in self.dead,
                    "all_in": s in self.all_in,
                }
                for s in self.order
            },
            "board": [c.label(self.setup.deck) for c in self.board if c not in self.premature],
            "burns": len(self.burns),
            "next_seat": self.next_seat,
            "missing_board": self.missing_board(),
            "to_act": self.to_act,
            "to_show": self.to_show,
            "bring_in": self.bring_in(),
            "substantial_action": self.substantial_action,
            "winner": self.winner,
            "rulings": [r.to_dict() for r in self.rulings],
            "chips": self.chips.snapshot(self.to_act) if self.chips is not None else None,
        }

    def showdown(self, pot: int = 0) -> Award | None:
        """Cards speak (RRoP s3 Showdown; TDA 18): who wins each part of the pot, once the hand
        has reached a showdown with every live hand known."""
        if self.phase is not Phase.DONE or len(self.active) < 2 or not self.showdown_reached:
            return None
        seats = [s for s in sorted(self.active) if s not in self.mucked]
        if not seats:
            return None
        return self._award(seats, pot)

    def _award(self, seats: Sequence[int], pot: int, named: bool = True) -> Award | None:
        hands = {s: self._showdown_cards(s) for s in seats}
        premature = self.premature
        board = [c for c in self.board if c.rank is not None and (not premature or c not in premature)]
        try:
            # Odd chips follow the rulebook the profile descends from (highland, a cardroom's file: its base's).
            family = profile_chain(self.profile.name)[-1]
            return award_pot(self.game.showdown, hands, board, pot, profile=family, button=self.button,
                             table_size=self.size, stud=self.game.family is Family.STUD, named=named)
        except (HandError, ShowdownError):
            return None  # a hand the sensors saw incompletely: no automatic award

    def _showdown_cards(self, seat: int) -> list[Card]:
        """The seat's hand; discards nobody identified are inferred (showdown.kept_after_draw)."""
        held = [h for h in self.hands[seat] if not h.scrap]
        unknown = self.unknown_discards.get(seat, 0)
        if not unknown:
            return [h.card for h in held]
        draw_i = next((i for i, st in enumerate(self.game.streets) if st.draw), len(self.game.streets))
        before = [h.card for h in held if h.street < draw_i]
        drawn = [h.card for h in held if h.street >= draw_i]
        return kept_after_draw(self.game.showdown[0], before, unknown) + drawn

    def settle(self) -> dict[int, int] | None:
        """Once the hand is over: every pot awarded from what each seat put in (TDA 19; RRoP s3
        Ties 5(d)), ``{seat: chips won}``; None without chips, before the end, or while a live
        hand is unknown."""
        if self.chips is None or self.phase is not Phase.DONE:
            return None
        if self.chips.payouts is not None:
            return self.chips.payouts
        return self.chips.settle(self._pot_winners)

    def _pot_winners(self, eligible: Sequence[int], amount: int) -> dict[int, int] | None:
        seats = [s for s in eligible if s in self.active and s not in self.mucked]
        if len(seats) == 1:
            return {seats[0]: amount}
        if not seats or not self.showdown_reached:
            return None
        award = self._award(seats, amount, named=False)
        return award.shares if award is not None else None

    def placements(self) -> dict[Card, str]:
        """Where each card of this hand lies: ``seat:N``, ``board``, ``burn``, ``muck``, ``aside``, ``boxed``."""
        return dict(self.where)

    def hole_cards(self) -> dict[int, list[str]]:
        """Hole-card identities: secret, only for the protected broadcast topic."""
        return {s: [h.card.label(self.setup.deck) for h in self.hands[s] if not h.scrap] for s in self.order}


#: The engine's handler of each event type (explicit, so a reader finds them with grep).
_HANDLERS: dict[type[Event], Callable[[HandEngine, Any], None]] = {
    Act: HandEngine._on_act,
    Put: HandEngine._on_act,  # a push of chips: the chips say which action it is
    Deal: HandEngine._on_deal,
    Expose: HandEngine._on_expose,
    Discard: HandEngine._on_discard,
    BoardCards: HandEngine._on_board,
    Burn: HandEngine._on_burn,
    Stub: HandEngine._on_stub,
    Muck: HandEngine._on_muck,
    Aside: HandEngine._on_aside,
    Boxed: HandEngine._on_boxed,
    Report: HandEngine._on_report,
    StartHand: HandEngine._on_start_hand,
    EndHand: HandEngine._on_end_hand,
}


def _action_of(ev: Act | Put) -> str:
    """The action an act names; a push names none until the chips say what it is."""
    return ev.action if isinstance(ev, Act) else "put"
