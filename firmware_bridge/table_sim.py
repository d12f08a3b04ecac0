"""A physical poker table on the emulated antennas: dealer_sim hands played as card movements.

Two halves, usable separately:

* :class:`TableSim` turns one hand (a FORMAT scenario dict, e.g. from
  :func:`controller.sim.dealer.legal_hand`) into a :class:`HandPlan`: the ordered list of
  physical :class:`Movement` s (tags placed on / lifted from antennas) and :class:`Console`
  events (what the dealer's console sends: actions, discards, reports), plus the TRUE
  sequence of events the engine must receive for it;
* :class:`TableRig` plays plans through the whole hardware path, ``Emulator`` (pty, fault
  injection) -> :class:`~firmware_bridge.link.BridgeLink` -> :class:`~firmware_bridge.zones.ZoneTracker`
  -> :class:`~firmware_bridge.fusion.Fusion` -> a :class:`~controller.rules.engine.HandEngine` per hand,
  and records what the engine actually received.

The layout is ``ZoneMap.standard(seats, hole_slots, board_slots)``: every seat has as many
slot antennas as the game deals it (one tag per antenna: a card lies on its own slot), see
:meth:`TableLayout.for_games`.

Physical model (the choices the expected sequence follows):

* **Deal** - the card lands on the lowest free slot of its seat: ``Deal(seat, card, source="rfid")``
  (the antennas cannot see the face, so ``face`` is always ``None``).
* **Board** - each card lands on the next free board slot, one after the other as a dealer
  turns them; the cards of one ``board`` step (and of board steps with nothing in between)
  land within the fusion's ``board_window``, so they are one ``BoardCards`` in landing order.
* **Burn, muck and stub (shoe) are piles**: one antenna each, and a card that lands on a
  pile covers the one below, whose tag stops being read.  So a card landing on a pile
  *replaces* the previous card's presence (the previous tag is removed in the same movement).
  A covered card has been reported when it landed; it just leaves the antenna's field.
* **Fold** - the console sends the ``Act``; the dealer then pulls the seat's cards into the
  muck, one ``Muck`` each.  **Draw** - the console sends the ``Discard``; the discarded cards
  (the seat's first ``count`` cards, as dealer_sim models it) go to the muck (``Muck`` each)
  before the replacements are dealt to the freed slots.
* **End of hand** - the dealer scoops every visible card (seats in order, then the board,
  the burn and the stub), drops them one by one on the muck (``Muck`` each) and finally
  takes the whole muck away: the table is empty for the next hand.

A card only produces an event when it *arrives*; a card that re-enters the zone it was last
sent to in the hand produces nothing (as :class:`~firmware_bridge.fusion.Fusion` does).

Pacing (:class:`TableRig`): the physical world waits only on conditions, never on fixed
sleeps.  Before a movement, every presence change the table caused so far must have been
reported by the link (so a resynchronisation after a lost frame or a reset never has to
reconcile two movements at once, which would lose their order), and a tag about to be lifted
or covered must be committed by the zone tracker where it lies (a card covered before the
tracker debounced it would never be seen).  Before a console event, the engine must have
received every event the earlier movements produce (a board group closes when its window
passes); the console event then goes to the same sink as the fusion's output, so the engine
sees one ordered stream.

``board_window`` must exceed the link's worst single recovery (a lost frame is noticed by the
next heartbeat or frame, then ``reorder_window`` + an inventory round trip, plus
``inventory_timeout`` if that inventory is lost too): with the rig's defaults (50 ms heartbeat,
30 ms reorder window, 0.2 s inventory timeout) that is about 0.3 s, hence a 0.4 s window.
Only a third consecutive loss inside one board street could split it.
"""

from __future__ import annotations

import functools
import queue
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.errors import PokerTableError
from controller.geometry import Slot, Zone, ZoneMap
from controller.rules.cards import Card, standard_deck
from controller.rules.decks import Deck, DeckRegistry, normalise_uid
from controller.rules.engine import HandEngine
from controller.rules.events import BoardCards, Burn, Deal, Event, HandSetup, Muck, Stub
from controller.rules.games import get_game
from controller.rules.rulings import Ruling
from controller.rules.scenario import Scenario, step_event
from firmware_bridge.emulator import Emulator, FaultConfig
from firmware_bridge.fusion import Fusion, FusionOutput, RfidPipeline
from firmware_bridge.link import BridgeLink, LinkConfig, PresenceChange
from firmware_bridge.zones import ZoneTracker

CONSOLE_STEPS = frozenset({"act", "discard", "report", "expose"})
PILES = ("burn", "muck", "shoe")
_GROUP_EVENTS: dict[str, type[BoardCards] | type[Stub]] = {"board": BoardCards, "shoe": Stub}


def hole_slots_for(game: str) -> int:
    """Slot antennas a seat needs for ``game``: every card it holds at once lies on its own slot.

    Hold'em 2, Omaha 4, stud 7; draw games 5 (discards go to the muck before the replacements).
    """
    return get_game(game).hole_cards


# --------------------------------------------------------------------------- layout and deck


class TableLayout:
    """The antennas of ``ZoneMap.standard(seats, hole_slots, board_slots)`` by role."""

    def __init__(self, seats: int = 10, hole_slots: int = 2, board_slots: int = 5) -> None:
        self.seats = seats
        self.hole_slots = hole_slots
        self.board_slots = board_slots
        self.zone_map = ZoneMap.standard(seats, hole_slots, board_slots)
        self.antenna_count = max(self.zone_map.antennas) + 1
        self._antenna = {slot: antenna for antenna, slot in self.zone_map.antennas.items()}

    @classmethod
    def for_games(cls, games: Iterable[str], seats: int = 10, board_slots: int = 5) -> TableLayout:
        """A mixed-game table: each seat has as many slots as the most demanding game needs."""
        return cls(seats, max(hole_slots_for(g) for g in games), board_slots)

    def seat_antenna(self, seat: int, index: int) -> int:
        return self._antenna[Slot(Zone("seat", seat), index)]

    def board_antenna(self, index: int) -> int:
        return self._antenna[Slot(Zone("board"), index)]

    def pile_antenna(self, kind: str) -> int:
        return self._antenna[Slot(Zone(kind))]

    def zone_of(self, antenna: int) -> Zone:
        slot = self.zone_map.slot(antenna)
        if slot is None:
            raise KeyError(f"antenna {antenna} is not in the layout")
        return slot.zone


def enroll_deck(deck_id: str = "A", seed: int = 0) -> Deck:
    """A deck with one random 7-byte NTAG-style UID (``04`` + 6 bytes) per card, reproducible per seed."""
    rng = random.Random(f"{deck_id}/{seed}")
    deck = Deck(deck_id, back=f"rfid deck {deck_id}")
    used: set[bytes] = set()
    for card in standard_deck(deck_id):
        uid = b"\x04" + rng.randbytes(6)
        while uid in used:
            uid = b"\x04" + rng.randbytes(6)
        used.add(uid)
        deck.add(uid, card)
    return deck


# --------------------------------------------------------------------------- plans


@dataclass(frozen=True, slots=True)
class Movement:
    """Cards moving at once: tags lifted from (``removes``) and put on (``places``) antennas."""

    note: str
    places: tuple[tuple[int, bytes], ...] = ()
    removes: tuple[tuple[int, bytes], ...] = ()

    def apply(self, emulator: Emulator) -> None:
        for antenna, uid in self.removes:
            emulator.remove(antenna, uid)
        for antenna, uid in self.places:
            emulator.place(antenna, uid)


@dataclass(frozen=True, slots=True)
class Console:
    """An event from the dealer's console; ``index`` is its position in ``HandPlan.expected``."""

    event: Event
    index: int


Action = Movement | Console


@dataclass(frozen=True, slots=True)
class HandPlan:
    name: str
    game: str
    setup: HandSetup
    actions: tuple[Action, ...]
    expected: tuple[Event, ...]  # the true sequence the engine must receive, console events included

    @property
    def card_events(self) -> list[Event]:
        return card_events(self.expected)


def card_events(events: Iterable[Any]) -> list[Any]:
    """Everything that is not a console event (cards, and anything unexpected such as UnknownTag)."""
    return [e for e in events if not isinstance(e, Event) or e.kind not in CONSOLE_STEPS]


class TableSim:
    """Turns FORMAT hands into physical movements on ``layout`` with the tags of ``deck``."""

    def __init__(self, layout: TableLayout, deck: Deck) -> None:
        self.layout = layout
        self.deck_id = deck.id
        self.uids: dict[Card, bytes] = {card: bytes.fromhex(uid) for uid, card in deck.tags.items()}

    def plan(self, hand: Mapping[str, Any]) -> HandPlan:
        return _Planner(self, hand).run()


class _Planner:
    def __init__(self, sim: TableSim, hand: Mapping[str, Any]) -> None:
        self.sim = sim
        self.layout = sim.layout
        self.hand = hand
        self.scenario = Scenario.from_dict(dict(hand))
        self.deck = self.scenario.setup.deck
        if self.deck != sim.deck_id:
            raise ValueError(f"hand {hand.get('name')} is dealt from deck {self.deck}, the table has {sim.deck_id}")
        self.actions: list[Action] = []
        self.expected: list[Event] = []
        self.at: dict[Card, int] = {}  # visible cards -> the antenna they lie on
        self.top: dict[int, Card] = {}  # pile antenna -> its top card
        self.seat_cards: dict[int, list[Card]] = {}  # cards at each seat, in the order dealt
        self.last_zone: dict[Card, str] = {}
        self.group: str | None = None  # kind of the board/stub group the last expected event may grow

    # -- building blocks ----------------------------------------------------------
    def card(self, label: Any) -> Card:
        card = Card.parse(str(label), self.deck)
        if card not in self.sim.uids:
            raise ValueError(f"{self.hand.get('name')}: {label} has no tag in deck {self.sim.deck_id}")
        return card

    def uid(self, card: Card) -> bytes:
        return self.sim.uids[card]

    def emit(self, event: Event, group: str | None = None) -> None:
        """Record an expected engine event; board/stub cards extend an open group of their kind."""
        if group is not None and self.group == group:
            last = self.expected[-1]
            assert isinstance(last, BoardCards | Stub)
            self.expected[-1] = type(last)(last.cards + event.cards, source="rfid")  # type: ignore[attr-defined]
            return
        self.expected.append(event)
        self.group = group

    def arrive(self, card: Card, zone: Zone) -> bool:
        """Whether the fusion reports ``card`` entering ``zone`` (not a re-entry)."""
        if self.last_zone.get(card) == zone.name:
            return False
        self.last_zone[card] = zone.name
        return True

    def land(self, card: Card, antenna: int, note: str) -> None:
        """Move ``card`` (from where it lies, or from the deck) onto ``antenna``, covering a pile's top."""
        removes: list[tuple[int, bytes]] = []
        src = self.at.pop(card, None)
        if src is not None:
            removes.append((src, self.uid(card)))
            if self.top.get(src) == card:
                del self.top[src]
        if self.layout.zone_of(antenna).kind in PILES:
            covered = self.top.get(antenna)
            if covered is not None:
                removes.append((antenna, self.uid(covered)))
                del self.at[covered]
            self.top[antenna] = card
        elif antenna in self.at.values():
            raise ValueError(f"{self.hand.get('name')}: antenna {antenna} already holds a card")
        self.at[card] = antenna
        for cards in self.seat_cards.values():
            if card in cards:
                cards.remove(card)
        self.actions.append(Movement(note, ((antenna, self.uid(card)),), tuple(removes)))

    def free_slot(self, zone: Zone) -> int:
        count = self.layout.hole_slots if zone.kind == "seat" else self.layout.board_slots
        for i in range(count):
            a = self.layout.seat_antenna(zone.seat, i) if zone.seat else self.layout.board_antenna(i)
            if a not in self.at.values():
                return a
        raise ValueError(f"{self.hand.get('name')}: no free {zone.kind} slot for another card at {zone}")

    def to_pile(self, card: Card, kind: str, note: str) -> None:
        antenna = self.layout.pile_antenna(kind)
        self.land(card, antenna, note)
        if self.arrive(card, Zone(kind)):
            if kind == "burn":
                self.emit(Burn(card, source="rfid"))
            elif kind == "muck":
                self.emit(Muck(card, source="rfid"))
            else:
                self.emit(Stub((card,), source="rfid"), group="shoe")

    def console(self, event: Event) -> None:
        self.actions.append(Console(event, len(self.expected)))
        self.emit(event)

    # -- steps ----------------------------------------------------------------------
    def run(self) -> HandPlan:
        for i, step in enumerate(self.hand["steps"] or [], 1):
            ((key, val),) = step.items()
            handler = _STEPS.get(key)
            if handler is None:
                raise ValueError(f"{self.hand.get('name')} step {i}: the table cannot play {key!r}")
            handler(self, step, i, val)
        self.collect()
        return HandPlan(
            str(self.hand.get("name", "")), self.scenario.setup.game, self.scenario.setup,
            tuple(self.actions), tuple(self.expected),
        )

    def step_deal(self, step: dict, i: int, val: dict) -> None:
        if val.get("face") is not None:
            raise ValueError(f"{self.hand.get('name')} step {i}: antennas cannot tell a card's face")
        seat, card = int(val["to"]), self.card(val["card"])
        if not 1 <= seat <= self.layout.seats:
            raise ValueError(f"{self.hand.get('name')} step {i}: seat {seat} is not at this table")
        if card in self.at:
            raise ValueError(f"{self.hand.get('name')} step {i}: {card} is already on the table")
        zone = Zone("seat", seat)
        self.land(card, self.free_slot(zone), f"deal {card} to seat {seat}")
        self.seat_cards.setdefault(seat, []).append(card)
        if self.arrive(card, zone):
            self.emit(Deal(seat, card, None, source="rfid"))

    def step_burn(self, step: dict, i: int, val: Any) -> None:
        card = self.card(val)
        self.to_pile(card, "burn", f"burn {card}")

    def step_board(self, step: dict, i: int, val: Any) -> None:
        for label in val if isinstance(val, list) else [val]:
            card = self.card(label)
            self.land(card, self.free_slot(Zone("board")), f"board {card}")
            if self.arrive(card, Zone("board")):
                self.emit(BoardCards((card,), source="rfid"), group="board")

    def step_stub(self, step: dict, i: int, val: Any) -> None:
        for label in val if isinstance(val, list) else [val]:
            card = self.card(label)
            self.to_pile(card, "shoe", f"stub {card}")

    def step_muck(self, step: dict, i: int, val: Any) -> None:
        card = self.card(val)
        self.to_pile(card, "muck", f"muck {card}")

    def _console_step(self, step: dict, i: int) -> Event:
        event = step_event(step, i, self.deck)
        self.console(event)
        return event

    def step_act(self, step: dict, i: int, val: dict) -> None:
        self._console_step(step, i)
        if val["action"] == "fold":
            seat = int(val["seat"])
            for card in list(self.seat_cards.get(seat, [])):
                self.to_pile(card, "muck", f"seat {seat} folds {card}")

    def step_discard(self, step: dict, i: int, val: dict) -> None:
        self._console_step(step, i)
        seat, count = int(val["seat"]), int(val["count"])
        for card in list(self.seat_cards.get(seat, []))[:count]:
            self.to_pile(card, "muck", f"seat {seat} discards {card}")

    def step_report(self, step: dict, i: int, val: Any) -> None:
        self._console_step(step, i)

    def step_expose(self, step: dict, i: int, val: Any) -> None:
        self._console_step(step, i)

    def collect(self) -> None:
        """Scoop every visible card, drop them one by one on the muck, then take the muck away."""
        muck = self.layout.pile_antenna("muck")
        scooped = sorted((a, c) for c, a in self.at.items() if a != muck)
        if scooped:
            self.actions.append(Movement("scoop the table", removes=tuple((a, self.uid(c)) for a, c in scooped)))
            for a, card in scooped:
                del self.at[card]
                self.top.pop(a, None)
        for cards in self.seat_cards.values():
            cards.clear()
        for _, card in scooped:
            self.to_pile(card, "muck", f"collect {card}")
        if muck in self.top:
            card = self.top.pop(muck)
            del self.at[card]
            self.actions.append(Movement("take the muck away", removes=((muck, self.uid(card)),)))


# --------------------------------------------------------------------------- the rig

#: What the table does for each FORMAT step (explicit: each is found by grep).
_STEPS: dict[str, Callable[..., None]] = {
    "deal": _Planner.step_deal,
    "burn": _Planner.step_burn,
    "board": _Planner.step_board,
    "stub": _Planner.step_stub,
    "muck": _Planner.step_muck,
    "act": _Planner.step_act,
    "discard": _Planner.step_discard,
    "report": _Planner.step_report,
    "expose": _Planner.step_expose,
}


FAST_LINK = LinkConfig(
    handshake_timeout=0.3,
    heartbeat_timeout=0.6,
    reorder_window=0.03,
    inventory_timeout=0.2,
    ack_timeout=0.2,
    reopen_backoff_min=0.02,
    reopen_backoff_max=0.2,
)


@dataclass(slots=True)
class HandResult:
    plan: HandPlan
    received: list[FusionOutput]
    rulings: list[Ruling]
    seconds: float

    @property
    def card_events(self) -> list[Any]:
        return card_events(self.received)


class RigTimeout(PokerTableError, AssertionError):
    """A condition the table waited for did not come true (a lost card, a stuck link)."""


@dataclass
class TableRig:
    """Emulator (pty) -> BridgeLink -> ZoneTracker -> Fusion -> HandEngine, driven by plans.

    Use as a context manager.  ``before`` hooks passed to :meth:`play` run before each action
    (to unplug or reset the emulator mid-hand).  Everything the link reports that no movement
    caused is kept in ``unexpected_changes``; outputs arriving between hands in ``strays``.
    """

    layout: TableLayout
    registry: DeckRegistry
    faults: FaultConfig | None = None
    link_path: str | None = None
    link_config: LinkConfig = FAST_LINK
    zone_debounce: float = 0.02
    board_window: float = 0.4
    scan_period_ms: int = 5
    debounce_ms: int = 15
    heartbeat_ms: int = 50
    tick: float = 0.004
    timeout: float = 10.0
    emulator: Emulator = field(init=False)
    link: BridgeLink = field(init=False)
    tracker: ZoneTracker = field(init=False)
    fusion: Fusion = field(init=False)
    pipeline: RfidPipeline = field(init=False)
    unexpected_changes: list[PresenceChange] = field(init=False, default_factory=list)
    strays: list[FusionOutput] = field(init=False, default_factory=list)
    errors: list[BaseException] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.emulator = Emulator(
            self.layout.antenna_count, faults=self.faults, link_path=self.link_path,
            scan_period_ms=self.scan_period_ms, debounce_ms=self.debounce_ms, heartbeat_ms=self.heartbeat_ms,
        )
        self.tracker = ZoneTracker(self.layout.zone_map, debounce=self.zone_debounce)
        self.fusion = Fusion(self.registry, board_window=self.board_window)
        self.pipeline = RfidPipeline(self.tracker, self.fusion, self._sink)
        self._cond = threading.Condition()
        self._pending: Counter[tuple[int, str, bool]] = Counter()
        self._changes: queue.Queue[PresenceChange] = queue.Queue()
        self._stop = threading.Event()
        self._pump_thread: threading.Thread | None = None
        self._received: list[FusionOutput] = []
        self._engine: HandEngine | None = None
        self._rulings: list[Ruling] = []
        self._expect_total = 0

    # -- lifecycle --------------------------------------------------------------------
    def __enter__(self) -> TableRig:
        self.emulator.start()
        self.link = BridgeLink(self.emulator.url, self.link_config, on_change=self._on_change).start()
        if not self.link.wait_synced(self.timeout):
            self.__exit__()
            raise RigTimeout(f"link never synced: {self.link.health()}")
        self._pump_thread = threading.Thread(target=self._pump, name="table-rig pump", daemon=True)
        self._pump_thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._pump_thread is not None:
            self._pump_thread.join(2.0)
        if hasattr(self, "link"):
            self.link.stop()
        self.emulator.stop()

    # -- threads ----------------------------------------------------------------------
    def _on_change(self, change: PresenceChange) -> None:  # link thread
        key = (change.antenna, change.uid, change.arrived)
        with self._cond:
            if self._pending[key] > 0:
                self._pending[key] -= 1
                if not self._pending[key]:
                    del self._pending[key]
            else:
                self.unexpected_changes.append(change)
            self._cond.notify_all()
        self._changes.put(change)

    def _pump(self) -> None:
        while not self._stop.is_set():
            try:
                try:
                    self.pipeline.feed(self._changes.get(timeout=self.tick))
                except queue.Empty:
                    pass
                self.pipeline.poll()
            except Exception as exc:  # surfaced by the next wait
                self.errors.append(exc)
            with self._cond:
                self._cond.notify_all()

    def _sink(self, out: FusionOutput) -> None:
        with self._cond:
            self._received.append(out)
            if self._engine is not None and isinstance(out, Event):
                try:
                    self._rulings += self._engine.apply(out)
                except Exception as exc:
                    self.errors.append(exc)
            self._cond.notify_all()

    # -- waits --------------------------------------------------------------------------
    def _wait(self, pred: Callable[[], bool], what: str) -> None:
        with self._cond:
            ok = self._cond.wait_for(lambda: pred() or bool(self.errors), self.timeout)
        if self.errors:
            raise RigTimeout(f"rig failed while waiting for {what}: {self.errors[0]!r}") from self.errors[0]
        if not ok:
            raise RigTimeout(
                f"timed out after {self.timeout}s waiting for {what}\n pending link changes {dict(self._pending)}"
                f"\n received {self._received[-4:]}\n link {self.link.health()}\n emulator {self.emulator.counters}"
            )

    def settle(self, seconds: float = 0.2) -> list[FusionOutput]:
        """Let late frames and timers run for ``seconds``; returns (and keeps) stray outputs since the last hand."""
        deadline = time.monotonic() + seconds
        with self._cond:
            while (left := deadline - time.monotonic()) > 0:
                self._cond.wait(left)
            extra = self._received[self._expect_total:]
            self.strays += extra
            del self._received[self._expect_total:]
        return extra

    # -- playing ------------------------------------------------------------------------
    def play(self, plan: HandPlan, before: Callable[[int, Action], None] | None = None) -> HandResult:
        t0 = time.monotonic()
        with self._cond:
            self.strays += self._received[self._expect_total:]
            self._received, self._rulings = [], []
            self._engine = HandEngine(plan.setup)
            self._expect_total = len(plan.expected)
        self.pipeline.new_hand()
        for i, action in enumerate(plan.actions):
            if before is not None:
                before(i, action)
            if isinstance(action, Console):
                n = action.index
                self._wait(functools.partial(self._received_at_least, n),
                           f"{plan.name}: {n} events before {action.event}")
                self._sink(action.event)
            else:
                self._move(plan, action)
        self._wait(lambda: len(self._received) >= len(plan.expected) and not self._pending,
                   f"{plan.name}: the last of {len(plan.expected)} events")
        with self._cond:
            return HandResult(plan, list(self._received), list(self._rulings), time.monotonic() - t0)

    def _received_at_least(self, n: int) -> bool:
        return len(self._received) >= n

    def _settled(self, key: str, zone: Any) -> bool:
        return self.tracker.where(key) == zone

    def _move(self, plan: HandPlan, move: Movement) -> None:
        self._wait(lambda: not self._pending, f"{plan.name}: link reports before {move.note}")
        for antenna, uid in move.removes:
            zone, key = self.layout.zone_of(antenna), normalise_uid(uid)
            self._wait(functools.partial(self._settled, key, zone),
                       f"{plan.name}: {key} settled in {zone} before {move.note}")
        with self._cond:
            for antenna, uid in move.removes:
                self._pending[(antenna, normalise_uid(uid), False)] += 1
            for antenna, uid in move.places:
                self._pending[(antenna, normalise_uid(uid), True)] += 1
        move.apply(self.emulator)
