"""Dealing: every card to a seat checked against the street's expected slots.

Each street has an expected sequence of *slots* (seat, face).  A dealt card either fills the next
slot, fills a replacement the rules owe a seat (an exposed card replaced after the deal, a card
exposed on the draw), or is an error whose reason depends on where it went (RRoP s3 Misdeals
1(f)-(j), TDA 33-A).  Here too: the stud dealing procedure, exposed cards and the draw.
"""

from __future__ import annotations

from controller.rules.betting import BettingRules
from controller.rules.cards import Card
from controller.rules.events import Deal, Discard, Expose
from controller.rules.games import Family
from controller.rules.hand_state import Betting, Held, Phase, Slot, clockwise
from controller.rules.rulings import IRREGULARITY


class DealingRules(BettingRules):
    """The cards dealt to the seats, street by street."""

    # ------------------------------------------------------------------ streets
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

    def _settle_board(self) -> None:
        if self.phase is Phase.BOARD and self._settled_board() == self.board_target:
            self.flop_overfull = False
            self._open_betting()


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
