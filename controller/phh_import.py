"""PHH (Poker Hand History) hands as conformance scenarios: real hands replayed through the engine.

``scenario_from_phh(fields)`` turns one PHH hand (a :class:`pokerkit.HandHistory` or any mapping
with its fields: ``variant``, ``antes``, ``blinds_or_straddles``, ``bring_in``, ``small_bet``,
``big_bet``, ``min_bet``, ``starting_stacks``, ``actions``) into a FORMAT scenario dict with chips.

How PHH maps onto the table: players ``p1..pn`` sit in seats ``1..n``; in button games ``pn`` is
the button (heads-up ``p2``), in stud seat order is player order.  Hole cards dealt to a player at
once are dealt round by round; burns, which PHH leaves to automation, are cards no one saw (the
lowest unused ones).  ``cbr X`` is a bet or raise to X (the whole bet in the round, as ``amount``);
``cc`` a check or a call; ``pb`` the bring-in; ``sd`` a discard (the cards thrown go to the muck
reader); ``sm`` without cards a hand mucked at the showdown.  Variants the engine has no game for
raise :class:`PhhUnsupported`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.errors import PokerTableError
from controller.rules.cards import standard_deck

GAMES: dict[str, tuple[str, str]] = {
    "NT": ("holdem", "no_limit"),
    "FT": ("holdem", "limit"),
    "PT": ("holdem", "pot_limit"),
    "PO": ("omaha", "pot_limit"),
    "FO/8": ("omaha8", "limit"),
    "PO/8": ("omaha8", "pot_limit"),
    "F7S": ("stud", "limit"),
    "F7S/8": ("stud8", "limit"),
    "FR": ("razz", "limit"),
    "N2L1D": ("lowball_27", "no_limit"),
    "F2L1D": ("lowball_27", "limit"),
}
"""PHH variant code -> (game, structure) of controller.games."""

STUD = {"stud", "stud8", "razz"}


class PhhUnsupported(PokerTableError, ValueError):
    """A PHH hand the engine cannot play; the message says why."""


def _get(fields: Any, name: str, default: Any = None) -> Any:
    if isinstance(fields, Mapping):
        return fields.get(name, default)
    return getattr(fields, name, default)


def _split(text: str) -> list[str]:
    return [text[i:i + 2] for i in range(0, len(text), 2)]


def scenario_from_phh(fields: Any, *, name: str = "phh", rules: str = "tda", event: str = "tournament",
                      muck_reader: bool = True) -> dict:
    """One PHH hand as a scenario dict; ``muck_reader`` False leaves the draw's discards unseen
    (only their count is known, as at a table without a muck reader)."""
    variant = _get(fields, "variant")
    if variant not in GAMES:
        raise PhhUnsupported(f"PHH variant {variant!r} has no game here (known: {', '.join(GAMES)})")
    game, structure = GAMES[variant]
    stacks = [int(x) for x in _get(fields, "starting_stacks")]
    n = len(stacks)
    seats = list(range(1, n + 1))
    stud = game in STUD
    hand: dict[str, Any] = {"name": name, "source": "PHH hand", "game": game, "structure": structure,
                            "rules": rules, "event": event, "table_size": max(n, 2), "seats": seats}
    if not stud:
        hand["button"] = n
    hand["stacks"] = {s: stacks[s - 1] for s in seats}
    antes = [int(x) for x in (_get(fields, "antes") or [0] * n)]
    if any(antes):
        if len(set(antes)) == 1:
            hand["ante"] = antes[0]
        elif sum(1 for a in antes if a) == 1:
            hand["bb_ante"] = max(antes)
        else:
            raise PhhUnsupported(f"antes {antes}: neither one ante for all nor a big-blind ante")
    blinds = [int(x) for x in (_get(fields, "blinds_or_straddles") or [])]
    if not stud and any(blinds):
        if n == 2:
            blinds = list(reversed(blinds))  # PokerKit heads-up: player i posts blinds_or_straddles[not i]
        posted = [b for b in blinds if b]
        hand["blinds"] = posted[:2]
        if len(posted) == 1:  # one blind, posted by the player who has it
            hand["small_blind"], hand["big_blind"] = None, blinds.index(posted[0]) + 1
        if len(posted) > 2:
            hand["straddle"] = posted[2]
    if stud:
        hand["bring_in"] = int(_get(fields, "bring_in"))
    if structure == "limit":
        hand["limits"] = [int(_get(fields, "small_bet")), int(_get(fields, "big_bet"))]
    hand["steps"] = _Steps(hand, game, stud, stacks, blinds, antes, muck_reader).run(
        [str(a).split("#")[0].strip() for a in _get(fields, "actions")])
    hand["expect"] = {"rulings": []}
    return hand


class _Steps:
    """Writes the FORMAT steps of one PHH action list, keeping a small count of the bets so that
    ``cc`` reads as a check or a call and an all-in is flagged."""

    def __init__(self, hand: dict, game: str, stud: bool, stacks: list[int], blinds: list[int],
                 antes: list[int], muck_reader: bool) -> None:
        self.hand, self.stud, self.muck_reader = hand, stud, muck_reader
        # A stud card no one saw must not change who brings in: the low card brings in at stud
        # and stud high-low (RRoP s8 Seven-Card Stud 1), the high card at razz (RRoP s9 Razz 1),
        # so an unseen card is the highest unused one at stud, the lowest at razz.
        self.unseen_high = stud and game != "razz"
        self.draw_game = not stud and game not in ("holdem", "omaha", "omaha8")
        self.left = {s: stacks[s - 1] - min(antes[s - 1], stacks[s - 1]) for s in range(1, len(stacks) + 1)}
        self.bets = {s: 0 for s in self.left}
        if not stud:
            for i, b in enumerate(blinds):
                self.bets[i + 1] = min(b, self.left[i + 1])
                self.left[i + 1] -= self.bets[i + 1]
        self.steps: list[dict] = []
        self.cards: dict[int, list[str]] = {s: [] for s in self.left}
        self.used: set[str] = set()
        self.acted = False  # a player acted since the last cards
        self.dealt_once = False
        self.batch: list[tuple[int, list[str]]] = []  # hole cards dealt together
        self.discards: list[tuple[int, list[str]]] = []  # a draw: who threw what, waiting for cards

    def run(self, actions: list[str]) -> list[dict]:
        faces = {c.face for c in standard_deck()}
        for line in actions:
            for token in line.split()[1:]:
                self.used.update(c for c in _split(token) if c in faces)
        for line in actions:
            parts = line.split()
            if parts[:2] == ["d", "dh"]:
                self.batch.append((int(parts[2][1:]), self._known(_split(parts[3]))))
                continue
            self._cards()
            if parts[:2] == ["d", "db"]:
                self._new_street()
                self._burn()
                self.steps.append({"board": _split(parts[2])})
            elif parts[0].startswith("p"):
                self._player(int(parts[0][1:]), parts[1], parts[2:])
            else:
                raise PhhUnsupported(f"PHH line {line!r} is not supported")
        self._cards()
        return self.steps

    def _free(self, high: bool = False) -> str | None:
        """A card no one saw (a burn, or a card PHH writes as ``??``): the lowest unused one, or
        the highest when ``high``."""
        deck = sorted(standard_deck(), key=lambda c: (c.high, c.suit_order)) if high else standard_deck()
        for c in (reversed(deck) if high else deck):
            if c.face not in self.used:
                self.used.add(c.face)
                return c.face
        return None

    def _known(self, cards: list[str]) -> list[str]:
        out = []
        for c in cards:
            if c == "??":
                free = self._free(high=self.unseen_high)
                if free is None:
                    raise PhhUnsupported("more unknown cards than the deck holds")
                c = free
            out.append(c)
        return out

    def _burn(self) -> None:
        card = self._free()
        if card:
            self.steps.append({"burn": card})

    def _new_street(self) -> None:
        if self.acted:
            self.bets = {s: 0 for s in self.bets}
            self.acted = False

    def _cards(self) -> None:
        """Write the batch of hole cards: the replacements of a draw, or a street dealt round by round."""
        if not self.batch:
            return
        batch, self.batch = self.batch, []
        if self.discards:
            drawn = dict(batch)
            for seat, thrown in self.discards:
                self.steps.append({"discard": {"seat": seat, "count": len(thrown)}})
                if self.muck_reader:
                    self.steps += [{"muck": c} for c in thrown if c != "??"]
                new = drawn.get(seat, [])
                self.steps += [{"deal": {"to": seat, "card": c}} for c in new]
                self.cards[seat] = [c for c in self.cards[seat] if c not in thrown] + new
            self.discards = []
            return
        self._new_street()
        if self.stud and self.dealt_once:
            self._burn()
        self.dealt_once = True
        for r in range(max(len(c) for _, c in batch)):
            for seat, cards in batch:
                if r < len(cards):
                    self.steps.append({"deal": {"to": seat, "card": cards[r]}})
                    self.cards[seat].append(cards[r])

    def _player(self, seat: int, op: str, args: list[str]) -> None:
        top = max(self.bets.values())
        if op == "sd":
            if not self.discards:
                self._new_street()
                self._burn()  # one burn before the draw
            self.discards.append((seat, _split(args[0]) if args else []))
            return
        if self.discards:  # everyone stood pat: no cards came
            self.batch = [(s, []) for s, _ in self.discards]
            self._cards()
        if op == "sm":
            if not args:  # mucked at the showdown: out of every pot
                self.steps += [{"muck": c} for c in self.cards[seat]]
            return
        self.acted = True
        act: dict[str, Any] = {"seat": seat}
        if op == "f":
            act["action"] = "fold"
        elif op == "cc":
            pay = min(top - self.bets[seat], self.left[seat])
            act["action"] = "call" if pay > 0 else "check"
            self._pay(seat, pay, act)
        elif op == "pb":
            act |= {"action": "bring_in", "amount": min(int(self.hand["bring_in"]), self.left[seat])}
            self._pay(seat, act["amount"], act)
        elif op == "cbr":
            to = int(args[0])
            act |= {"action": "bet" if top == 0 else "raise", "amount": to}
            if self.stud and 0 < top <= int(self.hand["bring_in"]):
                act["action"] = "complete"
            self._pay(seat, to - self.bets[seat], act)
        else:
            raise PhhUnsupported(f"PHH action {op!r} is not supported")
        self.steps.append({"act": act})

    def _pay(self, seat: int, chips: int, act: dict[str, Any]) -> None:
        self.bets[seat] += chips
        self.left[seat] -= chips
        if chips and self.left[seat] == 0:
            act["all_in"] = True


__all__ = ["GAMES", "PhhUnsupported", "scenario_from_phh"]
