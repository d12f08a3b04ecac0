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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from controller.equity.fasteval import card_values
from controller.geometry import seat_of
from controller.rules.engine import HandEngine, SetupError
from controller.rules.events import (
    HAND_PLAY_EVENTS,
    Acknowledge,
    Act,
    BoardCards,
    Burn,
    CallClock,
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
    Looked,
    NewHand,
    Put,
    Report,
    SeatPlayer,
    SetBroadcastDelay,
    SetButton,
    SetLevel,
    SetRotation,
    SetStack,
    ShufflerFault,
    SitIn,
    SitOut,
    StartDraw,
    StartHand,
    UnknownTagRead,
    UnseatPlayer,
)
from controller.rules.games import GameError
from controller.rules.profiles import ProfileError, get_profile
from controller.rules.rulings import IRREGULARITY, MISDEAL, kind_of, make_ruling
from controller.rules.showdown import install_fast_values
from controller.rules.table import TableError
from controller.service.results import (
    AlertsCleared,
    ButtonMoved,
    ClockCalled,
    DealerSignedIn,
    DelayChanged,
    GameChanged,
    HandBegan,
    LevelRequested,
    Output,
    PlayerLeft,
    PlayerSat,
    SeatEmptied,
    SeatTaken,
    StackSet,
)
from controller.service.state import Rejected
from controller.service.views import TableViews

install_fast_values(card_values)  # pot awards find winners with the equity tables (same order, faster)

HAND_EVENTS = (Deal, Burn, BoardCards, Act, Put, Discard, Expose, Report)
#: A CameraReport's reasons: the camera's two, and the RFID source's cards of unknown order.
CAMERA_REPORTS = ("camera_mismatch", "card_unread", "order_unknown")


@dataclass
class TableService(TableViews):
    """Table + current hand + alerts; journal-first; deterministic.  Its state and shared steps are
    :class:`~controller.service.state.ServiceState`'s; the table side's inputs
    (:mod:`controller.service.table_side`) and the views (:mod:`controller.service.views`) are built
    on it; here are the events, checked, journaled and applied."""

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

    def replay(self, entries, each: Callable[[list[Output]], None] | None = None) -> list[Output]:
        """Rebuild state from journal entries (seq, at, event).  An entry this table cannot take
        (a journal written for a bigger table, another game...) raises :class:`JournalError`
        naming its seq and the reason: never a traceback, never a half-applied guess.  ``each``
        sees each entry's outputs as the table stood right after it (the session statistics)."""
        from controller.journal import JournalError

        outputs: list[Output] = []
        for entry in entries:
            try:
                outs = self.apply(entry.event, seq=entry.seq, at=entry.at)
                if each is not None:
                    each(outs)
                outputs.extend(outs)
            except (TableError, GameError, ProfileError, SetupError, Rejected, ValueError, KeyError) as exc:
                raise JournalError(
                    f"entry seq {entry.seq} ({entry.event.kind}) does not apply to this table "
                    f"({self.table.size} seats, {self.table.game}): {exc}; was the journal written with "
                    "another config?") from exc
        return outputs

    def _precheck(self, event: Event) -> None:
        """Refuse what cannot apply, before anything is journaled."""
        if isinstance(event, SitOut | SitIn | StartDraw | SetRotation | Looked) or (
                isinstance(event, Deal) and self._draw_open()):
            self._precheck_table_side(event)
        elif isinstance(event, NewHand) and self.drawing is not None:
            raise Rejected("a draw for the button is under way: finish it (a card to every player) or cancel it")
        elif isinstance(event, NewHand):
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
            self._stays_for_the_draw(event.seat, "get up")
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
        elif isinstance(event, CallClock):
            if self.engine is None or self.engine.over or event.seat not in self.engine.view().active:
                raise Rejected(f"a clock is called on a player still in a hand (seat {event.seat} is not)")
        elif isinstance(event, CameraReport) and event.reason not in CAMERA_REPORTS:
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
            refusal = self.engine.refusal(event)  # e.g. betting on a board with a card missing, a wrong amount
            if refusal is not None:
                raise Rejected(refusal)
        elif isinstance(event, Acknowledge):
            if not self.alerts and not self.hard_stop:
                raise Rejected("no alert to acknowledge")
            if event.alert is not None and all(a.id != event.alert for a in self.alerts):
                raise Rejected(f"no active alert {event.alert!r}")

    # ------------------------------------------------------------------ chips (controller.rules.chips)
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
        out.append(Output(StackSet(ev.seat, stack)))

    def _apply_set_level(self, ev: SetLevel, out: list[Output], at: float) -> None:
        number = self.table.request_level(ev.number, ev.advance)
        out.append(Output(LevelRequested(number)))

    # ------------------------------------------------------------------ apply
    def apply(self, event: Event, *, seq: int, at: float) -> list[Output]:
        self.seq = seq
        out: list[Output] = []
        handler = _HANDLERS.get(type(event))
        if handler is None:
            raise Rejected(f"the table does not take {event.kind!r} events")
        handler(self, event, out, at)
        return [Output(o.result, seq) for o in out]

    def _apply_seat_player(self, ev: SeatPlayer, out: list[Output], at: float) -> None:
        self.table.seat(ev.seat, ev.name, ev.post, ev.stack)
        out.append(Output(SeatTaken(ev.seat, ev.name)))
        # event/seating: the floor sees a player sit down (a move it ordered is confirmed by it)
        out.append(Output(PlayerSat(ev.seat, ev.name, self.table.players[ev.seat].stack)))

    def _apply_unseat_player(self, ev: UnseatPlayer, out: list[Output], at: float) -> None:
        player = self.table.players[ev.seat]
        self.table.unseat(ev.seat)
        out.append(Output(SeatEmptied(ev.seat)))
        out.append(Output(PlayerLeft(ev.seat, player.name, player.stack)))

    def _apply_call_clock(self, ev: CallClock, out: list[Output], at: float) -> None:
        out.append(Output(ClockCalled(ev.seat)))  # event/clock: the floor runs it (TDA 26)

    def _apply_set_button(self, ev: SetButton, out: list[Output], at: float) -> None:
        self.table.set_button(ev.seat)
        self.last_hand_misdeal = False
        out.append(Output(ButtonMoved(ev.seat)))

    def _apply_change_game(self, ev: ChangeGame, out: list[Output], at: float) -> None:
        self.table.change_game(ev.game, ev.rules, ev.structure)
        if ev.event:
            self.table.event = ev.event
        self.last_hand_misdeal = False
        out.append(Output(GameChanged(ev.game, get_profile(self.table.rules).name)))

    def _apply_dealer_sign_in(self, ev: DealerSignIn, out: list[Output], at: float) -> None:
        self.dealer = ev.dealer
        out.append(Output(DealerSignedIn(ev.dealer, ev.badge, ev.source)))

    def _apply_set_broadcast_delay(self, ev: SetBroadcastDelay, out: list[Output], at: float) -> None:
        self.broadcast_delay = ev.delay  # the publisher applies it (controller/app/publisher.py)
        out.append(Output(DelayChanged(ev.delay, ev.source)))

    def _apply_new_hand(self, ev: NewHand, out: list[Output], at: float) -> None:
        # TDA 33-C: after a misdeal the redeal is an exact replay; the button does not move.
        redeal = self.last_hand_misdeal and self.table.last_setup is not None
        if not redeal:
            self.table.level_for_hand(at)  # a new level takes effect with the next hand, never mid-hand
        self.engine = self.table.start_hand(redeal=redeal)
        self.hand_id += 1
        self._hand_first_seq = self.seq
        self._hand_closed = False
        self.last_hand_misdeal = False
        out.append(self._hand_start())

    def _hand_start(self) -> Output:
        assert self.engine is not None
        return Output(HandBegan(self.engine.started(), self.dealer))

    def _apply_start_hand(self, ev: StartHand, out: list[Output], at: float) -> None:
        """A hand with an explicit setup (replays, scenarios and the console's override)."""
        self.engine = HandEngine(ev.setup)
        self.table.last_setup = ev.setup
        self.hand_id += 1
        self._hand_first_seq = self.seq
        self._hand_closed = False
        out.append(self._hand_start())

    def _hand_event(self, ev: Event, out: list[Output], at: float) -> None:
        if isinstance(ev, Deal) and self._draw_open():
            return self._draw_card(ev, out, at)  # a card for the draw for the button
        engine = self.engine
        if engine is None or engine.over:
            return
        played = engine.play(ev)  # typed: what the event did (controller.rules.operations)
        out.extend(Output(op) for op in played.operations)
        for r in played.rulings:
            self._alert(r, out, at)
        if played.hole_cards is not None:
            out.append(Output(played.hole_cards))  # secret: the protected topic and the delay only
        if played.over:
            self._close_hand(out)


    def _apply_confirm_deals(self, ev: ConfirmDeals, out: list[Output], at: float) -> None:
        # The dealer's answer to "order unknown: confirm": dealt in the order he gives.  A card he
        # names where the table already has it (a display a moment late showed it missing) is that
        # very card, not a second copy: skipped (issue 26: the bench's false duplicate_card void).
        # Anywhere else, the rules judge it.  The journal holds his answer whole: a replay skips alike.
        placed = self.engine.placements() if self.engine is not None else {}
        keep = [(z, c) for z, c in zip(ev.zones, ev.cards, strict=True) if placed.get(c) != z]
        if not keep:
            return
        answer = ConfirmDeals(tuple(z for z, _ in keep), tuple(c for _, c in keep))
        for event in answer.events():
            self._hand_event(event, out, at)

    def _apply_call_misdeal(self, ev: CallMisdeal, out: list[Output], at: float) -> None:
        self._hand_event(Report(ev.reason), out, at)

    def _apply_end_hand(self, ev: EndHand, out: list[Output], at: float) -> None:
        if self.engine is not None:
            self.engine.play(ev)  # what the hand came to is read once it is closed (outcome, settlement)
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
        out.append(Output(AlertsCleared(tuple(a.id for a in cleared), self._active_id())))

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
        remedy = "confirm_order" if ev.reason == "order_unknown" else "identify_card"
        r = make_ruling(IRREGULARITY, ev.reason, remedy, profile=self.table.rules, game=self.table.game,
                        seat=seat_of(ev.zone), card=ev.seen, zone=ev.zone, detail=ev.detail or None)
        self._alert(r, out, at)

    def _apply_unknown_tag(self, ev: UnknownTagRead, out: list[Output], at: float) -> None:
        r = make_ruling(IRREGULARITY, "unknown_tag", "identify_card", profile=self.table.rules,
                        game=self.table.game, seat=seat_of(ev.zone), zone=ev.zone, uid=ev.uid)
        self._alert(r, out, at)

def _is_reason(code: str) -> bool:
    try:
        kind_of(code)
    except (KeyError, ValueError):
        return False
    return True


def _is_misdeal_reason(code: str) -> bool:
    return _is_reason(code) and kind_of(code) == MISDEAL


#: The service's handler of each event type: a hand's play (``HAND_PLAY_EVENTS``) goes to the hand's
#: engine, but for its end; every other event has its own.
_HANDLERS: dict[type[Event], Callable[[TableService, Any, list[Output], float], None]] = {
    **dict.fromkeys(HAND_PLAY_EVENTS, TableService._hand_event),
    ConfirmDeals: TableService._apply_confirm_deals,
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
    CallClock: TableService._apply_call_clock,
    SitOut: TableService._apply_sit_out,
    SitIn: TableService._apply_sit_in,
    StartDraw: TableService._apply_start_draw,
    SetRotation: TableService._apply_set_rotation,
    Looked: TableService._apply_looked,
    SetBroadcastDelay: TableService._apply_set_broadcast_delay,
}


