"""End-to-end acknowledgement between a table and the room's floor: ``<base>/<table>/floor/stored``.

A table's event messages reach the room over MQTT QoS 1, and the broker that acknowledges one is
not the store that keeps it: a room node that dies between the two loses a message the table
believes delivered (docs/scale.md).  So the floor says, per table, what it has *stored*, and the
table resends what the floor lacks; the floor's store is idempotent on table/hand/sequence, so a
resend of something it had after all changes nothing.

The report (:class:`StoredReport`, JSON)::

    {"schema": 1, "table_id": "t1", "ts": 1700000000.0, "through": 1234, "last": 2, "from": 210,
     "chunk": 16, "counts": [16, 19, ...], "pending": 0}

* ``through``: the highest sequence the floor holds an event of, and ``last`` how many events it
  holds at that sequence (the rest of that sequence's events may simply not be read yet);
  ``from``: where its window starts (sequences ``<= from`` are outside the report);
* ``counts[i]``: how many distinct events (kind, and the alert id of a ruling) the floor holds
  with a sequence in ``from + 1 + i*chunk .. from + (i+1)*chunk``: one sequence can carry several
  events (an action and the street it closes), so a count, not a set of sequences;
* ``pending``: messages in the room's stream the floor had not read yet when it wrote the report
  (0: it was caught up, so a message sent well before is either stored or lost).

:class:`Resender` is the table's side: it keeps the event messages the table published (topic,
payload, when), compares them with each report, and resends, through the ``send`` callable it is
given, those the floor lacks once they are older than ``grace`` seconds (each again only after a
doubling back-off).  A message above the floor's newest sequence waits, besides, until the floor is
caught up (``pending`` 0) and has stored nothing newer of this table for ``grace`` seconds: while
that sequence still moves, the table's own queue (a bridge flushing what it held during a
reconnection) is still draining, and a resend would only repeat what is on its way.  It does
nothing until a report arrives: a table without a room (or whose floor is down) resends nothing.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: The report's topic below ``<base>/<table>/`` in the room (NATS subject ``<base>.<table>.floor.stored``).
STORED_TOPIC = "floor/stored"


def local_stored_topic(table_id: str) -> str:
    """Where the table's Mosquitto bridge puts the report (systemd/room/mosquitto-bridge.conf): outside
    ``<base>/#``, so the broker's ACL can let the controller read it and no one write it."""
    return f"floor/{table_id}/stored"
#: Sequences per count in a report, and how many sequences below ``through`` a report covers.
CHUNK = 16
WINDOW = 1024


def event_key(path_or_kind: str, payload: Mapping[str, Any]) -> tuple[str, str]:
    """An event's identity within its sequence, as the floor's store keys it: its kind, and for a
    ruling the id of the alert it carries."""
    kind = path_or_kind.rsplit("/", 1)[-1]
    alert = payload.get("alert") if kind == "ruling" else None
    return kind, str(alert.get("id")) if isinstance(alert, Mapping) else ""


@dataclass(frozen=True)
class StoredReport:
    """What the floor holds of one table (see the module's docstring)."""

    table_id: str
    through: int
    start: int  # "from": the window covers start+1 .. through
    counts: tuple[int, ...]
    last: int = 0
    pending: int = 0
    ts: float = 0.0
    chunk: int = CHUNK

    @classmethod
    def build(cls, table_id: str, held: Mapping[int, int], *, pending: int = 0, ts: float | None = None,
              window: int = WINDOW, chunk: int = CHUNK) -> StoredReport:
        """From ``held``: sequence -> number of distinct events stored at it (the recent ones at least)."""
        through = max(held, default=0)
        start = max(0, through - window)
        counts = [0] * ((through - start + chunk - 1) // chunk)
        for seq, n in held.items():
            if seq > start:
                counts[(seq - start - 1) // chunk] += n
        return cls(table_id, through, start, tuple(counts), held.get(through, 0), pending,
                   time.time() if ts is None else ts, chunk)

    def payload(self) -> bytes:
        return json.dumps({"schema": 1, "table_id": self.table_id, "ts": round(self.ts, 3), "through": self.through,
                           "last": self.last, "from": self.start, "chunk": self.chunk, "counts": list(self.counts),
                           "pending": self.pending}, separators=(",", ":")).encode()

    @classmethod
    def parse(cls, data: bytes) -> StoredReport | None:
        """None for anything that is not a well-formed report (it is ignored, never trusted in part)."""
        try:
            p = json.loads(data)
            report = cls(str(p["table_id"]), int(p["through"]), int(p["from"]),
                         tuple(int(n) for n in p["counts"]), int(p.get("last", 0)), int(p.get("pending", 0)),
                         float(p.get("ts", 0)),
                         int(p.get("chunk", CHUNK)))
        except (ValueError, TypeError, KeyError, UnicodeDecodeError):
            return None
        if report.chunk < 1 or report.start < 0 or report.through < report.start or \
                len(report.counts) != (report.through - report.start + report.chunk - 1) // report.chunk:
            return None
        return report

    def chunk_of(self, seq: int) -> int | None:
        """The index of ``seq``'s count, None outside the window."""
        if self.start < seq <= self.through:
            return (seq - self.start - 1) // self.chunk
        return None


@dataclass
class _Sent:
    topic: str
    payload: bytes
    at: float  # when it was last sent (monotonic)
    tries: int = 0


@dataclass
class Resender:
    """The table's side of the acknowledgement: ``record`` every event message published,
    ``on_report`` every report received (from any thread)."""

    send: Callable[[str, bytes], None]
    grace: float = 5.0
    max_backoff: float = 60.0
    limit: int = 20_000  # messages kept while no report confirms them (hours of a floor outage); the oldest go first
    clock: Callable[[], float] = time.monotonic
    resent: int = 0
    reports: int = 0
    _through: int = -1
    _through_since: float = 0.0
    _by_seq: dict[int, dict[tuple[str, str], _Sent]] = field(default_factory=dict)
    _order: deque[int] = field(default_factory=deque)
    _count: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, topic: str, payload: bytes | str | Mapping[str, Any]) -> None:
        """An ``event/<kind>`` message the table just published (anything else is ignored)."""
        if "/event/" not in topic:
            return
        if isinstance(payload, Mapping):
            data = json.dumps(payload, separators=(",", ":")).encode()
            p: Any = payload
        else:
            data = payload.encode() if isinstance(payload, str) else bytes(payload)
            try:
                p = json.loads(data)
            except ValueError:
                return
        if not isinstance(p, Mapping) or not isinstance(p.get("seq"), int):
            return
        seq, key = p["seq"], event_key(topic, p)
        with self._lock:
            slot = self._by_seq.get(seq)
            if slot is None:
                slot = self._by_seq[seq] = {}
                self._order.append(seq)
            if key not in slot:
                self._count += 1
            slot[key] = _Sent(topic, data, self.clock())
            while self._count > self.limit and self._order:
                self._count -= len(self._by_seq.pop(self._order.popleft(), {}))

    @property
    def unconfirmed(self) -> int:
        with self._lock:
            return self._count

    def on_report(self, data: bytes, table_id: str | None = None) -> int:
        """Compare a report with what was sent; resend what the floor lacks.  Returns how many."""
        report = StoredReport.parse(data)
        if report is None or (table_id is not None and report.table_id != table_id):
            return 0
        now = self.clock()
        out: list[_Sent] = []
        with self._lock:
            self.reports += 1
            if report.through != self._through:
                self._through, self._through_since = report.through, now
            # Above what the floor holds: resent only once it is caught up and this table's newest
            # stored sequence has stood still for the grace period (nothing more is on its way).
            tail_due = not report.pending and now - self._through_since >= self.grace
            mine: dict[int, int] = {}
            for seq, slot in self._by_seq.items():
                i = report.chunk_of(seq)
                if i is not None and seq != report.through:
                    mine[i] = mine.get(i, 0) + len(slot)
            counts = list(report.counts)
            if counts:
                counts[-1] -= report.last  # the floor's newest sequence is judged on its own
            keep: deque[int] = deque()
            for seq in self._order:
                slot = self._by_seq[seq]
                i = report.chunk_of(seq)
                if seq <= report.start:
                    # Below the floor's window: resent once more if it was never confirmed, then let go.
                    out.extend(s for s in slot.values() if s.tries == 0)
                    del self._by_seq[seq]
                    self._count -= len(slot)
                    continue
                keep.append(seq)
                if seq == report.through:
                    # The floor may have read only part of its newest sequence so far: judged like the tail.
                    confirmed, i = report.last >= len(slot), None
                else:
                    confirmed = i is not None and counts[i] >= mine.get(i, 0)
                if confirmed:
                    for s in slot.values():
                        s.tries = -1  # confirmed (kept for the counts while its chunk is in the window)
                    continue
                if i is None and not tail_due:
                    continue  # above what the floor holds, and more may be on its way: wait
                out.extend(s for s in slot.values() if s.tries >= 0 and self._due(s, now))
            self._order = keep
            for s in out:
                s.tries = max(s.tries, 0) + 1
                s.at = now
        for s in out:
            self.send(s.topic, s.payload)
        self.resent += len(out)
        return len(out)

    def _due(self, s: _Sent, now: float) -> bool:
        return now - s.at > min(self.grace * (2 ** s.tries), self.max_backoff)

