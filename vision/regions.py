"""The one place type vision needs: a table zone (``seat:3``, ``board``, ``burn``, ``muck``, ``shoe``).

Kept here, small, so that vision does not import the antenna bridge (and pyserial with it)
for geometry.  It compares and hashes like the bridge's ``Zone`` (by kind and seat), so a
zone from the camera and one from a tag read meet in the same dict key.  It gives way to
``controller.geometry.Zone`` when that lands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ZONE_KINDS = ("seat", "board", "burn", "muck", "shoe")


class ZoneError(ValueError):
    """A zone that does not parse."""


@dataclass(frozen=True, eq=False)
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

    def __eq__(self, other: Any) -> bool:
        kind, seat = getattr(other, "kind", None), getattr(other, "seat", None)
        return isinstance(kind, str) and (kind, seat) == (self.kind, self.seat)

    def __hash__(self) -> int:
        return hash((self.kind, self.seat))  # as the bridge's frozen dataclass hashes

    def __str__(self) -> str:
        return self.name
