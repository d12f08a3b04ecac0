"""Dealer simulator: random LEGAL deals, single corruptions and the rulings they call for.

This module is deliberately independent of :mod:`controller.rules.engine`: it carries its
own small model of turn order (:class:`TurnModel`) written from the rulebooks and the
conformance format (``FORMAT.md`` of the shared contract, ``../shared/conformance``), so that property tests
compare two independent readings of the rules instead of an engine with itself.

Everything is driven by a caller-supplied, seeded :class:`random.Random`, so a failing
hand is reproducible from its seed.  Hands are plain dicts in the FORMAT's scenario
shape (the same as a YAML file); :func:`to_yaml` writes them out.

Public API: :func:`legal_hand`, :func:`corrupt`, :func:`session`, :func:`to_yaml`,
:func:`expected_to_act`, :class:`TurnModel`, :class:`Table`, ``GAMES``, ``CORRUPTIONS``.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from controller.rules.cards import Card, standard_deck
from controller.rules.events import CHIP_ACTIONS
from controller.rules.games import GAMES as _GAME_DEFS
from controller.rules.profiles import names as _profile_names

GAMES = tuple(_GAME_DEFS)  # every game of controller.rules.games, in its order
BOARD_GAMES = frozenset({"holdem", "omaha", "omaha8"})
STUD_GAMES = frozenset({"stud", "razz", "stud8"})
DRAW_GAMES = frozenset({"lowball_a5", "lowball_27", "triple_draw_27", "draw_high", "jacks_or_better"})
LOWBALL_GAMES = frozenset({"lowball_a5", "lowball_27", "triple_draw_27"})
BUTTON_GAMES = BOARD_GAMES | DRAW_GAMES
PROFILES = tuple(_profile_names())  # the one list of profiles (controller.rules.profiles)
EVENTS = ("cash", "tournament")
STRUCTURES = ("no_limit", "pot_limit", "limit")
HOLE_CARDS = {"holdem": 2, "omaha": 4, "omaha8": 4} | {g: 5 for g in DRAW_GAMES} | {g: 3 for g in STUD_GAMES}
# How many players we deal in at most, so the 52-card deck never runs out (no community
# card in stud, no reshuffled discards in draw) and a few cards stay spare for corruptions.
MAX_PLAYERS = {"holdem": 10, "omaha": 9, "omaha8": 9} | {g: 6 for g in DRAW_GAMES} | {g: 8 for g in STUD_GAMES} \
    | {"triple_draw_27": 4}  # three draws from one deck (the sim never reshuffles the discards)
RESERVE = 5  # cards always left in the stub for corruptions (boxed cards, replacements, redeals)
MAX_DRAW = 4
AGGRESSIVE = frozenset({"bet", "raise", "complete", "bring_in"})
STUD_UP = (False, False, True, True, True, True, False)  # RRoP s8 rule 1: down, down, up x4, down
BOARD_TARGETS = (3, 4, 5)


def _is_joker(label: str) -> bool:
    return label.split("@")[0].lower() == "joker"


def _default_structure(game: str) -> str:
    """FORMAT defaults: limit for stud games, lowball and draw; no_limit otherwise."""
    return "no_limit" if game in BOARD_GAMES else "limit"


def _clockwise_after(
    seat: int, candidates: set[int] | list[int], table_size: int, inclusive: bool = False
) -> int | None:
    """First candidate seat clockwise from ``seat`` (seats are numbered clockwise, 1..table_size)."""
    cands = set(candidates)
    if not cands:
        return None
    size = max(table_size, max(cands), seat)
    for k in range(0 if inclusive else 1, size + 1):
        s = (seat - 1 + k) % size + 1
        if s in cands:
            return s
    return None


# --------------------------------------------------------------------------- table


@dataclass(frozen=True, slots=True)
class Table:
    """The header of a scenario with the FORMAT's defaults resolved."""

    game: str
    rules: str
    seats: tuple[int, ...]
    structure: str
    event: str = "cash"
    table_size: int = 9
    button: int | None = None
    small_blind: int | None = None
    big_blind: int | None = None
    deck: str = "A"
    chips: tuple[tuple[str, Any], ...] | None = None  # the header's chips keys, when it counts chips

    @property
    def stud(self) -> bool:
        return self.game in STUD_GAMES

    @property
    def antes_only(self) -> bool:
        return not self.stud and self.small_blind is None and self.big_blind is None

    def deal_order(self, seats: set[int] | tuple[int, ...] | None = None) -> list[int]:
        """Order of one round of cards.

        Button games start with the first dealt-in seat clockwise from the button and end on
        the button (FORMAT, RRoP s4).  Stud: the house dealer sits between seat table_size and
        seat 1, so rounds start with the lowest-numbered seat (FORMAT; RRoP s8).
        """
        pool = sorted(self.seats if seats is None else seats)
        if self.stud or self.button is None or not pool:
            return pool
        first = _clockwise_after(self.button, pool, self.table_size)
        i = pool.index(first)  # type: ignore[arg-type]
        return pool[i:] + pool[:i]

    @classmethod
    def from_scenario(cls, d: dict[str, Any]) -> Table:
        game = d["game"]
        seats = tuple(sorted(int(s) for s in d["seats"]))
        button = d.get("button")
        tbl = cls(
            game=game,
            rules=d["rules"],
            seats=seats,
            structure=d.get("structure") or _default_structure(game),
            event=d.get("event") or "cash",
            table_size=int(d.get("table_size") or 9),
            button=button,
            deck=d.get("deck") or "A",
            chips=tuple((k, d[k]) for k in CHIP_KEYS if k in d) if "stacks" in d else None,
        )
        if game in STUD_GAMES:
            return tbl
        order = tbl.deal_order()
        bb_def: int | None
        if len(order) == 2:
            # TDA 32 / RRoP s4 Blinds 3: heads-up the button posts the small blind.
            sb_def = button if button in order else order[0]
            bb_def = order[0] if sb_def != order[0] else order[1]
        else:
            sb_def, bb_def = order[0], order[1] if len(order) > 1 else None
        sb = d["small_blind"] if "small_blind" in d else sb_def
        bb = d["big_blind"] if "big_blind" in d else bb_def
        return cls(**{**_table_fields(tbl), "small_blind": sb, "big_blind": bb})


def _table_fields(t: Table) -> dict[str, Any]:
    return {name: getattr(t, name) for name in Table.__slots__}


# --------------------------------------------------------------------------- showing hands


def _stud_high_key(cards: list[Card]) -> tuple:
    """Strength of a stud board (upcards only): quads > trips > two pair > pair > high card.

    Straights and flushes do not count on board (RRoP s8 rule 2: 'high hand on board').
    """
    counts = Counter(c.high for c in cards)
    groups = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    return (_pattern_category(counts), tuple(rank for rank, _ in groups))


def _razz_low_key(cards: list[Card]) -> tuple:
    """Ace-to-five low of a razz board: lower is better, pairs count against (RRoP s9 rule 3)."""
    counts = Counter(c.low for c in cards)
    groups = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    return (_pattern_category(counts), tuple(rank for rank, _ in groups))


def _pattern_category(counts: Counter) -> int:
    shape = sorted(counts.values(), reverse=True)
    if not shape:
        return 0
    if shape[0] >= 4:
        return 5
    if shape[0] == 3:
        return 4 if len(shape) > 1 and shape[1] >= 2 else 3
    if shape[0] == 2:
        return 2 if len(shape) > 1 and shape[1] == 2 else 1
    return 0


def bring_in_seat(game: str, upcards: dict[int, Card]) -> int | None:
    """Third street's forced bet.

    stud, stud8: lowest upcard, ace high, ties by suit clubs < diamonds < hearts < spades
    (RRoP s8 rule 1, s10 rule 4).  razz: highest upcard, ace low, ties by suit with spades
    highest (RRoP s9 rule 3).
    """
    if not upcards:
        return None
    if game == "razz":
        return max(upcards, key=lambda s: (upcards[s].low, upcards[s].suit_order))
    return min(upcards, key=lambda s: (upcards[s].high, upcards[s].suit_order))


def best_showing_seat(game: str, boards: dict[int, list[Card]]) -> int | None:
    """Who acts first on 4th-7th street: best board; ties go to the seat dealt first (lowest)."""
    best: int | None = None
    best_key: tuple | None = None
    for seat in sorted(boards):
        if game == "razz":
            key = _razz_low_key(boards[seat])
            better = best_key is None or key < best_key
        else:
            key = _stud_high_key(boards[seat])
            better = best_key is None or key > best_key
        if better:
            best, best_key = seat, key
    return best


# --------------------------------------------------------------------------- turn model


@dataclass(slots=True)
class _Held:
    label: str
    up: bool
    proper_up: bool


def _script(game: str) -> list[tuple[str, Any]]:
    """The phases of a deal, in order."""
    if game in BOARD_GAMES:
        n = HOLE_CARDS[game]
        return [
            ("deal", n),
            ("bet", "pre"),
            ("board", 3),
            ("bet", None),
            ("board", 4),
            ("bet", None),
            ("board", 5),
            ("bet", None),
        ]
    if game in DRAW_GAMES:
        draws = sum(1 for st in _GAME_DEFS[game].streets if st.draw)  # triple draw: three
        between: list[tuple[str, Any]] = [("draw", None), ("bet", None)] * (draws - 1)
        return [("deal", 5), ("bet", "pre"), *between, ("draw", None), ("bet", "post")]
    out: list[tuple[str, Any]] = [("deal", 3), ("bet", "third")]
    for n in (4, 5, 6, 7):
        out += [("deal", n), ("bet", None)]
    return out


@dataclass
class TurnModel:
    """An independent model of whose turn it is, fed one FORMAT step at a time.

    It follows the deal, the betting, the draw and the board, and tolerates the remedy
    steps of the FORMAT (stub, muck, aside, boxed, replacement deals, premature boards) so
    that it can also follow a corrupted hand's remedy path.  It never rules: rulings are
    the engine's job; this only answers 'who acts now'.

    ``exposed_hole_shows``: whether a stud hole card dealt face up by mistake counts as a
    showing card for bring-in and first-to-act (the rules are silent; tests only use
    expectations on which both readings agree).
    """

    table: Table
    exposed_hole_shows: bool = True
    hands: dict[int, list[_Held]] = field(default_factory=dict)
    active: set[int] = field(default_factory=set)
    all_in: set[int] = field(default_factory=set)
    board: list[str] = field(default_factory=list)
    phase_idx: int = -1
    over: bool = False
    pending: set[int] = field(default_factory=set)
    to_act: int | None = None
    ambiguous: bool = False
    level: int = 0
    matched: dict[int, int] = field(default_factory=dict)
    raises: int = 0
    completed: bool = False
    round_no: int = -1
    opener: int | None = None
    draw_order: list[int] = field(default_factory=list)
    draw_idx: int = 0
    drawing: int | None = None
    owed: int = 0
    exposures: Counter = field(default_factory=Counter)
    actions: list[tuple[int, str]] = field(default_factory=list)
    oot: dict[int, list] = field(default_factory=dict)  # out-of-turn actions waiting for their turn
    oot_echo: tuple[int, str] | None = None
    chips: SimChips | None = None

    def __post_init__(self) -> None:
        self.script = _script(self.table.game)
        self.hands = {s: [] for s in self.table.seats}
        self.active = set(self.table.seats)
        self.chips = SimChips.from_header(dict(self.table.chips), self.table) if self.table.chips else None
        if self.chips is not None:
            self.chips.start(self.table)
            self.all_in |= self.chips.all_in
        self._advance()

    # ---- phases
    @property
    def phase(self) -> tuple[str, Any]:
        if self.over:
            return ("over", None)
        if self.phase_idx >= len(self.script):
            return ("done", None)
        return self.script[self.phase_idx]

    def _advance(self) -> None:
        """Move to the next phase; betting rounds with fewer than two players able to bet are skipped."""
        while True:
            self.phase_idx += 1
            self.to_act = None
            self.pending = set()
            if self.phase_idx >= len(self.script):
                return
            kind, arg = self.script[self.phase_idx]
            if kind == "bet":
                if self._start_round(arg):
                    return
                continue
            if kind == "draw":
                self._start_draw()
                if self.draw_order:
                    return
                continue
            return

    def _start_round(self, kind: str | None) -> bool:
        t = self.table
        self.round_no += 1
        self.oot = {}
        if self.chips is not None:
            pairs = t.game == "stud" and self.round_no == 1 and any(
                len({h.label[0] for h in hand if h.up}) < sum(h.up for h in hand)
                for s, hand in self.hands.items() if s in self.active)
            self.chips.new_round(self.round_no, open_pair=pairs)
        self.level, self.raises, self.completed, self.matched = 0, 0, False, {}
        self.ambiguous = False
        eligible = self.active - self.all_in
        straddle = self.chips.straddle_seat if self.chips is not None else None
        if kind == "pre" and t.big_blind is not None:
            self.level = 1
            self.matched = {straddle or t.big_blind: 1}
        if len(eligible) < 2 and not self._owes_alone(eligible):
            return False
        self.pending = set(eligible)
        first: int | None
        if kind == "pre":
            # Preflop: first seat after the big blind; after the button with antes only (FORMAT
            # header; RRoP s4 Blinds; TDA 32 heads-up: the button/small blind acts first).
            anchor = straddle or (t.big_blind if t.big_blind is not None else t.button)
            first = _clockwise_after(anchor, eligible, t.table_size)  # type: ignore[arg-type]
        elif kind == "third":
            first = bring_in_seat(t.game, self._upcards())
            if first not in eligible:
                self.ambiguous = True
                first = _clockwise_after(first or 1, eligible, t.table_size)
        elif kind == "post" and t.game not in LOWBALL_GAMES and t.antes_only and self.opener is not None:
            # RRoP s12 intro: after the draw the opener acts first, or the next active player
            # clockwise if the opener has folded.
            first = _clockwise_after(self.opener, eligible, t.table_size, inclusive=True)
            if self.opener in self.all_in:
                self.ambiguous = True
        elif t.stud:
            best = best_showing_seat(t.game, self._boards())
            if best is None:
                best = min(eligible)
            if best not in eligible:
                self.ambiguous = True  # best board is all in: rules are not explicit
            first = _clockwise_after(best, eligible, t.table_size, inclusive=True)
        else:
            # Later rounds (and lowball after the draw): first active seat left of the button.
            first = _clockwise_after(t.button, eligible, t.table_size)  # type: ignore[arg-type]
        self.to_act = first
        return True

    def _owes_alone(self, eligible: set[int]) -> bool:
        """The one player who can still bet faces more than he has in (a blind put all in by the
        forced bets, for one): he must still call or fold -- the posted big blind is the round's
        opening bet (TDA 38-B), and the engine and PokerKit both wait for his action."""
        if len(eligible) != 1 or self.chips is None:
            return False
        (seat,) = eligible
        return seat in self.chips.bets and self.chips.bets[seat] < self.chips.top

    def _start_draw(self) -> None:
        self.draw_order = self.table.deal_order(self.active)
        self.draw_idx, self.drawing, self.owed = 0, None, 0

    def _showing(self, seat: int) -> list[Card]:
        cards = []
        for h in self.hands.get(seat, []):
            if h.up and (h.proper_up or self.exposed_hole_shows):
                cards.append(Card.parse(h.label))
        return cards

    def _upcards(self) -> dict[int, Card]:
        out = {}
        for s in sorted(self.active):
            showing = self._showing(s)
            if showing:
                out[s] = min(showing, key=lambda c: (c.high, c.suit_order))
        return out

    def _boards(self) -> dict[int, list[Card]]:
        return {s: self._showing(s) for s in sorted(self.active)}

    # ---- generator helpers
    def next_deal_seat(self) -> int:
        """Round-robin: the first seat in deal order holding the fewest cards."""
        order = self.table.deal_order(self.active)
        fewest = min(len(self.hands[s]) for s in order)
        return next(s for s in order if len(self.hands[s]) == fewest)

    def facing(self, seat: int) -> bool:
        return self.matched.get(seat, 0) < self.level

    # ---- steps
    def apply(self, step: dict[str, Any]) -> None:
        ((key, val),) = step.items()
        handler = _STEP_HANDLERS.get(key)
        if handler is not None:
            handler(self, val)

    def _remove(self, label: str) -> None:
        for hand in self.hands.values():
            for i, h in enumerate(hand):
                if h.label == label:
                    del hand[i]
                    return
        if label in self.board:
            self.board.remove(label)

    def _check_board(self) -> None:
        kind, target = self.phase
        if kind == "board" and len(self.board) == target:
            self._advance()

    def _on_deal(self, v: dict[str, Any]) -> None:
        seat, label, face = int(v["to"]), str(v["card"]), v.get("face")
        if _is_joker(label):
            return  # a joker is a scrap of paper: it never counts as a card (RRoP s3 Irregularities)
        hand = self.hands.setdefault(seat, [])
        pos = len(hand)
        proper_up = self.table.stud and pos < len(STUD_UP) and STUD_UP[pos]
        up = (face == "up") if face else proper_up
        kind, target = self.phase
        hand.append(_Held(label, up, proper_up))
        if kind == "deal" and seat in self.active:
            if self.table.stud and pos < 2 and up:
                self._stud_hole_exposed(seat)
            if self.over:
                return
            if all(len(self.hands[s]) >= target for s in self.active):
                self._advance()
        elif kind == "draw" and seat == self.drawing and self.owed > 0:
            self.owed -= 1
            if self.owed == 0:
                self._next_drawer()

    def _stud_hole_exposed(self, seat: int) -> None:
        # RRoP s8 rule 5: cash, one hole card up -> next card down; both up -> dead hand.
        # TDA 33-A-5 / RRoP s15: in a tournament it is a misdeal.
        if self.table.event == "tournament":
            self.over = True
            return
        self.exposures[seat] += 1
        if self.exposures[seat] >= 2:
            self.active.discard(seat)
            if len(self.active) <= 1:
                self.over = True

    def _on_burn(self, label: str) -> None:
        self._remove(str(label))
        self._check_board()

    def _on_board(self, labels: list[str]) -> None:
        kind, _ = self.phase
        if kind != "board":
            return  # premature board cards (during betting) do not start a street
        self.board.extend(str(c) for c in labels)
        self._check_board()

    def _on_stub(self, labels: list[str]) -> None:
        for c in labels:
            self._remove(str(c))
        self._check_board()

    def _on_muck(self, label: str) -> None:
        self._remove(str(label))
        self._check_board()

    def _on_aside(self, label: str) -> None:
        self._remove(str(label))
        self._check_board()

    def _on_discard(self, v: dict[str, Any]) -> None:
        kind, _ = self.phase
        seat, count = int(v["seat"]), int(v["count"])
        if kind != "draw":
            return
        if seat in self.draw_order:
            self.draw_idx = self.draw_order.index(seat)
        self.drawing, self.owed = seat, count
        del self.hands.setdefault(seat, [])[:count]
        if count == 0:
            self._next_drawer()

    def _next_drawer(self) -> None:
        self.draw_idx += 1
        self.drawing, self.owed = None, 0
        if self.draw_idx >= len(self.draw_order):
            self._advance()

    def _on_put(self, v: dict[str, Any]) -> None:
        if self.chips is None or self.phase[0] != "bet":
            return
        act = sim_put(self.chips, self.table.rules, int(v["seat"]), list(v["chips"]), v.get("declare"))
        if act is not None:
            self._on_act(act)

    def _on_act(self, v: dict[str, Any]) -> None:
        seat, action, all_in = int(v["seat"]), str(v["action"]), bool(v.get("all_in", False))
        if self.phase[0] != "bet":
            self.actions.append((seat, action))
            return
        echo, self.oot_echo = self.oot_echo, None
        if self.to_act is not None and seat != self.to_act and seat in self.active:
            if echo != (seat, action):
                self._out_of_turn(seat, action, v)
            return
        self.actions.append((seat, action))
        self._in_turn(seat, action, all_in, v.get("amount"))

    def _out_of_turn(self, seat: int, action: str, v: dict[str, Any]) -> None:
        """RRoP s3 Betting and Raising 10, TDA 39-A: a fold out of turn binds now; any other action
        waits for the seat's turn and binds there unless the action to it changed."""
        if action == "fold":
            self.oot.pop(seat, None)
            self.active.discard(seat)
            self.pending.discard(seat)
            if len(self.active) <= 1:
                self.over, self.to_act = True, None
            elif not self.pending:
                self._advance()
            return
        self.oot[seat] = [dict(v), False]

    def _in_turn(self, seat: int, action: str, all_in: bool, amount: Any = None) -> None:
        unbind = ("bet", "raise", "complete", "bring_in") + (("call",) if _family(self.table.rules) == "robert" else ())
        if action in unbind:
            for entry in self.oot.values():
                entry[1] = True
        if self.chips is not None and seat in self.chips.bets:
            self.chips.act(seat, action, amount, all_in)
            all_in = all_in or (action != "fold" and self.chips.stacks[seat] == 0)
        self.pending.discard(seat)
        if action == "fold":
            self.active.discard(seat)
        elif action in AGGRESSIVE:
            # A bet, raise, completion or bring-in reopens the action for every other player
            # who can still bet; the bring-in itself gets no option if all just call.
            self.level += 1
            if action == "raise":
                self.raises += 1
            if action == "complete":
                self.completed = True
            self.matched[seat] = self.level
            self.pending = (self.active - self.all_in) - {seat}
            if action in ("bet", "raise") and self.opener is None and self.round_no == 0:
                self.opener = seat
        elif action == "call":
            self.matched[seat] = self.level
        if all_in:
            self.all_in.add(seat)
            self.pending.discard(seat)
        eligible = self.active - self.all_in
        if len(eligible) == 1:
            # Everyone else is all in: a player with nothing to call has no decision left.
            (last,) = eligible
            if self.chips is not None and last in self.chips.bets:
                if self.chips.bets[last] >= self.chips.top:  # what the engine counts: the chips
                    self.pending.discard(last)
            elif self.matched.get(last, 0) >= self.level:
                self.pending.discard(last)
        if len(self.active) <= 1:
            self.over = True
            self.to_act = None
            return
        if not self.pending:
            self._advance()
            return
        self.to_act = _clockwise_after(seat, self.pending, self.table.table_size)
        if self.to_act in self.oot:
            step, changed = self.oot.pop(self.to_act)
            if not changed:
                self.oot_echo = (self.to_act, str(step["action"]))
                self.actions.append((self.to_act, str(step["action"])))
                self._in_turn(self.to_act, str(step["action"]), bool(step.get("all_in", False)), step.get("amount"))


# --------------------------------------------------------------------------- expectations


#: The turn model's handler of each FORMAT step it follows (other steps change no turn).
_STEP_HANDLERS: dict[str, Callable[[TurnModel, Any], None]] = {
    "deal": TurnModel._on_deal,
    "burn": TurnModel._on_burn,
    "board": TurnModel._on_board,
    "stub": TurnModel._on_stub,
    "muck": TurnModel._on_muck,
    "aside": TurnModel._on_aside,
    "discard": TurnModel._on_discard,
    "act": TurnModel._on_act,
    "put": TurnModel._on_put,
}


def _model_run(table: Table, steps: list[dict], shows: bool) -> list[int | None]:
    m = TurnModel(table, exposed_hole_shows=shows)
    out = []
    for step in steps:
        m.apply(step)
        out.append(None if m.ambiguous or m.phase[0] != "bet" else m.to_act)
    return out


def expected_to_act(hand: dict[str, Any], final_ok: bool = True) -> list[dict[str, int]]:
    """``to_act`` expectations for a scenario, from :class:`TurnModel`.

    Emitted only at stable points: right before an ``act`` step, and after the last step
    when ``final_ok`` (a scenario that stops mid-deal without a misdeal).  Points where
    the two readings of an exposed stud hole card disagree, or the model flags an
    ambiguity, are left out.
    """
    table = Table.from_scenario(hand)
    steps = hand["steps"]
    a = _model_run(table, steps, True)
    b = _model_run(table, steps, False) if table.stud else a
    out = []
    for i in range(len(steps)):
        nxt_is_act = i + 1 < len(steps) and "act" in steps[i + 1]
        if not (nxt_is_act or (i + 1 == len(steps) and final_ok)):
            continue
        seat = a[i]
        if seat is not None and seat == b[i]:
            out.append({"after": i + 1, "to_act": seat})
    return out


def replay_to_act(hand: dict[str, Any], shows: bool = True) -> list[int | None]:
    """The model's ``to_act`` after each step (1-based step i is index i-1)."""
    return _model_run(Table.from_scenario(hand), hand["steps"], shows)


# --------------------------------------------------------------------------- legal hands


def _pick_structure(rng: random.Random, game: str) -> str:
    if game in STUD_GAMES:
        return "limit"  # stud is dealt limit in every rulebook we follow (RRoP s8-s10)
    if game in BOARD_GAMES:
        return rng.choice(STRUCTURES)
    return rng.choices(STRUCTURES, weights=(2, 1, 3))[0]


def _random_table(rng: random.Random, game: str, rules: str, event: str, structure: str) -> dict[str, Any]:
    table_size = rng.randint(2, 10)
    n = rng.randint(2, min(table_size, MAX_PLAYERS[game]))
    seats = sorted(rng.sample(range(1, table_size + 1), n))
    header: dict[str, Any] = {
        "game": game,
        "structure": structure,
        "rules": rules,
        "event": event,
        "table_size": table_size,
        "seats": seats,
    }
    if game in STUD_GAMES:
        return header
    empty = [s for s in range(1, table_size + 1) if s not in seats]
    antes_weight = 4 if game in ("draw_high", "jacks_or_better") else 1
    modes = ["normal", "dead_button", "dead_sb", "antes"]
    weights = [8, 2 if empty and n >= 3 else 0, 1 if n >= 3 else 0, antes_weight]
    mode = rng.choices(modes, weights=weights)[0]
    if mode == "dead_button":
        header["button"] = rng.choice(empty)
        order = Table(game, rules, tuple(seats), structure, button=header["button"], table_size=table_size).deal_order()
        header["small_blind"], header["big_blind"] = order[0], order[1]
    else:
        header["button"] = rng.choice(seats)
        if mode == "dead_sb":
            order = Table(
                game, rules, tuple(seats), structure, button=header["button"], table_size=table_size
            ).deal_order()
            header["small_blind"], header["big_blind"] = None, order[0]
        elif mode == "antes":
            header["small_blind"], header["big_blind"] = None, None
    return header


def _stud_cards_needed(model: TurnModel, players: int) -> int:
    """Cards the remaining stud streets need with ``players`` still in (one burn per street)."""
    later = [n for k, n in model.script[model.phase_idx + 1 :] if k == "deal" and n > 3]
    return len(later) * (1 + players)


def _choose_action(rng: random.Random, m: TurnModel, seat: int, spare: int) -> tuple[str, bool]:
    """A realistic action for ``seat``: no check facing a bet, no bet after a bet."""
    t = m.table
    facing = m.facing(seat)
    cap = 3 if t.structure == "limit" else 4
    # Nobody left to bet against (every other player all in): only call, fold or check.
    contested = any(s != seat for s in m.active - m.all_in)
    can_raise = m.raises < cap and contested
    third = t.stud and m.phase[1] == "third"
    crowded = t.stud and _stud_cards_needed(m, len(m.active)) > spare
    if third and m.level == 0:
        return ("complete" if rng.random() < 0.2 else "bring_in"), False
    if facing:
        if crowded:
            return "fold", False
        opts = ["fold", "call"]
        weights = [3.0, 5.0]
        if third and not m.completed and contested:
            opts.append("complete")
            weights.append(1.5)
        elif can_raise:
            opts.append("raise")
            weights.append(1.5 if m.raises == 0 else 0.6)
    else:
        first_round_unopened = m.round_no == 0 and m.level == 0
        must_open = (
            t.game in ("draw_high", "jacks_or_better") and t.antes_only and first_round_unopened and len(m.pending) == 1
        )
        if (crowded or must_open) and contested:
            return ("bet" if m.level == 0 else "raise"), False
        if m.level == 0 and contested:
            opts, weights = ["check", "bet"], [6.0, 3.0]
        elif m.level == 0:
            opts, weights = ["check"], [1.0]
        else:  # the big blind's option
            opts, weights = ["check"] + (["raise"] if can_raise else []), [6.0, 2.0][: 1 + can_raise]
    action = rng.choices(opts, weights=weights)[0]
    p_all_in = {"no_limit": 0.06, "pot_limit": 0.03, "limit": 0.015}[t.structure]
    all_in = action in CHIP_ACTIONS and rng.random() < p_all_in
    return action, all_in


class _Dealer:
    """Builds a hand step by step, feeding every step to the turn model that decides what comes next."""

    def __init__(self, rng: random.Random, header: dict[str, Any]) -> None:
        self.rng = rng
        self.header = header
        self.table = Table.from_scenario(header)
        self.model = TurnModel(self.table)
        deck = [c.face for c in standard_deck()]
        rng.shuffle(deck)
        self.shoe = deck
        self.steps: list[dict[str, Any]] = []
        self.burned_phase = -1

    def emit(self, step: dict[str, Any]) -> None:
        self.steps.append(step)
        self.model.apply(step)

    def card(self) -> str:
        return self.shoe.pop()

    def burn_once(self) -> None:
        if self.burned_phase != self.model.phase_idx:
            self.burned_phase = self.model.phase_idx
            self.emit({"burn": self.card()})

    def run(self) -> list[dict[str, Any]]:
        m = self.model
        while True:
            kind, arg = m.phase
            if kind in ("over", "done"):
                return self.steps
            if kind == "deal":
                if self.table.stud and arg > 3:  # stud 4th-7th street: burn before each round (RRoP s8)
                    self.burn_once()
                self.emit({"deal": {"to": m.next_deal_seat(), "card": self.card()}})
            elif kind == "board":
                self.burn_once()
                n = arg - len(m.board)
                self.emit({"board": [self.card() for _ in range(n)]})
            elif kind == "draw":
                self.burn_once()  # draw games burn once before the draw
                seat = m.draw_order[m.draw_idx]
                room = max(0, len(self.shoe) - RESERVE)
                count = min(self.rng.choice((0, 1, 1, 2, 2, 3, 4)), MAX_DRAW, room)
                thrown = [h.label for h in m.hands.get(seat, [])[:count]]
                self.emit({"discard": {"seat": seat, "count": count}})
                if m.chips is not None:  # with chips the muck reader names the discards (the pots need them)
                    for label in thrown:
                        self.emit({"muck": label})
                for _ in range(count):
                    self.emit({"deal": {"to": seat, "card": self.card()}})
            else:
                to_act = m.to_act
                assert to_act is not None
                seat = to_act
                action, all_in = _choose_action(self.rng, m, seat, len(self.shoe) - RESERVE)
                act: dict[str, Any] = {"seat": seat, "action": action}
                if m.chips is not None:
                    action, amount, all_in = choose_amount(self.rng, m.chips, seat, action, all_in)
                    act["action"] = action
                    if amount is not None:
                        act["amount"] = amount
                if all_in:
                    act["all_in"] = True
                self.emit({"act": act})


def _sources(game: str, rules: str) -> str:
    base = {
        "holdem": "RRoP v4 s5 Hold'em",
        "omaha": "RRoP v4 s6 Omaha",
        "omaha8": "RRoP v4 s6 Omaha High-Low",
        "stud": "RRoP v4 s8 Seven-Card Stud",
        "razz": "RRoP v4 s9 Razz",
        "stud8": "RRoP v4 s10 Stud Eight-or-Better",
        "lowball_a5": "RRoP v4 s11 Ace-to-Five Lowball",
        "lowball_27": "RRoP v4 s11 Deuce-to-Seven Lowball",
        "triple_draw_27": "RRoP v4 s11 Deuce-to-Seven Lowball (three draws)",
        "draw_high": "RRoP v4 s12 Draw High",
        "jacks_or_better": "RRoP v4 s12 Jacks or Better",
    }[game]
    extra = "; TDA rules 32-35" if _family(rules) == "tda" else "; RRoP v4 s3-s4"
    return f"dealer_sim legal deal: {base}{extra}"


def legal_hand(
    rng: random.Random,
    game: str | None = None,
    rules: str | None = None,
    event: str | None = None,
    structure: str | None = None,
    chips: bool = False,
) -> dict[str, Any]:
    """One random legal deal as a FORMAT scenario dict with ``rulings: []`` and ``to_act`` checks;
    ``chips``: with stacks, forced bets and every amount (:class:`SimChips`)."""
    game = game or rng.choice(GAMES)
    rules = rules or rng.choice(PROFILES)
    if event is None:
        event = rng.choices(EVENTS, weights=(1, 3) if _family(rules) == "tda" else (3, 1))[0]
    structure = structure or _pick_structure(rng, game)
    header = _random_table(rng, game, rules, event, structure)
    if chips:
        header.update(chip_header(rng, header))
    name = f"sim_{game}_{rng.getrandbits(40):010x}"
    hand: dict[str, Any] = {"name": name, "source": _sources(game, rules), **header, "deck": "A"}
    hand["steps"] = _Dealer(rng, header).run()
    hand["expect"] = {"rulings": [], "state": expected_to_act(hand, final_ok=True)}
    return hand


def session(rng: random.Random, hands: int, chips: bool = False) -> Iterator[dict[str, Any]]:
    """A long stream of legal hands cycling through every game, both profiles mixed."""
    for i in range(hands):
        yield legal_hand(rng, game=GAMES[i % len(GAMES)], chips=chips)


# --------------------------------------------------------------------------- YAML


def _flow(value: Any) -> str:
    return (
        yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10**6).strip().removesuffix("...").strip()
    )


def to_yaml(hand: dict[str, Any]) -> str:
    """The FORMAT's YAML: header keys, one-key step mappings in flow style, expectations; a
    session (``hands:``) as one such block per deal, with its ``before`` changes."""
    lines = []
    for key, value in hand.items():
        if key in ("steps", "expect", "hands"):
            continue
        lines.append(f"{key}: {_flow(value)}")
    if "hands" in hand:
        lines.append("hands:")
        for deal in hand["hands"]:
            body = []
            if deal.get("before"):
                body.append("before:")
                body += [f"- {_flow(change)}" for change in deal["before"]]
            body += _deal_yaml(deal)
            lines += ["- " + body[0]] + ["  " + line for line in body[1:]]
        return "\n".join(lines) + "\n"
    return "\n".join(lines + _deal_yaml(hand)) + "\n"


def _deal_yaml(hand: dict[str, Any]) -> list[str]:
    lines = ["steps:"]
    for step in hand.get("steps") or []:
        ((k, v),) = step.items()
        if isinstance(v, dict | list):
            lines.append(f"- {k}: {_flow(v)}")
        else:
            lines.append(f"- {_flow({k: v})}")
    expect = hand.get("expect", {})
    lines.append("expect:")
    rulings = expect.get("rulings", [])
    if not rulings:
        lines.append("  rulings: []")
    else:
        lines.append("  rulings:")
        lines += [f"  - {_flow(r)}" for r in rulings]
    if "state" in expect and not expect["state"]:
        lines.append("  state: []")
    elif expect.get("state"):
        lines.append("  state:")
        lines += [f"  - {_flow(s)}" for s in expect["state"]]
    return lines


# --------------------------------------------------------------------------- corruptions

CORRUPTIONS = (
    "first_card_wrong_seat",
    "card_to_empty_seat",
    "seat_dealt_out",
    "extra_card",
    "two_extra_cards",
    "early_card_exposed",
    "exposed_card",
    "two_exposed_cards",
    "stud_holecard_exposed",
    "stud_both_holecards_exposed",
    "duplicate_card",
    "foreign_card",
    "boxed_card",
    "two_boxed_cards",
    "premature_flop",
    "premature_turn",
    "premature_river",
    "four_card_flop",
    "joker",
    "exposed_on_draw",
    "button_out_of_position",
    "premature_card",
    "action_out_of_turn",
    "burn_error",
)


@dataclass
class _Info:
    """What the turn model knew about each step of a legal hand (used to place corruptions)."""

    phase: list[tuple[str, Any]]  # phase in which each step was applied
    phase_idx: list[int]


def _annotate(hand: dict[str, Any]) -> _Info:
    m = TurnModel(Table.from_scenario(hand))
    phases, idxs = [], []
    for step in hand["steps"]:
        phases.append(m.phase)
        idxs.append(m.phase_idx)
        m.apply(step)
    return _Info(phases, idxs)


def _all_cards(hand: dict[str, Any]) -> set[str]:
    used: set[str] = set()
    for step in hand["steps"]:
        ((k, v),) = step.items()
        if k == "deal":
            used.add(v["card"])
        elif k in ("burn", "muck", "aside", "boxed"):
            used.add(v)
        elif k in ("board", "stub"):
            used.update(v)
    return used


def _fresh(rng: random.Random, hand: dict[str, Any], exclude: set[str] | None = None) -> list[str]:
    """Cards of the deck in play never seen in this hand, in random order (the stub)."""
    used = _all_cards(hand) | (exclude or set())
    out = [c.face for c in standard_deck() if c.face not in used]
    rng.shuffle(out)
    return out


def _initial_deal(hand: dict[str, Any], info: _Info) -> list[int]:
    """Indices (0-based) of the steps of the starting hands."""
    return [i for i, s in enumerate(hand["steps"]) if "deal" in s and info.phase_idx[i] == 0]


def _first_burn_after(hand: dict[str, Any], start: int) -> int | None:
    for i in range(start, len(hand["steps"])):
        if "burn" in hand["steps"][i]:
            return i
    return None


def _rule(after: int, ruling: str, reason: str | list[str], remedy: str | list[str] | None = None) -> dict:
    r: dict[str, Any] = {"after": after, "ruling": ruling, "reason": reason}
    if remedy is not None:
        r["remedy"] = remedy
    return r


def _finish(hand: dict[str, Any], kind: str, steps: list[dict], rulings: list[dict], stops: bool) -> dict[str, Any]:
    """Assemble the corrupted scenario; expectations recomputed by the turn model."""
    out = {k: v for k, v in hand.items() if k not in ("steps", "expect")}
    out["name"] = f"{hand['name']}_{kind}"
    out["source"] = f"{hand['source']}; corruption {kind}"
    out["steps"] = steps
    state = expected_to_act(out, final_ok=not stops)
    if stops:
        last = len(steps)
        state = [s for s in state if s["after"] < last]
    out["expect"] = {"rulings": rulings, "state": state}
    return out


def _exposed_remedy(t: Table, card: str) -> str:
    """Remedy for one downcard exposed by the dealer in a button game."""
    if t.game in BOARD_GAMES:
        return "replace_after_deal"  # RRoP s5 Hold'em rule 1
    if t.game in ("draw_high", "jacks_or_better"):
        return "must_take"  # RRoP s12
    c = Card.parse(card)
    if t.game == "lowball_a5":
        # RRoP s11 Ace-to-Five rule 3: limit, 7 or under must be taken; no/pot limit, A-5 only.
        keep = c.low <= 7 if t.structure == "limit" else c.low <= 5
    else:
        # RRoP s11 Deuce-to-Seven rule 2: 2, 3, 4, 5 or 7 must be taken (a 6 is replaced).
        keep = c.rank in ("2", "3", "4", "5", "7")
    return "must_take" if keep else "replace"


def _substantial(t: Table, actions: list[tuple[int, str]]) -> bool:
    """Whether substantial action has occurred (the bring-in never counts).

    robert (RRoP s3 Misdeals 2): two players have acted in turn, any action.
    tda (TDA 34): two actions in turn at least one of which puts chips in, or any three actions.
    """
    acts = [(s, a) for s, a in actions if a != "bring_in"]
    if t.stud and actions and actions[0][1] in ("complete", "bet"):
        acts = acts[1:]  # RRoP s8 Seven-Card Stud 2-3: the low card opening for a full bet is the forced bet
    if _family(t.rules) == "robert":
        return len({s for s, _ in acts}) >= 2
    return len(acts) >= 3 or (len(acts) >= 2 and any(a in CHIP_ACTIONS for _, a in acts))


def corrupt(rng: random.Random, hand: dict[str, Any], kind: str | None = None) -> dict[str, Any] | None:
    """A single corruption of a legal hand with the rulings the rules call for.

    ``kind`` picks one of ``CORRUPTIONS``; by default a random applicable one.  Returns
    None when the kind does not apply to this hand (wrong game, hand too short...).
    """
    kinds = [kind] if kind else list(CORRUPTIONS)
    rng.shuffle(kinds)
    info = _annotate(hand)
    for k in kinds:
        out = _CORRUPTERS[k](rng, hand, Table.from_scenario(hand), info)
        if out is not None:
            return out
    return None


def _c_first_card_wrong_seat(rng, hand, t: Table, info: _Info):
    first = hand["steps"][0]["deal"]
    others = [s for s in range(1, t.table_size + 1) if s != first["to"]]
    if not others:
        return None
    wrong = rng.choice(others)
    reason: str | list[str] = "first_card_wrong_seat"
    if wrong not in t.seats:
        reason = ["card_to_empty_seat", "first_card_wrong_seat"]
    step = {"deal": {**first, "to": wrong}}
    return _finish(hand, "first_card_wrong_seat", [step], [_rule(1, "misdeal", reason)], True)


def _deal_round_steps(hand, info: _Info) -> list[int]:
    """Steps of the starting hands, where a dealing error is still a misdeal.

    Later stud streets are left out on purpose: by then substantial action has usually
    occurred and a misdeal cause is handled as ``misdeal_too_late`` (RRoP s3 Misdeals 2),
    whose continuation the FORMAT does not describe.
    """
    return _initial_deal(hand, info)


def _c_card_to_empty_seat(rng, hand, t: Table, info: _Info):
    empty = [s for s in range(1, t.table_size + 1) if s not in t.seats]
    cands = [i for i in _deal_round_steps(hand, info) if i > 0]
    if not empty or not cands:
        return None
    i = rng.choice(cands)
    steps = hand["steps"][:i] + [{"deal": {**hand["steps"][i]["deal"], "to": rng.choice(empty)}}]
    # RRoP s3 Misdeals 1(i): a card dealt to a seat not entitled to one.
    return _finish(hand, "card_to_empty_seat", steps, [_rule(i + 1, "misdeal", "card_to_empty_seat")], True)


def _c_seat_dealt_out(rng, hand, t: Table, info: _Info):
    steps = hand["steps"]
    rounds = _deal_round_steps(hand, info)
    cands = []
    for i in rounds:
        if i == 0 or i + 1 >= len(steps) or "deal" not in steps[i + 1] or info.phase[i + 1][0] != "deal":
            continue
        seat = steps[i]["deal"]["to"]
        if steps[i + 1]["deal"]["to"] == seat:
            continue
        if _family(t.rules) == "tda" and not t.stud and seat == t.button:
            continue  # TDA 33-B: the button may take two consecutive cards
        prev = steps[i - 1].get("deal", {}).get("to")
        if _family(t.rules) == "tda" and not t.stud and prev == t.button == steps[i + 1]["deal"]["to"]:
            continue  # TDA 33-B: the button's next card straight after its last is two in a row too
        cands.append(i)
    if not cands:
        return None
    i = rng.choice(cands)
    new = steps[:i] + [steps[i + 1]]
    # RRoP s3 Misdeals 1(f),(j): a seat dealt in was passed over.
    return _finish(hand, "seat_dealt_out", new, [_rule(i + 1, "misdeal", ["seat_dealt_out", "out_of_sequence"])], True)


def _end_of_deal(hand, info: _Info, t: Table) -> int | None:
    deal = _initial_deal(hand, info)
    if t.stud or not deal:
        return None
    last = deal[-1]
    if last + 1 >= len(hand["steps"]):
        return None
    return last


def _c_extra_card(rng, hand, t: Table, info: _Info):
    last = _end_of_deal(hand, info, t)
    if last is None:
        return None
    steps = hand["steps"]
    first_seat = t.deal_order()[0]
    b = _first_burn_after(hand, last + 1)
    extra = steps[b]["burn"] if b is not None else _fresh(rng, hand)[0]
    # RRoP s5 Hold'em rule 5; s3 Irregularities 11: one extra card is taken back and used as
    # the next burn card.  Taking the would-be burn card keeps the rest of the deal unchanged.
    new = steps[: last + 1] + [{"deal": {"to": first_seat, "card": extra}}, {"stub": [extra]}] + steps[last + 1 :]
    rulings = [_rule(last + 2, "irregularity", "extra_card", "use_as_burn")]
    return _finish(hand, "extra_card", new, rulings, False)


def _c_two_extra_cards(rng, hand, t: Table, info: _Info):
    last = _end_of_deal(hand, info, t)
    if last is None:
        return None
    order = t.deal_order()
    fresh = _fresh(rng, hand)
    new = hand["steps"][: last + 1] + [
        {"deal": {"to": order[0], "card": fresh[0]}},
        {"deal": {"to": order[1], "card": fresh[1]}},
    ]
    # RRoP s3 Misdeals 1(d): two or more extra cards in the starting hands.
    rulings = [
        _rule(last + 2, "irregularity", "extra_card", "use_as_burn"),
        _rule(last + 3, "misdeal", "extra_cards"),
    ]
    return _finish(hand, "two_extra_cards", new, rulings, True)


def _face_up(step: dict) -> dict:
    return {"deal": {**step["deal"], "face": "up"}}


def _c_early_card_exposed(rng, hand, t: Table, info: _Info):
    if t.stud:
        return None
    i = rng.choice((0, 1))
    steps = hand["steps"]
    new = steps[:i] + [_face_up(steps[i])]
    # RRoP s3 Misdeals 1(a); TDA 33-A-6: one of the first two cards off the deck exposed.
    return _finish(hand, "early_card_exposed", new, [_rule(i + 1, "misdeal", "early_card_exposed")], True)


def _replace_path(rng, hand, info: _Info, i: int, steps: list[dict]) -> list[dict]:
    """Apply the 'replace' remedy for the exposed card of step i: after the deal the seat takes
    the top card (the would-be next burn) and the exposed card becomes that burn (RRoP s5 rule 1;
    s11 lowball rules)."""
    last = _initial_deal(hand, info)[-1]
    seat, exposed = steps[i]["deal"]["to"], steps[i]["deal"]["card"]
    b = _first_burn_after(hand, last + 1)
    if b is not None:
        repl = steps[b]["burn"]
        rest = steps[last + 1 : b] + steps[b + 1 :]
    else:
        repl = _fresh(rng, hand)[0]
        rest = steps[last + 1 :]
    head = steps[: last + 1]
    return head + [{"deal": {"to": seat, "card": repl}}, {"burn": exposed}] + rest


def _exposable(hand, info: _Info, t: Table) -> list[int]:
    deal = _initial_deal(hand, info)
    return [i for i in deal if i >= 2] if not t.stud else []


def _c_exposed_card(rng, hand, t: Table, info: _Info):
    cands = _exposable(hand, info, t)
    if not cands:
        return None
    i = rng.choice(cands)
    steps = list(hand["steps"])
    steps[i] = _face_up(steps[i])
    remedy = _exposed_remedy(t, steps[i]["deal"]["card"])
    if remedy != "must_take":
        steps = _replace_path(rng, hand, info, i, steps)
    rulings = [_rule(i + 1, "irregularity", "exposed_card", remedy)]
    return _finish(hand, "exposed_card", steps, rulings, False)


def _c_two_exposed_cards(rng, hand, t: Table, info: _Info):
    cands = _exposable(hand, info, t)
    if len(cands) < 2:
        return None
    i, j = sorted(rng.sample(cands, 2))
    steps = hand["steps"]
    new = steps[:i] + [_face_up(steps[i])] + steps[i + 1 : j] + [_face_up(steps[j])]
    # RRoP s3 Misdeals 1(b): two or more cards exposed by the dealer.
    remedy = _exposed_remedy(t, steps[i]["deal"]["card"])
    rulings = [
        _rule(i + 1, "irregularity", "exposed_card", remedy),
        _rule(j + 1, "misdeal", "two_cards_exposed"),
    ]
    return _finish(hand, "two_exposed_cards", new, rulings, True)


def _c_stud_holecard_exposed(rng, hand, t: Table, info: _Info):
    if not t.stud:
        return None
    steps = hand["steps"]
    deal = _initial_deal(hand, info)
    n = len(t.seats)
    i = rng.choice(deal[: 2 * n])  # one of the two hole cards
    if t.event == "tournament":
        # TDA 33-A-5; RRoP s15 Tournaments 32: a stud downcard dealt up is a misdeal.
        new = steps[:i] + [_face_up(steps[i])]
        return _finish(hand, "stud_holecard_exposed", new, [_rule(i + 1, "misdeal", "early_card_exposed")], True)
    seat = steps[i]["deal"]["to"]
    third = next(k for k in deal[2 * n :] if steps[k]["deal"]["to"] == seat)
    new = list(steps[: deal[-1] + 1])
    new[i] = _face_up(steps[i])
    new[third] = {"deal": {**steps[third]["deal"], "face": "down"}}
    # RRoP s8 rule 5: one hole card up in a cash game, the third card is dealt down.
    rulings = [_rule(i + 1, "irregularity", "stud_holecard_exposed", "next_card_down")]
    return _finish(hand, "stud_holecard_exposed", new, rulings, False)


def _c_stud_both_holecards_exposed(rng, hand, t: Table, info: _Info):
    if not t.stud or t.event == "tournament" or len(t.seats) < 3:
        return None
    steps = hand["steps"]
    deal = _initial_deal(hand, info)
    seat = rng.choice(t.seats)
    mine = [k for k in deal if steps[k]["deal"]["to"] == seat]
    first, second, third = mine[0], mine[1], mine[2]
    new = [(_face_up(s) if k in (first, second) else s) for k, s in enumerate(steps[: deal[-1] + 1]) if k != third]
    # RRoP s8 rule 5: both hole cards up: the hand is dead (no more cards).
    rulings = [
        _rule(first + 1, "irregularity", "stud_holecard_exposed", "next_card_down"),
        _rule(second + 1, "irregularity", "stud_holecard_exposed", "dead_hand"),
    ]
    return _finish(hand, "stud_both_holecards_exposed", new, rulings, False)


def _in_play_before(hand, i: int) -> list[str]:
    """Cards held by seats still in the hand, or on the board, before step i."""
    held: dict[int, list[str]] = {}
    board: list[str] = []
    folded: set[int] = set()
    for step in hand["steps"][:i]:
        ((k, v),) = step.items()
        if k == "deal":
            held.setdefault(v["to"], []).append(v["card"])
        elif k == "board":
            board += v
        elif k == "act" and v["action"] == "fold":
            folded.add(v["seat"])
    return [c for s, cs in held.items() if s not in folded for c in cs] + board


def _card_steps(hand) -> list[int]:
    return [i for i, s in enumerate(hand["steps"]) if "deal" in s or "board" in s]


def _c_duplicate_card(rng, hand, t: Table, info: _Info):
    cands = [i for i in _card_steps(hand) if _in_play_before(hand, i)]
    if not cands:
        return None
    i = rng.choice(cands)
    dup = rng.choice(_in_play_before(hand, i))
    steps = hand["steps"]
    step = steps[i]
    new_step: dict[str, Any]
    if "deal" in step:
        new_step = {"deal": {**step["deal"], "card": dup}}
    else:
        cards = list(step["board"])
        cards[rng.randrange(len(cards))] = dup
        new_step = {"board": cards}
    # RRoP s3 Irregularities 4: two cards of the same rank and suit void the hand.
    return _finish(hand, "duplicate_card", steps[:i] + [new_step], [_rule(i + 1, "void", "duplicate_card")], True)


def _c_foreign_card(rng, hand, t: Table, info: _Info):
    i = rng.choice(_card_steps(hand))
    steps = hand["steps"]
    step = steps[i]
    new_step: dict[str, Any]
    if "deal" in step:
        new_step = {"deal": {**step["deal"], "card": step["deal"]["card"] + "@B"}}
    else:
        cards = list(step["board"])
        j = rng.randrange(len(cards))
        cards[j] = cards[j] + "@B"
        new_step = {"board": cards}
    # RRoP s3 Irregularities 3: a card with a different back voids the hand.
    return _finish(hand, "foreign_card", steps[:i] + [new_step], [_rule(i + 1, "void", "foreign_card")], True)


def _c_boxed_card(rng, hand, t: Table, info: _Info):
    deal = _initial_deal(hand, info)
    if len(deal) < 2:
        return None
    k = rng.randrange(1, len(deal))  # between two cards of the deal
    pos = deal[k]
    steps = hand["steps"]
    card = _fresh(rng, hand)[0]
    new = steps[:pos] + [{"boxed": card}] + steps[pos:]
    # RRoP s3 Irregularities 7: a boxed card is treated as a scrap of paper.
    return _finish(hand, "boxed_card", new, [_rule(pos + 1, "irregularity", "boxed_card", "scrap")], False)


def _c_two_boxed_cards(rng, hand, t: Table, info: _Info):
    deal = _initial_deal(hand, info)
    if len(deal) < 2:
        return None
    k1, k2 = sorted(rng.choices(range(1, len(deal)), k=2))
    p1, p2 = deal[k1], deal[k2]
    steps = hand["steps"]
    c1, c2 = _fresh(rng, hand)[:2]
    new = steps[:p1] + [{"boxed": c1}] + steps[p1:p2] + [{"boxed": c2}]
    # RRoP s3 Misdeals 1(c); TDA 33-A-1: two boxed cards in the deal.
    rulings = [
        _rule(p1 + 1, "irregularity", "boxed_card", "scrap"),
        _rule(len(new), "misdeal", "two_boxed_cards"),
    ]
    return _finish(hand, "two_boxed_cards", new, rulings, True)


def _phase_steps(hand, info: _Info, phase_idx: int, key: str) -> list[int]:
    return [i for i, s in enumerate(hand["steps"]) if info.phase_idx[i] == phase_idx and key in s]


def _board_street(hand, info: _Info, target: int) -> tuple[int, int] | None:
    """(burn index, board index) of the street that brings the board to ``target`` cards."""
    steps = hand["steps"]
    for i, s in enumerate(steps):
        if "board" in s and info.phase[i] == ("board", target):
            b = i - 1 if i > 0 and "burn" in steps[i - 1] else None
            if b is None:
                return None
            return b, i
    return None


def _premature(rng, hand, t: Table, info: _Info, target: int):
    if t.game not in BOARD_GAMES:
        return None
    street = _board_street(hand, info, target)
    if street is None:
        return None
    b, bi = street
    steps = hand["steps"]
    round_idx = info.phase_idx[b] - 1  # the betting round before this board
    acts = _phase_steps(hand, info, round_idx, "act")
    if len(acts) < 2:
        return None
    k = rng.randrange(len(acts) - 1)  # the board is turned after acts[k], before acts[k+1]
    cut = acts[k] + 1
    burn, cards = steps[b]["burn"], steps[bi]["board"]
    tail = steps[bi + 1 :]
    fresh = _fresh(rng, hand)
    if target in (3, 5):
        # RRoP s5 Hold'em rules 3-4, TDA RP-5 A/C: a premature flop or river goes back into the
        # stub; after the betting the stub is reshuffled and the cards turned again, no new burn.
        pool = cards + fresh
        rng.shuffle(pool)
        new = (
            steps[:cut]
            + [{"burn": burn}, {"board": cards}, {"stub": cards}]
            + steps[cut:b]
            + [{"board": pool[: len(cards)]}]
            + tail
        )
        reason, remedy = ("premature_flop", "redeal_flop") if target == 3 else ("premature_river", "reshuffle_river")
    elif target == 4:
        # RRoP s5 rule 4; TDA RP-5 B: the premature turn is set aside; after the betting burn
        # and turn the next card as the turn; reshuffle it into the stub for the river, no burn.
        nxt = _board_street(hand, info, 5)
        if nxt is not None:
            b5, r5 = nxt
            turn_burn, turn = steps[b5]["burn"], steps[r5]["board"]
            middle = tail[: b5 - bi - 1]
            after_river = steps[r5 + 1 :]
        else:
            turn_burn, turn = fresh[0], [fresh[1]]
            fresh = fresh[2:]
            middle, after_river = tail, []
        pool = cards + fresh
        rng.shuffle(pool)
        river_part = [{"stub": cards}, {"board": pool[:1]}] + after_river if nxt is not None else []
        new = (
            steps[:cut]
            + [{"burn": burn}, {"board": cards}, {"aside": cards[0]}]
            + steps[cut:b]
            + [{"burn": turn_burn}, {"board": turn}]
            + middle
            + river_part
        )
        reason, remedy = "premature_turn", "set_aside_turn"
    rulings = [_rule(cut + 2, "irregularity", reason, remedy)]
    return _finish(hand, reason, new, rulings, False)


def _c_premature_flop(rng, hand, t, info):
    return _premature(rng, hand, t, info, 3)


def _c_premature_turn(rng, hand, t, info):
    return _premature(rng, hand, t, info, 4)


def _c_premature_river(rng, hand, t, info):
    return _premature(rng, hand, t, info, 5)


def _c_four_card_flop(rng, hand, t: Table, info: _Info):
    if t.game not in BOARD_GAMES:
        return None
    street = _board_street(hand, info, 3)
    if street is None:
        return None
    b, bi = street
    steps = hand["steps"]
    flop = steps[bi]["board"]
    fresh = _fresh(rng, hand)
    if _family(t.rules) == "robert":
        # RRoP s5 Hold'em rules 2-3: a four-card flop goes back to the stub; new flop, no burn.
        four = flop + [fresh[0]]
        pool = four + fresh[1:]
        rng.shuffle(pool)
        new = steps[:bi] + [{"board": four}, {"stub": four}, {"board": pool[:3]}] + steps[bi + 1 :]
        remedy = "redeal_flop"
    else:
        # TDA 35: the four cards are scrambled; one at random is the turn's burn card.
        turn = _board_street(hand, info, 4)
        tail = steps[bi + 1 :]
        if turn is not None:
            extra = steps[turn[0]]["burn"]
            tail = steps[bi + 1 : turn[0]] + steps[turn[0] + 1 :]
        else:
            extra = fresh[0]
        four = flop + [extra]
        rng.shuffle(four)
        chosen = rng.choice(four)
        new = steps[:bi] + [{"board": four}, {"burn": chosen}] + tail
        remedy = "scramble_flop"
    rulings = [_rule(bi + 1, "irregularity", "four_card_flop", remedy)]
    return _finish(hand, "four_card_flop", new, rulings, False)


def _c_joker(rng, hand, t: Table, info: _Info):
    if t.game == "lowball_a5":
        return None  # RRoP s11 Ace-to-Five 1: the joker is in use there
    deal = _initial_deal(hand, info)
    i = rng.choice(deal)
    steps = hand["steps"]
    orig = steps[i]["deal"]
    joker = {"deal": {**orig, "card": "joker"}}
    # RRoP s3 Irregularities: a joker in a game without one is a scrap: the next card takes its place.
    new = steps[:i] + [joker, {"muck": "joker"}, steps[i]] + steps[i + 1 :]
    return _finish(hand, "joker", new, [_rule(i + 1, "irregularity", "joker", "scrap")], False)


def _c_exposed_on_draw(rng, hand, t: Table, info: _Info):
    if t.game not in DRAW_GAMES:
        return None
    steps = hand["steps"]
    draw_deals = [i for i, s in enumerate(steps) if "deal" in s and info.phase[i][0] == "draw"]
    if not draw_deals:
        return None
    i = rng.choice(draw_deals)
    seat, exposed = steps[i]["deal"]["to"], steps[i]["deal"]["card"]
    # The draw the card was exposed on (triple draw has three): its last step.
    draw_steps = [k for k, s in enumerate(steps) if info.phase_idx[k] == info.phase_idx[i]]
    end = draw_steps[-1] + 1
    new = list(steps)
    new[i] = _face_up(steps[i])
    repl = _fresh(rng, hand)[0]
    # RRoP s11 Lowball rule 9: a card exposed on the draw is replaced once the draw is complete.
    new = new[:end] + [{"deal": {"to": seat, "card": repl}}, {"muck": exposed}] + new[end:]
    rulings = [_rule(i + 1, "irregularity", "exposed_on_draw", "replace_after_draw")]
    return _finish(hand, "exposed_on_draw", new, rulings, False)


def _c_button_out_of_position(rng, hand, t: Table, info: _Info):
    if t.stud:
        return None
    steps = hand["steps"]
    k = rng.randrange(1, len(steps))  # report after step k
    actions = [(s["act"]["seat"], s["act"]["action"]) for s in steps[:k] if "act" in s]
    new = steps[:k] + [{"report": "button_out_of_position"}]
    if _substantial(t, actions):
        # RRoP s3 Misdeals 2; TDA 34: after substantial action the deal plays on.
        rulings = [_rule(k + 1, "irregularity", "misdeal_too_late", "play_on")]
        return _finish(hand, "button_out_of_position", new + steps[k:], rulings, False)
    # RRoP s3 Misdeals 1(g); TDA 33-D: button out of position before substantial action.
    return _finish(hand, "button_out_of_position", new, [_rule(k + 1, "misdeal", "button_out_of_position")], True)


# --------------------------------------------------------------------------- issue 13: turn order, stud procedure


def _round_acts(hand, info: _Info) -> dict[int, list[int]]:
    """Indices of the ``act`` steps of each betting round (by phase index)."""
    rounds: dict[int, list[int]] = {}
    for i, s in enumerate(hand["steps"]):
        if "act" in s and info.phase[i][0] == "bet":
            rounds.setdefault(info.phase_idx[i], []).append(i)
    return rounds


def _c_premature_card(rng, hand, t: Table, info: _Info):
    """Stud: the dealer burns and deals a card of the next street while the betting is still open.

    RRoP s8 Seven-Card Stud 14 (robert): the card is eliminated; after the betting one card more
    for each other active player is taken out; the dealer burns and the deal resumes.  TDA RP-5 D
    (tda family): a whole round is set aside now and the next street is burned and dealt as normal.
    """
    if not t.stud:
        return None
    steps = hand["steps"]
    cands = []
    for idx, acts in _round_acts(hand, info).items():
        if not any("deal" in steps[x] for x in range(acts[-1] + 1, len(steps))):
            continue  # no street after this round: nothing could come early
        cands += [(idx, k) for k in range(len(acts) - 1)]
    if not cands:
        return None
    idx, k = rng.choice(cands)
    acts = _round_acts(hand, info)[idx]
    cut = acts[k] + 1  # after this action, before the next one of the same round
    m = TurnModel(Table.from_scenario(hand))
    for step in steps[:cut]:
        m.apply(step)
    if m.phase[0] != "bet" or m.to_act is None:
        return None
    live = sorted(m.active)
    seat = rng.choice(live)
    fresh = _fresh(rng, hand)
    burn, card, extra = fresh[0], fresh[1], fresh[2 : 2 + len(live) - 1]
    robert = _family(t.rules) == "robert"
    inserted = [{"burn": burn}, {"deal": {"to": seat, "card": card}}, {"aside": card}]
    if not robert:
        inserted += [{"aside": c} for c in extra]  # TDA RP-5 D: the rest of the round, set aside now
    end = acts[-1] + 1  # after the round's last action
    new = steps[:cut] + inserted + steps[cut:end]
    if robert:
        survivors = m.active  # approximate: the others still in when the round ends
        new += [{"aside": c} for c in extra[: max(len(survivors) - 1, 0)]]
    new += steps[end:]
    remedy = "eliminate_round" if robert else "set_aside_round"
    return _finish(hand, "premature_card", new, [_rule(cut + 2, "irregularity", "premature_card", remedy)], False)


def _c_action_out_of_turn(rng, hand, t: Table, info: _Info):
    """A player acts before his turn; the players in between only check or fold (nothing that
    changes the action under either profile), so the out-of-turn action binds when the turn
    reaches him (RRoP s3 Betting and Raising 10; TDA 39-A)."""
    steps = hand["steps"]
    cands = []
    for acts in _round_acts(hand, info).values():
        for a in range(len(acts)):
            for b in range(a + 1, len(acts)):
                i, j = acts[a], acts[b]
                if any("act" not in steps[x] for x in range(i, j + 1)):
                    break
                mover, first = steps[j]["act"], steps[i]["act"]
                if mover["seat"] == first["seat"] or mover["action"] == "bring_in" or first["action"] == "bring_in":
                    break
                between = [steps[x]["act"] for x in range(i, j)]
                if any(s["action"] not in ("check", "fold") for s in between):
                    break
                if any(s["seat"] == mover["seat"] for s in between):
                    break
                cands.append((i, j))
    if not cands:
        return None
    i, j = rng.choice(cands)
    new = steps[:i] + [steps[j]] + steps[i:j] + steps[j + 1 :]
    rulings = [_rule(i + 1, "irregularity", "action_out_of_turn", "binding_if_unchanged")]
    return _finish(hand, "action_out_of_turn", new, rulings, False)


def _c_burn_error(rng, hand, t: Table, info: _Info):
    """Stud: two burn cards for one round (RRoP s8 Seven-Card Stud 13)."""
    if not t.stud:
        return None
    steps = hand["steps"]
    burns = [i for i, s in enumerate(steps) if "burn" in s]
    if not burns:
        return None
    b = rng.choice(burns)
    extra = _fresh(rng, hand)[0]
    new = steps[: b + 1] + [{"burn": extra}] + steps[b + 1 :]
    return _finish(hand, "burn_error", new, [_rule(b + 2, "irregularity", "burn_error", "correct_positions")], False)


def _family(rules: str) -> str:
    """The rulebook a profile descends from (``robert`` or ``tda``): highland is a tda table."""
    from controller.rules.profiles import chain

    return chain(rules)[-1]


#: One corrupter per kind (explicit: each is found by grep).
_CORRUPTERS = {
    "first_card_wrong_seat": _c_first_card_wrong_seat,
    "card_to_empty_seat": _c_card_to_empty_seat,
    "seat_dealt_out": _c_seat_dealt_out,
    "extra_card": _c_extra_card,
    "two_extra_cards": _c_two_extra_cards,
    "early_card_exposed": _c_early_card_exposed,
    "exposed_card": _c_exposed_card,
    "two_exposed_cards": _c_two_exposed_cards,
    "stud_holecard_exposed": _c_stud_holecard_exposed,
    "stud_both_holecards_exposed": _c_stud_both_holecards_exposed,
    "duplicate_card": _c_duplicate_card,
    "foreign_card": _c_foreign_card,
    "boxed_card": _c_boxed_card,
    "two_boxed_cards": _c_two_boxed_cards,
    "premature_flop": _c_premature_flop,
    "premature_turn": _c_premature_turn,
    "premature_river": _c_premature_river,
    "four_card_flop": _c_four_card_flop,
    "joker": _c_joker,
    "exposed_on_draw": _c_exposed_on_draw,
    "button_out_of_position": _c_button_out_of_position,
    "premature_card": _c_premature_card,
    "action_out_of_turn": _c_action_out_of_turn,
    "burn_error": _c_burn_error,
}
assert tuple(_CORRUPTERS) == CORRUPTIONS


# --------------------------------------------------------------------------- sessions (FORMAT "Sessions")

SESSION_GAMES = ("holdem", "holdem", "holdem", "omaha", "lowball_27", "draw_high")


def legal_session(rng: random.Random, hands: int = 12, *, game: str | None = None, rules: str | None = None,
                  event: str | None = None) -> dict[str, Any]:
    """A random session: players sit down (waiting or posting), leave, sit out and come back
    between deals; every deal is a legal hand, cards and actions from :class:`TurnModel`.

    The seats, button and blinds of each deal are the ones the table under test derives
    (``controller.rules.table``): a session checks that a correct engine raises nothing over many
    hands, and ``tests/rules/test_sessions.py`` checks those decisions against the blind rules
    (RRoP s4 1-14, TDA 30-32) with its own reading.
    """
    from controller.rules.scenario import Session, apply_change
    from controller.rules.table import TableError

    game = game or rng.choice(SESSION_GAMES)
    rules = rules or rng.choice(PROFILES)
    event = event or rng.choice(EVENTS)
    size = rng.randint(4, 10)
    most = min(size, MAX_PLAYERS[game])
    seats = sorted(rng.sample(range(1, size + 1), rng.randint(3, most)))
    header: dict[str, Any] = {
        "name": f"sim_session_{game}_{rng.getrandbits(40):010x}",
        "source": "dealer_sim legal session: RRoP v4 s4 Rules for Using Blinds 1-14; TDA rules 30-32",
        "game": game, "structure": _pick_structure(rng, game), "rules": rules, "event": event,
        "table_size": size, "seats": seats, "button": rng.choice(seats), "hands": [],
    }
    table = Session.from_dict({**header, "hands": [{}]}).table()
    out_hands = []
    for n in range(hands):
        before = []
        for _ in range(rng.choice((0, 0, 0, 1, 1, 2)) if n else 0):  # the header's button starts hand 1
            change = _random_change(rng, table, most)
            if change is None:
                continue
            try:
                apply_change(table, *next(iter(change.items())))
            except TableError:
                continue
            before.append(change)
        hand = table.start_hand().view()
        s = hand.setup
        deal = {"game": game, "structure": header["structure"], "rules": rules, "event": event, "table_size": size,
                "seats": list(s.seats), "button": s.button, "small_blind": hand.small_blind,
                "big_blind": hand.big_blind, "deck": "A"}
        steps = _Dealer(rng, deal).run()
        entry: dict[str, Any] = {"steps": steps, "expect": {"rulings": [],
                                                            "state": expected_to_act({**deal, "steps": steps})}}
        if before:
            entry["before"] = before
        out_hands.append(entry)
    header["hands"] = out_hands
    return header


def _random_change(rng: random.Random, table: Any, most: int) -> dict[str, Any] | None:
    """One table change that keeps at least three players seated and two dealt in."""
    seated = sorted(table.players)
    out = [s for s in seated if table.players[s].sitting_out]
    playing = [s for s in seated if s not in out]
    empty = [s for s in range(1, table.size + 1) if s not in table.players]
    kinds = []
    if empty and len(seated) < most:
        kinds.append("seat")
    if len(seated) > 3 and len(playing) > 3:
        kinds += ["unseat", "sit_out"]
    if out:
        kinds += ["sit_in", "sit_in"]
    if not kinds:
        return None
    kind = rng.choice(kinds)
    if kind == "seat":
        return {"seat": {"seat": rng.choice(empty), "post": rng.random() < 0.5}}
    if kind == "unseat":
        return {"unseat": rng.choice(seated)}
    if kind == "sit_out":
        return {"sit_out": rng.choice(playing)}
    return {"sit_in": {"seat": rng.choice(out), "post": rng.random() < 0.5}}
# --------------------------------------------------------------------------- chips
# An independent reading of the betting rules for amounts, written from the rulebooks (RRoP s3
# Betting and Raising, s14 No-Limit and Pot-Limit; TDA 38-47), not from controller.rules.chips:
# legal hands get stacks, forced bets and amounts from it, and corruptions of an amount get the
# ruling it calls for.

CHIP_KEYS = ("stacks", "blinds", "straddle", "ante", "bb_ante", "bring_in", "limits", "raise_cap")


@dataclass
class SimChips:
    """Stacks, bets and the legal range of one hand (an independent model of the betting rules)."""

    structure: str
    rules: str
    stud: bool
    rounds: int
    big_from: int
    stacks: dict[int, int]
    blinds: tuple[int, ...] = ()
    straddle: int = 0
    ante: int = 0
    bb_ante: int = 0
    bring_in: int = 0
    limits: tuple[int, int] = (0, 0)
    raise_cap: int | None = None
    bets: dict[int, int] = field(default_factory=dict)
    middle: int = 0
    folded: set[int] = field(default_factory=set)
    all_in: set[int] = field(default_factory=set)
    round_no: int = 0
    top: int = 0
    inc: int = 0  # the largest full bet or raise of the round
    full: int = 0  # limit: the total the last full bet made
    raises: int = 0
    capped: bool = False
    faced: dict[int, int] = field(default_factory=dict)
    straddle_seat: int | None = None  # RRoP s14 No-Limit 12: acts last on the first round
    big_unit: bool = False  # RRoP s8 Seven-Card Stud 4: an open pair showing on fourth street
    upper: bool = False  # the upper limit has been bet this round

    @classmethod
    def from_header(cls, hand: dict[str, Any], table: Table) -> SimChips | None:
        if "stacks" not in hand:
            return None
        rounds = len(_GAME_DEFS[table.game].streets)
        blinds = hand.get("blinds") or []
        return cls(table.structure, table.rules, table.stud, rounds, _GAME_DEFS[table.game].big_bet_from,
                   {int(s): int(c) for s, c in hand["stacks"].items()}, tuple(blinds if isinstance(blinds, list)
                                                                             else [blinds]),
                   int(hand.get("straddle") or 0), int(hand.get("ante") or 0), int(hand.get("bb_ante") or 0),
                   int(hand.get("bring_in") or 0), tuple(hand.get("limits") or (0, 0)), hand.get("raise_cap"))

    def start(self, table: Table) -> None:
        order = table.deal_order()
        self.bets = {s: 0 for s in order}
        self.inc = self.min_bet()
        for s in order:
            self._pay(s, self.ante, dead=True)
        if self.bb_ante:
            self._pay(table.big_blind if table.big_blind is not None else order[-1], self.bb_ante, dead=True)
        if len(self.blinds) == 2 and table.small_blind is not None:
            self._pay(table.small_blind, self.blinds[0])
        if self.blinds and table.big_blind is not None:
            self._pay(table.big_blind, self.blinds[-1])
            self.top = self.full = self.inc = max(self.blinds)
            self.raises = 1
            if self.straddle:
                nxt = order[(order.index(table.big_blind) + 1) % len(order)]
                if nxt != table.small_blind:
                    self.straddle_seat = nxt
                    self._pay(nxt, self.straddle)
                    self.top = self.full = self.inc = max(self.top, self.straddle)
        self.top = max(self.bets.values())

    def _pay(self, seat: int, chips: int, dead: bool = False) -> None:
        chips = min(chips, self.stacks[seat])
        self.stacks[seat] -= chips
        if dead:
            self.middle += chips
        else:
            self.bets[seat] += chips
        if self.stacks[seat] == 0:
            self.all_in.add(seat)

    def new_round(self, round_no: int, open_pair: bool = False) -> None:
        self.big_unit = open_pair and self.structure == "limit"
        if round_no == self.round_no:
            return
        self.upper = False
        self.middle += sum(self.bets.values())
        self.bets = {s: 0 for s in self.bets}
        self.round_no, self.top, self.full, self.raises, self.capped, self.faced = round_no, 0, 0, 0, False, {}
        self.inc = self.min_bet()

    def unit(self) -> int:
        return self.limits[1] if self.round_no >= self.big_from or self.upper else self.limits[0]

    def min_bet(self) -> int:
        if self.structure == "limit":
            return self.unit()
        return max(self.blinds) if self.blinds else (self.bring_in or max(self.ante, 1))

    @property
    def pot(self) -> int:
        return self.middle + sum(self.bets.values())

    def live(self) -> list[int]:
        return [s for s in self.bets if s not in self.folded and s not in self.all_in]

    def cap(self) -> int:
        if self.raise_cap is not None:
            return int(self.raise_cap)
        return 3 if self.rounds >= 3 else 4

    def range(self, seat: int) -> tuple[int, int | None, int | None]:
        """(to call, smallest raise-to, largest raise-to); no raise: (to call, None, None)."""
        own, stack = self.bets[seat], self.stacks[seat]
        call = min(self.top - own, stack)
        if stack <= self.top - own or not [s for s in self.live() if s != seat]:
            return call, None, None
        if seat in self.faced:
            needed = self.unit() / 2 if self.structure == "limit" else self.inc
            if self.top - self.faced[seat] < needed:
                return call, None, None  # TDA 43; RRoP s3 Betting and Raising 5, s14 No-Limit 3
        if self.structure == "limit":
            heads_up = self.rules == "robert" and len(self.live()) <= 2
            if (self.capped or not heads_up) and self.raises >= 1 + self.cap():
                return call, None, None
            lo = hi = self.full + self.unit()
            if self.big_unit and not self.upper:
                hi = self.full + self.limits[1]
        else:
            lo = self.top + self.inc if self.top else self.min_bet()
            hi = own + stack if self.structure == "no_limit" else self.top + self.pot + (self.top - own)
        most = own + stack
        return call, min(lo, most), min(hi, most)

    def act(self, seat: int, action: str, total: int | None, all_in: bool) -> None:
        own = self.bets[seat]
        if action == "fold":
            self.folded.add(seat)
            return
        if all_in:
            total = own + self.stacks[seat]
        elif action in ("check", "call"):
            total = max(own, min(self.top, own + self.stacks[seat]))
        assert total is not None
        before = self.top
        self._pay(seat, total - own)
        self.top = max(self.top, self.bets[seat])
        step = self.top - before
        if action != "bring_in" and step > 0:
            if self.structure == "limit":
                if self.big_unit and self.top - self.full > self.limits[0]:
                    self.upper = True
                if self.top - self.full >= self.unit() / 2:
                    self.full, self.raises = self.top, self.raises + 1
            elif step >= self.inc or (before == 0 and self.top >= self.min_bet()):
                self.inc, self.full, self.raises = max(self.inc, step), self.top, self.raises + 1
            heads_up = self.rules == "robert" and len(self.live()) <= 2
            if self.structure == "limit" and not heads_up and self.raises >= 1 + self.cap():
                self.capped = True
        self.faced[seat] = self.top


def chip_header(rng: random.Random, header: dict[str, Any]) -> dict[str, Any]:
    """Stacks and forced bets for a random header (FORMAT chips keys)."""
    game, structure, seats = header["game"], header["structure"], header["seats"]
    bb = rng.choice((2, 10, 100, 200, 400))
    out: dict[str, Any] = {}
    deep = rng.choice((20, 50, 100, 300))
    out["stacks"] = {s: (rng.randint(1, 12) if rng.random() < 0.2 else rng.randint(deep // 2, deep)) * bb
                     + rng.choice((0, 0, bb // 2)) for s in seats}
    if game in STUD_GAMES:
        out["ante"] = max(1, bb // 10)
        out["bring_in"] = max(1, bb // 4)
        out["limits"] = [bb, 2 * bb]
        return out
    if header.get("big_blind", 0) is not None:
        out["blinds"] = [bb // 2, bb] if header.get("small_blind", 0) is not None else [bb]
    if header.get("big_blind", 0) is None or rng.random() < 0.2:
        out["ante"] = max(1, bb // 10)
    elif header.get("event") == "tournament" and rng.random() < 0.3:
        out["bb_ante"] = bb
    if structure == "limit":
        out["limits"] = [bb, 2 * bb]
    elif header.get("event") == "cash" and len(seats) >= 4 and "blinds" in out and rng.random() < 0.15:
        out["straddle"] = 2 * bb
    return out


def choose_amount(rng: random.Random, chips: SimChips, seat: int, action: str, all_in: bool) -> tuple[str, int | None,
                                                                                                     bool]:
    """The amount for a chosen action (the whole bet in the round), kept within the legal range."""
    call, lo, hi = chips.range(seat)
    own, stack = chips.bets[seat], chips.stacks[seat]
    if action == "bring_in":
        total = min(chips.bring_in, own + stack)
        return action, total, total == own + stack
    if action in ("bet", "raise", "complete"):
        if lo is None or hi is None:
            action = "call" if call else "check"
        else:
            total = hi if all_in and hi == own + stack else (lo if hi == lo or rng.random() < 0.5
                                                             else rng.randint(lo, hi))
            if action == "complete" and chips.top == 0:
                action = "bet"
            return action, total, total == own + stack
    if action == "check" and call:
        action = "call"
    if action == "call" and not call:
        action = "check"
    if action == "call":
        return action, None, call == stack
    return action, None, False


def sim_put(chips: SimChips, rules: str, seat: int, pushed_chips: list[int], declare: Any) -> dict[str, Any] | None:
    """What a push comes to (TDA 38-B, 42-45; RRoP s3 Betting and Raising 14-15, s14 No-Limit 9-10,
    Pot-Limit 1 and 7), as an act; None when the push is withdrawn (call or fold only)."""
    own, stack, top = chips.bets[seat], chips.stacks[seat], chips.top
    pushed, facing = sum(pushed_chips), chips.top - chips.bets[seat]
    call, lo, hi = chips.range(seat)
    to = None
    if isinstance(declare, dict):
        ((declare, to),) = declare.items()

    def calls() -> dict[str, Any]:
        return {"seat": seat, "action": "call" if call else "check", "all_in": call == stack and call > 0}

    def raise_to(total: int) -> dict[str, Any] | None:
        if lo is None or hi is None:
            return None if total > top else calls()
        total = max(lo, min(total, hi))
        return {"seat": seat, "action": "raise" if top else "bet", "amount": total, "all_in": total == own + stack}

    if declare == "all_in" or (declare is None and pushed == stack):
        return calls() if own + stack <= top else raise_to(own + stack)
    if declare == "call":
        return calls()
    if declare in ("raise", "bet") or to is not None:
        return raise_to(int(to) if to is not None else own + pushed)
    if facing > 0:
        if pushed <= facing or len(pushed_chips) == 1:
            return calls()
        if rules == "tda" and pushed - min(pushed_chips) < facing:
            return calls()
    elif top == 0:
        if len(pushed_chips) == 1 and pushed > chips.min_bet():
            return raise_to(own + pushed)
        return raise_to(own + pushed)
    if lo is None:
        return calls()
    if own + pushed >= lo:
        return raise_to(own + pushed)
    return raise_to(lo) if (own + pushed - top) * 2 >= lo - top else calls()


AMOUNT_CORRUPTIONS = ("short_bet", "short_raise", "over_pot", "under_call", "oversized_chip", "multiple_chips")


def corrupt_amount(rng: random.Random, hand: dict[str, Any], kind: str | None = None) -> dict[str, Any] | None:
    """One amount in a legal hand with chips made wrong, the hand cut after it, and the ruling
    the rules call for (from :class:`SimChips`, not the engine).  None when ``kind`` has no place
    in this hand."""
    if "stacks" not in hand:
        return None
    kinds = [kind] if kind else list(AMOUNT_CORRUPTIONS)
    rng.shuffle(kinds)
    table = Table.from_scenario(hand)
    m = TurnModel(table)
    places: list[tuple[int, str, dict[str, Any]]] = []  # (step index, kind, the new step)
    for i, step in enumerate(hand["steps"]):
        act = step.get("act")
        chips = m.chips
        if act is not None and chips is not None and m.phase[0] == "bet" and act["seat"] in chips.bets:
            seat, action = act["seat"], act["action"]
            call, lo, hi = chips.range(seat)
            own, stack, top = chips.bets[seat], chips.stacks[seat], chips.top
            more = own + stack
            if action in ("bet", "raise") and lo is not None and hi is not None and top < lo - 1 and lo < more:
                wrong = rng.randint(top + 1, lo - 1)
                k = "short_bet" if top == 0 else "short_raise"
                if table.structure != "limit" or k == "short_bet":
                    places.append((i, k, {"act": {"seat": seat, "action": action, "amount": wrong}}))
            if action in ("bet", "raise") and table.structure == "pot_limit" and hi is not None and hi + 1 < more:
                places.append((i, "over_pot", {"act": {"seat": seat, "action": action,
                                                       "amount": rng.randint(hi + 1, more - 1)}}))
            if action == "call" and call > 1 and call < stack:
                places.append((i, "under_call", {"put": {"seat": seat, "chips": [rng.randint(1, call - 1)]}}))
            if action == "call" and call > 0 and call + 1 < stack:
                chip = rng.randint(call + 1, stack - 1)
                places.append((i, "oversized_chip", {"put": {"seat": seat, "chips": [chip]}}))
                if table.rules == "tda" and call >= 3 and 2 * (call // 2 + 1) < stack:
                    big = call // 2 + 1
                    places.append((i, "multiple_chips", {"put": {"seat": seat, "chips": [big, big]}}))
        m.apply(step)
    for k in kinds:
        options = [p for p in places if p[1] == k]
        if not options:
            continue
        i, k, new = rng.choice(options)
        remedy = {"short_bet": "complete_bet", "short_raise": "complete_raise", "over_pot": "reduce_to_pot",
                  "under_call": "complete_call", "oversized_chip": "treated_as_call",
                  "multiple_chips": "treated_as_call"}[k]
        out = {key: v for key, v in hand.items() if key not in ("steps", "expect")}
        out["name"] = f"{hand['name']}_{k}"
        out["steps"] = [*hand["steps"][:i], new]
        out["expect"] = {"rulings": [_rule(i + 1, "irregularity", k, remedy)]}
        return out
    return None
