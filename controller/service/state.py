"""What the table service keeps, and the steps every part of it takes.

:class:`ServiceState` holds the table, the hand in play, the active alerts and the journal's
position; its steps are the ones every kind of event may need: try a change on a copy of the table
first (:meth:`~ServiceState._try`, so a refused input changes nothing), raise a ruling as an alert
the dealer acknowledges, and close a hand (its typed end, the stacks carried, the hand's record).
The parts built on it are :mod:`controller.service.table_side` (sitting out and in, the draw for
the button, a rotation), :mod:`controller.service.views` (the retained state) and
:class:`controller.service.table_service.TableService` (the events, in and out).
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from controller.errors import PokerTableError
from controller.mqtt.contract import alert_from_ruling, public_cards
from controller.rules.engine import HandEngine, SetupError
from controller.rules.games import GameError
from controller.rules.operations import HandOutcome, Settlement
from controller.rules.profiles import ProfileError
from controller.rules.rulings import IRREGULARITY, Ruling
from controller.rules.table import Table, TableError
from controller.service.results import AlertRaised, HandEnded, Output

log = logging.getLogger("controller.service")


class Rejected(PokerTableError, ValueError):
    """An input the table cannot take now; nothing changed (the message says why)."""


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
class ServiceState:
    """Table + current hand + alerts (``TableService`` is built on it)."""

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
    broadcast_delay: float | str | None = None  # the last SetBroadcastDelay (None: the config's)
    _alert_count: int = 0
    _hand_first_seq: int = 0
    _hand_closed: bool = True
    # A draw for the button under way (StartDraw): the card read at each player's seat so far.
    drawing: dict[int, Any] | None = None

    def _try(self, change: Callable[[Table], object]) -> None:
        probe = copy.deepcopy(self.table)  # a refused change touches nothing real
        try:
            change(probe)
        except (TableError, GameError, ProfileError, SetupError) as exc:
            raise Rejected(str(exc)) from exc

    def _hand_ended(self, outcome: HandOutcome, settled: Settlement | None) -> HandEnded:
        """``event/hand_end``: the outcome, and with chips its ``payouts`` and ``pots``; the stacks
        carry into the next hand.

        The settlement's ``started`` and ``stacks`` (each dealt-in seat's chips when the hand began and
        once it is pushed; ``stacks`` null when nothing could be awarded) and ``names`` (who sat in each)
        are how a tournament's floor reads its busts from the table itself: who ended with nothing, and
        who began the hand with more."""
        if settled is None:
            return HandEnded(outcome)
        # Nothing awarded (a misdeal, a void, or hands not known): after a misdeal or a void every
        # chip goes back; otherwise the chips behind stay and the pot is the floor's (request/stack).
        if settled.stacks is not None:
            self.table.carry_stacks(dict(settled.stacks))
        if settled.awarded and any(c for _, c in settled.payouts):
            # What each winner won: its own uncalled chips back are not winnings.
            outcome = replace(outcome, winners=tuple(replace(w, share=settled.won(w.seat)) for w in outcome.winners))
        names = tuple((s, self.table.players[s].name) for s, _ in settled.started if s in self.table.players)
        return HandEnded(outcome, settled, names)

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
        alert = Alert(payload["id"], hand_id, dict(payload), payload["severity"], True, self.seq, at)
        if r.ends_hand:
            # A misdeal or void supersedes this hand's pending irregularities: their instructions
            # ("put it back, it is the next burn") no longer apply to a hand that is redealt.
            self.alerts = [a for a in self.alerts if not (a.hand_id == hand_id and a.severity == IRREGULARITY)]
        self.alerts.append(alert)
        out.append(Output(AlertRaised.of(payload)))

    def _active_id(self) -> str | None:
        return self.alerts[0].id if self.alerts else None

    def _close_hand(self, out: list[Output]) -> None:
        engine = self.engine
        if engine is None or self._hand_closed:
            return
        self._hand_closed = True
        outcome = engine.outcome()  # typed: how the hand ended (controller.rules.operations)
        self.last_hand_misdeal = outcome.misdeal
        ended = self._hand_ended(outcome, engine.settlement())
        result = ended.payload()
        out.append(Output(ended))
        if self.journal is not None and hasattr(self.journal, "record_hand"):
            try:
                hand = engine.view()
                record = dict(result, rulings=[{"ruling": r.ruling, "reason": r.reason, "remedy": r.remedy}
                                               for r in hand.rulings])
                self.journal.record_hand(self.hand_id, hand.setup, self._hand_first_seq, self.seq, record)
            except Exception:  # a history write must never stop the table
                log.exception("could not record hand %s", self.hand_id)
