"""The board and the other places a card goes: burns, the stub, the muck, set aside, boxed."""

from __future__ import annotations

from controller.rules.dealing import DealingRules
from controller.rules.events import Aside, BoardCards, Boxed, Burn, Muck, Stub
from controller.rules.games import Street
from controller.rules.hand_state import Phase
from controller.rules.rulings import IRREGULARITY


class BoardRules(DealingRules):
    """Community cards and the cards that leave play."""

    # ------------------------------------------------------------------ board and other cards
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
