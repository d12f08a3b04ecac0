"""Antenna -> zone mapping and presence debounce: "tag U entered zone Z" / "left zone Z".

The link reports raw presence per antenna.  On a real table a card pitched to seat 3
may skim over seat 2's antenna, a card pushed between two slots is briefly seen by
both, and a tag at the edge of a field flickers.  The tracker therefore commits a
tag's zone only after its raw presence has been stable for ``debounce`` seconds:

* a flicker (leave + arrive within the window) changes nothing;
* a card slid across antennas of different zones yields one "left A" + "entered B";
* moving between slots of the *same* zone (seat 3 slot 0 -> slot 1) is not a change;
* a tag seen in two different zones at once is ambiguous and waits until it settles.

Time comes from an injectable clock so tests are exact.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from firmware_bridge.link import PresenceChange

log = logging.getLogger(__name__)

ZONE_KINDS = ("seat", "board", "burn", "muck", "shoe")


class ZoneError(ValueError):
    """A zone or a zone map that does not parse."""


@dataclass(frozen=True, slots=True, order=True)
class Zone:
    """A place on the table: ``seat`` (with its number), ``board``, ``burn``, ``muck``, ``shoe``."""

    kind: str
    seat: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ZONE_KINDS:
            raise ZoneError(f"unknown zone kind {self.kind!r}; expected one of {ZONE_KINDS}")
        if (self.kind == "seat") != (self.seat is not None):
            raise ZoneError("a seat zone needs a seat number, other zones none")
        if self.seat is not None and self.seat < 1:
            raise ZoneError(f"seat numbers start at 1, got {self.seat}")

    @property
    def name(self) -> str:
        return f"seat:{self.seat}" if self.kind == "seat" else self.kind

    @classmethod
    def parse(cls, text: str) -> Zone:
        kind, _, seat = text.strip().partition(":")
        try:
            return cls(kind, int(seat) if seat else None)
        except ValueError as exc:
            raise ZoneError(f"bad zone {text!r}: {exc}") from exc

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Slot:
    """One antenna's place: its zone and the slot index within the zone (hole card 0/1, board 0..4)."""

    zone: Zone
    index: int = 0

    @classmethod
    def parse(cls, text: str) -> Slot:
        """``seat:3/1``, ``board/2``, ``burn``."""
        zone, _, index = text.strip().partition("/")
        try:
            return cls(Zone.parse(zone), int(index) if index else 0)
        except ValueError as exc:
            raise ZoneError(f"bad slot {text!r}: {exc}") from exc

    def __str__(self) -> str:
        return f"{self.zone.name}/{self.index}"


class ZoneMap:
    """Which antenna is which slot.  Loaded from a dict (the daemon's YAML/TOML) or built."""

    def __init__(self, antennas: Mapping[int, Slot]) -> None:
        self._slots = dict(sorted(antennas.items()))
        seen: dict[Slot, int] = {}
        for antenna, slot in self._slots.items():
            if slot in seen:
                raise ZoneError(f"antennas {seen[slot]} and {antenna} are both {slot}")
            seen[slot] = antenna

    def slot(self, antenna: int) -> Slot | None:
        return self._slots.get(antenna)

    @property
    def antennas(self) -> dict[int, Slot]:
        return dict(self._slots)

    def antenna_of(self, slot: Slot) -> int | None:
        return next((a for a, s in self._slots.items() if s == slot), None)

    @classmethod
    def from_dict(cls, data: Mapping[str | int, str]) -> ZoneMap:
        """``{"0": "seat:1/0", "1": "seat:1/1", "18": "board/0", "23": "burn", ...}``."""
        try:
            return cls({int(a): Slot.parse(s) for a, s in data.items()})
        except (TypeError, ValueError) as exc:
            raise ZoneError(f"zone map: {exc}") from exc

    def to_dict(self) -> dict[str, str]:
        return {str(a): str(s) for a, s in self._slots.items()}

    @classmethod
    def standard(cls, seats: int = 9, hole_slots: int = 2, board_slots: int = 5) -> ZoneMap:
        """Seats first (``hole_slots`` antennas each), then board slots, burn, muck, shoe."""
        slots: dict[int, Slot] = {}
        n = 0
        for seat in range(1, seats + 1):
            for i in range(hole_slots):
                slots[n] = Slot(Zone("seat", seat), i)
                n += 1
        for i in range(board_slots):
            slots[n] = Slot(Zone("board"), i)
            n += 1
        for kind in ("burn", "muck", "shoe"):
            slots[n] = Slot(Zone(kind))
            n += 1
        return cls(slots)


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
        first = change.arrived and len(antennas) == 1 and change.uid not in self._committed
        self._due[change.uid] = now + (self.arrive_debounce if first else self.debounce)
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
        return out

    def next_deadline(self) -> float | None:
        return min(self._due.values(), default=None)

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
            return _AMBIGUOUS
        return min(slots, key=lambda s: s.index)
