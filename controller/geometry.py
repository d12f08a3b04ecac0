"""The table's geometry, one model for everyone: zones, slots, antennas and camera regions.

The config (``[antennas]``, ``[camera] rois``), the antenna bridge (which antenna is which slot),
the fusion of tag reads into events, the camera and the engine's events all name places on the
table with these types, so a place written in one of them means the same place in all of them.

* A :class:`Zone` is a place a card can be: ``seat:3``, ``board``, ``burn``, ``muck``, ``shoe``.
  Events name zones by :attr:`Zone.name`.
* A :class:`Slot` is one card's place inside a zone: seat 3's second hole-card slot is
  ``seat:3/1``, the turn's board slot is ``board/3``; ``burn``, ``muck`` and ``shoe`` have one.
  The older config spelling ``seat:3:1`` / ``board:3`` is read too.
* A :class:`ZoneMap` says which antenna is which slot; :meth:`ZoneMap.standard` is the reference
  table's wiring (seats first, then the board, burn, muck and shoe).
* A :class:`Region` is a slot's rectangle in a fixed camera's frame.

Pure data: no hardware, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from controller.errors import PokerTableError

ZONE_KINDS = ("seat", "board", "burn", "muck", "shoe")
#: Slots per zone kind (a stud seat holds up to seven cards at once; the board five).
MAX_SLOTS = {"seat": 7, "board": 5, "burn": 1, "muck": 1, "shoe": 1}


class ZoneError(PokerTableError, ValueError):
    """A zone, slot, region or antenna map that does not parse or does not fit the table."""


@dataclass(frozen=True, slots=True, order=True)
class Zone:
    """A place on the table: ``seat`` (with its number), ``board``, ``burn``, ``muck``, ``shoe``."""

    kind: str
    seat: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ZONE_KINDS:
            raise ZoneError(f"unknown zone {self.kind!r}; expected one of {', '.join(ZONE_KINDS)}")
        if (self.kind == "seat") != (self.seat is not None):
            raise ZoneError("a seat zone needs a seat number, other zones none")
        if self.seat is not None and self.seat < 1:
            raise ZoneError(f"seats are numbered from 1, got {self.seat}")

    @property
    def name(self) -> str:
        """``seat:3``, ``board``, ...: how events and payloads name the zone."""
        return f"seat:{self.seat}" if self.kind == "seat" else self.kind

    @classmethod
    def parse(cls, text: str) -> Zone:
        if not isinstance(text, str):
            raise ZoneError(f"a zone is a string such as 'seat:3' or 'board', got {text!r}")
        kind, _, seat = text.strip().partition(":")
        if seat and kind in ZONE_KINDS and kind != "seat":
            raise ZoneError(f"{text!r}: only a seat has a number; expected 'board/K', 'burn', 'muck' or 'shoe'")
        try:
            number = int(seat) if seat else None
        except ValueError:
            raise ZoneError(f"{text!r}: a seat number is an integer") from None
        try:
            return cls(kind, number)
        except ZoneError as exc:
            raise ZoneError(f"{text!r}: {exc}") from None

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True, order=True)
class Slot:
    """One card's place: its zone and the slot index within it (hole card 0/1, board 0..4)."""

    zone: Zone
    index: int = 0

    def __post_init__(self) -> None:
        top = MAX_SLOTS[self.zone.kind]
        if not 0 <= self.index < top:
            raise ZoneError(f"{self.zone.name} slots are 0..{top - 1}, got {self.index}")

    @classmethod
    def parse(cls, text: str) -> Slot:
        """``seat:3/1``, ``board/2``, ``burn``; also the config's older ``seat:3:1`` and ``board:2``."""
        if not isinstance(text, str):
            raise ZoneError(f"a slot is a string such as 'seat:3/1', 'board/2' or 'burn', got {text!r}")
        body = text.strip()
        zone_text, sep, index_text = body.partition("/")
        if not sep:  # older spelling: the slot index after a second colon (seat) or the first (board)
            parts = body.split(":")
            if parts[0] == "seat" and len(parts) == 3:
                zone_text, index_text = ":".join(parts[:2]), parts[2]
            elif parts[0] == "board" and len(parts) == 2:
                zone_text, index_text = "board", parts[1]
        try:
            index = int(index_text) if index_text else 0
        except ValueError:
            raise ZoneError(f"{text!r}: a slot index is an integer") from None
        zone = Zone.parse(zone_text)
        try:
            return cls(zone, index)
        except ZoneError as exc:
            raise ZoneError(f"{text!r}: {exc}") from None

    @property
    def name(self) -> str:
        """Canonical spelling: ``seat:3/1``, ``board/2``, ``burn``."""
        if MAX_SLOTS[self.zone.kind] == 1:
            return self.zone.name
        return f"{self.zone.name}/{self.index}"

    def __str__(self) -> str:
        return self.name


class ZoneMap:
    """Which antenna is which slot, one slot per antenna."""

    def __init__(self, antennas: Mapping[int, Slot]) -> None:
        self._slots = dict(sorted(antennas.items()))
        seen: dict[Slot, int] = {}
        for antenna, slot in self._slots.items():
            if antenna < 0:
                raise ZoneError(f"antenna numbers are integers >= 0, got {antenna}")
            if slot in seen:
                raise ZoneError(f"antennas {seen[slot]} and {antenna} are both {slot}")
            seen[slot] = antenna
        self._antenna = {slot: antenna for antenna, slot in self._slots.items()}

    def slot(self, antenna: int) -> Slot | None:
        return self._slots.get(antenna)

    @property
    def antennas(self) -> dict[int, Slot]:
        return dict(self._slots)

    def antenna_of(self, slot: Slot) -> int | None:
        return self._antenna.get(slot)

    def seats(self) -> set[int]:
        """Seat numbers that have at least one antenna."""
        return {s.zone.seat for s in self._slots.values() if s.zone.seat is not None}

    @classmethod
    def from_dict(cls, data: Mapping[str | int, str | Slot]) -> ZoneMap:
        """``{"0": "seat:1/0", "1": "seat:1/1", "18": "board/0", "23": "burn", ...}``."""
        try:
            return cls({int(a): s if isinstance(s, Slot) else Slot.parse(s) for a, s in data.items()})
        except (TypeError, ValueError) as exc:
            raise ZoneError(f"antenna map: {exc}") from exc

    def to_dict(self) -> dict[str, str]:
        return {str(a): s.name for a, s in self._slots.items()}

    @classmethod
    def standard(cls, seats: int = 9, hole_slots: int = 2, board_slots: int = 5) -> ZoneMap:
        """The reference wiring: seats first (``hole_slots`` antennas each), then the board, burn,
        muck and shoe."""
        slots: list[Slot] = [Slot(Zone("seat", seat), i) for seat in range(1, seats + 1) for i in range(hole_slots)]
        slots += [Slot(Zone("board"), i) for i in range(board_slots)]
        slots += [Slot(Zone(kind)) for kind in ("burn", "muck", "shoe")]
        return cls(dict(enumerate(slots)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ZoneMap) and other._slots == self._slots

    def __repr__(self) -> str:
        return f"ZoneMap({self.to_dict()!r})"


@dataclass(frozen=True, slots=True)
class Region:
    """A slot's (or a whole zone's, ``index`` ignored) rectangle in a fixed camera's frame, pixels."""

    slot: Slot
    x: int
    y: int
    w: int
    h: int

    def __post_init__(self) -> None:
        if self.w <= 0 or self.h <= 0 or self.x < 0 or self.y < 0:
            raise ZoneError(f"{self.slot}: a region is [x, y, w, h] with x, y >= 0 and w, h > 0")

    @classmethod
    def parse(cls, name: str, box: object) -> Region:
        """``("board/0", [x, y, w, h])`` as the config's ``[camera] rois`` writes it."""
        if not (isinstance(box, list | tuple) and len(box) == 4 and all(isinstance(v, int) for v in box)):
            raise ZoneError(f"{name}: a region is [x, y, w, h] in whole pixels, got {box!r}")
        return cls(Slot.parse(name), *box)

    @property
    def box(self) -> tuple[int, int, int, int]:
        return (self.x, self.y, self.w, self.h)


def seat_of(zone: str | Zone) -> int | None:
    """The seat number a zone names (``seat:3`` -> 3), or None for any other place, including a
    reader zone that is no place on the table (an NFC pad named ``enroll``)."""
    if isinstance(zone, Zone):
        return zone.seat
    kind, _, number = zone.partition(":")
    return int(number) if kind == "seat" and number.isdigit() and int(number) >= 1 else None
