"""Table diagnostics: what the antenna board's own frames say about each antenna, and the camera.

Everything here is learnt from frames the board already sends (PROTOCOL.md), nothing is asked of it:

* **reads**: the tags an antenna reported arriving (TAG_ARRIVE, and the arrivals an INVENTORY or a
  ring replay placed there), and **leaves**;
* **misses**: a card the camera saw in a zone with no tag read there (the camera filled it in, or
  could not name it either).  The camera knows the zone, not the slot: a miss goes to the zone's
  one antenna that holds no tag, or, when that is not one antenna, to the zone alone;
* **collisions**: more tags on one antenna than the board can read (FAULT 3, once per episode);
* **readers not answering**: FAULT 1 (its SPI or version register), until FAULT 2 (recovered);
* **the scan cycle**: from two HEARTBEATs, the device's uptime over its scan-cycle counter, the
  mean cycle of the last period and the longest such mean; and the gaps between two reads past
  the firmware's limit (FAULT 7, scan stalled), which put the order of the cards after them in
  doubt.

The link feeds it in its own thread; the daemon reads :meth:`ReaderDiagnostics.snapshot` for the
retained ``diagnostics`` topic (docs/mqtt.md), the display's service screen and the floor.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from controller.geometry import ZoneMap

#: FAULT codes (firmware/bridge_proto.py) the diagnostics count.
READER_NOT_RESPONDING, READER_RECOVERED, TOO_MANY_TAGS, SCAN_STALLED = 1, 2, 3, 7


class ReaderDiagnostics:
    """Counters per antenna and for the scan loop, safe to feed from one thread and read from any."""

    def __init__(self, zone_map: ZoneMap | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.zone_map = zone_map
        self._clock = clock
        self._lock = threading.Lock()
        self.reads: Counter[int] = Counter()
        self.leaves: Counter[int] = Counter()
        self.misses: Counter[int] = Counter()
        self.zone_misses: Counter[str] = Counter()  # misses no single antenna of the zone explains
        self.collisions: Counter[int] = Counter()
        self.reader_faults: Counter[int] = Counter()
        self.not_answering: set[int] = set()
        self._last_read: dict[int, float] = {}
        self._beat: tuple[int, int] | None = None  # the last heartbeat's (uptime_ms, scan_cycles)
        self.cycle_ms: float | None = None  # the mean cycle over the last heartbeat period
        self.cycle_ms_max: float | None = None
        self.scan_cycles = 0
        self.stalls = 0
        self.longest_gap_ms = 0

    # -- fed by the link (its thread) -----------------------------------------------------
    def presence(self, antenna: int, arrived: bool) -> None:
        with self._lock:
            if arrived:
                self.reads[antenna] += 1
                self._last_read[antenna] = self._clock()
            else:
                self.leaves[antenna] += 1

    def fault(self, source: int, code: int, detail: int) -> None:
        with self._lock:
            if code == READER_NOT_RESPONDING:
                if source not in self.not_answering:
                    self.reader_faults[source] += 1
                self.not_answering.add(source)
            elif code == READER_RECOVERED:
                self.not_answering.discard(source)
            elif code == TOO_MANY_TAGS:
                self.collisions[source] += 1
            elif code == SCAN_STALLED:
                self.stalls += 1
                self.longest_gap_ms = max(self.longest_gap_ms, detail)

    def heartbeat(self, uptime_ms: int, scan_cycles: int) -> None:
        with self._lock:
            self.scan_cycles = scan_cycles
            if self._beat is not None:
                elapsed = (uptime_ms - self._beat[0]) % (1 << 32)
                cycles = (scan_cycles - self._beat[1]) % (1 << 32)
                if cycles and elapsed:
                    self.cycle_ms = elapsed / cycles
                    self.cycle_ms_max = max(self.cycle_ms_max or 0.0, self.cycle_ms)
            self._beat = (uptime_ms, scan_cycles)

    def new_boot(self) -> None:
        """The board restarted: its counters start again, so the next beat has no predecessor; and a
        rebooted board reports its dead readers afresh."""
        with self._lock:
            self._beat = None
            self.not_answering.clear()

    # -- fed by the camera -----------------------------------------------------------------
    def miss(self, zone: str, present: Mapping[int, frozenset[str] | set[str]]) -> None:
        """The camera saw a card in ``zone`` (``seat:3``, ``board``...) that no tag reported."""
        candidates = [a for a, slot in (self.zone_map.antennas.items() if self.zone_map else ())
                      if slot.zone.name == zone and not present.get(a)]
        with self._lock:
            if len(candidates) == 1:
                self.misses[candidates[0]] += 1
            else:
                self.zone_misses[zone] += 1

    # -- read -----------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        now = self._clock()
        with self._lock:
            known = set(self.zone_map.antennas) if self.zone_map else set()
            seen = known | set(self.reads) | set(self.misses) | set(self.collisions) | self.not_answering \
                | set(self.reader_faults)
            antennas = []
            for a in sorted(seen):
                slot = self.zone_map.slot(a) if self.zone_map else None
                last = self._last_read.get(a)
                antennas.append({
                    "antenna": a, "slot": slot.name if slot else None, "zone": slot.zone.name if slot else None,
                    "reads": self.reads[a], "leaves": self.leaves[a], "misses": self.misses[a],
                    "collisions": self.collisions[a], "answering": a not in self.not_answering,
                    "reader_faults": self.reader_faults[a],
                    "last_read_s": None if last is None else round(now - last, 1),
                })
            return {
                "antennas": antennas,
                "zone_misses": dict(sorted(self.zone_misses.items())),
                "not_answering": sorted(self.not_answering),
                "scan": {
                    "cycle_ms": None if self.cycle_ms is None else round(self.cycle_ms, 2),
                    "cycle_ms_max": None if self.cycle_ms_max is None else round(self.cycle_ms_max, 2),
                    "cycles": self.scan_cycles, "stalls": self.stalls, "longest_gap_ms": self.longest_gap_ms,
                },
                "totals": {"reads": sum(self.reads.values()),
                           "misses": sum(self.misses.values()) + sum(self.zone_misses.values()),
                           "collisions": sum(self.collisions.values())},
            }
