"""Presence debounce per zone: "tag U entered zone Z" / "left zone Z".

Which antenna is which slot is :class:`controller.geometry.ZoneMap`.

The link reports raw presence per antenna.  On a real table a card pitched to seat 3
may skim over seat 2's antenna, a card pushed between two slots is briefly seen by
both, and a tag at the edge of a field flickers.  The tracker therefore commits a
tag's zone only after its raw presence has been stable for ``debounce`` seconds:

* a flicker (leave + arrive within the window) changes nothing;
* a card slid across antennas of different zones yields one "left A" + "entered B";
* moving between slots of the *same* zone (seat 3 slot 0 -> slot 1) is not a change;
* a tag seen in two different zones at once is ambiguous and waits until it settles, except
  that a tag already committed to one zone and then reported arriving in another has moved
  there: the move commits within the *arrival* window, so a card moved (a fold to the muck,
  the last hand's card dealt again) keeps its place in the order of the cards around it;
* :meth:`ZoneTracker.new_hand` settles at once the tags that have left the table, so a card
  cleared from a zone and dealt back to it in the next hand is a new arrival, not a flicker.

Time comes from an injectable clock so tests are exact.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from controller.geometry import Slot, Zone, ZoneError, ZoneMap
from firmware_bridge.link import PresenceChange

__all__ = ["Slot", "Zone", "ZoneChange", "ZoneError", "ZoneMap", "ZoneTracker"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ZoneChange:
    """Tag ``uid`` entered (``entered``) or left zone ``zone``; ``slot`` is the slot index."""

    uid: str
    zone: Zone
    entered: bool
    slot: int
    t: float
    ordered: bool = True  # False: an arrival learnt from a snapshot, its order among others unknown


_AMBIGUOUS = object()


class ZoneTracker:
    """Debounced zone membership per tag, fed with the link's presence changes."""

    def __init__(
        self, zone_map: ZoneMap, debounce: float = 0.25, clock: Callable[[], float] = time.monotonic,
        arrive_debounce: float | None = None,
    ) -> None:
        """``arrive_debounce``: the window after an arrival (default: ``debounce``).  The reference
        firmware confirms an arrival with a second read before it reports it, so the daemon
        commits arrivals at once and keeps the window for leaves and moves."""
        self.zone_map = zone_map
        self.debounce = debounce
        self.arrive_debounce = debounce if arrive_debounce is None else arrive_debounce
        self._clock = clock
        self._raw: dict[str, set[int]] = {}
        self._committed: dict[str, Slot] = {}
        self._due: dict[str, float] = {}
        self._unordered: set[str] = set()
        self._moved: dict[str, int] = {}  # uid -> the antenna of another zone it arrived on
        self.unmapped = 0

    def feed(self, change: PresenceChange) -> list[ZoneChange]:
        """Record a presence change; returns the zone changes that are due now."""
        now = self._clock()
        if self.zone_map.slot(change.antenna) is None:
            self.unmapped += 1
            log.warning("tag on an antenna with no zone",
                        extra={"event": "zone_unmapped", "antenna": change.antenna, "uid": change.uid})
            return self.poll(now)
        if change.arrived and not change.ordered:
            self._unordered.add(change.uid)
        antennas = self._raw.setdefault(change.uid, set())
        (antennas.add if change.arrived else antennas.discard)(change.antenna)
        old = self._committed.get(change.uid)
        slot = self.zone_map.slot(change.antenna)
        moved = change.arrived and old is not None and slot is not None and slot.zone != old.zone
        if moved:
            # The tag is reported arriving in another zone than the one it is committed to (its
            # leave from there may not even be reported yet): it moved.  Commit the move within the
            # arrival window, like a fresh arrival: held back by the leave window, a card moved
            # before another card was placed would reach the engine after it (a late muck splitting
            # a flop, the first card of a hand arriving after the second).
            self._moved[change.uid] = change.antenna
        elif not change.arrived and self._moved.get(change.uid) == change.antenna:
            del self._moved[change.uid]
        first = change.arrived and len(antennas) == 1 and old is None
        self._due[change.uid] = now + (self.arrive_debounce if first or moved else self.debounce)
        return self.poll(now)

    def new_hand(self) -> list[ZoneChange]:
        """A new hand starts: the tags no antenna reads any more have left the table, now.  Their
        leave does not wait out the window (which is for flickers within a hand): a card cleared
        from a zone and dealt back to the same zone in the new hand is a new arrival."""
        now = self._clock()
        for uid in [u for u in self._due if not self._raw.get(u)]:
            self._due[uid] = now
        return self.poll(now)

    def poll(self, now: float | None = None) -> list[ZoneChange]:
        """Commit every tag whose presence has been stable for the debounce window."""
        now = self._clock() if now is None else now
        out: list[ZoneChange] = []
        for uid, due in sorted(self._due.items(), key=lambda kv: (kv[1], kv[0])):
            if due > now:
                continue
            del self._due[uid]
            target = self._target(uid)
            if target is _AMBIGUOUS:
                log.info("tag straddles two zones", extra={"event": "zone_straddle", "uid": uid})
                continue
            old = self._committed.get(uid)
            assert target is None or isinstance(target, Slot)
            if old is not None and (target is None or target.zone != old.zone):
                out.append(ZoneChange(uid, old.zone, False, old.index, now))
            if target is not None and (old is None or target.zone != old.zone):
                out.append(ZoneChange(uid, target.zone, True, target.index, now, uid not in self._unordered))
            self._unordered.discard(uid)
            if target is None:
                self._committed.pop(uid, None)
            else:
                self._committed[uid] = target
            if not self._raw.get(uid):
                self._raw.pop(uid, None)
            if target is None or len(self._raw.get(uid, ())) <= 1:
                self._moved.pop(uid, None)
        return out

    def where(self, uid: str) -> Zone | None:
        slot = self._committed.get(uid)
        return None if slot is None else slot.zone

    def straddling(self) -> dict[str, set[Zone]]:
        """Tags currently seen in more than one zone (a card lying across a line)."""
        out = {}
        for uid, antennas in self._raw.items():
            zones = {s.zone for a in antennas if (s := self.zone_map.slot(a)) is not None}
            if len(zones) > 1:
                out[uid] = zones
        return out

    def _target(self, uid: str) -> Slot | None | object:
        slots = [s for a in sorted(self._raw.get(uid, ())) if (s := self.zone_map.slot(a)) is not None]
        if not slots:
            return None
        if len({s.zone for s in slots}) > 1:
            moved = self._moved.get(uid)
            if moved is not None and moved in self._raw.get(uid, ()):
                return self.zone_map.slot(moved)  # reported arriving there last: it moved there
            return _AMBIGUOUS
        return min(slots, key=lambda s: s.index)
