"""Pots: built from what each seat put in (TDA 19; RRoP s3 Ties 5(d)), and awarded.

The antes are dead money in the main pot; an all-in makes a side pot above it; an uncalled excess
is no part of any pot and goes back; a folded seat's chips stay in but it is eligible for nothing.
:class:`PotBook` is the chip book's (:class:`controller.rules.chips.ChipBook`) accounting of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Pot:
    amount: int
    eligible: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PotAwarded:
    """One pot at the hand's end: its chips, the seats that could win it and those that did (none
    when nothing was awarded)."""

    amount: int
    eligible: tuple[int, ...]
    winners: tuple[int, ...] = ()

    def payload(self) -> dict[str, Any]:
        return {"amount": self.amount, "eligible": list(self.eligible), "winners": list(self.winners)}


class PotBook:
    """What each seat put in this hand, made into pots and awarded (a base of ``ChipBook``, which
    keeps the fields below as the hand is bet)."""

    order: list[int]
    stacks: dict[int, int]
    paid: dict[int, int]  # everything each seat put in this hand
    dead: dict[int, int]  # of which antes: dead money for the main pot
    folded: set[int]
    all_in: set[int]
    payouts: dict[int, int] | None
    awarded: tuple[PotAwarded, ...]

    def contributions(self) -> dict[int, int]:
        return dict(self.paid)

    def _live_paid(self) -> dict[int, int]:
        return {s: self.paid[s] - self.dead[s] for s in self.order}

    def uncalled(self) -> tuple[int | None, int]:
        """The seat whose bet nobody matched, and the excess that goes back to it."""
        paid = sorted(self._live_paid().items(), key=lambda kv: kv[1], reverse=True)
        if len(paid) < 2 or paid[0][1] <= paid[1][1]:
            return None, 0
        return paid[0][0], paid[0][1] - paid[1][1]

    def pots(self) -> list[Pot]:
        """Main pot then side pots from what each seat bet (TDA 19), the antes dead money in the
        main pot; an uncalled excess is left out (it goes back)."""
        paid = self._live_paid()
        ranked = sorted(paid.values(), reverse=True)
        if len(ranked) > 1 and ranked[0] > ranked[1]:  # the uncalled excess goes back
            top = max(paid, key=paid.__getitem__)
            paid[top] = ranked[1]
        live = [s for s in self.order if s not in self.folded]
        if not any(s in self.all_in for s in live):  # no all-in among the live hands: one pot
            total = sum(paid.values()) + sum(self.dead.values())
            return [Pot(total, tuple(live))] if total else []
        levels = sorted({paid[s] for s in live if s in self.all_in} | {max((paid[s] for s in live), default=0)})
        out: list[Pot] = []
        prev = 0
        dead = sum(self.dead.values())
        for level in levels:
            if level <= prev and not (dead and level == 0):
                continue
            amount = sum(min(c, level) - min(c, prev) for c in paid.values()) + dead
            dead = 0
            eligible = tuple(s for s in live if paid[s] >= level)
            if amount:
                if out and set(out[-1].eligible) == set(eligible):
                    out[-1] = Pot(out[-1].amount + amount, eligible)
                else:
                    out.append(Pot(amount, eligible))
            prev = level
        rest = sum(max(0, c - prev) for c in paid.values()) + dead
        if rest:
            if out:
                out[-1] = Pot(out[-1].amount + rest, out[-1].eligible)
            else:
                out.append(Pot(rest, tuple(live)))
        return out

    def final_stacks(self) -> dict[int, int] | None:
        if self.payouts is None:
            return None
        return {s: self.stacks[s] + self.payouts.get(s, 0) for s in self.order}

    def settle(self, winners_of: Any) -> dict[int, int] | None:
        """Award every pot: ``winners_of(eligible_seats, amount)`` returns {seat: chips} or None
        when the hands are not known.  The uncalled excess goes back first."""
        payouts: dict[int, int] = {s: 0 for s in self.order}
        seat, excess = self.uncalled()
        if seat is not None:
            payouts[seat] += excess
        awarded: list[PotAwarded] = []
        for pot in self.pots():
            shares = winners_of(pot.eligible, pot.amount)
            if shares is None:
                return None
            for s, c in shares.items():
                payouts[s] += c
            won = tuple(sorted(s for s, c in shares.items() if c > 0))
            awarded.append(PotAwarded(pot.amount, tuple(pot.eligible), won))
        self.payouts = {s: c for s, c in payouts.items()}
        self.awarded = tuple(awarded)
        return self.payouts
