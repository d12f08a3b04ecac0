"""The durable event journal: every input event, committed before the engine sees it.

The rules engine is a deterministic function of its input events, so the journal is
the table's whole state.  The daemon calls :meth:`Journal.append` and only then applies
the event; after a restart (even after ``kill -9`` or a power cut) it replays
:meth:`Journal.entries` and comes back exactly where it was.

Storage is one SQLite file in WAL mode.  With ``sync="full"`` (the default,
``synchronous=FULL``) an ``append`` that returned is on disk, power cut included; with
``sync="normal"`` it survives any crash of the process but not of the machine.  Readers
(the MQTT publisher, a ``tablectl`` export) may open the same file from another thread or
process while the daemon writes.

Tables:

* ``events``  -- ``seq`` (monotonic, never reused), ``at`` (wall clock, seconds),
  ``source`` (who produced it: ``rfid``, ``console``, ``panel`` ...), ``kind`` and the
  event's JSON (:meth:`~controller.events.Event.to_dict`).
* ``hands``   -- completed hands: id, setup, the seq range of their events, an outcome
  dict (rulings, winners ...).  The latest record for a hand id wins, so replaying a
  journal that records the hand again is harmless.
* ``transactions`` -- a console request's transaction id -> the seq of the event it caused,
  written in the same commit as the event (a retried request is applied once).
* ``broadcast_secrets`` -- per deal (the seq of the event that started it), the random seed the
  broadcast's salts and keys derive from (controller/mqtt/sealed.py): a restart seals, commits
  and reveals a hand with the same salts as before it.  A table created when this journal was
  already in use is simply added (``CREATE TABLE IF NOT EXISTS``).
* ``floor_orders`` -- a tournament table's orders from the floor it has taken and not yet
  carried out (a player to let go when the hand in progress is over, one to seat when his seat is
  free): a restarted daemon re-arms them (controller/app/floor_orders.py).  The event that carries
  one out is journaled with the order's id as its transaction.
* ``meta``    -- the schema version and the MQTT outbox cursor ``published_seq``.

A row that does not decode is never skipped: :class:`JournalError` names its seq.

Tamper evidence: every event row carries ``hash``, the SHA-256 of the previous row's hash and
of its own columns (seq, at, source, kind, data), so the events form a hash chain.  Editing,
deleting, inserting or renumbering a row breaks the chain at that row, and
:meth:`Journal.verify_chain` (``tablectl replay``) says where.  Rows written before the chain
existed (a schema 1 journal, upgraded in place when opened) have no hash: they are counted as
unchained, and the chain starts after them.  Like any chain kept beside the data, it does not
reveal rows cut off the *end*, nor a journal rewritten whole by someone who recomputes every
hash; the hash of the newest row, published or copied elsewhere (the floor), pins it.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.errors import PokerTableError
from controller.rules.events import Event, EventError, HandSetup, event_from_dict

SCHEMA_VERSION = 2  # 2: events.hash (the hash chain); a version 1 journal is upgraded when opened
GENESIS = "0" * 64  # the "previous hash" of the first chained row
SYNC_MODES = {
    # Every append is flushed to the disk before it returns: survives a power cut.
    "full": "FULL",
    # Every append is committed to the WAL (the kernel has it) before it returns: survives the
    # daemon's crash or ``kill -9``, not a power cut or a kernel panic (the last commits since
    # the WAL was last flushed may be lost).  About one disk flush less per event.
    "normal": "NORMAL",
}
_BATCH = 500

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    seq    INTEGER PRIMARY KEY AUTOINCREMENT,
    at     REAL NOT NULL,
    source TEXT NOT NULL,
    kind   TEXT NOT NULL,
    data   TEXT NOT NULL,
    hash   TEXT
);
CREATE TABLE IF NOT EXISTS transactions (
    tx  TEXT PRIMARY KEY,
    seq INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS hands (
    hand_id   INTEGER PRIMARY KEY,
    setup     TEXT NOT NULL,
    first_seq INTEGER NOT NULL,
    last_seq  INTEGER NOT NULL,
    outcome   TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS floor_orders (
    id       TEXT PRIMARY KEY,
    received REAL NOT NULL,
    body     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS broadcast_secrets (
    deal    INTEGER PRIMARY KEY,
    hand_id INTEGER NOT NULL,
    seed    TEXT NOT NULL
);
"""


class JournalError(PokerTableError, RuntimeError):
    """The journal cannot be opened, written or read (the message names the file and the row)."""


class JournalFullError(JournalError):
    """An append failed because the disk (or the file system) is full: nothing was written, and
    the same append may succeed once space returns."""


_SQLITE_FULL = 13  # SQLite's primary result code for "database or disk is full"


def _append_error(path: Path, exc: sqlite3.Error) -> JournalError:
    """The error an append raises: :class:`JournalFullError` when the disk is full."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF == _SQLITE_FULL or "disk is full" in str(exc):
        return JournalFullError(f"journal {path}: full (no space left on its disk): {exc}")
    return JournalError(f"journal {path}: append failed: {exc}")


def chain_hash(prev: str, seq: int, at: float, source: str, kind: str, data: str) -> str:
    """One link of the chain: SHA-256 over the previous hash and the row's columns, as canonical JSON
    (``at`` by its shortest round-trip repr, so the REAL SQLite stores gives the same text)."""
    text = json.dumps([prev, int(seq), repr(float(at)), source, kind, data], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class ChainReport:
    """What :meth:`Journal.verify_chain` found: ``ok``, how many rows are chained and how many
    predate the chain, and, when broken, the seq of the first row that breaks it and why."""

    ok: bool
    chained: int
    unchained: int
    broken_at: int | None
    reason: str | None
    head: str | None = None  # the newest row's hash (pin it elsewhere to catch a cut-off end)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "chained": self.chained, "unchained": self.unchained, "broken_at": self.broken_at,
                "reason": self.reason, "head": self.head}


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One journaled input event."""

    seq: int
    at: float
    source: str
    event: Event


@dataclass(frozen=True, slots=True)
class HandRecord:
    """A completed hand: its setup, the seq range of its events and how it ended."""

    hand_id: int
    setup: HandSetup
    first_seq: int
    last_seq: int
    outcome: dict[str, Any] = field(default_factory=dict)


class Journal:
    """Append-only event log in SQLite (WAL, ``synchronous=FULL``).  Thread-safe.

    ``Journal(path)`` creates the file (and its folder) when missing.  Use it as a
    context manager or call :meth:`close`.
    """

    def __init__(self, path: str | Path, sync: str = "full") -> None:
        if sync not in SYNC_MODES:
            raise ValueError(f"journal: sync must be one of {', '.join(SYNC_MODES)}, got {sync!r}")
        self.path = Path(path)
        self.sync = sync
        self._lock = threading.RLock()
        self._closed = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10.0)
        except (OSError, sqlite3.Error) as exc:
            raise JournalError(f"journal {self.path}: cannot open: {exc}") from exc
        try:
            self._db.execute("PRAGMA busy_timeout = 10000")
            mode = self._db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise JournalError(f"journal {self.path}: cannot switch to WAL mode (got {mode!r})")
            self._db.execute(f"PRAGMA synchronous = {SYNC_MODES[sync]}")
            with self._transaction():
                for statement in filter(str.strip, _SCHEMA.split(";")):
                    self._db.execute(statement)
                row = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                if row is None:
                    self._db.execute("INSERT INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
                    self._db.execute("INSERT INTO meta (key, value) VALUES ('published_seq', '0')")
                elif row[0] == "1":
                    # Version 1 had no hash chain: its rows stay as they are (unchained), new rows chain.
                    columns = {r[1] for r in self._db.execute("PRAGMA table_info(events)")}
                    if "hash" not in columns:
                        self._db.execute("ALTER TABLE events ADD COLUMN hash TEXT")
                    self._db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),))
                elif row[0] != str(SCHEMA_VERSION):
                    raise JournalError(
                        f"journal {self.path}: schema version {row[0]}, this controller reads {SCHEMA_VERSION}"
                    )
        except sqlite3.Error as exc:
            self._db.close()
            raise JournalError(f"journal {self.path}: not a usable journal: {exc}") from exc
        except JournalError:
            self._db.close()
            raise

    # ------------------------------------------------------------------ plumbing
    def _transaction(self):
        return _Transaction(self._db)

    def _check_open(self) -> None:
        if self._closed:
            raise JournalError(f"journal {self.path}: closed")

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Journal({str(self.path)!r})"

    # ------------------------------------------------------------------ events
    def append(self, event: Event, *, at: float, source: str = "", transaction: str | None = None) -> int:
        """Write one event and commit it; returns its seq.  Durable when this returns.
        ``transaction`` (a console request's id) is stored with it, in the same commit."""
        if not isinstance(event, Event):
            raise TypeError(f"journal: expected an Event, got {type(event).__name__}")
        at = float(at)
        if not math.isfinite(at):
            raise ValueError(f"journal: 'at' must be a finite timestamp, got {at!r}")
        data = json.dumps(event.to_dict(), separators=(",", ":"), sort_keys=True)
        source = str(source)
        with self._lock:
            self._check_open()
            try:
                # The chain's head and the next seq, read in the same write transaction as the insert:
                # no other writer can slip a row in between.
                with self._transaction():
                    head = self._db.execute(
                        "SELECT hash FROM events WHERE hash IS NOT NULL ORDER BY seq DESC LIMIT 1").fetchone()
                    row = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
                    seq = max(int(row[0]) if row else 0, self._max_seq()) + 1
                    digest = chain_hash(head[0] if head else GENESIS, seq, at, source, event.kind, data)
                    self._db.execute(
                        "INSERT INTO events (seq, at, source, kind, data, hash) VALUES (?, ?, ?, ?, ?, ?)",
                        (seq, at, source, event.kind, data, digest),
                    )
                    if transaction is not None:
                        self._db.execute("INSERT INTO transactions (tx, seq) VALUES (?, ?)", (str(transaction), seq))
            except sqlite3.Error as exc:
                raise _append_error(self.path, exc) from exc
        return seq

    def _max_seq(self) -> int:
        row = self._db.execute("SELECT MAX(seq) FROM events").fetchone()
        return int(row[0] or 0)

    def _read(self, sql: str, params: tuple = ()) -> list[tuple]:
        """The rows of one query, read under the lock from the open journal."""
        with self._lock:
            self._check_open()
            return self._db.execute(sql, params).fetchall()

    def _row(self, sql: str, key: int) -> tuple:
        """The one row ``sql`` finds for ``key``; :class:`KeyError` when there is none."""
        rows = self._read(sql, (int(key),))
        if not rows:
            raise KeyError(key)
        return rows[0]

    def verify_chain(self) -> ChainReport:
        """Walk every row and recompute the chain; the report names the first row that breaks it."""
        prev = GENESIS
        chained = unchained = 0
        last = 0
        while True:
            rows = self._read("SELECT seq, at, source, kind, data, hash FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
                              (last, _BATCH))
            for seq, at, source, kind, data, digest in rows:
                last = seq
                if digest is None:
                    if chained:
                        return ChainReport(False, chained, unchained, seq,
                                           f"entry seq {seq} has no hash, but entries before it do")
                    unchained += 1
                    continue
                try:
                    expected = chain_hash(prev, int(seq), float(at), str(source), str(kind), str(data))
                except (TypeError, ValueError) as exc:
                    return ChainReport(False, chained, unchained, seq, f"entry seq {seq} does not read: {exc}")
                if digest != expected:
                    return ChainReport(False, chained, unchained, seq,
                                       f"entry seq {seq} does not match the chain: it, or an entry before it, "
                                       "was changed, inserted or removed")
                prev = digest
                chained += 1
            if len(rows) < _BATCH:
                return ChainReport(True, chained, unchained, None, None, head=prev if chained else None)

    def transaction_seq(self, transaction: str) -> int | None:
        """The seq of the event a request with this transaction id caused, or None."""
        rows = self._read("SELECT seq FROM transactions WHERE tx = ?", (str(transaction),))
        return int(rows[0][0]) if rows else None

    # ------------------------------------------------------------------ the floor's orders
    def keep_order(self, order_id: str, body: dict[str, Any], at: float) -> None:
        """An order from the floor the table has taken: durable when this returns (kept once)."""
        with self._lock:
            self._check_open()
            try:
                with self._transaction():
                    self._db.execute("INSERT OR IGNORE INTO floor_orders (id, received, body) VALUES (?, ?, ?)",
                                     (str(order_id), float(at), json.dumps(body, sort_keys=True)))
            except sqlite3.Error as exc:
                raise _append_error(self.path, exc) from exc

    def drop_order(self, order_id: str) -> None:
        """The order is carried out (its event journaled) or no longer applies."""
        with self._lock:
            self._check_open()
            try:
                with self._transaction():
                    self._db.execute("DELETE FROM floor_orders WHERE id = ?", (str(order_id),))
            except sqlite3.Error as exc:
                raise _append_error(self.path, exc) from exc

    def kept_orders(self) -> list[dict[str, Any]]:
        """The orders taken and not yet carried out, in the order they came."""
        with self._lock:
            self._check_open()
            rows = self._db.execute("SELECT body FROM floor_orders ORDER BY received, rowid").fetchall()
        return [json.loads(r[0]) for r in rows]

    @property
    def last_seq(self) -> int:
        """The seq of the newest event (0 when empty)."""
        return int(self._read("SELECT MAX(seq) FROM events")[0][0] or 0)

    def entries(self, after: int = 0) -> Iterator[JournalEntry]:
        """Every entry with seq > ``after``, oldest first.

        Reads in batches and holds no lock or read transaction between them, so a
        consumer may take its time; entries appended meanwhile are included.
        """
        last = int(after)
        while True:
            rows = self._read("SELECT seq, at, source, kind, data FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
                              (last, _BATCH))
            for row in rows:
                yield self._decode(row)
                last = row[0]
            if len(rows) < _BATCH:
                return

    def entry(self, seq: int) -> JournalEntry:
        """One entry by seq; :class:`KeyError` when there is none."""
        return self._decode(self._row("SELECT seq, at, source, kind, data FROM events WHERE seq = ?", seq))

    def _decode(self, row: tuple) -> JournalEntry:
        seq, at, source, kind, data = row
        try:
            raw = json.loads(data)
        except (TypeError, ValueError) as exc:
            raise JournalError(f"journal {self.path}: row seq {seq}: event data is not JSON: {exc}") from exc
        try:
            event = event_from_dict(raw)
        except (EventError, ValueError, TypeError) as exc:
            raise JournalError(f"journal {self.path}: row seq {seq}: cannot rebuild the event: {exc}") from exc
        if event.kind != kind:
            raise JournalError(
                f"journal {self.path}: row seq {seq}: kind column {kind!r} does not match the event ({event.kind!r})"
            )
        try:
            at = float(at)
        except (TypeError, ValueError) as exc:
            raise JournalError(f"journal {self.path}: row seq {seq}: bad timestamp {at!r}") from exc
        return JournalEntry(int(seq), at, str(source), event)

    # ------------------------------------------------------------------ hands
    def record_hand(self, hand_id: int, setup: HandSetup, first_seq: int, last_seq: int, outcome: dict) -> None:
        """Keep a completed hand (events ``first_seq..last_seq`` inclusive).  Recording the same
        hand id again replaces the record (a replay, or a redeal under the same number)."""
        hand_id, first_seq, last_seq = int(hand_id), int(first_seq), int(last_seq)
        if not 1 <= first_seq <= last_seq:
            raise ValueError(f"journal: hand {hand_id}: bad seq range {first_seq}..{last_seq}")
        try:
            outcome_json = json.dumps(outcome, sort_keys=True, default=_json_default)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"journal: hand {hand_id}: outcome is not JSON-serialisable: {exc}") from exc
        setup_json = json.dumps(setup.to_dict(), sort_keys=True)
        self._write_upto(
            last_seq, lambda newest: f"journal: hand {hand_id}: last_seq {last_seq} is beyond the journal ({newest})",
            "INSERT INTO hands (hand_id, setup, first_seq, last_seq, outcome) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(hand_id) DO UPDATE SET setup = excluded.setup, first_seq = excluded.first_seq, "
            "last_seq = excluded.last_seq, outcome = excluded.outcome",
            (hand_id, setup_json, first_seq, last_seq, outcome_json), f"recording hand {hand_id}")

    def _write_upto(self, seq: int, beyond: Callable[[int], str], sql: str, params: tuple, what: str,
                    flush: bool = True) -> None:
        """One write about the events up to ``seq``, which must be journaled already (else a
        :class:`ValueError`, ``beyond(newest seq)``); a database error is a :class:`JournalError`.
        ``flush`` false: committed without a flush of its own (``synchronous=NORMAL`` for this one
        write), on disk with the next append (each flushes the write-ahead log whole)."""
        with self._lock:
            self._check_open()
            newest = self.last_seq
            if seq > newest:
                raise ValueError(beyond(newest))
            lazy = not flush and self.sync == "full"
            try:
                if lazy:
                    self._db.execute("PRAGMA synchronous = NORMAL")
                try:
                    self._db.execute(sql, params)
                finally:
                    if lazy:
                        self._db.execute(f"PRAGMA synchronous = {SYNC_MODES[self.sync]}")
            except sqlite3.Error as exc:
                raise JournalError(f"journal {self.path}: {what} failed: {exc}") from exc

    def hands(self) -> list[HandRecord]:
        """Every recorded hand, by hand id."""
        rows = self._read("SELECT hand_id, setup, first_seq, last_seq, outcome FROM hands ORDER BY hand_id")
        return [self._decode_hand(row) for row in rows]

    def hand(self, hand_id: int) -> HandRecord:
        """One recorded hand; :class:`KeyError` when it was never recorded."""
        return self._decode_hand(
            self._row("SELECT hand_id, setup, first_seq, last_seq, outcome FROM hands WHERE hand_id = ?", hand_id))

    def _decode_hand(self, row: tuple) -> HandRecord:
        hand_id, setup, first_seq, last_seq, outcome = row
        try:
            return HandRecord(int(hand_id), HandSetup.from_dict(json.loads(setup)), int(first_seq), int(last_seq),
                              json.loads(outcome))
        except (TypeError, ValueError) as exc:
            raise JournalError(f"journal {self.path}: hand {hand_id}: record does not decode: {exc}") from exc

    def hand_events(self, hand_id: int) -> list[Event]:
        """The events of a recorded hand: everything journaled in its seq range, in order
        (table events that arrived mid-hand, such as a seat change, included)."""
        return [e.event for e in self.hand_entries(hand_id)]

    def hand_entries(self, hand_id: int) -> list[JournalEntry]:
        record = self.hand(hand_id)
        out = []
        for entry in self.entries(after=record.first_seq - 1):
            if entry.seq > record.last_seq:
                break
            out.append(entry)
        return out

    # ------------------------------------------------------------------ broadcast secrets
    def broadcast_secret(self, deal: int, hand_id: int, make: Any) -> bytes:
        """The seed of deal ``deal`` (the seq of the event that started it): the stored one, or
        ``make()`` stored first (durable on return, so a salt committed to is never forgotten)."""
        with self._lock:
            self._check_open()
            row = self._db.execute("SELECT seed FROM broadcast_secrets WHERE deal = ?", (int(deal),)).fetchone()
            if row is not None:
                return bytes.fromhex(row[0])
            seed = bytes(make())
            try:
                self._db.execute("INSERT OR IGNORE INTO broadcast_secrets (deal, hand_id, seed) VALUES (?, ?, ?)",
                                 (int(deal), int(hand_id), seed.hex()))
                row = self._db.execute("SELECT seed FROM broadcast_secrets WHERE deal = ?", (int(deal),)).fetchone()
            except sqlite3.Error as exc:
                raise _append_error(self.path, exc) from exc
        return bytes.fromhex(row[0])

    def deal_of(self, seq: int) -> int:
        """The seq of the ``new_hand``/``start_hand`` event that started the deal ``seq`` is in (0: none)."""
        rows = self._read("SELECT seq FROM events WHERE seq <= ? AND kind IN ('new_hand', 'start_hand') "
                          "ORDER BY seq DESC LIMIT 1", (int(seq),))
        return int(rows[0][0]) if rows else 0

    # ------------------------------------------------------------------ MQTT outbox cursor
    @property
    def published_seq(self) -> int:
        """The newest seq the MQTT publisher has delivered (0: nothing yet)."""
        rows = self._read("SELECT value FROM meta WHERE key = 'published_seq'")
        return int(rows[0][0]) if rows else 0

    def mark_published(self, seq: int) -> None:
        """Move the outbox cursor forward to ``seq`` (never backwards).  Committed (a crash of the
        process keeps it) but not flushed on its own: it reaches the disk with the next append's
        flush or the next checkpoint.  The cursor only says where a restart's republishing starts
        (at least once, payloads carry their seq), so a power cut that loses its newest move
        republishes a few messages more and loses nothing; its own flush held the journal's lock
        as long as the disk took, and a card's append waited behind it (``tablectl bench table
        --host``, ``journal_wait``)."""
        seq = int(seq)
        if seq < 0:
            raise ValueError(f"journal: published seq must be >= 0, got {seq}")
        self._write_upto(
            seq, lambda newest: f"journal: cannot mark seq {seq} published, the newest is {newest}",
            "UPDATE meta SET value = CAST(MAX(CAST(value AS INTEGER), ?) AS TEXT) WHERE key = 'published_seq'",
            (seq,), f"marking seq {seq} published", flush=False)

    def unpublished(self) -> Iterator[JournalEntry]:
        """Entries the publisher still owes the broker."""
        return self.entries(after=self.published_seq)


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rollback on error) on an autocommit connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.db.execute("COMMIT")
        else:
            self.db.execute("ROLLBACK")


def _json_default(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


__all__ = ["ChainReport", "GENESIS", "HandRecord", "Journal", "chain_hash", "JournalEntry", "JournalError",
           "JournalFullError", "SCHEMA_VERSION"]
