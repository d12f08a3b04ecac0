"""What the table service hands the publisher, typed: one frozen record per thing that happened.

PokerKit answers each move with a typed operation; the engine does the same for a hand
(:mod:`controller.rules.operations`: a card dealt, a burn, the board, an action, a draw, a street,
the hole cards), and the service adds its own for what happens around a hand: the hand's start
and end, a ruling raised or acknowledged, a table change, a player sitting down or getting up,
the dealer signing in, the clock called, the draw for the button.  :class:`Output` carries one of
them (its ``result``) with the journal sequence number of the event that caused it.

Readers (the publisher, the daemon's log, the panel, the sources, the demo, the benches) branch
on the result's type, or on its :class:`OutputKind`, and read its fields; ``payload()`` is the
JSON body docs/mqtt.md writes for it, and only the publisher sends it (byte for byte what the
written contract, :mod:`controller.mqtt.contract`, says).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any, ClassVar

from controller.rules.operations import HandOutcome, HandStarted, HoleCards, Operation, Settlement


class OutputKind(StrEnum):
    """What an :class:`Output` reports: the one list the publisher, the daemon's log and the panel
    branch on (each result type carries its own, as ``kind``)."""

    HAND_START = "hand_start"
    CARD = "card"
    BURN = "burn"
    BOARD = "board"
    STREET = "street"
    ACTION = "action"
    DRAW = "draw"
    HAND_END = "hand_end"
    DEALER = "dealer"
    ALERT = "alert"
    ALERT_CLEARED = "alert_cleared"
    HOLECARDS = "holecards"
    TABLE = "table"
    SEATING = "seating"  # a player sat down or got up (the floor confirms its moves by it)
    CLOCK = "clock"  # the dealer called the action clock (TDA 26)
    BUTTON_DRAW = "button_draw"  # the draw for the button (RRoP s2 Seating 6)


#: The outputs published as they are on ``event/<kind>`` (a card has its own payload and an alert
#: becomes ``event/ruling``: docs/mqtt.md).
EVENT_OUTPUTS = (OutputKind.HAND_START, OutputKind.BURN, OutputKind.BOARD, OutputKind.STREET, OutputKind.ACTION,
                 OutputKind.DRAW, OutputKind.HAND_END, OutputKind.DEALER, OutputKind.SEATING, OutputKind.CLOCK,
                 OutputKind.BUTTON_DRAW)


# ---------------------------------------------------------------------- the hand
@dataclass(frozen=True, slots=True)
class HandBegan:
    """``event/hand_start``: the engine's :class:`HandStarted`, with the dealer signed in."""

    kind: ClassVar[OutputKind] = OutputKind.HAND_START
    started: HandStarted
    dealer: str | None

    def payload(self) -> dict[str, Any]:
        return self.started.payload(self.dealer)


@dataclass(frozen=True, slots=True)
class HandEnded:
    """``event/hand_end``: how the hand ended (``outcome``, each winner's ``share`` what it won)
    and, with chips, what was pushed (``settlement``) and who sat at each seat dealt in (``names``)."""

    kind: ClassVar[OutputKind] = OutputKind.HAND_END
    outcome: HandOutcome
    settlement: Settlement | None = None
    names: tuple[tuple[int, str | None], ...] = ()

    @property
    def winners(self) -> tuple[int, ...]:
        """The seats that won a part of the pot, each once, in seat order."""
        return tuple(sorted({w.seat for w in self.outcome.winners}))

    def payload(self) -> dict[str, Any]:
        out = self.outcome.payload()
        if self.settlement is not None:
            out |= self.settlement.payload() | {"names": {str(s): n for s, n in self.names}}
        return out


# ---------------------------------------------------------------------- rulings
@dataclass(frozen=True, slots=True)
class AlertRaised:
    """A ruling for the dealer to acknowledge (``alert`` and ``event/ruling``).  ``body`` is the
    alert as the written contract words it (:func:`controller.mqtt.contract.alert_from_ruling`: a
    hidden card is never named in it); the fields are the parts of it readers act on."""

    kind: ClassVar[OutputKind] = OutputKind.ALERT
    id: str
    hand_id: int | None
    severity: str  # the ruling's kind (irregularity, misdeal, void...) or ``fault`` (a hard stop)
    reason: str
    remedy: str | None
    message: str  # public words only
    steps: tuple[str, ...]  # what the dealer does, in order
    citations: tuple[str, ...]
    body: dict[str, Any]

    @classmethod
    def of(cls, body: dict[str, Any]) -> AlertRaised:
        return cls(body["id"], body["hand_id"], body["severity"], body["reason"], body["remedy"], body["message"],
                   tuple(body["steps"]), tuple(body["citations"]), body)

    def payload(self) -> dict[str, Any]:
        return dict(self.body)


@dataclass(frozen=True, slots=True)
class AlertsCleared:
    """Alerts acknowledged (``ids``); ``active`` is the one the dealer sees now (None: none left)."""

    kind: ClassVar[OutputKind] = OutputKind.ALERT_CLEARED
    ids: tuple[str, ...]
    active: str | None

    def payload(self) -> dict[str, Any]:
        return {"ids": list(self.ids), "active": self.active}


# ---------------------------------------------------------------------- the table around the hand
@dataclass(frozen=True, slots=True)
class DealerSignedIn:
    """``event/dealer``: who deals now (None: signed out), by badge or console."""

    kind: ClassVar[OutputKind] = OutputKind.DEALER
    dealer: str | None
    badge: str | None
    source: str

    def payload(self) -> dict[str, Any]:
        return {"dealer": self.dealer, "badge": self.badge, "source": self.source}


@dataclass(frozen=True, slots=True)
class ClockCalled:
    """``event/clock``: the dealer called the clock on a seat; the floor runs it (TDA 26)."""

    kind: ClassVar[OutputKind] = OutputKind.CLOCK
    seat: int

    def payload(self) -> dict[str, Any]:
        return {"seat": self.seat}


def _change_payload(change: Any) -> dict[str, Any]:
    """A change's wire body: ``change`` (what changed), then its fields as they are declared."""
    return {"change": change.change} | {f.name: getattr(change, f.name) for f in fields(change)}


@dataclass(frozen=True, slots=True)
class SeatingChange:
    """``event/seating``: a player sat down or got up, with ``stack`` chips (the floor confirms its
    moves by it)."""

    kind: ClassVar[OutputKind] = OutputKind.SEATING
    change: ClassVar[str] = ""
    seat: int
    name: str | None
    stack: int | None

    def payload(self) -> dict[str, Any]:
        return _change_payload(self)


@dataclass(frozen=True, slots=True)
class PlayerSat(SeatingChange):
    change: ClassVar[str] = "seat"


@dataclass(frozen=True, slots=True)
class PlayerLeft(SeatingChange):
    change: ClassVar[str] = "unseat"


@dataclass(frozen=True, slots=True)
class ButtonDrawn:
    """``event/button_draw``: the draw for the button so far (RRoP s2 Seating 6; RRoP s3 Ties 1-2):
    the card read at each seat, who still draws, and the winner once every player has drawn."""

    kind: ClassVar[OutputKind] = OutputKind.BUTTON_DRAW
    cards: tuple[tuple[int, str], ...]
    waiting: tuple[int, ...]
    winner: int | None
    name: str | None
    cancelled: bool
    game: str
    order: str  # high or low: how the game's draw ranks cards

    @property
    def started(self) -> bool:
        """The draw was just called: no card read yet, not a cancellation."""
        return not self.cards and not self.cancelled

    def payload(self) -> dict[str, Any]:
        return {"cards": {str(s): c for s, c in self.cards}, "waiting": list(self.waiting), "winner": self.winner,
                "name": self.name, "cancelled": self.cancelled, "game": self.game, "order": self.order,
                "citations": ["RRoP s2 Seating 6", "RRoP s3 Ties 1-2"]}


@dataclass(frozen=True, slots=True)
class TableChange:
    """A change to the table between hands (the retained state shows it; the daemon logs it)."""

    kind: ClassVar[OutputKind] = OutputKind.TABLE
    change: ClassVar[str] = ""

    def payload(self) -> dict[str, Any]:
        """``change`` (what changed), then the fields as they are declared."""
        return _change_payload(self)


@dataclass(frozen=True, slots=True)
class SeatTaken(TableChange):
    change: ClassVar[str] = "seat"
    seat: int
    name: str


@dataclass(frozen=True, slots=True)
class SeatChange(TableChange):
    """A change that names only its seat."""

    seat: int


@dataclass(frozen=True, slots=True)
class SeatEmptied(SeatChange):
    change: ClassVar[str] = "unseat"


@dataclass(frozen=True, slots=True)
class SatOut(SeatChange):
    change: ClassVar[str] = "sit_out"


@dataclass(frozen=True, slots=True)
class SatIn(TableChange):
    change: ClassVar[str] = "sit_in"
    seat: int
    post: bool


@dataclass(frozen=True, slots=True)
class StackSet(TableChange):
    change: ClassVar[str] = "stack"
    seat: int
    stack: int


@dataclass(frozen=True, slots=True)
class LevelRequested(TableChange):
    """A blind level asked for; it takes effect with the next hand (``number``: ``next``)."""

    change: ClassVar[str] = "level"
    number: int | None

    def payload(self) -> dict[str, Any]:
        return {"change": self.change, "next": self.number}


@dataclass(frozen=True, slots=True)
class ButtonMoved(TableChange):
    """The button placed by hand, or by the draw for the button (``by_draw``)."""

    change: ClassVar[str] = "button"
    seat: int
    by_draw: bool = False

    def payload(self) -> dict[str, Any]:
        if self.by_draw:
            return {"change": self.change, "seat": self.seat, "draw": True}
        return {"change": self.change, "seat": self.seat}


@dataclass(frozen=True, slots=True)
class GameChanged(TableChange):
    change: ClassVar[str] = "game"
    game: str
    rules: str  # the profile's name


@dataclass(frozen=True, slots=True)
class RotationSet(TableChange):
    change: ClassVar[str] = "rotation"
    rotation: str | None  # None: the rotation ends


@dataclass(frozen=True, slots=True)
class DelayChanged(TableChange):
    """The producer set the broadcast delay (journaled: SetBroadcastDelay); the publisher applies it."""

    change: ClassVar[str] = "broadcast_delay"
    delay: float | str
    by: str


#: Everything an :class:`Output` may carry: the hand's public operations (the engine's own
#: :data:`~controller.rules.operations.Operation`), its hole cards (secret) and the service's results.
Result = (Operation | HoleCards | HandBegan | HandEnded | AlertRaised | AlertsCleared | DealerSignedIn | ClockCalled
          | SeatingChange | ButtonDrawn | TableChange)


@dataclass(frozen=True, slots=True)
class Output:
    """Something that happened, for the displays: a typed ``result`` and the journal sequence
    number of the event that caused it (the publisher resumes from the last one it delivered)."""

    result: Result
    seq: int = 0

    @property
    def kind(self) -> OutputKind:
        return OutputKind(self.result.kind)

    @property
    def secret(self) -> bool:
        """Only the protected topic and the broadcast delay ever see it (the hole cards)."""
        return isinstance(self.result, HoleCards)

    @property
    def payload(self) -> dict[str, Any]:
        """The JSON body docs/mqtt.md writes for the result."""
        return self.result.payload()
