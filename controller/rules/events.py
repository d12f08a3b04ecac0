"""Table events: everything the engine consumes.

Hardware threads, the dealer's console and the scenario loader all produce these;
the engine is a deterministic function of the sequence.  Each event has a stable
``kind`` and a JSON form (``to_dict``/``event_from_dict``) so the journal can store
it and a restart can replay it exactly.  ``source`` records who saw the card
(``rfid``, ``camera``, ``dealer``, ``script``) and never changes a ruling.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from controller.errors import PokerTableError, reject_unknown_keys
from controller.rules.cards import DEFAULT_DECK, Card
from controller.rules.chips import ChipsError, Stakes

ACTIONS = ("fold", "check", "call", "bet", "raise", "complete", "bring_in")
#: Actions that put chips in beyond a forced bet (substantial action counts them: TDA 34).
CHIP_ACTIONS = frozenset({"call", "bet", "raise", "complete"})
FACES = ("up", "down")


class EventError(PokerTableError, ValueError):
    """Raised for an event that is malformed (not for one that breaks a rule)."""


@dataclass(frozen=True, slots=True)
class HandSetup:
    """Everything fixed when a hand starts: the game, the profile and who is dealt in."""

    game: str
    rules: str
    seats: tuple[int, ...]
    button: int | None = None
    structure: str | None = None
    event: str = "cash"
    table_size: int = 9
    small_blind: int | None = None
    big_blind: int | None = None
    blinds_given: bool = False  # False: derive blinds from the button (FORMAT defaults)
    deck: str = DEFAULT_DECK
    # Where the button was on the previous hand, when the table knows it: a deal that
    # starts as if the button had not moved is a button out of position (RRoP s3 Misdeals 1(g)).
    previous_button: int | None = None
    # Chips: starting stacks and forced bets (controller.rules.chips); None = no chip accounting.
    chips: Stakes | None = None

    def to_dict(self) -> dict[str, Any]:
        return {f.name: _setup_value(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HandSetup:
        reject_unknown_keys(data, (f.name for f in fields(cls)), EventError, "hand setup")
        data = dict(data)
        data["seats"] = tuple(int(s) for s in data.get("seats", ()))
        if isinstance(data.get("chips"), dict):
            try:
                data["chips"] = Stakes.from_dict(data["chips"])
            except ChipsError as exc:
                raise EventError(f"hand setup: {exc}") from exc
        return cls(**data)


def _setup_value(v: Any) -> Any:
    if isinstance(v, Stakes):
        return v.to_dict()
    return list(v) if isinstance(v, tuple) else v


@dataclass(frozen=True, slots=True)
class Event:
    """Base of all table events."""

    kind: ClassVar[str] = "event"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        for f in fields(self):
            out[f.name] = _encode(getattr(self, f.name))
        return out


def _encode(value: Any) -> Any:
    if isinstance(value, Card):
        return value.label(DEFAULT_DECK)
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    if isinstance(value, HandSetup):
        return value.to_dict()
    return value


@dataclass(frozen=True, slots=True)
class StartHand(Event):
    """A new hand begins (shuffler 'deck ready', dealer's button, or the console)."""

    kind: ClassVar[str] = "start_hand"
    setup: HandSetup


@dataclass(frozen=True, slots=True)
class Deal(Event):
    """A card comes off the deck to a seat; ``face`` None means the proper face."""

    kind: ClassVar[str] = "deal"
    seat: int
    card: Card
    face: str | None = None
    source: str = "script"


@dataclass(frozen=True, slots=True)
class Burn(Event):
    kind: ClassVar[str] = "burn"
    card: Card
    source: str = "script"


@dataclass(frozen=True, slots=True)
class BoardCards(Event):
    """Cards turned onto the board together (a flop is one event of three cards)."""

    kind: ClassVar[str] = "board"
    cards: tuple[Card, ...]
    source: str = "script"


@dataclass(frozen=True, slots=True)
class Stub(Event):
    """Cards gathered back into the deck stub."""

    kind: ClassVar[str] = "stub"
    cards: tuple[Card, ...]
    source: str = "script"


@dataclass(frozen=True, slots=True)
class Muck(Event):
    kind: ClassVar[str] = "muck"
    card: Card
    source: str = "script"


@dataclass(frozen=True, slots=True)
class Aside(Event):
    """A card put to the side, out of play for now (a premature card)."""

    kind: ClassVar[str] = "aside"
    card: Card
    source: str = "script"


@dataclass(frozen=True, slots=True)
class Boxed(Event):
    """A card found face up in the deck."""

    kind: ClassVar[str] = "boxed"
    card: Card
    source: str = "script"


@dataclass(frozen=True, slots=True)
class Expose(Event):
    """A card already at a seat is exposed by the dealer."""

    kind: ClassVar[str] = "expose"
    seat: int
    card: Card
    source: str = "script"


@dataclass(frozen=True, slots=True)
class Act(Event):
    """A betting action; ``amount`` is the player's whole bet in the betting round once the action
    is done (TDA 42-B: "raise, eight thousand" is a total of 8000), forced bets included."""

    kind: ClassVar[str] = "act"
    seat: int
    action: str
    all_in: bool = False
    amount: int | None = None


@dataclass(frozen=True, slots=True)
class Put(Event):
    """Chips a player pushes out in one motion, chip by chip, with what he declared first:
    ``declare`` is call, raise, bet or all_in (or None: silent); ``to`` a declared total."""

    kind: ClassVar[str] = "put"
    seat: int
    chips: tuple[int, ...]
    declare: str | None = None
    to: int | None = None


@dataclass(frozen=True, slots=True)
class SetStack(Event):
    """Between hands: a stack set (``stack``) or chips added (``add``: rebuy, add-on, chip-up)."""

    kind: ClassVar[str] = "set_stack"
    seat: int
    stack: int | None = None
    add: int | None = None


@dataclass(frozen=True, slots=True)
class SetLevel(Event):
    """Tournament clock: go to level ``number`` or the next one; it takes effect with the next hand."""

    kind: ClassVar[str] = "set_level"
    number: int | None = None
    advance: bool = False


@dataclass(frozen=True, slots=True)
class Discard(Event):
    """Draw games: the seat throws ``count`` cards in and asks for as many (0 = pat)."""

    kind: ClassVar[str] = "discard"
    seat: int
    count: int


@dataclass(frozen=True, slots=True)
class Report(Event):
    """The dealer or floor calls attention to something no sensor sees (a reason code)."""

    kind: ClassVar[str] = "report"
    reason: str
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class EndHand(Event):
    """The hand is over (pot pushed, cards collected)."""

    kind: ClassVar[str] = "end_hand"


# ---------------------------------------------------------------------- table events
# Not part of a hand: seating, the button, the game, alerts.  Journaled like the rest so a
# restart rebuilds the table exactly.


@dataclass(frozen=True, slots=True)
class SeatPlayer(Event):
    kind: ClassVar[str] = "seat_player"
    seat: int
    name: str
    post: bool = False
    stack: int | None = None  # chips the player sits down with (None: the table's starting stack)


@dataclass(frozen=True, slots=True)
class UnseatPlayer(Event):
    kind: ClassVar[str] = "unseat_player"
    seat: int


@dataclass(frozen=True, slots=True)
class SetButton(Event):
    kind: ClassVar[str] = "set_button"
    seat: int


@dataclass(frozen=True, slots=True)
class ChangeGame(Event):
    kind: ClassVar[str] = "change_game"
    game: str
    rules: str | None = None
    structure: str | None = None
    event: str | None = None


@dataclass(frozen=True, slots=True)
class NewHand(Event):
    """Start the next hand (TDA 21: on the shuffler's button or the dealer's push)."""

    kind: ClassVar[str] = "new_hand"
    source: str = "console"


@dataclass(frozen=True, slots=True)
class CallMisdeal(Event):
    """The dealer or floor declares a misdeal for a reason no sensor sees."""

    kind: ClassVar[str] = "call_misdeal"
    reason: str = "button_out_of_position"


@dataclass(frozen=True, slots=True)
class Acknowledge(Event):
    """The dealer acknowledges the active alert (a hard stop such as a shuffler fault included)."""

    kind: ClassVar[str] = "acknowledge"
    alert: str | None = None


@dataclass(frozen=True, slots=True)
class DealerSignIn(Event):
    """A dealer signs in at the table (an NFC badge on the table's pad, or the console); ``dealer``
    None signs the dealer out.  Every later hand and ruling carries the name."""

    kind: ClassVar[str] = "dealer_sign_in"
    dealer: str | None
    badge: str | None = None
    source: str = "console"


@dataclass(frozen=True, slots=True)
class ShufflerFault(Event):
    kind: ClassVar[str] = "shuffler_fault"
    detail: str = ""


@dataclass(frozen=True, slots=True)
class UnknownTagRead(Event):
    """A tag that no enrolled deck knows was read in a zone (never guessed into a card)."""

    kind: ClassVar[str] = "unknown_tag"
    zone: str
    uid: str


@dataclass(frozen=True, slots=True)
class CameraReport(Event):
    """The camera disagrees with a tag (``camera_mismatch``) or sees a card it cannot read and no
    tag reported (``card_unread``): the dealer identifies the card.  The antennas read cards whose
    dealing order they lost, a stall or a reconnect (``order_unknown``, from the RFID source; its
    journals before it said ``card_unread`` with an "order unknown" detail): he confirms the order."""

    kind: ClassVar[str] = "camera_report"
    reason: str
    zone: str
    seen: str | None = None  # what the camera read, e.g. "Ah" (a public face-up card) or None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class CallClock(Event):
    """The dealer asks for the action clock on a seat (TDA 26), from the console: journaled and
    published as ``event/clock``; the floor's director runs the 50 seconds and the 10-second count."""

    kind: ClassVar[str] = "call_clock"
    seat: int


@dataclass(frozen=True, slots=True)
class SitOut(Event):
    """The player stays seated and is not dealt in; in a cash game he misses the blinds that pass
    his seat (RRoP s4 9)."""

    kind: ClassVar[str] = "sit_out"
    seat: int


@dataclass(frozen=True, slots=True)
class SitIn(Event):
    """Back from sitting out: ``post`` makes up the missed blinds now; otherwise he waits for the
    big blind (RRoP s4 9)."""

    kind: ClassVar[str] = "sit_in"
    seat: int
    post: bool = False


@dataclass(frozen=True, slots=True)
class StartDraw(Event):
    """The console starts a new game with a draw for the button (RRoP s2 Seating 6; s3 Ties 1-2):
    the next card at each player's seat, read by the antennas, is his card for the draw
    (``cancel`` abandons a draw not finished)."""

    kind: ClassVar[str] = "start_draw"
    cancel: bool = False


@dataclass(frozen=True, slots=True)
class SetRotation(Event):
    """A mixed game's rotation (controller.rules.rotations), journaled whole so a replay plays the
    same games whatever the config says later; ``name`` None ends the rotation."""

    kind: ClassVar[str] = "set_rotation"
    name: str | None
    games: tuple = ()
    hands: int = 8
    per_level: bool = False


@dataclass(frozen=True, slots=True)
class Looked(Event):
    """The dealer tells the table that ``seat`` looked at his cards (RRoP s4 10: a player who owes a
    blind and was dealt in without posting has a dead hand if he looks before posting and acting)."""

    kind: ClassVar[str] = "looked"
    seat: int


@dataclass(frozen=True, slots=True)
class ConfirmDeals(Event):
    """The dealer's answer to an "order unknown: confirm" alert (the antennas found several cards
    at once and could not vouch for their order): where each card went (``seat:N``, ``burn`` or
    ``board``), in the order they were pitched.  Each is dealt as the dealer's card (consecutive
    board cards together, as one turn of the board), so the usual rules judge the answer."""

    kind: ClassVar[str] = "confirm_deals"
    zones: tuple[str, ...]
    cards: tuple[Card, ...]

    def events(self) -> tuple[Event, ...]:
        out: list[Event] = []
        board: list[Card] = []
        for zone, card in zip(self.zones, self.cards, strict=True):
            if zone == "board":
                board.append(card)
                continue
            if board:
                out.append(BoardCards(tuple(board), source="dealer"))
                board = []
            out.append(Burn(card, source="dealer") if zone == "burn" else
                       Deal(int(zone.split(":")[1]), card, source="dealer"))
        if board:
            out.append(BoardCards(tuple(board), source="dealer"))
        return tuple(out)


@dataclass(frozen=True, slots=True)
class SetBroadcastDelay(Event):
    """The broadcast delay changes (the producer's request, docs/mqtt.md): seconds, or
    ``"end_of_hand"``.  Journaled so a replay or a restart keeps the delay in force; it changes
    nothing at the table itself."""

    kind: ClassVar[str] = "set_broadcast_delay"
    delay: float | str
    source: str = "producer"


HAND_PLAY_EVENTS: tuple[type[Event], ...] = (
    Deal, Burn, BoardCards, Stub, Muck, Aside, Boxed, Expose, Act, Put, Discard, Report, EndHand,
)
"""What is played within a hand after its ``StartHand``: a recorded hand is made of these."""

_TABLE_EVENTS: tuple[type[Event], ...] = (
    SetStack, SetLevel,
    SeatPlayer, UnseatPlayer, SetButton, ChangeGame, NewHand, CallMisdeal, Acknowledge, DealerSignIn, ShufflerFault,
    UnknownTagRead, CameraReport, CallClock, SitOut, SitIn, StartDraw, SetRotation, Looked, ConfirmDeals,
    SetBroadcastDelay,
)

_ALL_EVENTS: tuple[type[Event], ...] = (StartHand, *HAND_PLAY_EVENTS, *_TABLE_EVENTS)
EVENT_TYPES: dict[str, type[Event]] = {cls.kind: cls for cls in _ALL_EVENTS}

_CARD_FIELDS = {"card"}
_SEAT_ZONE = re.compile(r"seat:(10|[1-9])")
_CARDS_FIELDS = {"cards"}


def event_from_dict(data: dict[str, Any], deck: str = DEFAULT_DECK) -> Event:
    """Rebuild an event from its JSON form; raises :class:`EventError` with the problem."""
    if not isinstance(data, dict):
        raise EventError(f"event must be an object, got {type(data).__name__}")
    kind = data.get("kind")
    cls = EVENT_TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise EventError(f"unknown event kind {kind!r}; expected one of {sorted(EVENT_TYPES)}")
    kwargs: dict[str, Any] = {}
    names = {f.name: f for f in fields(cls)}
    for key, value in data.items():
        if key == "kind":
            continue
        if key not in names:
            raise EventError(f"{kind}: unknown field {key!r}")
        try:
            if key in _CARD_FIELDS:
                value = Card.parse(value, deck)
            elif key in _CARDS_FIELDS:
                value = tuple(Card.parse(v, deck) for v in value)
            elif key == "setup":
                value = HandSetup.from_dict(value)
            elif key == "zones" and cls is ConfirmDeals:
                value = tuple(str(v) for v in value)
            elif key == "chips" and isinstance(value, list):
                value = tuple(value)
            elif key == "games" and isinstance(value, list):
                value = tuple(value)
        except (ValueError, TypeError) as exc:
            raise EventError(f"{kind}.{key}: {exc}") from exc
        kwargs[key] = value
    try:
        event = cls(**kwargs)
    except TypeError as exc:
        raise EventError(f"{kind}: {exc}") from exc
    validate_event(event)
    return event


def validate_event(event: Event) -> None:
    """Shape checks that do not need the table: known actions and faces, sane counts."""
    if isinstance(event, ConfirmDeals):
        if not 1 <= len(event.zones) == len(event.cards) <= 52:
            raise EventError("confirm_deals: one zone per card, 1 to 52 cards")
        bad = [z for z in event.zones if z not in ("burn", "board") and not _SEAT_ZONE.fullmatch(z)]
        if bad:
            raise EventError(f"confirm_deals: zones are seat:N, burn or board, got {bad[0]!r}")
    if isinstance(event, Deal) and event.face not in (None, *FACES):
        raise EventError(f"deal.face must be 'up' or 'down', got {event.face!r}")
    if isinstance(event, Act) and event.action not in ACTIONS:
        raise EventError(f"act.action must be one of {ACTIONS}, got {event.action!r}")
    if isinstance(event, Put):
        if not event.chips or any(isinstance(c, bool) or not isinstance(c, int) or c <= 0 for c in event.chips):
            raise EventError(f"put.chips must be a list of chip values > 0, got {list(event.chips)!r}")
        if event.declare not in (None, "call", "raise", "bet", "all_in"):
            raise EventError(f"put.declare must be call, raise, bet or all_in, got {event.declare!r}")
    if isinstance(event, Act) and event.amount is not None and (
            isinstance(event.amount, bool) or not isinstance(event.amount, int) or event.amount < 0):
        raise EventError(f"act.amount must be a whole number of chips >= 0, got {event.amount!r}")
    if isinstance(event, Discard) and not (0 <= int(event.count) <= 5):
        raise EventError(f"discard.count must be 0..5, got {event.count!r}")
    for name in ("seat",):
        if hasattr(event, name) and getattr(event, name) is not None:
            seat = getattr(event, name)
            if not isinstance(seat, int) or seat < 1:
                raise EventError(f"{event.kind}.{name} must be a seat number >= 1, got {seat!r}")
    if isinstance(event, BoardCards | Stub) and not event.cards:
        raise EventError(f"{event.kind} needs at least one card")
    if isinstance(event, SetBroadcastDelay) and event.delay != "end_of_hand" and (
            isinstance(event.delay, bool) or not isinstance(event.delay, int | float) or not 0 <= event.delay < 1e9):
        raise EventError(f"set_broadcast_delay.delay must be seconds >= 0 or 'end_of_hand', got {event.delay!r}")


__all__ = [
    "ACTIONS",
    "FACES",
    "Act",
    "Put",
    "SetStack",
    "SetLevel",
    "Aside",
    "BoardCards",
    "Boxed",
    "Burn",
    "ConfirmDeals",
    "Deal",
    "SetBroadcastDelay",
    "Discard",
    "EndHand",
    "Event",
    "EventError",
    "Expose",
    "HandSetup",
    "Muck",
    "Report",
    "StartHand",
    "event_from_dict",
    "EVENT_TYPES",
    "SeatPlayer",
    "UnseatPlayer",
    "SetButton",
    "ChangeGame",
    "NewHand",
    "CallMisdeal",
    "Acknowledge",
    "ShufflerFault",
    "UnknownTagRead",
    "CameraReport",
    "CallClock",
    "SitOut",
    "SitIn",
    "StartDraw",
    "SetRotation",
    "Looked",
]
