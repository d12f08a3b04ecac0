"""The floor's half of the end-to-end acknowledgement: per table, what the store holds
(:class:`~controller.mqtt.resend.StoredReport` on ``<base>.<table>.floor.stored``).

The room's MQTT listener acknowledges a table's message before the stream has stored it, so a
node dying between the two loses a message the table believes delivered (docs/scale.md).  The
floor therefore tells each table what it has committed, and the table resends what is missing
(:class:`~controller.mqtt.resend.Resender`).  :class:`StoredTracker` keeps, per table, the
distinct events committed at each recent sequence (read back from the store the first time a
table is seen, so a restarted floor reports what it held before), and says which reports are due:
a table's report at most every ``every`` seconds after a batch touched it, and every table's every
``heartbeat`` seconds (an idle table whose last message was lost still hears that the floor lacks
it; a report that got lost is replaced).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from controller.floor.store import Row, Store
from controller.mqtt.resend import WINDOW, StoredReport


@dataclass
class StoredTracker:
    store: Store
    window: int = WINDOW
    every: float = 1.0
    heartbeat: float = 5.0
    clock: Callable[[], float] = time.monotonic
    _held: dict[str, dict[int, set[tuple[str, str]]]] = field(default_factory=dict)
    _touched: set[str] = field(default_factory=set)
    _sent: dict[str, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def load_known(self) -> None:
        """Every table the store knows (a restarted floor reports on them before they speak again)."""
        for row in self.store.query("SELECT table_id FROM tables"):
            self._table(str(row["table_id"]))

    def _table(self, table_id: str) -> dict[int, set[tuple[str, str]]]:
        held = self._held.get(table_id)
        if held is None:
            top = self.store.query("SELECT MAX(seq) AS m FROM events WHERE table_id = ?", (table_id,))[0]["m"] or 0
            held = {}
            for r in self.store.query("SELECT seq, kind, sub FROM events WHERE table_id = ? AND seq > ?",
                                      (table_id, int(top) - self.window)):
                held.setdefault(int(r["seq"]), set()).add((r["kind"], r["sub"]))
            with self._lock:
                self._held[table_id] = held
        return held

    def add(self, rows: Iterable[Row]) -> None:
        """Rows just committed (new or already there: either way the store holds them)."""
        for row in rows:
            if row.op != "event":
                continue
            f = row.fields
            held = self._table(f["table_id"])
            with self._lock:
                held.setdefault(int(f["seq"]), set()).add((f["kind"], f["sub"]))
                self._touched.add(f["table_id"])

    def due(self, pending: int = 0) -> list[StoredReport]:
        """The reports to publish now (``pending``: what the floor has not read from the stream yet)."""
        now = self.clock()
        out = []
        with self._lock:
            for table_id, held in self._held.items():
                last = self._sent.get(table_id, -1e9)
                touched = table_id in self._touched
                if (touched and now - last >= self.every) or now - last >= self.heartbeat:
                    if held:
                        top = max(held)
                        for seq in [s for s in held if s <= top - self.window]:
                            del held[seq]
                    out.append(StoredReport.build(table_id, {s: len(k) for s, k in held.items()}, pending=pending,
                                                  window=self.window))
                    self._sent[table_id] = now
                    self._touched.discard(table_id)
        return out
