"""Betting: the betting round, the turn, out-of-turn actions and the chips (``chips.ChipBook``).

Betting follows a pointer: the seat to act is the next seat clockwise from the last seat that
acted in turn that still owes an action in this round.  The round's end moves the hand on to the
next street (``dealing.DealingRules._start_street``) or ends it.
"""

from __future__ import annotations

from controller.rules.chips import Decision
from controller.rules.events import CHIP_ACTIONS, Act, Put
from controller.rules.games import Family, FirstToAct
from controller.rules.hand_state import Betting, HandState, Phase
from controller.rules.rulings import IRREGULARITY
from controller.rules.upcards import first_showing_seat

AGGRESSIVE = frozenset({"bet", "raise", "complete", "bring_in"})


class BettingRules(HandState):
    """The betting rounds of a hand."""

    # ------------------------------------------------------------------ streets
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

    def kill_hand(self, seat: int) -> None:
        """The seat's hand is dead (RRoP s3 Dead Hands; RRoP s4 10 for one dealt in without the
        blinds it owed): out of every pot and of the turn, its chips in the pot stay there; the deal
        and the betting go on without it, and a hand left alone wins."""
        self.active.discard(seat)
        self.dead.add(seat)
        self.slots = [s for s in self.slots if s.seat != seat]
        self.owed = [s for s in self.owed if s.seat != seat]
        self.bet.need.discard(seat)
        if self.chips is not None:
            self.chips.folded.add(seat)
        if len(self.active) <= 1:
            self._finish()
        elif self.phase is Phase.BET and self.bet.open and not self.bet.need:
            self._advance()
        elif self.phase is Phase.DEAL and not self.slots:
            self._open_betting()

    # ------------------------------------------------------------------ betting
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


def _action_of(ev: Act | Put) -> str:
    """The action an act names; a push names none until the chips say what it is."""
    return ev.action if isinstance(ev, Act) else "put"
