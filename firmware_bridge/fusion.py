"""Zone changes -> the engine's events (``controller.rules.events``).

Only arrivals matter to the engine; where a card *goes* is the event:

=========  ====================================================
zone       event
=========  ====================================================
seat:N     ``Deal(seat=N, card, face=None, source="rfid")``
burn       ``Burn(card)``
board      ``BoardCards(cards)``: cards landing within ``board_window`` of each other
           form one event (a flop is one event of three cards)
muck       ``Muck(card)``
shoe       ``Stub(cards)``: grouped like the board
=========  ====================================================

UIDs are resolved only through :class:`controller.rules.decks.DeckRegistry`.  An unknown
UID never becomes a card: it produces an :class:`UnknownTag` notice for the daemon to
raise as an alert.  A UID enrolled to another deck resolves to that deck's card, and
the engine voids the hand for the foreign back.

A card that re-enters the zone it was last sent to in this hand (a player lifting
and replacing a hole card) produces nothing; :meth:`Fusion.new_hand` resets that
memory.  Any event flushes a pending board/stub group first, so the engine sees
events in the order the cards moved.  ``camera_identified`` is the hook for the
camera fallback (``source="camera"``).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from controller.geometry import MAX_SLOTS, Slot, Zone
from controller.rules.cards import Card
from controller.rules.decks import DeckRegistry
from controller.rules.events import BoardCards, Burn, Deal, Event, Muck, Stub
from firmware_bridge.link import PresenceChange
from firmware_bridge.zones import ZoneChange, ZoneTracker

log = logging.getLogger(__name__)

# Seconds with no new card of unknown order before the timer settles a batch of them (the link
# sends a batch back to back, in well under this; an arrival in order settles it at once).
UNORDERED_QUIET = 0.1
# Seconds after asking the dealer to confirm cards of unknown order before a card held behind them
# asks again (he is reading the first question; a table that waits must say so, never silently).
REASK_AFTER = 5.0


@dataclass(frozen=True, slots=True)
class UnknownTag:
    """A tag the deck registry does not know landed in ``zone``: alert, never a card."""

    kind: ClassVar[str] = "unknown_tag"
    zone: Zone
    uid: str
    t: float = 0.0


@dataclass(frozen=True, slots=True)
class OrderUnknown:
    """Cards found on the table by a snapshot (after a reconnect or restart) whose order the
    device could not replay: they are NOT given to the engine in an invented order; the daemon
    raises an alert asking the dealer to confirm them."""

    kind: ClassVar[str] = "order_unknown"
    cards: tuple[tuple[Zone, Card], ...]
    t: float = 0.0


FusionOutput = Event | UnknownTag | OrderUnknown

_GROUPED = {"board": BoardCards, "shoe": Stub}
_ASKABLE = ("seat", "burn", "board")  # where request/confirm can place a card


class Fusion:
    """Stateful translator; methods return the outputs they produce (pure, easy to test)."""

    def __init__(
        self,
        registry: DeckRegistry,
        board_window: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        source: str = "rfid",
        board_streets: tuple[int, ...] = (3, 1, 1),
    ) -> None:
        """``board_streets``: the board's cards per street (hold'em/Omaha: flop, turn, river); a
        board group that completes a street is sent at once, the window only waits for the rest."""
        self.registry = registry
        self.board_window = board_window
        self.board_streets = board_streets
        self._board_dealt = 0  # board cards sent to the engine this hand
        self.source = source
        self._clock = clock
        self._last_dest: dict[Card, str] = {}
        self._group_kind: str | None = None
        self._group: list[tuple[Card, str]] = []
        self._group_last = 0.0
        self.suppressed = 0
        self.moved = 0
        self._unordered: list[tuple[Zone, Card]] = []
        self._unordered_at = float("-inf")  # when the last card of unknown order came
        self._last_hand: frozenset[Card] = frozenset()  # the cards the last hand placed
        self.late_mucks = 0
        # Cards of unknown order the dealer was asked to confirm, and the arrivals since: held, in
        # order, until the table has the confirmed cards (request/confirm), then dealt.  Dealt
        # ahead of the cards they followed, they would make the table rule falsely.
        self.awaiting: set[Card] = set()
        self._after_unknown: list[ZoneChange] = []
        self._asked_again: frozenset[Card] = frozenset()
        self._asked_at = float("-inf")  # when the dealer was last asked about them

    def new_hand(self) -> list[FusionOutput]:
        """Forget which cards went where (call at StartHand); returns a pending group, flushed."""
        out = self.flush()
        self.awaiting.clear()
        self._after_unknown.clear()
        self._asked_again = frozenset()
        self._last_hand = frozenset(self._last_dest)
        self._last_dest.clear()
        self._board_dealt = 0
        return out

    def remember(self, placements: dict[Card, str]) -> None:
        """Seed where cards already are (zone names), e.g. from the engine after a restart, so a
        tag the device re-reports at its place is not dealt a second time."""
        self._last_dest.update(placements)
        # A pending board group's card the engine has now (the dealer's answer named it too): sent
        # again when the group closed, it read as a second copy (issue 26, a kill -9 in the bench).
        self._group = [(card, source) for card, source in self._group if card not in placements]
        if not self._group:
            self._group_kind = None
        # The engine's board (a pending group is not in it yet): after the dealer confirmed a flop,
        # counted as none, the turn and the river each waited out the board window (issue 26).
        self._board_dealt = sum(1 for zone in placements.values() if zone == "board")

    def feed(self, change: ZoneChange) -> list[FusionOutput]:
        now = self._clock()
        if change.entered and not change.ordered:
            identity = self.registry.lookup(change.uid)
            if identity.card is not None:
                if self._last_dest.get(identity.card) != change.zone.name:
                    self._unordered.append((change.zone, identity.card))
                    self._unordered_at = now
                else:  # re-reported where the table has it (after a restart, say): nothing new
                    self.suppressed += 1
                # Either way the batch is not over: settled here, a batch of one would go out as
                # no question, ahead of the cards of unknown order still to come (issue 26: after a
                # kill -9 the board re-reports every card; a dealt one between two new ones dealt the
                # first alone, before a seat's earlier card: a false seat_dealt_out).
                return []
        # An arrival in order ends a batch of unordered cards (the link sends them first): settled now,
        # and this arrival waits behind it.
        out = self._settle_unordered(now) + self.poll(now)
        if self.awaiting and change.entered:
            identity = self.registry.lookup(change.uid)
            if identity.card is not None and self._last_dest.get(identity.card) != change.zone.name:
                self._after_unknown.append(change)  # behind the cards the dealer is asked about
                return out + self._ask_again(now)
        if not change.entered:
            return out
        identity = self.registry.lookup(change.uid)
        if identity.card is None:
            log.warning("unknown tag", extra={"event": "unknown_tag", "uid": identity.uid,
                                              "zone": change.zone.name})
            out.append(UnknownTag(change.zone, identity.uid, now))
            return out
        return out + self._card_to(change.zone, identity.card, self.source, now)

    def camera_identified(self, zone: Zone | str, card: Card) -> list[FusionOutput]:
        """The camera saw ``card`` arrive in ``zone`` (a tag that did not read)."""
        now = self._clock()
        zone = Zone.parse(zone) if isinstance(zone, str) else zone
        return self.poll(now) + self._card_to(zone, card, "camera", now)

    def poll(self, now: float | None = None) -> list[FusionOutput]:
        """Close a board/stub group whose window has passed; settle a batch of unordered cards once
        no more has come for ``UNORDERED_QUIET`` (the link sends a batch back to back, but the
        timer's poll may fall between two of its cards)."""
        now = self._clock() if now is None else now
        out = self._settle_unordered(now) if now - self._unordered_at >= UNORDERED_QUIET else []
        if self._group and now - self._group_last >= self.board_window:
            return out + self.flush()
        return out

    def _settle_unordered(self, now: float) -> list[FusionOutput]:
        """One card of unknown order is no question (nothing to order it against); several are."""
        batch, self._unordered = self._unordered, []
        # Only where a dealer deals can he say the order (request/confirm: a seat, the burn, the
        # board); a card reaching the muck is settled as it comes (the last hand's, read late, is
        # dropped).  Asked about, it stayed in doubt and held every later card (the bench, hand 63).
        out: list[FusionOutput] = []
        for zone, card in [(z, c) for z, c in batch if z.kind not in _ASKABLE]:
            out += self._card_to(zone, card, self.source, now)
        return out + self._settle_batch([(z, c) for z, c in batch if z.kind in _ASKABLE], now)

    def _settle_batch(self, batch: list[tuple[Zone, Card]], now: float) -> list[FusionOutput]:
        if len(batch) == 1:
            zone, card = batch[0]
            return self._card_to(zone, card, self.source, now)
        if not batch:
            return []
        for zone, card in batch:
            self._last_dest[card] = zone.name  # a later re-report is no new card either
            self.awaiting.add(card)
        log.warning("cards of unknown order", extra={"event": "fusion_order_unknown",
                                                      "cards": [f"{z.name}:{c.label()}" for z, c in batch]})
        self._asked_at = now
        return [OrderUnknown(tuple(batch), now)]

    def _ask_again(self, now: float) -> list[FusionOutput]:
        """A card the dealer pitched waits behind the cards he was asked about, and the question
        has been up ``REASK_AFTER`` seconds (acknowledged and not answered, say): the table asks
        again for those still in doubt, or it would show none of his cards and say nothing."""
        if now - self._asked_at < REASK_AFTER:
            return []
        doubt = self._asked_again or frozenset(self.awaiting)
        self._asked_at = now
        cards = tuple((Zone.parse(self._last_dest[c]), c) for c in sorted(doubt, key=str))
        log.warning("cards of unknown order, still unanswered", extra={
            "event": "fusion_order_unknown_again", "cards": [f"{z.name}:{c.label()}" for z, c in cards]})
        return [OrderUnknown(cards, now)]

    def confirmed(self, placed: dict[Card, str]) -> list[FusionOutput]:
        """The table has every card the dealer was asked about (``placed``: the engine's cards and
        their zones): the arrivals held behind them go on, in their order, but for those the
        dealer's answer placed already."""
        if not self.awaiting:
            return []
        rest = frozenset(self.awaiting - set(placed))
        if rest:
            if len(rest) < len(self.awaiting) and rest != self._asked_again:
                # The dealer's answer left some out (a burn, say): they stay in doubt, and every card
                # after them waits, so he is asked again for those, not left with a table that
                # silently takes no more cards for the rest of the hand.
                self._asked_again = rest
                self._asked_at = self._clock()
                cards = tuple((Zone.parse(self._last_dest[c]), c) for c in sorted(rest, key=str))
                log.warning("cards of unknown order, asked again", extra={
                    "event": "fusion_order_unknown_again", "cards": [f"{z.name}:{c.label()}" for z, c in cards]})
                return [OrderUnknown(cards, self._clock())]
            return []
        self._asked_again = frozenset()
        self.awaiting.clear()
        self.remember(placed)
        held, self._after_unknown = self._after_unknown, []
        out: list[FusionOutput] = []
        for change in held:
            out += self.feed(change)
        return out

    def hold(self, now: float | None = None) -> None:
        """The link is out of sync (unplugged, a reset, a ring replay pending): cards of a pending
        board/stub group may still be on their way, so its window starts again now.  Closed during
        an outage, a flop would reach the engine short and its last card alone after the replay."""
        if self._group:
            self._group_last = self._clock() if now is None else now

    def flush(self) -> list[FusionOutput]:
        if not self._group:
            return []
        cls = _GROUPED[self._group_kind or "board"]
        if cls is BoardCards:
            self._board_dealt += len(self._group)
        sources = {s for _, s in self._group}
        source = "camera" if "camera" in sources else sources.pop()
        event = cls(tuple(c for c, _ in self._group), source=source)
        self._group, self._group_kind = [], None
        return [event]

    def _street_complete(self) -> bool:
        total, have = 0, self._board_dealt + len(self._group)
        for size in self.board_streets:
            total += size
            if have == total:
                return True
            if have < total:
                return False
        return False

    def _card_to(self, zone: Zone, card: Card, source: str, now: float) -> list[FusionOutput]:
        last = self._last_dest.get(card)
        if zone.kind == "muck" and last is None and card in self._last_hand:
            # A card of the last hand reaching the muck once this one has begun (the scoop, read late
            # after a line fault): no card of this hand.  Mucked here, the same card dealt later in
            # this hand read as a duplicate, and the hand was void (issue 26, the corruption bench).
            self.late_mucks += 1
            log.info("a card of the last hand reached the muck late", extra={
                "event": "fusion_late_muck", "card": card.label()})
            return []
        if last == zone.name:
            self.suppressed += 1
            log.debug("card re-entered its zone", extra={"event": "fusion_reentry", "card": card.label(),
                                                          "zone": zone.name})
            return []
        if last is not None and last.startswith("seat:") and zone.kind == "seat":
            # The same tag (the same physical card) slid from one seat to another: it did not come
            # off the deck again, so it is no new deal (a Deal would read as a duplicate card).
            self.moved += 1
            log.warning("card moved between seats", extra={"event": "fusion_seat_move", "card": card.label(),
                                                            "from": last, "to": zone.name})
            return []
        self._last_dest[card] = zone.name
        if zone.kind in _GROUPED:
            out = self.flush() if self._group_kind not in (None, zone.kind) else []
            self._group_kind = zone.kind
            self._group.append((card, source))
            self._group_last = now
            if zone.kind == "board" and self._street_complete():
                out += self.flush()
            return out
        out = self.flush()
        if zone.kind == "seat":
            assert zone.seat is not None
            out.append(Deal(seat=zone.seat, card=card, face=None, source=source))
        elif zone.kind == "burn":
            out.append(Burn(card, source=source))
        elif zone.kind == "muck":
            out.append(Muck(card, source=source))
        return out


class RfidPipeline:
    """Link changes -> zones -> fusion -> ``sink``: the daemon's RFID input in one object."""

    def __init__(self, zones: ZoneTracker, fusion: Fusion, sink: Callable[[FusionOutput], None],
                 lock: threading.Lock | threading.RLock | None = None) -> None:
        """``lock``: the daemon passes its engine owner's lock, so that a card goes from the
        serial thread through zones, fusion and the engine under one lock, in order, with no
        thread hand-off (the sink then runs with that lock held)."""
        self.zones = zones
        self.fusion = fusion
        self.sink = sink
        self._lock = lock if lock is not None else threading.Lock()

    def feed(self, change: PresenceChange) -> None:
        with self._lock:
            outs: list[FusionOutput] = []
            for zc in self.zones.feed(change):
                outs += self.fusion.feed(zc)
            self._deliver(outs)

    def poll(self) -> None:
        with self._lock:
            outs: list[FusionOutput] = []
            for zc in self.zones.poll():
                outs += self.fusion.feed(zc)
            outs += self.fusion.poll()
            self._deliver(outs)

    def hold(self) -> None:
        """The link is out of sync: keep a pending board/stub group open (:meth:`Fusion.hold`)."""
        with self._lock:
            self.fusion.hold()

    def camera_identified(self, zone: Zone | str, card: Card) -> None:
        with self._lock:
            self._deliver(self.fusion.camera_identified(zone, card))

    def new_hand(self) -> None:
        with self._lock:
            outs: list[FusionOutput] = []
            for zc in self.zones.new_hand():  # the cleared tags' leaves, settled now
                outs += self.fusion.feed(zc)
            self._deliver(outs + self.fusion.new_hand())

    def remember(self, placements: dict[Card, str]) -> None:
        with self._lock:
            self.fusion.remember(placements)

    def confirmed(self, placements: dict[Card, str]) -> None:
        """The engine's cards after an event: releases what waited for a confirmation."""
        with self._lock:
            self._deliver(self.fusion.confirmed(placements))

    def expected_antennas(self, engine: Any) -> tuple[int, ...]:
        """Where the next cards should land, for the firmware to read first (``BridgeLink.expect``):
        the next seat's next free slot, and while the board is due, the burn and the street's board
        slots.  A hint only: a card elsewhere is still read, a little later.  It reads the hand
        through the engine's frozen view (``HandEngine.view()``), taken under the engine owner's
        lock (``self._lock``) so that no event changes the hand while it is copied."""
        with self._lock:
            if engine is None or engine.over:
                return ()
            hand = engine.view()
            zone_map = self.zones.zone_map
            out: list[int | None] = []
            seat = hand.next_seat
            held = hand.lying(seat) if seat is not None else 0
            if seat is not None and held < MAX_SLOTS["seat"]:  # a draw's replacements can outnumber the slots
                out.append(zone_map.antenna_of(Slot(Zone("seat", seat), held)))
            if hand.phase == "board":
                out.append(zone_map.antenna_of(Slot(Zone("burn"), 0)))
                have = len(hand.board_dealt)
                total = 0
                for size in self.fusion.board_streets:
                    total += size
                    if total > have:
                        out += [zone_map.antenna_of(Slot(Zone("board"), i)) for i in range(have, total)]
                        break
            return tuple(dict.fromkeys(a for a in out if a is not None))

    def run(self, changes: queue.Queue[PresenceChange], stop: threading.Event, tick: float = 0.05) -> None:
        """Pump ``changes`` (e.g. ``BridgeLink.changes``) until ``stop`` is set."""
        while not stop.is_set():
            try:
                self.feed(changes.get(timeout=tick))
            except queue.Empty:
                pass
            self.poll()

    def _deliver(self, outs: list[FusionOutput]) -> None:
        for item in outs:
            self.sink(item)
