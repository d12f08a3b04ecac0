"""The one owner of table state.

Every input — a card sensed by the bridge, a button on the panel, a request from the
dealer's console — becomes an :mod:`controller.rules.events` event and goes through
:meth:`TableService.submit`: written to the journal first (durable), then applied.
Applying is deterministic, so replaying the journal after a crash (even ``kill -9``)
rebuilds exactly the same table, mid-hand included.

Applying an event yields :class:`Output` records (a card dealt, a ruling, the hand's
end...).  They carry the journal sequence number of the event that caused them, so the
MQTT publisher can resume after an outage from the last sequence it delivered.
Outputs are public by construction except ``holecards``, which only the protected
topic and the broadcast delay ever see.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controller.equity.fasteval import card_values
from controller.errors import PokerTableError
from controller.geometry import seat_of
from controller.mqtt.contract import alert_from_ruling, public_cards
from controller.rules.chips import ChipsError
from controller.rules.engine import HandEngine, Phase, SetupError
from controller.rules.events import (
    Acknowledge,
    Act,
    Aside,
    BoardCards,
    Boxed,
    Burn,
    CallMisdeal,
    CameraReport,
    ChangeGame,
    ConfirmDeals,
    Deal,
    DealerSignIn,
    Discard,
    EndHand,
    Event,
    Expose,
    Muck,
    NewHand,
    Put,
    Report,
    SeatPlayer,
    SetButton,
    SetLevel,
    SetStack,
    ShufflerFault,
    StartHand,
    Stub,
    UnknownTagRead,
    UnseatPlayer,
)
from controller.rules.games import GameError
from controller.rules.profiles import ProfileError, get_profile
from controller.rules.rulings import IRREGULARITY, MISDEAL, Ruling, kind_of, make_ruling
from controller.rules.showdown import install_fast_values
from controller.rules.table import Table, TableError

log = logging.getLogger("controller.service")

install_fast_values(card_values)  # pot awards find winners with the equity tables (same order, faster)

HAND_EVENTS = (Deal, Burn, BoardCards, Act, Put, Discard, Expose, Report)


class Rejected(PokerTableError, ValueError):
    """An input the table cannot take now; nothing changed (the message says why)."""


@dataclass(frozen=True, slots=True)
class Output:
    """Something that happened, for the displays: ``kind`` and a JSON-ready payload."""

    kind: str
    payload: dict[str, Any]
    seq: int = 0
    secret: bool = False


@dataclass(slots=True)
class Alert:
    id: str
    hand_id: int | None
    data: dict[str, Any]  # the alert payload of docs/mqtt.md
    severity: str
    requires_ack: bool
    seq: int
    ts: float

    def payload(self) -> dict[str, Any]:
        return dict(self.data)


@dataclass
class TableService:
    """Table + current hand + alerts; journal-first; deterministic."""

    table: Table
    journal: Any = None  # controller.journal.Journal, or None for a throwaway table
    clock: Callable[[], float] = time.time
    engine: HandEngine | None = None
    hand_id: int = 0
    alerts: list[Alert] = field(default_factory=list)
    hard_stop: bool = False
    seq: int = 0
    last_hand_misdeal: bool = False
    dealer: str | None = None  # signed in (DealerSignIn): carried by every hand and ruling
    _alert_count: int = 0
    _hand_first_seq: int = 0
    _hand_closed: bool = True
    _street_sent: int | None = None  # the street event/street last announced, this hand

    # ------------------------------------------------------------------ input
    def submit(self, event: Event, source: str = "", transaction: str | None = None) -> list[Output]:
        """Validate, journal, apply.  Raises :class:`Rejected` (and journals nothing) when the
        event cannot apply now.  ``transaction`` (a console request's id) is journaled with the
        event, in the same commit, so a retried request is recognised even after a restart."""
        self._precheck(event)
        now = self.clock()
        if self.journal is None:
            seq = self.seq + 1
        elif transaction:
            seq = self.journal.append(event, at=now, source=source, transaction=transaction)
        else:
            seq = self.journal.append(event, at=now, source=source)
        return self.apply(event, seq=seq, at=now)

    def replay(self, entries) -> list[Output]:
        """Rebuild state from journal entries (seq, at, event).  An entry this table cannot take
        (a journal written for a bigger table, another game...) raises :class:`JournalError`
        naming its seq and the reason: never a traceback, never a half-applied guess."""
        from controller.journal import JournalError

        outputs: list[Output] = []
        for entry in entries:
            try:
                outputs.extend(self.apply(entry.event, seq=entry.seq, at=entry.at))
            except (TableError, GameError, ProfileError, SetupError, Rejected, ValueError, KeyError) as exc:
                raise JournalError(
                    f"entry seq {entry.seq} ({entry.event.kind}) does not apply to this table "
                    f"({self.table.size} seats, {self.table.game}): {exc}; was the journal written with "
                    "another config?") from exc
        return outputs

    def _precheck(self, event: Event) -> None:
        """Refuse what cannot apply, before anything is journaled."""
        if isinstance(event, NewHand):
            if self.hard_stop:
                raise Rejected("hard stop: acknowledge the shuffler fault before a new hand")
            if self.engine is not None and not self.engine.over:
                raise Rejected(f"hand {self.hand_id} is still in progress")
            if not self.last_hand_misdeal:
                self._try(lambda t: HandEngine(t.next_setup()))
        elif isinstance(event, SeatPlayer):
            self._try(lambda t: t.seat(event.seat, event.name, event.post, event.stack))
        elif isinstance(event, SetStack | SetLevel):
            self._precheck_chips_table(event)
        elif isinstance(event, UnseatPlayer):
            self._try(lambda t: t.unseat(event.seat))
        elif isinstance(event, SetButton):
            if self.engine is not None and not self.engine.over:
                raise Rejected("the button cannot move during a hand")
            self._try(lambda t: t.set_button(event.seat))
        elif isinstance(event, ChangeGame):
            if self.engine is not None and not self.engine.over:
                raise Rejected("the game cannot change during a hand")
            self._try(lambda t: t.change_game(event.game, event.rules, event.structure))
            if event.event not in (None, "cash", "tournament"):
                raise Rejected(f"event must be cash or tournament, got {event.event!r}")
        elif isinstance(event, DealerSignIn):
            if event.dealer is not None and not 1 <= len(event.dealer) <= 64:
                raise Rejected("a dealer's name is 1 to 64 characters")
            if event.source not in ("nfc", "console"):
                raise Rejected(f"a dealer signs in by nfc or console, not {event.source!r}")
        elif isinstance(event, CameraReport) and event.reason not in ("camera_mismatch", "card_unread"):
            raise Rejected(f"{event.reason!r} is not a camera report")
        elif isinstance(event, CallMisdeal) and not _is_misdeal_reason(event.reason):
            raise Rejected(f"{event.reason!r} is not a misdeal reason code")
        elif isinstance(event, Report) and not _is_reason(event.reason):
            raise Rejected(f"{event.reason!r} is not a reason code")
        elif isinstance(event, HAND_EVENTS + (CallMisdeal, ConfirmDeals)):
            if self.engine is None or self.engine.over:
                raise Rejected(f"no hand in progress for {event.kind}")
            if isinstance(event, Act | Put | Discard | Expose | Deal) and getattr(event, "seat", 0) > self.table.size:
                raise Rejected(f"seat {event.seat} is not on a {self.table.size}-seat table")
            refusal = self.engine.refusal(event)  # e.g. betting on a board with a card missing
            if refusal is not None:
                raise Rejected(refusal)
            if isinstance(event, Act | Put):
                self._precheck_chips(event)
        elif isinstance(event, Acknowledge):
            if not self.alerts and not self.hard_stop:
                raise Rejected("no alert to acknowledge")
            if event.alert is not None and all(a.id != event.alert for a in self.alerts):
                raise Rejected(f"no active alert {event.alert!r}")

    # ------------------------------------------------------------------ chips (controller.rules.chips)
    def _precheck_chips(self, event: Act | Put) -> None:
        """An action or a push the chips cannot mean is refused with what is legal; an ``act``
        amount outside the legal range too (the console typed it: no ruling, a clear error)."""
        engine = self.engine
        assert engine is not None
        if engine.chips is None:
            if isinstance(event, Put):
                raise Rejected("this hand counts no chips: a push cannot be ruled on")
            return
        chips = engine.chips
        seat = event.seat
        if seat in chips.folded or seat in chips.all_in or seat not in chips.bets:
            raise Rejected(f"seat {seat} is not in the hand with chips to act")
        legal = chips.legal(seat)
        words = _legal_words(seat, legal)
        try:
            if isinstance(event, Put):
                chips.decide_put(seat, event.chips, event.declare, event.to)
                return
            d = chips.decide_act(seat, event.action, event.amount, event.all_in)
        except ChipsError as exc:
            raise Rejected(f"{exc} ({words})") from exc
        if d.reason in ("raise_capped", "raise_not_reopened"):
            why = "the betting is capped" if d.reason == "raise_capped" else "the betting was not reopened"
            raise Rejected(f"seat {seat} may not raise: {why} ({words})")
        if d.reason is not None and event.amount is not None:
            raise Rejected(f"seat {seat} {event.action} {event.amount:,} is outside the legal range ({words})")

    def _precheck_chips_table(self, event: SetStack | SetLevel) -> None:
        """Stacks change between hands only; a level may be asked for any time and takes effect
        with the next hand."""
        if isinstance(event, SetStack):
            if self.engine is not None and not self.engine.over:
                raise Rejected(f"stacks change between hands only (hand {self.hand_id} is in progress)")
            self._try(lambda t: t.set_stack(event.seat, event.stack, event.add))
        else:
            self._try(lambda t: t.request_level(event.number, event.advance))

    def _apply_set_stack(self, ev: SetStack, out: list[Output], at: float) -> None:
        stack = self.table.set_stack(ev.seat, ev.stack, ev.add)
        out.append(Output("table", {"change": "stack", "seat": ev.seat, "stack": stack}))

    def _apply_set_level(self, ev: SetLevel, out: list[Output], at: float) -> None:
        number = self.table.request_level(ev.number, ev.advance)
        out.append(Output("table", {"change": "level", "next": number}))

    def _chips_result(self, engine: HandEngine) -> dict[str, Any]:
        """``payouts`` and ``pots`` of hand_end; the stacks carry into the next hand."""
        if engine.chips is None:
            return {}
        payouts = engine.settle()
        if payouts is None:
            # Nothing was awarded (a misdeal, a void, or hands not known): chips behind stay, and
            # the pot is the floor's to settle with request/stack.
            if engine.phase is Phase.DEAD:
                self.table.carry_stacks(engine.chips.start)  # misdeal or void: every chip goes back
            return {"payouts": None, "pots": [{"amount": p.amount, "eligible": list(p.eligible), "winners": []}
                                              for p in engine.chips.pots()]}
        final = engine.chips.final_stacks() or {}
        self.table.carry_stacks(final)
        seat, excess = engine.chips.uncalled()
        # The uncalled excess goes back: it is in ``payouts`` (every chip pushed to the seat) but
        # it is no winnings, so ``returned`` names it apart.
        returned = {"seat": seat, "amount": excess} if seat is not None and excess else None
        return {"payouts": {str(s): c for s, c in payouts.items() if c}, "pots": engine.chips.awarded,
                "returned": returned}

    def _try(self, change: Callable[[Table], object]) -> None:
        probe = _copy_table(self.table)
        try:
            change(probe)
        except (TableError, GameError, ProfileError, SetupError) as exc:
            raise Rejected(str(exc)) from exc

    # ------------------------------------------------------------------ apply
    def apply(self, event: Event, *, seq: int, at: float) -> list[Output]:
        self.seq = seq
        out: list[Output] = []
        handler = _HANDLERS.get(type(event))
        if handler is None:
            raise Rejected(f"the table does not take {event.kind!r} events")
        handler(self, event, out, at)
        return [Output(o.kind, o.payload, seq, o.secret) for o in out]

    def _apply_seat_player(self, ev: SeatPlayer, out: list[Output], at: float) -> None:
        self.table.seat(ev.seat, ev.name, ev.post, ev.stack)
        out.append(Output("table", {"change": "seat", "seat": ev.seat, "name": ev.name}))

    def _apply_unseat_player(self, ev: UnseatPlayer, out: list[Output], at: float) -> None:
        self.table.unseat(ev.seat)
        out.append(Output("table", {"change": "unseat", "seat": ev.seat}))

    def _apply_set_button(self, ev: SetButton, out: list[Output], at: float) -> None:
        self.table.set_button(ev.seat)
        self.last_hand_misdeal = False
        out.append(Output("table", {"change": "button", "seat": ev.seat}))

    def _apply_change_game(self, ev: ChangeGame, out: list[Output], at: float) -> None:
        self.table.change_game(ev.game, ev.rules, ev.structure)
        if ev.event:
            self.table.event = ev.event
        self.last_hand_misdeal = False
        out.append(Output("table", {"change": "game", "game": ev.game, "rules": get_profile(self.table.rules).name}))

    def _apply_dealer_sign_in(self, ev: DealerSignIn, out: list[Output], at: float) -> None:
        self.dealer = ev.dealer
        out.append(Output("dealer", {"dealer": ev.dealer, "badge": ev.badge, "source": ev.source}))

    def _apply_new_hand(self, ev: NewHand, out: list[Output], at: float) -> None:
        # TDA 33-C: after a misdeal the redeal is an exact replay; the button does not move.
        redeal = self.last_hand_misdeal and self.table.last_setup is not None
        if not redeal:
            self.table.level_for_hand(at)  # a new level takes effect with the next hand, never mid-hand
        self.engine = self.table.start_hand(redeal=redeal)
        self._street_sent = None
        self.hand_id += 1
        self._hand_first_seq = self.seq
        self._hand_closed = False
        self.last_hand_misdeal = False
        out.append(self._hand_start())

    def _hand_start(self) -> Output:
        e = self.engine
        assert e is not None
        s = e.setup
        payload: dict[str, Any] = {
            "game": s.game, "rules": e.profile.name, "event": s.event, "structure": e.structure, "button": s.button,
            "blinds": {"small": e.small_blind, "big": e.big_blind}, "seats": list(e.order),
            "dealer": self.dealer,
        }
        if s.chips is not None:
            payload["stakes"] = s.chips.to_dict()
        return Output("hand_start", payload)

    def _apply_start_hand(self, ev: StartHand, out: list[Output], at: float) -> None:
        """A hand with an explicit setup (replays, scenarios and the console's override)."""
        self.engine = HandEngine(ev.setup)
        self._street_sent = None
        self.table.last_setup = ev.setup
        self.hand_id += 1
        self._hand_first_seq = self.seq
        self._hand_closed = False
        out.append(self._hand_start())

    def _hand_event(self, ev: Event, out: list[Output], at: float) -> None:
        engine = self.engine
        if engine is None or engine.over:
            return
        board_before = len(engine.board)
        applied = engine.chips.applied if engine.chips is not None else 0
        rulings = engine.apply(ev)
        self._describe(ev, out, board_before, applied)
        if engine.street_i != self._street_sent and engine.phase in (Phase.BET, Phase.BOARD, Phase.DRAW):
            # Once per street: a board street goes from waiting for its cards to its betting.
            self._street_sent = engine.street_i
            out.append(Output("street", {"name": engine.street.name}))
        for r in rulings:
            self._alert(r, out, at)
        if isinstance(ev, Deal | Discard | Expose):
            out.append(Output("holecards", {"seats": _str_keys(engine.hole_cards())}, secret=True))
        if engine.over:
            self._close_hand(out)


    def _apply_confirm_deals(self, ev: ConfirmDeals, out: list[Output], at: float) -> None:
        # The dealer's answer to "order unknown: confirm": dealt in the order he gives.
        for event in ev.events():
            self._hand_event(event, out, at)

    def _apply_call_misdeal(self, ev: CallMisdeal, out: list[Output], at: float) -> None:
        self._hand_event(Report(ev.reason), out, at)

    def _apply_end_hand(self, ev: EndHand, out: list[Output], at: float) -> None:
        if self.engine is not None:
            self.engine.apply(ev)
            self._close_hand(out)

    def _apply_acknowledge(self, ev: Acknowledge, out: list[Output], at: float) -> None:
        if ev.alert is None:
            cleared = self.alerts[:1]
        else:
            cleared = [a for a in self.alerts if a.id == ev.alert]
        for a in cleared:
            self.alerts.remove(a)
            if a.severity == "fault":
                self.hard_stop = False
        if not cleared and self.hard_stop:
            self.hard_stop = False
        out.append(Output("alert_cleared", {"ids": [a.id for a in cleared], "active": self._active_id()}))

    def _apply_shuffler_fault(self, ev: ShufflerFault, out: list[Output], at: float) -> None:
        # A hard stop: no new hand until the dealer acknowledges (TDA 21: the hand begins on the
        # shuffler's button, so a fault before it is not a misdeal).
        self.hard_stop = True
        r = make_ruling(IRREGULARITY, "shuffler_fault", "acknowledge", profile=self.table.rules,
                        game=self.table.game, detail=ev.detail or None)
        self._alert(r, out, at, severity="fault")

    def _apply_camera_report(self, ev: CameraReport, out: list[Output], at: float) -> None:
        # The camera watches the board as well as the seats: the alert names the zone, and a seat
        # only when the zone is one (the alert schema's ``seat`` is a seat number or null).
        r = make_ruling(IRREGULARITY, ev.reason, "identify_card", profile=self.table.rules, game=self.table.game,
                        seat=seat_of(ev.zone), card=ev.seen, zone=ev.zone, detail=ev.detail or None)
        self._alert(r, out, at)

    def _apply_unknown_tag(self, ev: UnknownTagRead, out: list[Output], at: float) -> None:
        r = make_ruling(IRREGULARITY, "unknown_tag", "identify_card", profile=self.table.rules,
                        game=self.table.game, seat=seat_of(ev.zone), zone=ev.zone, uid=ev.uid)
        self._alert(r, out, at)

    # ------------------------------------------------------------------ helpers
    def _describe(self, ev: Event, out: list[Output], board_before: int, applied: int = 0) -> None:
        engine = self.engine
        assert engine is not None
        if isinstance(ev, Deal):
            held = next((x for x in reversed(engine.hands.get(ev.seat, [])) if x.card == ev.card), None)
            if held is not None:
                up = held.up
                out.append(Output("card", {"seat": ev.seat, "face": "up" if up else "down",
                                           "card": held.card.label(engine.setup.deck) if up else None,
                                           "source": ev.source}))
        elif isinstance(ev, Expose):
            held = next((x for x in engine.hands.get(ev.seat, []) if x.card == ev.card), None)
            if held is not None and held.up:
                out.append(Output("card", {"seat": ev.seat, "face": "up", "card": held.card.label(engine.setup.deck),
                                           "source": ev.source, "exposed": True}))
        elif isinstance(ev, Burn):
            out.append(Output("burn", {"count": 1, "source": ev.source}))
        elif isinstance(ev, BoardCards):
            board = [c.label(engine.setup.deck) for c in engine.board if c not in engine.premature]
            if board:
                out.append(Output("board", {"cards": board[-5:], "source": ev.source}))
        elif isinstance(ev, Act | Put):
            counted = engine.chips is not None and engine.chips.applied != applied
            last = engine.chips.last_action if engine.chips is not None and counted else None
            if last is not None and engine.chips is not None:
                # what the chips made of it (a push ruled on included): the whole bet in the round
                out.append(Output("action", {"seat": ev.seat, "action": last["action"], "amount": last["amount"],
                                             "all_in": ev.seat in engine.chips.all_in, "text": last["text"]}))
            elif isinstance(ev, Act):
                out.append(Output("action", {"seat": ev.seat, "action": ev.action, "all_in": ev.all_in,
                                             "amount": ev.amount}))
        elif isinstance(ev, Discard):
            out.append(Output("draw", {"seat": ev.seat, "count": ev.count}))

    def _alert(self, r: Ruling, out: list[Output], at: float, severity: str | None = None) -> None:
        """Every ruling is an alert the dealer acknowledges.  Its card is named only when the card
        is public (face up, on the board); otherwise the words are rebuilt without it."""
        self._alert_count += 1
        public = public_cards(self.engine.snapshot()) if self.engine is not None else set()
        hand_id = self.hand_id if self.engine is not None else None
        payload = alert_from_ruling(r, id=f"a{self._alert_count}", seq=self.seq, ts=round(at, 3), hand_id=hand_id,
                                    public=public)
        if severity == "fault":
            payload["ruling"], payload["severity"] = None, "fault"
        payload["dealer"] = self.dealer
        alert = Alert(payload["id"], hand_id, payload, payload["severity"], True, self.seq, at)
        if r.ends_hand:
            # A misdeal or void supersedes this hand's pending irregularities: their instructions
            # ("put it back, it is the next burn") no longer apply to a hand that is redealt.
            self.alerts = [a for a in self.alerts if not (a.hand_id == hand_id and a.severity == IRREGULARITY)]
        self.alerts.append(alert)
        out.append(Output("alert", payload))

    def _active_id(self) -> str | None:
        return self.alerts[0].id if self.alerts else None

    def _close_hand(self, out: list[Output]) -> None:
        engine = self.engine
        if engine is None or self._hand_closed:
            return
        self._hand_closed = True
        ended = [r for r in engine.rulings if r.ends_hand]
        self.last_hand_misdeal = bool(ended and ended[-1].ruling == MISDEAL)
        award = engine.showdown()
        winners: list[dict[str, Any]] = []
        shown = None
        summary = None
        if ended:
            result_kind = ended[-1].ruling
        elif award is not None:
            result_kind = "showdown"
            for part in award.parts:
                for seat in part.winners:
                    value = part.values.get(seat)
                    winners.append({"seat": seat, "part": part.part, "hand": value.name if value else "",
                                    "share": part.shares.get(seat)})
            # Only the hands still live at the showdown are tabled (public now); a folded or dead
            # hand was never shown, so its cards stay secret for good (display-readable topic).
            shown = _str_keys({s: c for s, c in engine.hole_cards().items() if s in engine.active})
            summary = award.describe()
        else:
            result_kind = "uncontested"
            if engine.winner is not None:
                winners.append({"seat": engine.winner, "part": "pot", "share": None})
        result: dict[str, Any] = {"result": result_kind, "winners": winners, "shown": shown, "summary": summary}
        result |= self._chips_result(engine)
        if result.get("payouts"):
            back = result.get("returned") or {}
            for w in winners:  # what the seat won: its own uncalled chips back are not winnings
                w["share"] = int(result["payouts"].get(str(w["seat"]), 0)) - \
                    (int(back["amount"]) if back.get("seat") == w["seat"] else 0)
        out.append(Output("hand_end", result))
        if self.journal is not None and hasattr(self.journal, "record_hand"):
            try:
                record = dict(result, rulings=[{"ruling": r.ruling, "reason": r.reason, "remedy": r.remedy}
                                               for r in engine.rulings])
                self.journal.record_hand(self.hand_id, engine.setup, self._hand_first_seq, self.seq, record)
            except Exception:  # a history write must never stop the table
                log.exception("could not record hand %s", self.hand_id)

    # ------------------------------------------------------------------ views
    def public_state(self) -> dict[str, Any]:
        hand = None
        if self.engine is not None:
            hand = self.engine.snapshot()
            hand.pop("rulings", None)
        table = self.table.describe()
        if hand is not None and hand.get("chips") and self.engine is not None and not self.engine.over:
            for seat, player in table["players"].items():  # during a hand: the chips behind
                player["stack"] = hand["chips"]["stacks"].get(seat, player["stack"])
        elif hand is not None and hand.get("chips") and self.engine is not None:
            hand["chips"] = _settled_chips(self.engine, hand["chips"])
        return {
            "table": table,
            "hand_id": self.hand_id if self.engine is not None else None,
            "hand": hand,
            "alert": self.alerts[0].payload() if self.alerts else None,
            "hard_stop": self.hard_stop,
        }

    def hole_cards(self) -> dict[str, list[str]]:
        return _str_keys(self.engine.hole_cards()) if self.engine is not None else {}


def _settled_chips(engine: HandEngine, chips: dict[str, Any]) -> dict[str, Any]:
    """The chips once the hand is over, as the table shows them after the push: the stacks paid
    (a misdeal or void: every chip back where it was), no bets in front of anyone, and the pot
    that was awarded (an uncalled bet returned is no part of it).  When nothing could be awarded
    automatically the chips stay as they lie, for the floor to settle."""
    book = engine.chips
    if book is None:
        return chips
    none = {str(s): 0 for s in book.order}
    base = {**chips, "bets": none, "to_call": None, "min_raise": None, "max_raise": None}
    if engine.phase is Phase.DEAD:
        return {**base, "stacks": {str(s): c for s, c in book.start.items()}, "pot": 0, "pots": []}
    final = book.final_stacks()
    if final is None:
        return chips
    pots = [{"amount": int(p["amount"]), "eligible": list(p["eligible"])} for p in book.awarded]
    return {**base, "stacks": {str(s): c for s, c in final.items()}, "pot": sum(p["amount"] for p in pots),
            "pots": pots}


def _legal_words(seat: int, legal: Any) -> str:
    call = f"to call {legal.to_call:,}" if legal.to_call else "nothing to call"
    if legal.min_raise is None:
        return f"seat {seat}: {call}; no raise"
    if legal.min_raise == legal.max_raise:
        return f"seat {seat}: {call}; bet or raise to {legal.min_raise:,}"
    return f"seat {seat}: {call}; bet or raise to {legal.min_raise:,}..{legal.max_raise:,}"


def _is_reason(code: str) -> bool:
    try:
        kind_of(code)
    except (KeyError, ValueError):
        return False
    return True


def _is_misdeal_reason(code: str) -> bool:
    return _is_reason(code) and kind_of(code) == MISDEAL


def _str_keys(d: dict) -> dict[str, Any]:
    return {str(k): v for k, v in d.items()}


def _copy_table(table: Table) -> Table:
    """A deep copy to try a change on without touching the real table."""
    import copy

    return copy.deepcopy(table)


#: The service's handler of each event type the table takes outside a hand's engine (explicit).
_HANDLERS: dict[type[Event], Callable[[TableService, Any, list[Output], float], None]] = {
    Deal: TableService._hand_event,
    Burn: TableService._hand_event,
    BoardCards: TableService._hand_event,
    Act: TableService._hand_event,
    Put: TableService._hand_event,
    Discard: TableService._hand_event,
    Expose: TableService._hand_event,
    Report: TableService._hand_event,
    ConfirmDeals: TableService._apply_confirm_deals,
    Stub: TableService._hand_event,
    Muck: TableService._hand_event,
    Aside: TableService._hand_event,
    Boxed: TableService._hand_event,
    SeatPlayer: TableService._apply_seat_player,
    UnseatPlayer: TableService._apply_unseat_player,
    SetButton: TableService._apply_set_button,
    SetStack: TableService._apply_set_stack,
    SetLevel: TableService._apply_set_level,
    ChangeGame: TableService._apply_change_game,
    NewHand: TableService._apply_new_hand,
    StartHand: TableService._apply_start_hand,
    CallMisdeal: TableService._apply_call_misdeal,
    EndHand: TableService._apply_end_hand,
    Acknowledge: TableService._apply_acknowledge,
    ShufflerFault: TableService._apply_shuffler_fault,
    DealerSignIn: TableService._apply_dealer_sign_in,
    CameraReport: TableService._apply_camera_report,
    UnknownTagRead: TableService._apply_unknown_tag,
}
