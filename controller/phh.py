"""Completed hands as PHH (Poker Hand History, https://phh.readthedocs.io), written with PokerKit's
own :class:`pokerkit.HandHistory` (so PokerKit reads back exactly what it would write).

``export_hand(record, events)`` returns one hand's PHH text; ``export_phh(journal, path_or_stream)``
writes every recorded hand the format can express and reports the others with a reason.

How the table maps onto PHH:

* Variant codes: only the games PHH has a code for (see :data:`VARIANTS`): no-limit and
  limit hold'em (``NT``, ``FT``), pot-limit Omaha (``PO``), limit Omaha hi-lo (``FO/8``),
  limit stud, stud hi-lo and razz (``F7S``, ``F7S/8``, ``FR``), no-limit 2-7 single draw
  (``N2L1D``).  Anything else (pot-limit hold'em, no-limit Omaha, A-5 lowball, draw high,
  limit 2-7 single draw ...) is skipped with :class:`PhhUnsupported`, as is a hand that
  ended in a misdeal or a void (nothing to replay) and a hand dealt without chip accounting
  (PHH needs the starting stacks, and guessing them would make every all-in wrong).
* Players: PHH numbers players ``p1..pn`` in position order.  Button games: ``p1`` is the
  first seat dealt in to the left of the button and the button is last (heads-up ``p1`` is
  the big blind, PokerKit swaps the blinds itself).  Stud: clockwise from seat 1, the order
  the engine deals.  ``seats`` records each player's physical seat.
* Chips: starting stacks, antes (or the big-blind ante), blinds, straddle, bring-in and limits
  come from the hand's own setup (``HandSetup.chips``); every action's amount is what the
  engine's chip accounting made of it, corrections of a ruling included (``cbr`` is "complete,
  bet or raise to", the whole bet in the round).
* Cards: hole cards as dealt (a card replaced after an irregularity is left out), the
  board street by street, burns by PokerKit's automation, and at a showdown every live
  hand shown (``pN sm cards``) and every hand mucked there (``pN sm``).
"""

from __future__ import annotations

import datetime as _dt
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from controller.errors import PokerTableError
from controller.journal import HandRecord, Journal
from controller.rules.cards import Card
from controller.rules.engine import HandEngine, Phase
from controller.rules.events import HAND_PLAY_EVENTS, Act, Event, Put, SeatPlayer, StartHand, UnseatPlayer
from controller.rules.games import Family, get_game
from controller.rules.operations import ActionTaken, HandView

VARIANTS: dict[tuple[str, str], str] = {
    ("holdem", "no_limit"): "NT",
    ("holdem", "limit"): "FT",
    ("omaha", "pot_limit"): "PO",
    ("omaha8", "limit"): "FO/8",
    ("stud", "limit"): "F7S",
    ("stud8", "limit"): "F7S/8",
    ("razz", "limit"): "FR",
    ("lowball_27", "no_limit"): "N2L1D",
}
"""(game, structure) -> PHH variant code."""

_LIMIT_CODES = {"FT", "FO/8", "F7S", "F7S/8", "FR"}
_STUD_CODES = {"F7S", "F7S/8", "FR"}


class PhhUnsupported(PokerTableError, ValueError):
    """This hand cannot be written as PHH; the message says why."""


@dataclass(slots=True)
class ExportResult:
    exported: list[int] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)


def _face(card: Card) -> str:
    return card.face


def _faces(cards: Iterable[Card]) -> str:
    return "".join(_face(c) for c in cards)


class _Exporter:
    def __init__(self, record: HandRecord, events: Sequence[Event]) -> None:
        self.record = record
        self.setup = record.setup
        self.game = get_game(self.setup.game)
        self.structure = self.setup.structure or self.game.default_structure
        code = VARIANTS.get((self.game.name, self.structure))
        if code is None:
            raise PhhUnsupported(f"PHH has no variant for {self.game.name} ({self.structure})")
        self.code = code
        self.limit = code in _LIMIT_CODES
        self.stud = code in _STUD_CODES
        self.events = [e for e in events if isinstance(e, HAND_PLAY_EVENTS)]
        self.notes: list[str] = []
        self.actions: list[str] = []
        if self.setup.chips is None:
            raise PhhUnsupported("the hand was dealt without chip accounting: PHH needs the starting stacks")
        self.engine = HandEngine(self.setup)
        self.order = list(self.engine.view().order)  # stud: from seat 1; button games: left of the button, button last
        self.index = {seat: i for i, seat in enumerate(self.order)}
        self._stakes()
        # cards
        self.holding: dict[int, list[Card]] = {s: [] for s in self.order}
        self.shown: dict[int, int] = {s: 0 for s in self.order}  # how many of holding are in a 'd dh' line
        self.discards: dict[int, list[Card]] = {s: [] for s in self.order}
        self.draw_written = False
        self.board_chunks = [st.board for st in self.game.streets if st.board]
        steps = [sum(len(st.hole) for st in self.game.streets[:i + 1]) for i in range(len(self.game.streets))]
        # How many hole cards a seat holds after each street (stud); other games: one chunk at a time.
        self.hole_steps: list[int | None] = [n for i, n in enumerate(steps) if self.game.streets[i].hole] + [None] \
            if self.stud else [None]
        self.board_done = 0  # cards of the settled board already in a 'd db' line
        self.chunk_i = 0

    # ------------------------------------------------------------------ stakes
    def _stakes(self) -> None:
        stakes = self.setup.chips
        assert stakes is not None
        n = len(self.order)
        hand = self.engine.view()
        antes = [stakes.ante] * n
        if stakes.bb_ante:
            payer = hand.big_blind if hand.big_blind is not None else self.order[-1]
            antes[self.index[payer]] += stakes.bb_ante
        self.fields: dict[str, Any] = {"variant": self.code, "antes": antes,
                                       "starting_stacks": [stakes.stacks[s] for s in self.order]}
        if self.limit:
            if stakes.limits is None:
                raise PhhUnsupported(f"{self.code} needs limits")
            self.fields |= {"small_bet": stakes.limits[0], "big_bet": stakes.limits[1]}
        if self.stud:
            self.fields["bring_in"] = stakes.bring_in or 0
            return
        blinds = [0] * n
        chips = hand.chips
        assert chips is not None
        forced = [s for s in (hand.small_blind, hand.big_blind, chips.straddle) if s is not None]
        for seat in forced:
            blinds[self.index[seat]] = chips.bet(seat) if seat in hand.all_in else self._nominal(seat)
        if n == 2:
            # PokerKit heads-up: player i posts blinds_or_straddles[not i] (and antes[not i]).
            blinds.reverse()
            if stakes.bb_ante:
                self.fields["antes"] = list(reversed(antes))
        self.fields["blinds_or_straddles"] = blinds
        if not self.limit:
            self.fields["min_bet"] = stakes.big_blind or max(1, stakes.ante)

    def _nominal(self, seat: int) -> int:
        stakes = self.setup.chips
        assert stakes is not None
        hand = self.engine.view()
        assert hand.chips is not None
        if seat == hand.chips.straddle:
            return stakes.straddle or 0
        if seat == hand.big_blind:
            return stakes.blinds[-1]
        return stakes.blinds[0]

    # ------------------------------------------------------------------ replay
    def run(self) -> list[str]:
        for ev in self.events:
            was = self.engine.view()
            before = {s: list(was.cards(s)) for s in self.order}
            unknown = dict(was.unknown_discards)
            assert was.chips is not None
            top = was.chips.top
            if isinstance(ev, Act | Put):
                self._flush()
            played = self.engine.play(ev)  # typed: an action as the chips counted it (controller.rules.operations)
            now = self.engine.view()
            for op in played.operations:
                if isinstance(op, ActionTaken) and op.counted:
                    self._open_pair_check(op, top, now)
                    self._action(op)
            if now.phase == Phase.DEAD.value:
                reasons = ", ".join(r.reason for r in now.rulings if r.ends_hand)
                raise PhhUnsupported(f"the hand ended in a misdeal or void ({reasons}): nothing to replay")
            self._track_cards(before, unknown)
        self._flush()
        self._showdown()
        return self.actions

    def _open_pair_check(self, last: ActionTaken, top: int, hand: HandView) -> None:
        """An open pair on fourth street lets a limit stud player bet the big bet (RRoP s8 Seven-Card
        Stud 4); PHH's fixed-limit stud (PokerKit) has only the small bet there."""
        if self.stud and hand.chips is not None and hand.chips.big_option \
                and last.action in ("bet", "raise", "complete") and (last.amount or 0) - top > self.fields["small_bet"]:
            raise PhhUnsupported("a big bet on fourth street after an open pair (RRoP s8 Seven-Card Stud 4): "
                                 "PHH's fixed-limit stud has no such option")

    def _track_cards(self, before: dict[int, list[Card]], unknown: dict[int, int]) -> None:
        hand = self.engine.view()
        for seat in self.order:
            now = list(hand.cards(seat))
            for card in now:
                if card not in self.holding[seat]:
                    self.holding[seat].append(card)
            for card in before[seat]:
                if card in now or card not in self.holding[seat]:
                    continue
                if seat in hand.folded or hand.phase == Phase.DONE.value:
                    continue  # a folded or finished hand collected: the cards were still dealt
                if hand.unknown(seat) < unknown.get(seat, 0) and hand.where(card) == "muck":
                    if self.draw_written:
                        raise PhhUnsupported(f"seat {seat}: discard {card.face} identified after the draw was written")
                    self.holding[seat].remove(card)
                    self.discards[seat].append(card)
                    self.shown[seat] -= 1
                    continue
                i = self.holding[seat].index(card)
                if i < self.shown[seat]:
                    self.notes.append(f"seat {seat}: {card.face} left the hand after it was written as dealt")
                    continue
                self.holding[seat].remove(card)
                self.notes.append(f"seat {seat}: {card.face} was replaced (irregularity); the replacement is shown")

    # ------------------------------------------------------------------ output
    def _p(self, seat: int) -> str:
        return f"p{self.index[seat] + 1}"

    def _flush(self) -> None:
        """Write what has been dealt since the last action: discards, hole cards, board."""
        hand = self.engine.view()
        if self._draw_passed():
            self.draw_written = True
            for seat in self.order:
                declared = hand.declared(seat)
                if seat in hand.active and declared is not None:
                    known = self.discards[seat]
                    if len(known) != declared:
                        raise PhhUnsupported(f"seat {seat} drew {declared} but {len(known)} of the discards were "
                                             "identified (PHH needs the cards thrown)")
                    self.actions.append(f"{self._p(seat)} sd {_faces(known)}".rstrip())
        # Stud deals street by street, and PHH (PokerKit) takes one 'd dh' per player per street: an
        # all-in run-out (no action between the streets) is still written a street at a time.
        for upto in self.hole_steps:
            for seat in self.order:
                new = self.holding[seat][self.shown[seat]:upto]
                if new and (seat not in hand.folded or self.shown[seat] == 0):
                    self.actions.append(f"d dh {self._p(seat)} {_faces(new)}")
                    self.shown[seat] += len(new)
        board = [c for c in hand.board if not c.is_joker]
        while self.chunk_i < len(self.board_chunks) and len(board) >= self.board_done + self.board_chunks[self.chunk_i]:
            n = self.board_chunks[self.chunk_i]
            self.actions.append(f"d db {_faces(board[self.board_done:self.board_done + n])}")
            self.board_done += n
            self.chunk_i += 1

    def _draw_passed(self) -> bool:
        if self.draw_written or self.game.family is not Family.DRAW:
            return False
        hand = self.engine.view()
        draw_i = next(i for i, st in enumerate(self.game.streets) if st.draw)
        return hand.street > draw_i or (hand.street == draw_i and hand.phase != Phase.DRAW.value)

    def _showdown(self) -> None:
        hand = self.engine.view()
        if hand.phase != Phase.DONE.value or len(hand.active) < 2:
            return
        for seat in self.order:
            if seat in hand.mucked:
                self.actions.append(f"{self._p(seat)} sm")
            elif seat in hand.active and self.holding[seat]:
                self.actions.append(f"{self._p(seat)} sm {_faces(self.holding[seat])}")

    # ------------------------------------------------------------------ betting
    def _action(self, last: ActionTaken) -> None:
        """One action as the engine's chips counted it (corrections of a ruling included)."""
        seat = last.seat
        if seat not in self.index:
            raise PhhUnsupported(f"seat {seat} acted but was not dealt in")
        p, action = self._p(seat), last.action
        if action == "fold":
            self.actions.append(f"{p} f")
        elif action in ("check", "call"):
            self.actions.append(f"{p} cc")
        elif action == "bring_in":
            self.actions.append(f"{p} pb")
        else:
            self.actions.append(f"{p} cbr {last.amount}")


def hand_history(record: HandRecord, events: Sequence[Event], *, table: str | None = None,
                 players: Mapping[int, str] | None = None, at: float | None = None) -> Any:
    """One completed hand as a :class:`pokerkit.HandHistory`; :class:`PhhUnsupported` when it cannot be."""
    from pokerkit import HandHistory

    ex = _Exporter(record, events)
    actions = ex.run()
    fields = dict(ex.fields)
    extra: dict[str, Any] = {"hand": record.hand_id, "seats": list(ex.order), "seat_count": record.setup.table_size}
    if table:
        extra["table"] = table
    if players and all(s in players for s in ex.order):
        extra["players"] = [players[s] for s in ex.order]
    if at is not None:
        when = _dt.datetime.fromtimestamp(at, tz=_dt.UTC)
        extra |= {"time": when.time().replace(microsecond=0), "time_zone": "UTC", "day": when.day,
                  "month": when.month, "year": when.year}
    settled = ex.engine.settle()
    if settled is not None and settled.stacks is not None:
        final = dict(settled.stacks)
        extra["finishing_stacks"] = [final[s] for s in ex.order]
    user: dict[str, Any] = {"_game": f"{ex.game.name} ({ex.structure})",
                            "_rules": f"{record.setup.rules} {record.setup.event}"}
    if ex.notes:
        user["_notes"] = list(ex.notes)
    if record.setup.button is not None:
        user["_button_seat"] = record.setup.button
    rulings = [f"{r.ruling}: {r.reason}" + (f" ({r.remedy})" if r.remedy else "") for r in ex.engine.view().rulings]
    if rulings:
        user["_rulings"] = rulings
    if record.outcome:
        user["_outcome"] = json.dumps(record.outcome, sort_keys=True)
    return HandHistory(**fields, actions=actions, **extra, user_defined_fields=user)


def export_hand(record: HandRecord, events: Sequence[Event], *, table: str | None = None,
                players: Mapping[int, str] | None = None, at: float | None = None) -> str:
    """One completed hand as PHH (TOML) text; :class:`PhhUnsupported` when it cannot be."""
    hh = hand_history(record, events, table=table, players=players, at=at)
    title = f"# Hand {record.hand_id}: {get_game(record.setup.game).title}, seats {hh.seats}\n"
    return title + hh.dumps()


def export_phh(journal: Journal, path_or_stream: str | Path | IO[str], *,
               table: str | None = None) -> ExportResult:
    """Write every recorded hand PHH can express.

    ``path_or_stream``: a folder (one ``hand-000042.phh`` per hand; made when it does not exist
    and its name does not end in ``.phhs``), a file name ending in ``.phhs`` (a set: one
    ``[hand_id]`` table per hand) or a text stream (the same set).  Hands that
    cannot be written are listed in :attr:`ExportResult.skipped` with the reason.
    """
    result = ExportResult()
    texts: list[tuple[int, str]] = []
    records = sorted(journal.hands(), key=lambda r: r.first_seq)
    names: dict[int, str] = {}
    starts = {r.first_seq: r for r in records}
    events: dict[int, list[Event]] = {r.hand_id: [] for r in records}
    at: dict[int, float] = {}
    seated_at: dict[int, dict[int, str]] = {}
    open_hands: list[HandRecord] = []
    for entry in journal.entries():
        ev = entry.event
        if entry.seq in starts:
            rec = starts[entry.seq]
            open_hands.append(rec)
            seated_at[rec.hand_id] = dict(names)
            at[rec.hand_id] = entry.at
        for rec in open_hands:
            events[rec.hand_id].append(ev)
        open_hands = [r for r in open_hands if r.last_seq > entry.seq]
        if isinstance(ev, SeatPlayer):
            names[ev.seat] = ev.name
        elif isinstance(ev, UnseatPlayer):
            names.pop(ev.seat, None)
    for rec in sorted(records, key=lambda r: r.hand_id):
        evs = events[rec.hand_id]
        if evs and isinstance(evs[0], StartHand):
            evs = evs[1:]
        try:
            texts.append((rec.hand_id, export_hand(rec, evs, table=table, players=seated_at.get(rec.hand_id),
                                                   at=at.get(rec.hand_id))))
            result.exported.append(rec.hand_id)
        except PhhUnsupported as exc:
            result.skipped.append((rec.hand_id, str(exc)))
    if isinstance(path_or_stream, str | Path) and not Path(path_or_stream).exists() \
            and Path(path_or_stream).suffix.lower() not in (".phhs", ".phh", ".toml"):
        Path(path_or_stream).mkdir(parents=True)  # a folder that is not there yet (no .phhs name): made
    if isinstance(path_or_stream, str | Path) and Path(path_or_stream).is_dir():
        for hand_id, text in texts:
            (Path(path_or_stream) / f"hand-{hand_id:06d}.phh").write_text(text, encoding="utf-8")
        return result
    out = io.StringIO()
    for hand_id, text in texts:
        out.write(f"[{hand_id}]\n{text}\n")
    if isinstance(path_or_stream, str | Path):
        Path(path_or_stream).parent.mkdir(parents=True, exist_ok=True)
        Path(path_or_stream).write_text(out.getvalue(), encoding="utf-8")
    else:
        path_or_stream.write(out.getvalue())
    return result


__all__ = ["VARIANTS", "ExportResult", "PhhUnsupported", "export_hand", "export_phh", "hand_history"]
