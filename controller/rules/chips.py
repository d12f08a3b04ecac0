"""Chips: stacks, bets, pots, the legal range for the seat to act, and what a push means.

The card engine (:mod:`controller.rules.engine`) decides *who* acts; this module decides *how much*.
A :class:`ChipBook` is made from the hand's :class:`Stakes` (starting stacks and forced bets),
posts the forced bets, then turns every betting input into a :class:`Decision`: the action it
amounts to under the rule profile, the player's whole bet in the round once it is done, and the
ruling (reason and remedy) when the rules correct it.  The correction is applied to the
accounting, so what follows is counted with the corrected amount (FORMAT "Chips").

Rules applied (profile differences are data in :class:`controller.rules.profiles.BettingRules`):

* Forced bets: antes (or a big-blind ante), then the small blind, the big blind and a live
  straddle (RRoP s14 No-Limit 12); a short stack posts what it has and is all-in.
* Legal range: no-limit, a bet at least the big blind and a raise at least the largest bet or
  raise of the round (RRoP s14 No-Limit 2-3; TDA 42-A); pot-limit, at most the pot after the
  call (RRoP s14 Pot-Limit 4); limit, the fixed size, a bet and three raises (four with two
  betting rounds) in a pot of three or more players (RRoP s3 Betting and Raising 3-4; TDA 47).
* Reopening: an all-in short of a full raise does not reopen the betting for a player who has
  acted and is not facing a full raise (TDA 43; RRoP s14 No-Limit 3); in limit half a bet does
  (RRoP s3 Betting and Raising 5).
* Pushes: under-calls (TDA 38-B), oversized chips (TDA 44; RRoP s3 Betting and Raising 15, s14
  No-Limit 9, Pot-Limit 7), multiple chips (TDA 45), the 50% standard (TDA 42-A; RRoP s3 Betting
  and Raising 14), short bets (RRoP s14 No-Limit 10), pot-limit overbets (RRoP s14 Pot-Limit 1).
* Pots: built from what each seat put in; an uncalled excess goes back; a folded seat's chips
  stay in but it is eligible for nothing (TDA 19; RRoP s3 Ties 5(d)): :mod:`controller.rules.pots`.

The stakes a hand is dealt with and the chips' one error are in :mod:`controller.rules.stakes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from controller.rules.pots import Pot, PotAwarded, PotBook
from controller.rules.profiles import BettingRules
from controller.rules.stakes import ChipsError, Stakes

STRUCTURES = ("no_limit", "pot_limit", "limit")
DECLARATIONS = ("call", "raise", "bet", "all_in")


@dataclass(slots=True)
class Decision:
    """What one betting input comes to."""

    seat: int
    action: str  # fold, check, call, bet, raise, complete, bring_in
    total: int  # the player's whole bet in the round once it is done
    all_in: bool = False
    aggressive: bool = False  # it raised the bet to match
    reason: str | None = None  # a ruling's reason code, when the rules correct the input
    remedy: str | None = None
    withdrawn: bool = False  # call_or_fold: nothing is applied; the seat acts again
    context: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Range:
    """The legal range for a seat: what it must add to call, the smallest and largest total it may
    raise to (None when it may not raise)."""

    to_call: int
    min_raise: int | None
    max_raise: int | None
    why_not: str | None = None  # why no raise is allowed: "capped", "not_reopened", "short", "no_opponent"


def _fmt(n: int) -> str:
    return f"{n:,}"


class ChipBook(PotBook):
    """The chips of one hand.  ``order`` is the dealing order (button games: left of the button,
    the button last; stud: from seat 1)."""

    def __init__(self, stakes: Stakes, *, order: Sequence[int], structure: str, rules: BettingRules,
                 rounds: int, big_from: int, small_blind: int | None, big_blind: int | None,
                 stud: bool) -> None:
        if structure not in STRUCTURES:
            raise ChipsError(f"structure must be one of {STRUCTURES}, got {structure!r}")
        missing = [s for s in order if s not in stakes.stacks]
        if missing:
            raise ChipsError(f"stacks: no chips given for seats {missing}")
        if structure == "limit" and stakes.limits is None:
            raise ChipsError("a limit game with stacks needs limits: [small_bet, big_bet]")
        self.stakes = stakes
        self.order = list(order)
        self.structure = structure
        self.rules = rules
        self.stud = stud
        self.collected = 0  # chips already in the middle (antes, previous rounds)
        self.big_from = big_from
        self.cap = stakes.raise_cap if stakes.raise_cap is not None else (3 if rounds >= 3 else 4)
        self.start = {s: stakes.stacks[s] for s in self.order}
        self.stacks = dict(self.start)
        self.bets = {s: 0 for s in self.order}
        self.top = 0  # the highest bet of the round
        self.paid = {s: 0 for s in self.order}  # everything each seat put in this hand
        self.dead = {s: 0 for s in self.order}  # of which antes: dead money for the main pot
        self.folded: set[int] = set()
        self.all_in: set[int] = set()
        # Every action applied, in order: (seat, action, the seat's bet in the round, all in).
        self._log: list[tuple[int, str, int, bool]] = []
        self.applied = 0  # actions applied so far (an action ruled withdrawn is not one)
        self.straddle_seat: int | None = None
        self.street = 0
        self.payouts: dict[int, int] | None = None
        self.awarded: tuple[PotAwarded, ...] = ()
        self._new_round(0)
        self._post_forced(small_blind, big_blind)

    # ------------------------------------------------------------------ forced bets
    def _put(self, seat: int, chips: int) -> int:
        """Move up to ``chips`` from the seat's stack into its bet; returns what moved."""
        chips = min(chips, self.stacks[seat])
        self.stacks[seat] -= chips
        self.bets[seat] += chips
        self.paid[seat] += chips
        if self.bets[seat] > self.top:
            self.top = self.bets[seat]
        if self.stacks[seat] == 0:
            self.all_in.add(seat)
        return chips

    def _dead(self, seat: int, chips: int) -> int:
        """Dead money (antes): in the pot, not part of the seat's bet."""
        chips = min(chips, self.stacks[seat])
        self.stacks[seat] -= chips
        self.paid[seat] += chips
        self.dead[seat] += chips
        self.collected += chips
        if self.stacks[seat] == 0:
            self.all_in.add(seat)
        return chips

    def _post_forced(self, small_blind: int | None, big_blind: int | None) -> None:
        st = self.stakes
        if st.ante:
            for s in self.order:
                self._dead(s, st.ante)
        if st.bb_ante:
            payer = big_blind if big_blind is not None else self.order[-1]
            self._dead(payer, st.bb_ante)
        blinds = st.blinds
        self.blind_shortfall = 0  # what short all-in blinds lack of the nominal blinds (TDA 49-B)
        if len(blinds) == 2 and small_blind is not None:
            self.blind_shortfall += blinds[0] - self._put(small_blind, blinds[0])
        if blinds and big_blind is not None:
            self.blind_shortfall += blinds[-1] - self._put(big_blind, blinds[-1])
        nominal = max(blinds) if blinds and big_blind is not None else 0
        if st.straddle and big_blind is not None:
            after = self.order[(self.order.index(big_blind) + 1) % len(self.order)]
            if after not in (small_blind, big_blind):
                self.straddle_seat = after
                self._put(after, st.straddle)
                nominal = max(nominal, st.straddle)
        if nominal:
            # The big blind (or straddle) serves as the opening bet (RRoP s4 Rules for Using Blinds 8;
            # s14 No-Limit 12: a straddle sets a new minimum bring-in).
            self.full_level = nominal
            self.raise_size = nominal
            self.raises = 1

    # ------------------------------------------------------------------ rounds
    def _new_round(self, street: int) -> None:
        self.street = street
        self.full_level = 0  # the bet total that counts as the last full bet (limit targets)
        self.raise_size = self._min_bet()  # the largest full bet or raise increment of the round
        self.raises = 0  # full bets and raises this round (the blind or completion counts as the bet)
        self.capped = False
        self.big_option = False  # stud fourth street with an open pair: the big bet may be made
        self.last_faced: dict[int, int] = {}  # seat -> highest bet when it last acted this round

    def start_round(self, street: int, open_pair: bool = False) -> None:
        """A new betting round: bets go into the pot (the first round keeps the forced bets)."""
        if street != self.street:
            self.collected += sum(self.bets.values())
            self.bets = {s: 0 for s in self.order}
            self.top = 0
            self._new_round(street)
        self.big_option = open_pair and self.structure == "limit"

    @property
    def max_bet(self) -> int:
        return self.top

    @property
    def pot(self) -> int:
        return self.collected + sum(self.bets.values())

    def _unit(self) -> int:
        small, big = self.stakes.limits or (0, 0)
        return big if self.street >= self.big_from else small

    def _min_bet(self) -> int:
        if self.structure == "limit":
            return self._unit()
        bb = self.stakes.big_blind
        if bb:
            return bb
        if self.stakes.bring_in:
            return self.stakes.bring_in
        return max(self.stakes.ante, 1)

    def _live(self) -> list[int]:
        return [s for s in self.order if s not in self.folded]

    def _able(self) -> list[int]:
        return [s for s in self.order if s not in self.folded and s not in self.all_in]

    # ------------------------------------------------------------------ the legal range
    def _cap_applies(self) -> bool:
        if self.structure != "limit":
            return False
        if self.capped:
            return True
        return not (self.rules.heads_up_unlimited_raises and len(self._able()) <= 2)

    def _reopened(self, seat: int) -> bool:
        faced = self.last_faced.get(seat)
        if faced is None or faced < 0:
            return True  # has not acted this round
        step = self.max_bet - faced
        if self.structure == "limit":
            return step >= self.rules.limit_reopen * self._unit()
        return step >= self.raise_size

    def _raise_to(self, seat: int) -> tuple[int, int]:
        """The smallest and largest total the seat may make it, ignoring its stack."""
        top = self.max_bet
        if self.structure == "limit":
            unit = self._unit()
            if self.raise_size > unit:
                unit = self.raise_size  # the upper limit was bet on an open-pair fourth street
            elif self.big_option and self.stakes.limits:
                # RRoP s8 Seven-Card Stud 4: the lower or the upper limit, until an upper-limit bet.
                return self.full_level + unit, self.full_level + self.stakes.limits[1]
            target = self.full_level + unit
            return target, target
        low = top + self.raise_size if top else self._min_bet()
        low = max(low, top + 1)
        if self.structure == "pot_limit":
            pot = self.pot
            if self.street == 0 and self.rules.short_blind_counts_whole and self.blind_shortfall:
                # TDA 49-B: pre-flop a short all-in blind does not lower the pot-limit maximum: the
                # pot is counted as if the blind were whole (post-flop the actual pot counts).
                pot += self.blind_shortfall
                top = max(top, self.stakes.big_blind or 0)
            call = top - self.bets[seat]
            return low, top + pot + call
        return low, self.bets[seat] + self.stacks[seat]

    def legal(self, seat: int) -> Range:
        own, stack = self.bets[seat], self.stacks[seat]
        to_call = min(self.max_bet - own, stack)
        why = None
        if stack <= self.max_bet - own:
            why = "short"
        elif not [s for s in self._able() if s != seat]:
            why = "no_opponent"
        elif not self._reopened(seat):
            why = "not_reopened"
        elif self._cap_applies() and self.raises >= 1 + self.cap:
            why = "capped"
        if why:
            return Range(to_call, None, None, why)
        low, high = self._raise_to(seat)
        most = own + stack
        return Range(to_call, min(low, most), min(high, most))

    # ------------------------------------------------------------------ decisions
    def decide_act(self, seat: int, action: str, amount: int | None, all_in: bool) -> Decision:
        """An ``act`` with its amount (the whole bet in the round after it, TDA 42-B)."""
        self._check_seat(seat)
        own, stack, top = self.bets[seat], self.stacks[seat], self.top
        if amount is None and not all_in and action == "call" and top > own:
            if top - own < stack:  # the common case: a plain call
                return Decision(seat, "call", top)
        elif amount is None and not all_in and action == "check" and top == own:
            return Decision(seat, "check", own)
        most = own + stack
        if action == "fold":
            return Decision(seat, "fold", own)
        if amount is not None:
            if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
                raise ChipsError(f"seat {seat}: amount must be a whole number of chips, got {amount!r}")
            if amount > most:
                raise ChipsError(f"seat {seat} has {_fmt(most)} in all: a bet of {_fmt(amount)} is not possible")
        if all_in:
            if amount is not None and amount != most:
                raise ChipsError(f"seat {seat} all in is {_fmt(most)}, not {_fmt(amount)}")
            return self._all_in(seat, action)
        if action == "check":
            if top > own:
                raise ChipsError(f"seat {seat} faces {_fmt(top - own)}: check is not legal (call, raise or fold)")
            return Decision(seat, "check", own)
        if action == "call":
            if amount is not None and amount < min(top, most):
                return self._under_call(seat)
            return self._total(seat, min(top, most), declared="call")
        if action == "bring_in":
            return self._bring_in(seat, amount)
        if amount is None:
            if self.structure != "limit":
                raise ChipsError(f"seat {seat} {action}: the amount is needed in {self.structure.replace('_', '-')}")
            amount = self.legal(seat).min_raise or min(top, most)
        return self._declared_raise(seat, amount, action)

    def decide_put(self, seat: int, chips: Sequence[int], declare: str | None, to: int | None) -> Decision:
        """A push of ``chips`` (chip by chip) with what the player declared first."""
        self._check_seat(seat)
        if not chips or any(isinstance(c, bool) or not isinstance(c, int) or c <= 0 for c in chips):
            raise ChipsError(f"seat {seat}: chips must be a list of chip values > 0, got {list(chips)}")
        if declare is not None and declare not in DECLARATIONS:
            raise ChipsError(f"declare must be one of {DECLARATIONS} or {{raise: total}}, got {declare!r}")
        own, stack, top = self.bets[seat], self.stacks[seat], self.max_bet
        pushed = sum(chips)
        if pushed > stack:
            raise ChipsError(f"seat {seat} has {_fmt(stack)} behind: {_fmt(pushed)} cannot be pushed")
        facing = top - own
        if declare == "all_in" or (declare is None and pushed == stack):
            return self._all_in(seat, "all_in")
        if declare == "call":
            if pushed < min(facing, stack):
                # TDA 38-A (RRoP s3 Betting and Raising 8): a declared call binds to the full amount;
                # a push short of it is an under-call the dealer completes.
                return self._under_call(seat)
            return self._total(seat, min(top, own + stack), declared="call")
        if declare in ("raise", "bet") or to is not None:
            # A declaration binds (TDA 38-A, 42-B; RRoP s3 Betting and Raising 8); a declared raise
            # without an amount is the most the chips pushed allow (TDA 44).
            target = min(to, own + stack) if to is not None else own + pushed
            return self._declared_raise(seat, target, "raise" if top else "bet")
        if facing > 0:
            if pushed < facing:
                return self._under_call(seat)
            if pushed == facing:
                return self._total(seat, top, declared="call")
            if len(chips) == 1:
                # TDA 44; RRoP s3 Betting and Raising 15, s14 No-Limit 9: a single oversized chip is a call.
                return _ruled(self._total(seat, top, declared="call"), "oversized_chip", "treated_as_call",
                              amount=chips[0], call=top)
            if self.rules.multiple_chip_rule and pushed - min(chips) < facing:
                # TDA 45: every chip is needed for the call.
                return _ruled(self._total(seat, top, declared="call"), "multiple_chips", "treated_as_call",
                              amount=pushed, call=top)
            return self._silent_raise(seat, own + pushed)
        if top == 0:
            if len(chips) == 1 and pushed > self._min_bet():
                return self._oversized_open(seat, pushed)
            return self._declared_raise(seat, own + pushed, "bet")
        return self._silent_raise(seat, own + pushed)  # the big blind's option

    def _all_in(self, seat: int, declared: str) -> Decision:
        most = self.bets[seat] + self.stacks[seat]
        if most <= self.max_bet:
            return self._total(seat, most, declared="call")
        return self._declared_raise(seat, most, declared)

    def _check_seat(self, seat: int) -> None:
        if seat not in self.bets:
            raise ChipsError(f"seat {seat} is not dealt in")
        if seat in self.folded:
            raise ChipsError(f"seat {seat} has folded")
        if seat in self.all_in:
            raise ChipsError(f"seat {seat} is all in")

    def _bring_in(self, seat: int, amount: int | None) -> Decision:
        need = self.stakes.bring_in or 0
        own, most = self.bets[seat], self.bets[seat] + self.stacks[seat]
        if amount is None:
            amount = need
        small = self._unit() if self.structure == "limit" else None
        if small is not None and amount >= small:
            return self._declared_raise(seat, amount, "complete")
        if amount < min(need, most):
            d = self._total(seat, min(need, most), declared="bring_in")
            return _ruled(d, "short_bet", "complete_bet", amount=amount, minimum=need)
        if amount > need and small is not None:
            d = self._total(seat, min(small, most), declared="complete")
            return _ruled(d, "short_bet", "complete_bet", amount=amount, minimum=small)
        return self._total(seat, max(amount, own), declared="bring_in")

    def _under_call(self, seat: int) -> Decision:
        # TDA 38-B (a mandatory full call heads-up or facing the opening bet; the remedy the
        # floor gives elsewhere too); RRoP s3 Betting and Raising 16, s14 No-Limit 7.
        d = self._total(seat, min(self.max_bet, self.bets[seat] + self.stacks[seat]), declared="call")
        return _ruled(d, "under_call", "complete_call", call=self.max_bet - self.bets[seat])

    def _oversized_open(self, seat: int, chip: int) -> Decision:
        """TDA 44, RRoP s14 No-Limit 9 and Pot-Limit 7: a single chip opening a round is a bet of
        the most the chip allows (the pot in pot-limit; the limit in limit)."""
        own = self.bets[seat]
        r = self.legal(seat)
        total = own + chip
        if r.max_raise is not None:
            total = min(total, r.max_raise)
        d = self._total(seat, total, declared="bet")
        return _ruled(d, "oversized_chip", "treated_as_max_bet", amount=d.total)

    def _withdrawn(self, seat: int, why: str) -> Decision:
        reason = {"capped": "raise_capped", "not_reopened": "raise_not_reopened"}[why]
        return Decision(seat, "raise", self.bets[seat], reason=reason, remedy="call_or_fold", withdrawn=True)

    def _declared_raise(self, seat: int, target: int, action: str) -> Decision:
        """A bet or raise the player declared (or an ``act``): held to the legal range."""
        own, stack, top = self.bets[seat], self.stacks[seat], self.max_bet
        most = own + stack
        if target > most:
            raise ChipsError(f"seat {seat} has {_fmt(most)} in all: a bet of {_fmt(target)} is not possible")
        r = self.legal(seat)
        if r.min_raise is None or r.max_raise is None:
            if r.why_not in ("capped", "not_reopened") and target > top:
                return self._withdrawn(seat, r.why_not)
            return self._total(seat, min(top, most), declared="call")
        if target > r.max_raise:
            # Pot-limit: reduced to the pot (RRoP s14 Pot-Limit 1); limit: the surplus over the fixed
            # size goes back.
            d = self._total(seat, r.max_raise, declared=action)
            if self.structure == "pot_limit":
                return _ruled(d, "over_pot", "reduce_to_pot", amount=target, maximum=r.max_raise)
            return d
        if target == most:
            return self._total(seat, most, declared=action)
        if target < r.min_raise:
            opening = top == 0 or (self.stud and self.full_level == 0 and self.structure == "limit")
            reason, remedy = ("short_bet", "complete_bet") if opening else ("short_raise", "complete_raise")
            d = self._total(seat, r.min_raise, declared=action)
            return _ruled(d, reason, remedy, amount=target, minimum=r.min_raise)
        return self._total(seat, target, declared=action)

    def _silent_raise(self, seat: int, target: int) -> Decision:
        """Chips pushed silently over the call: the 50% standard (TDA 42-A; RRoP s3 Betting and
        Raising 14)."""
        top = self.max_bet
        r = self.legal(seat)
        call = self._total(seat, top, declared="call")
        if r.min_raise is None:
            if r.why_not in ("capped", "not_reopened"):
                reason = {"capped": "raise_capped", "not_reopened": "raise_not_reopened"}[r.why_not]
                return _ruled(call, reason, "treated_as_call", amount=target, call=top)
            return call
        assert r.max_raise is not None
        if target >= r.min_raise:
            if target > r.max_raise:
                d = self._total(seat, r.max_raise, declared="raise")
                if self.structure == "pot_limit":
                    return _ruled(d, "over_pot", "reduce_to_pot", amount=target, maximum=r.max_raise)
                return d
            return self._total(seat, target, declared="raise")
        if (target - top) >= self.rules.raise_standard * (r.min_raise - top):
            d = self._total(seat, r.min_raise, declared="raise")
            return _ruled(d, "short_raise", "complete_raise", amount=target, minimum=r.min_raise)
        return _ruled(call, "short_raise", "treated_as_call", amount=target, minimum=r.min_raise, call=top)

    def _total(self, seat: int, total: int, declared: str) -> Decision:
        """Classify the seat's new total bet: check, call, bet, raise, complete; all-in or not."""
        own, stack, top = self.bets[seat], self.stacks[seat], self.max_bet
        total = max(total, own)
        all_in = total == own + stack and stack > 0
        if total <= top:
            action = "call" if total > own else "check"
            if declared == "bring_in":
                action = "bring_in"
            return Decision(seat, action, total, all_in=all_in, aggressive=declared == "bring_in" and total > 0)
        if declared == "bring_in":
            return Decision(seat, "bring_in", total, all_in=all_in, aggressive=True)
        if top == 0:
            action = "bet"
        elif self.stud and self.full_level == 0 and self.structure == "limit":
            action = "complete"
        else:
            action = "raise"
        return Decision(seat, action, total, all_in=all_in, aggressive=True)

    # ------------------------------------------------------------------ applying
    def apply(self, d: Decision) -> None:
        """Move the chips of a decision and update the round (who may raise, the cap)."""
        if d.withdrawn:
            return
        seat = d.seat
        top_before = self.top
        if d.action == "fold":
            self.folded.add(seat)
        else:
            put = d.total - self.bets[seat]
            if put:
                self._put(seat, put)
            if d.all_in or not self.stacks[seat]:
                self.all_in.add(seat)
        if self.top > top_before:
            self._raised(seat, top_before, self.top, d)
        self.last_faced[seat] = self.top
        self.applied += 1
        self._log.append((seat, d.action, self.bets[seat], seat in self.all_in))

    @property
    def last_action(self) -> dict[str, Any] | None:
        """The last action as the chips counted it: ``{seat, action, amount, text}``."""
        if not self._log:
            return None
        seat, action, amount, _, text = self.counted_since(self.applied - 1)[0]
        return {"seat": seat, "action": action, "amount": amount, "text": text}

    def counted_since(self, applied: int) -> list[tuple[int, str, int | None, bool, str]]:
        """The actions applied after the first ``applied``, in the order they took effect, each
        under the seat whose chips moved: ``(seat, action, amount, all_in, text)``, ``amount`` the
        seat's whole bet in the round (None for a fold).  One event can apply two: an action taken
        out of turn is binding and counted once the turn reaches its seat (RRoP s3 Betting and
        Raising 10; TDA 39-A), that is on the event of the seat that acted before it, after it."""
        return [(seat, action, amount if action != "fold" else None, all_in, _describe(seat, action, amount, all_in))
                for seat, action, amount, all_in in self._log[applied:]]

    def _raised(self, seat: int, before: int, top: int, d: Decision) -> None:
        step = top - before
        if d.action == "bring_in":
            return  # the bring-in is not a bet for the raise count (RRoP s8 Seven-Card Stud 2)
        if self.structure == "limit":
            unit = self._unit()
            if self.big_option and self.stakes.limits and top - self.full_level > unit:
                unit = self.raise_size = self.stakes.limits[1]  # from now on the upper limit
            base = self.full_level
            if top - base >= self.rules.limit_reopen * unit or top >= base + unit:
                self.full_level = top
                self.raises += 1
        else:
            if step >= self.raise_size or before == 0 and top >= self._min_bet():
                self.raise_size = max(self.raise_size, step) if before else max(top, self._min_bet())
                self.full_level = top
                self.raises += 1
        if self._cap_applies_now() and self.raises >= 1 + self.cap:
            self.capped = True

    def _cap_applies_now(self) -> bool:
        return self.structure == "limit" and not (self.rules.heads_up_unlimited_raises and len(self._able()) <= 2)

    # ------------------------------------------------------------------ views
    def snapshot(self, to_act: int | None) -> dict[str, Any]:
        rng = self.legal(to_act) if to_act is not None and to_act in self.bets and to_act not in self.folded \
            and to_act not in self.all_in else None
        return {
            "stacks": {str(s): self.stacks[s] for s in self.order},
            "bets": {str(s): self.bets[s] for s in self.order},
            "pot": self.pot,
            "pots": [{"amount": p.amount, "eligible": list(p.eligible)} for p in self.pots()],
            "to_call": rng.to_call if rng else None,
            "min_raise": rng.min_raise if rng else None,
            "max_raise": rng.max_raise if rng else None,
            "last_action": self.last_action,
        }


def _ruled(d: Decision, reason: str, remedy: str, **ctx: Any) -> Decision:
    d.reason, d.remedy, d.context = reason, remedy, ctx
    return d


_VERBS = {"fold": "folds", "check": "checks", "call": "calls", "bet": "bets", "raise": "raises to",
          "complete": "completes to", "bring_in": "brings in for"}


def _describe(seat: int, action: str, total: int, all_in: bool) -> str:
    verb = _VERBS.get(action, action)
    if action in ("fold", "check"):
        text = f"Seat {seat} {verb}"
    else:
        text = f"Seat {seat} {verb} {_fmt(total)}"
    return text + (" (all in)" if all_in and action not in ("fold", "check") else "")


__all__ = ["ChipBook", "ChipsError", "Decision", "Pot", "Range", "Stakes"]
