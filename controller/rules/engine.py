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
(``betting.py``, ``dealing.py``, ``board.py``); ``HandEngine`` layers them and adds the
results: the snapshot, the showdown and the settlement.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from controller.rules.betting import AGGRESSIVE
from controller.rules.board import BoardRules
from controller.rules.cards import Card
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
from controller.rules.profiles import chain as profile_chain
from controller.rules.rulings import IRREGULARITY, MISDEAL, VOID, Ruling, kind_of
from controller.rules.showdown import Award, ShowdownError, award_pot, kept_after_draw

__all__ = ["AGGRESSIVE", "Betting", "HandEngine", "Held", "Phase", "SetupError", "Slot", "clockwise"]


class HandEngine(BoardRules):
    """One hand under one game and one rule profile."""

    def __init__(self, setup: HandSetup) -> None:
        super().__init__(setup)
        self._start_street()

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

