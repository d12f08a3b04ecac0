"""Completed hands as PHH (Poker Hand History, https://phh.readthedocs.io), the TOML format
PokerKit reads (``pokerkit.HandHistory.loads``).

``export_hand(record, events, stakes)`` returns one hand's PHH text;
``export_phh(journal, stakes, path_or_stream)`` writes every recorded hand the format can
express and reports the others with a reason.  This module does not need PokerKit.

How the table maps onto PHH:

* Variant codes: only the games PHH has a code for (see :data:`VARIANTS`): no-limit and
  limit hold'em (``NT``, ``FT``), pot-limit Omaha (``PO``), limit Omaha hi-lo (``FO/8``),
  limit stud, stud hi-lo and razz (``F7S``, ``F7S/8``, ``FR``), no-limit 2-7 single draw
  (``N2L1D``).  Anything else (pot-limit hold'em, no-limit Omaha, A-5 lowball, draw high,
  limit 2-7 single draw ...) is skipped with :class:`PhhUnsupported`, as is a hand that
  ended in a misdeal or a void (nothing to replay).
* Players: PHH numbers players ``p1..pn`` in position order.  Button games: ``p1`` is the
  first seat dealt in to the left of the button and the button is last (heads-up ``p1`` is
  the big blind, PokerKit swaps the blinds itself).  Stud: clockwise from seat 1, the order
  the engine deals.  ``seats`` records each player's physical seat.
* Forced bets come from the stakes (``controller.config.StakesSection`` or any mapping
  with ``small_blind``, ``big_blind``, ``ante``, ``bring_in``, ``small_bet``, ``big_bet``).
* Starting stacks are not known to the table: every player gets
  :data:`DEFAULT_STARTING_STACK` and ``_notes`` says so.  An all-in therefore cannot be
  reproduced unless the console gave its amount.
* Amounts: PHH's ``cbr`` is "complete, bet or raise TO".  ``Act.amount`` is the chips put
  in by that action, so the raise-to is what the player had in this round plus the amount.
  Limit games without an amount use the fixed bet of the street; no-limit and pot-limit
  actions without an amount get the minimum legal amount and a note in ``_notes``.
* Cards: hole cards as dealt (a card replaced after an irregularity is left out), the
  board street by street, burns by PokerKit's automation, and at a showdown every live
  hand shown (``pN sm cards``).
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
    Muck,
    Report,
    SeatPlayer,
    StartHand,
    Stub,
    UnseatPlayer,
)
from controller.rules.games import Family, get_game

DEFAULT_STARTING_STACK = 10_000_000
"""Chips every player starts with in an exported hand: the table does not count stacks."""

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

_HAND_EVENTS = (Deal, Burn, BoardCards, Stub, Muck, Aside, Boxed, Expose, Act, Discard, Report, EndHand)
_LIMIT_CODES = {"FT", "FO/8", "F7S", "F7S/8", "FR"}
_STUD_CODES = {"F7S", "F7S/8", "FR"}


class PhhUnsupported(PokerTableError, ValueError):
    """This hand cannot be written as PHH; the message says why."""


@dataclass(slots=True)
class ExportResult:
    exported: list[int] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)


def _stake(stakes: Any, name: str) -> int | None:
    if stakes is None:
        return None
    value = stakes.get(name) if isinstance(stakes, Mapping) else getattr(stakes, name, None)
    return None if value is None else int(value)


def _face(card: Card) -> str:
    return card.face


def _faces(cards: Iterable[Card]) -> str:
    return "".join(_face(c) for c in cards)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=True)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"phh: cannot write {type(value).__name__}")


class _Exporter:
    def __init__(self, record: HandRecord, events: Sequence[Event], stakes: Any) -> None:
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
        self.events = [e for e in events if isinstance(e, _HAND_EVENTS)]
        self.notes: list[str] = []
        self.actions: list[str] = []
        self.engine = HandEngine(self.setup)
        self.order = list(self.engine.order)  # stud: from seat 1; button games: left of the button, button last
        self.index = {seat: i for i, seat in enumerate(self.order)}
        self._stakes(stakes)
        # cards
        self.holding: dict[int, list[Card]] = {s: [] for s in self.order}
        self.shown: dict[int, int] = {s: 0 for s in self.order}  # how many of holding are in a 'd dh' line
        self.discards: dict[int, list[Card]] = {s: [] for s in self.order}
        self.draw_written = False
        self.board_chunks = [st.board for st in self.game.streets if st.board]
        self.board_done = 0  # cards of the settled board already in a 'd db' line
        self.chunk_i = 0
        # betting
        self.street_i = -1
        self.contrib: dict[int, int] = {}
        self.level = 0
        self.last_raise = 0

    # ------------------------------------------------------------------ stakes
    def _stakes(self, stakes: Any) -> None:
        def need(name: str) -> int:
            v = _stake(stakes, name)
            if v is None:
                raise PhhUnsupported(f"stakes.{name} is needed for {self.code} and is not configured")
            return v

        self.ante = _stake(stakes, "ante") or 0
        n = len(self.order)
        self.fields: dict[str, Any] = {"variant": self.code, "antes": [self.ante] * n}
        if self.stud:
            self.bring_in_amount = need("bring_in")
            self.small_bet, self.big_bet = need("small_bet"), need("big_bet")
            self.fields |= {"bring_in": self.bring_in_amount, "small_bet": self.small_bet, "big_bet": self.big_bet}
            return
        sb, bb = need("small_blind"), need("big_blind")
        blinds = [0] * n
        if self.engine.small_blind is not None:
            blinds[self.index[self.engine.small_blind]] = sb
        if self.engine.big_blind is not None:
            blinds[self.index[self.engine.big_blind]] = bb
        if n == 2:
            blinds.reverse()  # PokerKit: heads-up, player i posts blinds_or_straddles[not i]
        self.fields["blinds_or_straddles"] = blinds
        self.sb, self.bb = sb, bb
        if self.limit:
            self.small_bet, self.big_bet = need("small_bet"), need("big_bet")
            self.fields |= {"small_bet": self.small_bet, "big_bet": self.big_bet}
        else:
            self.min_bet = bb
            self.fields["min_bet"] = bb

    # ------------------------------------------------------------------ replay
    def run(self) -> list[str]:
        for ev in self.events:
            before = {s: [h.card for h in self.engine.hands[s] if not h.scrap] for s in self.order}
            unknown = dict(self.engine.unknown_discards)
            if isinstance(ev, Act):
                self._sync_street()
                self._flush()
                self._act(ev)
            self.engine.apply(ev)
            if self.engine.phase is Phase.DEAD:
                reasons = ", ".join(r.reason for r in self.engine.rulings if r.ends_hand)
                raise PhhUnsupported(f"the hand ended in a misdeal or void ({reasons}): nothing to replay")
            self._track_cards(before, unknown)
        self._sync_street()
        self._flush()
        self._showdown()
        return self.actions

    def _track_cards(self, before: dict[int, list[Card]], unknown: dict[int, int]) -> None:
        eng = self.engine
        for seat in self.order:
            now = [h.card for h in eng.hands[seat] if not h.scrap]
            for card in now:
                if card not in self.holding[seat]:
                    self.holding[seat].append(card)
            for card in before[seat]:
                if card in now or card not in self.holding[seat]:
                    continue
                if seat in eng.folded or eng.phase is Phase.DONE:
                    continue  # a folded or finished hand collected: the cards were still dealt
                if eng.unknown_discards.get(seat, 0) < unknown.get(seat, 0) and eng.where.get(card) == "muck":
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
        if self._draw_passed():
            self.draw_written = True
            for seat in self.order:
                if seat in self.engine.active and seat in self.engine.draw_declared:
                    declared = self.engine.draw_declared[seat]
                    known = self.discards[seat]
                    if len(known) != declared:
                        raise PhhUnsupported(f"seat {seat} drew {declared} but {len(known)} of the discards were "
                                             "identified (PHH needs the cards thrown)")
                    self.actions.append(f"{self._p(seat)} sd {_faces(known)}".rstrip())
        for seat in self.order:
            new = self.holding[seat][self.shown[seat]:]
            if new and (seat not in self.engine.folded or self.shown[seat] == 0):
                self.actions.append(f"d dh {self._p(seat)} {_faces(new)}")
                self.shown[seat] = len(self.holding[seat])
        board = [c for c in self.engine.board if c not in self.engine.premature and not c.is_joker]
        while self.chunk_i < len(self.board_chunks) and len(board) >= self.board_done + self.board_chunks[self.chunk_i]:
            n = self.board_chunks[self.chunk_i]
            self.actions.append(f"d db {_faces(board[self.board_done:self.board_done + n])}")
            self.board_done += n
            self.chunk_i += 1

    def _draw_passed(self) -> bool:
        eng = self.engine
        if self.draw_written or self.game.family is not Family.DRAW:
            return False
        draw_i = next(i for i, st in enumerate(self.game.streets) if st.draw)
        return eng.street_i > draw_i or (eng.street_i == draw_i and eng.phase is not Phase.DRAW)

    def _showdown(self) -> None:
        eng = self.engine
        if eng.phase is not Phase.DONE or len(eng.active) < 2:
            return
        for seat in self.order:
            if seat in eng.active and self.holding[seat]:
                self.actions.append(f"{self._p(seat)} sm {_faces(self.holding[seat])}")

    # ------------------------------------------------------------------ betting
    def _sync_street(self) -> None:
        if self.engine.street_i == self.street_i:
            return
        self.street_i = self.engine.street_i
        self.contrib = {s: 0 for s in self.order}
        self.level = 0
        if self.street_i == 0 and not self.stud:
            if self.engine.small_blind is not None:
                self.contrib[self.engine.small_blind] = self.sb
            if self.engine.big_blind is not None:
                self.contrib[self.engine.big_blind] = self.bb
            self.level = max(self.contrib.values())
        self.last_raise = self._bet_size() if self.limit else self.min_bet if not self.stud else self.small_bet

    def _bet_size(self) -> int:
        big_from = 2 if self.game.family is not Family.DRAW else 1
        return self.big_bet if self.street_i >= big_from else self.small_bet

    def _act(self, ev: Act) -> None:
        seat, p = ev.seat, self._p(ev.seat) if ev.seat in self.index else None
        if p is None:
            raise PhhUnsupported(f"seat {ev.seat} acted but was not dealt in")
        had = self.contrib.get(seat, 0)
        if ev.action == "fold":
            self.actions.append(f"{p} f")
        elif ev.action in ("check", "call"):
            self.actions.append(f"{p} cc")
            if ev.action == "call":
                self.contrib[seat] = max(self.level, had + (ev.amount or 0)) if not ev.all_in else had + (
                    ev.amount if ev.amount is not None else self.level - had)
                if ev.all_in and ev.amount is not None and had + ev.amount < self.level:
                    self.notes.append(f"seat {seat} called all in for {ev.amount}, less than the bet: stacks unknown")
        elif ev.action == "bring_in":
            self.actions.append(f"{p} pb")
            self.contrib[seat] = had + self.bring_in_amount
            self.level = max(self.level, self.contrib[seat])
        else:  # bet, raise, complete
            to = self._raise_to(ev, had)
            self.actions.append(f"{p} cbr {to}")
            size = to - self.level
            if size >= self.last_raise:
                self.last_raise = size
            self.level = max(self.level, to)
            self.contrib[seat] = to

    def _raise_to(self, ev: Act, had: int) -> int:
        if ev.amount is not None:
            return had + int(ev.amount)
        if ev.action == "complete":
            return self.small_bet
        if self.limit:
            return self.level + self._bet_size()
        to = self.level + max(self.last_raise, self.min_bet) if self.level else self.min_bet
        what = "all-in amount unknown" if ev.all_in else "no amount given"
        self.notes.append(f"seat {ev.seat} {ev.action}: {what}; the minimum legal amount ({to}) is written")
        return to


def export_hand(record: HandRecord, events: Sequence[Event], stakes: Any, *, table: str | None = None,
                players: Mapping[int, str] | None = None, at: float | None = None) -> str:
    """One completed hand as PHH (TOML) text; :class:`PhhUnsupported` when it cannot be."""
    ex = _Exporter(record, events, stakes)
    actions = ex.run()
    n = len(ex.order)
    fields = dict(ex.fields)
    fields["starting_stacks"] = [DEFAULT_STARTING_STACK] * n
    fields["actions"] = actions
    fields["hand"] = record.hand_id
    if table:
        fields["table"] = table
    fields["seats"] = list(ex.order)
    fields["seat_count"] = record.setup.table_size
    if players and all(s in players for s in ex.order):
        fields["players"] = [players[s] for s in ex.order]
    if at is not None:
        when = _dt.datetime.fromtimestamp(at, tz=_dt.UTC)
        fields |= {"time": when.time().replace(microsecond=0).isoformat(), "time_zone": "UTC", "day": when.day,
                   "month": when.month, "year": when.year}
    notes = [f"starting stacks are unknown to the table: {DEFAULT_STARTING_STACK} each is assumed", *ex.notes]
    fields["_notes"] = notes
    fields["_game"] = f"{ex.game.name} ({ex.structure})"
    fields["_rules"] = f"{record.setup.rules} {record.setup.event}"
    if record.setup.button is not None:
        fields["_button_seat"] = record.setup.button
    rulings = [f"{r.ruling}: {r.reason}" + (f" ({r.remedy})" if r.remedy else "") for r in ex.engine.rulings]
    if rulings:
        fields["_rulings"] = rulings
    if record.outcome:
        fields["_outcome"] = json.dumps(record.outcome, sort_keys=True)
    lines = [
        f"# Hand {record.hand_id}: {ex.game.title}, {ex.structure.replace('_', '-')}, seats {list(ex.order)}",
        f"# p1..p{n} in position order; starting stacks unknown ({DEFAULT_STARTING_STACK} assumed).",
    ]
    for key, value in fields.items():
        if key == "time":
            lines.append(f"time = {value}")  # a TOML local time
        else:
            lines.append(f"{key} = {_toml(value)}")
    return "\n".join(lines) + "\n"


def export_phh(journal: Journal, stakes: Any, path_or_stream: str | Path | IO[str], *,
               table: str | None = None) -> ExportResult:
    """Write every recorded hand PHH can express.

    ``path_or_stream``: a folder (one ``hand-000042.phh`` per hand), a file name (a ``.phhs``
    set: one ``[hand_id]`` table per hand) or a text stream (the same set).  Hands that
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
            texts.append((rec.hand_id, export_hand(rec, evs, stakes, table=table, players=seated_at.get(rec.hand_id),
                                                   at=at.get(rec.hand_id))))
            result.exported.append(rec.hand_id)
        except PhhUnsupported as exc:
            result.skipped.append((rec.hand_id, str(exc)))
    if isinstance(path_or_stream, str | Path) and Path(path_or_stream).is_dir():
        for hand_id, text in texts:
            (Path(path_or_stream) / f"hand-{hand_id:06d}.phh").write_text(text, encoding="utf-8")
        return result
    out = io.StringIO()
    for hand_id, text in texts:
        out.write(f"[{hand_id}]\n{text}\n")
    if isinstance(path_or_stream, str | Path):
        Path(path_or_stream).write_text(out.getvalue(), encoding="utf-8")
    else:
        path_or_stream.write(out.getvalue())
    return result


__all__ = ["DEFAULT_STARTING_STACK", "VARIANTS", "ExportResult", "PhhUnsupported", "export_hand", "export_phh"]
