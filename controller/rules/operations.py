"""What one event did to a hand, typed: the engine's operations and its result.

PokerKit's state answers each move with a typed operation (``deal_hole`` returns a
``HoleDealing``, and ``can_deal_hole`` says beforehand whether the move may be made).  The engine
does the same: :meth:`controller.rules.engine.HandEngine.play` returns :class:`Played` (the
operations an event came to, the rulings it raised, whether the hand is over) and
:meth:`~controller.rules.engine.HandEngine.refusal` (``can_play``) says beforehand whether an
event may apply now.  Each operation carries its display payload (docs/mqtt.md ``event/<kind>``),
so the service publishes from it and never works out what happened by reading the engine's state.
The hand's end is typed too (:class:`HandOutcome`, and the chips' :class:`Settlement`), and code
outside the rules reads a hand through :class:`HandView`, a frozen copy (``HandEngine.view()``), and
nothing else of the engine's state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from controller.rules.cards import Card
from controller.rules.pots import PotAwarded
from controller.rules.rulings import Ruling

if TYPE_CHECKING:  # events imports the chip book, which imports this module
    from controller.rules.events import HandSetup


@dataclass(frozen=True, slots=True)
class CardDealt:
    """A card reached a seat (``deal``), or a card at a seat was turned up (``expose``)."""

    kind: ClassVar[str] = "card"
    seat: int
    up: bool
    card: str | None  # the card's label when it is face up; a face-down card stays unnamed
    source: str
    exposed: bool = False

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seat": self.seat, "face": "up" if self.up else "down",
                               "card": self.card if self.up else None, "source": self.source}
        if self.exposed:
            out["exposed"] = True
        return out


@dataclass(frozen=True, slots=True)
class CardBurned:
    kind: ClassVar[str] = "burn"
    source: str

    def payload(self) -> dict[str, Any]:
        return {"count": 1, "source": self.source}


@dataclass(frozen=True, slots=True)
class BoardShown:
    """The board after cards were turned: its last five public cards (premature cards left out)."""

    kind: ClassVar[str] = "board"
    cards: tuple[str, ...]
    source: str

    def payload(self) -> dict[str, Any]:
        return {"cards": list(self.cards), "source": self.source}


@dataclass(frozen=True, slots=True)
class ActionTaken:
    """A betting action; with chips counted, what the chips made of it (``amount`` is the seat's
    whole bet in the round, ``text`` its words), else the action as the event named it.  ``seat``
    is always the seat that acted: an action taken out of turn is counted once the turn reaches it
    (RRoP s3 Betting and Raising 10; TDA 39-A), on another seat's event, as an operation of its own
    after that seat's action."""

    kind: ClassVar[str] = "action"
    seat: int
    action: str
    amount: int | None
    all_in: bool
    counted: bool = False  # the chip book ruled on it
    text: str | None = None

    def payload(self) -> dict[str, Any]:
        if self.counted:
            return {"seat": self.seat, "action": self.action, "amount": self.amount, "all_in": self.all_in,
                    "text": self.text}
        return {"seat": self.seat, "action": self.action, "all_in": self.all_in, "amount": self.amount}


@dataclass(frozen=True, slots=True)
class DrawDeclared:
    kind: ClassVar[str] = "draw"
    seat: int
    count: int

    def payload(self) -> dict[str, Any]:
        return {"seat": self.seat, "count": self.count}


@dataclass(frozen=True, slots=True)
class StreetStarted:
    """Once per street: a street's betting (or its wait for board cards, or its draw) begins."""

    kind: ClassVar[str] = "street"
    name: str

    def payload(self) -> dict[str, Any]:
        return {"name": self.name}


@dataclass(frozen=True, slots=True)
class HoleCards:
    """Every seat's hole cards after a change to them: secret (the protected topic only)."""

    kind: ClassVar[str] = "holecards"
    seats: tuple[tuple[int, tuple[str, ...]], ...]

    def payload(self) -> dict[str, Any]:
        return {"seats": {str(seat): list(cards) for seat, cards in self.seats}}


@dataclass(frozen=True, slots=True)
class HandStarted:
    """Who plays what: the hand's setup as the displays show it (``event/hand_start``)."""

    kind: ClassVar[str] = "hand_start"
    game: str
    rules: str  # the profile's name
    event: str
    structure: str
    button: int | None
    small_blind: int | None
    big_blind: int | None
    seats: tuple[int, ...]  # in dealing order
    stakes: dict[str, Any] | None = None  # with chips: the stakes, as ``Stakes.to_dict``

    def payload(self, dealer: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "game": self.game, "rules": self.rules, "event": self.event, "structure": self.structure,
            "button": self.button, "blinds": {"small": self.small_blind, "big": self.big_blind},
            "seats": list(self.seats), "dealer": dealer,
        }
        if self.stakes is not None:
            out["stakes"] = self.stakes
        return out


@dataclass(frozen=True, slots=True)
class Winner:
    """A seat that won a part of the pot; ``hand`` is the hand's name at a showdown (None uncontested)."""

    seat: int
    part: str
    hand: str | None
    share: int | None

    def payload(self) -> dict[str, Any]:
        if self.hand is None:
            return {"seat": self.seat, "part": self.part, "share": self.share}
        return {"seat": self.seat, "part": self.part, "hand": self.hand, "share": self.share}


@dataclass(frozen=True, slots=True)
class HandOutcome:
    """How the hand ended, before chips (``event/hand_end``'s ``result``, ``winners``, ``shown`` and
    ``summary``): ``result`` is the ending ruling's kind (misdeal, void), ``showdown`` or ``uncontested``."""

    result: str
    winners: tuple[Winner, ...]
    shown: tuple[tuple[int, tuple[str, ...]], ...] | None  # the hands tabled at the showdown
    summary: str | None
    misdeal: bool  # the next deal is a redeal (TDA 33-C)

    def payload(self) -> dict[str, Any]:
        shown = None if self.shown is None else {str(s): list(cards) for s, cards in self.shown}
        return {"result": self.result, "winners": [w.payload() for w in self.winners], "shown": shown,
                "summary": self.summary}


#: A public operation, in the order it happened.
Operation = CardDealt | CardBurned | BoardShown | ActionTaken | DrawDeclared | StreetStarted


@dataclass(frozen=True, slots=True)
class Played:
    """The result of one event: its public operations, then its rulings, then (when the event
    changed them) the hole cards; ``over`` once the hand has ended."""

    operations: tuple[Operation, ...]
    rulings: tuple[Ruling, ...]
    hole_cards: HoleCards | None
    over: bool


@dataclass(frozen=True, slots=True)
class Settlement:
    """The chips at a hand's end (TDA 19; RRoP s3 Ties 5(d)): ``event/hand_end``'s ``payouts``,
    ``pots`` and ``returned``, and the stacks the table carries into the next hand.

    ``awarded``: every pot was awarded automatically; then ``payouts`` holds every chip pushed to
    each seat (its own uncalled excess, ``returned``, included) and ``stacks`` the stacks after the
    push.  Otherwise nothing was pushed: a misdeal or a void (``void``) gives every chip back
    (``stacks`` are the starting ones); hands not known leave the chips where they lie, the pot the
    floor's to settle (``stacks`` None).  ``started``: each dealt-in seat's chips when the hand
    began (a tournament's floor places players out in one hand by it, RRoP s15 35)."""

    awarded: bool
    void: bool
    payouts: tuple[tuple[int, int], ...]
    pots: tuple[PotAwarded, ...]
    returned: tuple[int, int] | None  # (seat, chips): a bet nobody called, given back
    stacks: tuple[tuple[int, int], ...] | None
    started: tuple[tuple[int, int], ...] = ()

    def paid(self) -> dict[int, int]:
        """``{seat: chips pushed}``, every seat of the hand (0 for a seat that got nothing)."""
        return dict(self.payouts)

    def won(self, seat: int) -> int:
        """What the seat won: the chips pushed to it, less its own uncalled bet given back."""
        back = self.returned[1] if self.returned is not None and self.returned[0] == seat else 0
        return dict(self.payouts).get(seat, 0) - back

    def payload(self) -> dict[str, Any]:
        chips = {"started": {str(s): c for s, c in self.started},
                 "stacks": None if self.stacks is None else {str(s): c for s, c in self.stacks}}
        if not self.awarded:
            return {"payouts": None, "pots": [p.payload() for p in self.pots], **chips}
        returned = None if self.returned is None else {"seat": self.returned[0], "amount": self.returned[1]}
        return {"payouts": {str(s): c for s, c in self.payouts if c}, "pots": [p.payload() for p in self.pots],
                "returned": returned, **chips}


@dataclass(frozen=True, slots=True)
class ChipsView:
    """The chips of the betting round now (:class:`HandView`'s ``chips``, a hand dealt with chips)."""

    bets: tuple[tuple[int, int], ...]  # (seat, chips in front of it this round)
    top: int  # the highest bet of the round
    straddle: int | None  # the seat that straddled, if one did
    big_option: bool  # limit stud, fourth street, an open pair: the big bet (RRoP s8 Seven-Card Stud 4)

    def bet(self, seat: int) -> int:
        return dict(self.bets).get(seat, 0)


@dataclass(frozen=True, slots=True)
class HandView:
    """A hand as code outside the rules reads it: a frozen copy (``HandEngine.view()``), so a reader
    (the equity worker, the PHH export, the antenna board's hints, the floor's orders, the dealer
    simulator, the demo and the benchmarks) names what it depends on and can change nothing.  Cards
    are the engine's own :class:`~controller.rules.cards.Card` values."""

    game: str
    phase: str  # ``Phase``'s value: deal, bet, board, draw, done, dead
    over: bool
    drawing: bool  # the street is a draw
    small_blind: int | None
    big_blind: int | None
    active: frozenset[int]  # seats still holding a live hand
    folded: frozenset[int]
    all_in: frozenset[int]
    held: tuple[tuple[int, tuple[Card, ...]], ...]  # each dealt-in seat's cards (discards left out), dealing order
    board: tuple[Card, ...]  # the settled board: premature cards left out
    unknown_discards: tuple[tuple[int, int], ...]  # draw games: (seat, discards no sensor identified)
    placements: tuple[tuple[Card, str], ...]  # where each card of the hand lies (``HandEngine.placements``)
    setup: HandSetup  # what the hand was dealt with (seats, button, deck, chips)
    next_seat: int | None  # the seat the next card is dealt to (None: no card is due at a seat)
    to_act: int | None  # the seat to act (None: no betting round is open)
    mucked: frozenset[int]  # hands thrown away at the showdown
    draws: tuple[tuple[int, int], ...]  # draw games: (seat, cards it declared it draws)
    rulings: tuple[Ruling, ...]  # every ruling of the hand so far, in order
    #: What lies on the felt, as a sensor sees it: the cards at each seat (scraps, e.g. a joker,
    #: included: the next card fills the next slot) and every card on the board (premature ones too).
    at_seat: tuple[tuple[int, int], ...]
    board_dealt: tuple[Card, ...]
    missing_board: dict[str, Any] | None  # the board cards the street waits for (``HandState.missing_board``)
    street: int  # the street's index in the game's streets
    chips: ChipsView | None  # None: the hand is dealt without chips

    @property
    def order(self) -> tuple[int, ...]:
        """The dealt-in seats in dealing order."""
        return tuple(seat for seat, _ in self.held)

    def lying(self, seat: int) -> int:
        """How many cards lie at the seat (scraps included)."""
        return dict(self.at_seat).get(seat, 0)

    def declared(self, seat: int) -> int | None:
        """How many cards the seat declared it draws (None: it has not declared)."""
        return dict(self.draws).get(seat)

    def cards(self, seat: int) -> tuple[Card, ...]:
        return dict(self.held).get(seat, ())

    def unknown(self, seat: int) -> int:
        """How many of the seat's discards no sensor identified (draw games)."""
        return dict(self.unknown_discards).get(seat, 0)

    def where(self, card: Card) -> str | None:
        return dict(self.placements).get(card)
