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

The hand's state is in ``hand_state.py`` and each concern that changes it in its own module
(``betting.py``, ``dealing.py``, ``board.py``); ``HandEngine`` layers them and adds what the
service reads: whether an event may apply now (``refusal``), what it did, typed (``play``,
``started``, ``outcome``: ``operations.py``), the snapshot, the showdown and the settlement.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from controller.rules.betting import AGGRESSIVE
from controller.rules.board import BoardRules
from controller.rules.cards import Card
from controller.rules.chips import ChipsError, Range
from controller.rules.evaluate import HandError
from controller.rules.events import (
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
from controller.rules.games import Family
from controller.rules.hand_state import Betting, Held, Phase, SetupError, Slot, clockwise
from controller.rules.operations import (
    ActionTaken,
    BoardShown,
    CardBurned,
    CardDealt,
    ChipsView,
    DrawDeclared,
    HandOutcome,
    HandStarted,
    HandView,
    HoleCards,
    Operation,
    Played,
    Settlement,
    StreetStarted,
    Winner,
)
from controller.rules.pots import PotAwarded
from controller.rules.profiles import chain as profile_chain
from controller.rules.rulings import IRREGULARITY, MISDEAL, VOID, Ruling, kind_of
from controller.rules.showdown import Award, ShowdownError, award_pot, kept_after_draw

__all__ = ["AGGRESSIVE", "Betting", "HandEngine", "Held", "Phase", "SetupError", "Slot", "clockwise"]


class HandEngine(BoardRules):
    """One hand under one game and one rule profile."""

    def __init__(self, setup: HandSetup) -> None:
        super().__init__(setup)
        self._start_street()
        self._street_announced: int | None = None  # the street play() last reported started

    # ------------------------------------------------------------------ can this event apply now?
    def refusal(self, event: Event, *, in_turn: bool = False) -> str | None:
        """Why ``event`` cannot be taken now (so it is neither applied nor journaled), or None.

        The one place that answers "can this apply now?" for a hand's events (the service asks it
        before journaling, the daemon before taking a console request).  ``in_turn``: the dealer's
        console may act only for the seat to act; a sensed action out of turn is taken and ruled on
        instead (RRoP s3 Betting and Raising 10; TDA 39)."""
        if self.over:
            return None
        if in_turn and isinstance(event, Act):
            to_act = self.to_act
            if to_act is None:
                return f"no betting round is open: seat {event.seat} cannot {event.action} now"
            if event.seat != to_act:
                return f"seat {event.seat} is out of turn: seat {to_act} is to act"
        if isinstance(event, Act):
            hold = self.missing_board()
            if hold is not None:
                cards = ", ".join(str(i) for i in hold["missing"])
                which = "board card" + ("s " if len(hold["missing"]) > 1 else " ") + cards
                if hold["have"]:
                    return (f"the {hold['street']} is incomplete: {which} missing "
                            f"({hold['have']} of {hold['need']} read); no action until the board is complete")
                return f"the {hold['street']} has not been dealt ({which}); no action until the board is complete"
        if isinstance(event, Act | Put):
            return self._chips_refusal(event)
        return None

    def can_play(self, event: Event, *, in_turn: bool = False) -> bool:
        """Whether :meth:`play` may take ``event`` now (PokerKit's ``can_...``; :meth:`refusal` says why not)."""
        return self.refusal(event, in_turn=in_turn) is None

    def can_act(self, seat: int, action: str, amount: int | None = None, *, all_in: bool = False,
                in_turn: bool = True) -> bool:
        """Whether ``seat`` may ``action`` now (PokerKit's ``can_fold``, ``can_check_or_call``,
        ``can_complete_bet_or_raise_to``), the console's way by default: in turn, within the legal range."""
        return self.can_play(Act(seat, action, all_in, amount), in_turn=in_turn)

    def can_put(self, seat: int, chips: tuple[int, ...], declare: str | None = None, to: int | None = None) -> bool:
        """Whether chips pushed by ``seat`` can be ruled on now (a hand with chips, a seat still able to bet)."""
        return self.can_play(Put(seat, chips, declare, to))

    def _chips_refusal(self, event: Act | Put) -> str | None:
        """An action or a push the chips cannot mean is refused with what is legal; an ``act``
        amount outside the legal range too (the console typed it: no ruling, a clear error)."""
        chips = self.chips
        if chips is None:
            return "this hand counts no chips: a push cannot be ruled on" if isinstance(event, Put) else None
        seat = event.seat
        if seat in chips.folded or seat in chips.all_in or seat not in chips.bets:
            return f"seat {seat} is not in the hand with chips to act"
        words = _legal_words(seat, chips.legal(seat))
        try:
            if isinstance(event, Put):
                chips.decide_put(seat, event.chips, event.declare, event.to)
                return None
            d = chips.decide_act(seat, event.action, event.amount, event.all_in)
        except ChipsError as exc:
            return f"{exc} ({words})"
        if d.reason in ("raise_capped", "raise_not_reopened"):
            why = "the betting is capped" if d.reason == "raise_capped" else "the betting was not reopened"
            return f"seat {seat} may not raise: {why} ({words})"
        if d.reason is not None and event.amount is not None:
            return f"seat {seat} {event.action} {event.amount:,} is outside the legal range ({words})"
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

    def play(self, event: Event) -> Played:
        """Apply one event and say what it did, typed (:mod:`controller.rules.operations`): the
        public operations in order (a street that starts last), the rulings, the hole cards when
        the event changed them, and whether the hand is over."""
        applied = self.chips.applied if self.chips is not None else 0
        rulings = self.apply(event)
        ops = self._operations(event, applied)
        if self.street_i != self._street_announced and self.phase in (Phase.BET, Phase.BOARD, Phase.DRAW):
            # Once per street: a board street goes from waiting for its cards to its betting.
            self._street_announced = self.street_i
            ops.append(StreetStarted(self.street.name))
        hole = None
        if isinstance(event, Deal | Discard | Expose):
            hole = HoleCards(tuple((s, tuple(cards)) for s, cards in self.hole_cards().items()))
        return Played(tuple(ops), tuple(rulings), hole, self.over)

    def started(self) -> HandStarted:
        """The hand's setup as the displays show it."""
        s = self.setup
        return HandStarted(s.game, self.profile.name, s.event, self.structure, s.button, self.small_blind,
                           self.big_blind, tuple(self.order), s.chips.to_dict() if s.chips is not None else None)

    def outcome(self) -> HandOutcome:
        """How the hand ended: the last ruling that ended it (misdeal or void), else the showdown's
        award (cards speak), else the one hand left."""
        ended = [r for r in self.rulings if r.ends_hand]
        misdeal = bool(ended and ended[-1].ruling == MISDEAL)
        if ended:
            return HandOutcome(ended[-1].ruling, (), None, None, misdeal)
        award = self.showdown()
        if award is not None:
            winners = []
            for part in award.parts:
                for seat in part.winners:
                    value = part.values.get(seat)
                    winners.append(Winner(seat, part.part, value.name if value else "", part.shares.get(seat)))
            # Only the hands still live at the showdown are tabled (public now); a folded or dead
            # hand was never shown, so its cards stay secret for good (display-readable topic).
            shown = tuple((s, tuple(c)) for s, c in self.hole_cards().items() if s in self.active)
            return HandOutcome("showdown", tuple(winners), shown, award.describe(), misdeal)
        alone = (Winner(self.winner, "pot", None, None),) if self.winner is not None else ()
        return HandOutcome("uncontested", alone, None, None, misdeal)

    def _operations(self, ev: Event, applied: int) -> list[Operation]:
        """The public operations ``ev`` came to (``applied``: the chip book's count before it)."""
        deck = self.setup.deck
        if isinstance(ev, Deal):
            held = next((x for x in reversed(self.hands.get(ev.seat, [])) if x.card == ev.card), None)
            if held is not None:
                return [CardDealt(ev.seat, held.up, held.card.label(deck) if held.up else None, ev.source)]
        elif isinstance(ev, Expose):
            held = next((x for x in self.hands.get(ev.seat, []) if x.card == ev.card), None)
            if held is not None and held.up:
                return [CardDealt(ev.seat, True, held.card.label(deck), ev.source, exposed=True)]
        elif isinstance(ev, Burn):
            return [CardBurned(ev.source)]
        elif isinstance(ev, BoardCards):
            board = [c.label(deck) for c in self.board if c not in self.premature]
            if board:
                return [BoardShown(tuple(board[-5:]), ev.source)]
        elif isinstance(ev, Act | Put):
            counted = self.chips.counted_since(applied) if self.chips is not None else []
            if counted:
                # What the chips made of it (a push ruled on included): the whole bet in the round.
                # Each action under the seat whose chips moved, in the order they took effect: the
                # event's own action, then an action held out of turn that binds because the turn
                # reached its seat (RRoP s3 Betting and Raising 10; TDA 39-A).
                return [ActionTaken(seat, action, amount, all_in, counted=True, text=text)
                        for seat, action, amount, all_in, text in counted]
            if isinstance(ev, Act):
                return [ActionTaken(ev.seat, ev.action, ev.amount, ev.all_in)]
        elif isinstance(ev, Discard):
            return [DrawDeclared(ev.seat, ev.count)]
        return []

    # ------------------------------------------------------------------ reports
    def _on_report(self, ev: Report) -> None:
        if self.over:
            return
        reason = ev.reason
        kind = kind_of(reason)
        if reason == "boxed_card":
            self._boxed(None)
        elif reason == "clock_expired" and ev.seat is not None:
            self._clock_expired(ev.seat)
        elif kind == MISDEAL:
            self._misdeal(reason, seat=ev.seat, reported=True)
        elif kind == VOID:
            self._rule(VOID, reason, seat=ev.seat, reported=True)
        else:
            self._rule(IRREGULARITY, reason, self._report_remedy(reason), seat=ev.seat, reported=True)

    def _clock_expired(self, seat: int) -> None:
        """TDA 26 (RRoP s14 No-Limit Rules 13): the clock called on the player ran out, its 10-second
        count too: his hand is dead. The player to act leaves the betting as a fold would (the chips
        he put in stay in the pot) and his hand is marked dead; any other seat's hand is the dealer's
        to kill by the ruling."""
        self._rule(IRREGULARITY, "clock_expired", "dead_hand", seat=seat, reported=True)
        if self.phase is not Phase.BET or seat not in self.active or seat != self.to_act:
            return
        self._on_act(Act(seat, "fold"))
        if seat in self.folded:
            self.folded.discard(seat)
            self.dead.add(seat)

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

    def settle(self) -> Settlement | None:
        """Once the hand is over: every pot awarded from what each seat put in (TDA 19; RRoP s3
        Ties 5(d)); None without chips, before the end, or while a live hand is unknown."""
        settled = self.settlement()
        return settled if settled is not None and settled.awarded else None

    def settlement(self) -> Settlement | None:
        """The chips at the hand's end, typed (:class:`~controller.rules.operations.Settlement`):
        every pot awarded once the hand is over and every live hand known; else what is in the pots,
        each chip given back after a misdeal or a void.  None without chips."""
        book = self.chips
        if book is None:
            return None
        payouts = None
        if self.phase is Phase.DONE:
            payouts = book.payouts if book.payouts is not None else book.settle(self._pot_winners)
        if payouts is None:
            void = self.phase is Phase.DEAD
            return Settlement(False, void, (), tuple(PotAwarded(p.amount, tuple(p.eligible)) for p in book.pots()),
                              None, tuple(book.start.items()) if void else None, tuple(book.start.items()))
        seat, excess = book.uncalled()
        return Settlement(True, False, tuple(payouts.items()), book.awarded,
                          (seat, excess) if seat is not None and excess else None,
                          tuple((book.final_stacks() or {}).items()), tuple(book.start.items()))

    def _pot_winners(self, eligible: Sequence[int], amount: int) -> dict[int, int] | None:
        seats = [s for s in eligible if s in self.active and s not in self.mucked]
        if len(seats) == 1:
            return {seats[0]: amount}
        if not seats or not self.showdown_reached:
            return None
        award = self._award(seats, amount, named=False)
        return award.shares if award is not None else None

    def view(self) -> HandView:
        """The hand now, frozen, for readers outside the rules (:class:`~controller.rules.operations.HandView`)."""
        premature, book = self.premature, self.chips
        return HandView(
            game=self.game.name, phase=self.phase.value, over=self.over,
            drawing=self.street_i < len(self.game.streets) and self.street.draw,
            small_blind=self.small_blind, big_blind=self.big_blind, active=frozenset(self.active),
            folded=frozenset(self.folded), all_in=frozenset(self.all_in),
            held=tuple((s, tuple(h.card for h in self.hands.get(s, []) if not h.scrap)) for s in self.order),
            board=tuple(c for c in self.board if c not in premature),
            unknown_discards=tuple((s, n) for s, n in self.unknown_discards.items() if n > 0),
            placements=tuple(self.where.items()), setup=self.setup, next_seat=self.next_seat, to_act=self.to_act,
            mucked=frozenset(self.mucked), draws=tuple(self.draw_declared.items()), rulings=tuple(self.rulings),
            at_seat=tuple((s, len(self.hands.get(s, ()))) for s in self.order), board_dealt=tuple(self.board),
            missing_board=self.missing_board(), street=self.street_i,
            chips=None if book is None else ChipsView(tuple(book.bets.items()), book.max_bet, book.straddle_seat,
                                                      book.big_option))

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


def _legal_words(seat: int, legal: Range) -> str:
    call = f"to call {legal.to_call:,}" if legal.to_call else "nothing to call"
    if legal.min_raise is None:
        return f"seat {seat}: {call}; no raise"
    if legal.min_raise == legal.max_raise:
        return f"seat {seat}: {call}; bet or raise to {legal.min_raise:,}"
    return f"seat {seat}: {call}; bet or raise to {legal.min_raise:,}..{legal.max_raise:,}"
