"""Where the floor keeps the room: SQLite for one machine, PostgreSQL for a room.

One schema, one set of statements for both (``?`` placeholders rewritten to ``%s`` for
psycopg).  Every write is idempotent on table/hand/sequence: an event is keyed by
``(table_id, hand_id, seq, kind, sub)`` (``sub`` tells apart two rulings one input raised, or
two seats' actions under one seq: ``ingest.event_sub``),
a hand by ``(table_id, hand_id, start_seq)`` (a misdeal's redeal keeps the hand number but
starts at a later sequence), a ruling by ``(table_id, alert_id)``, a sign-in by
``(table_id, seq)``; every insert is ``ON CONFLICT DO NOTHING``, so a message delivered twice
(a JetStream redelivery after the floor restarted, a Mosquitto bridge resending after a
reconnect) changes nothing the second time.

A batch of messages is written in one transaction (:meth:`Store.write`), and the caller
acknowledges the batch only after the commit: nothing acknowledged is ever lost.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.errors import PokerTableError

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id {serial},
    table_id TEXT NOT NULL, hand_id BIGINT NOT NULL, seq BIGINT NOT NULL, kind TEXT NOT NULL,
    sub TEXT NOT NULL DEFAULT '', ts DOUBLE PRECISION NOT NULL, received DOUBLE PRECISION NOT NULL,
    payload TEXT NOT NULL,
    UNIQUE (table_id, hand_id, seq, kind, sub));
CREATE INDEX IF NOT EXISTS events_hand ON events (table_id, hand_id, seq);
CREATE TABLE IF NOT EXISTS hands (
    table_id TEXT NOT NULL, hand_id BIGINT NOT NULL, start_seq BIGINT NOT NULL,
    end_seq BIGINT, started DOUBLE PRECISION NOT NULL, ended DOUBLE PRECISION,
    game TEXT, rules TEXT, structure TEXT, event TEXT, stakes TEXT,
    button INTEGER, seats TEXT, dealer TEXT, result TEXT, winners TEXT, shown TEXT, summary TEXT,
    payouts TEXT, holecards TEXT,
    PRIMARY KEY (table_id, hand_id, start_seq));
CREATE INDEX IF NOT EXISTS hands_started ON hands (started);
CREATE INDEX IF NOT EXISTS hands_dealer ON hands (dealer, started);
CREATE TABLE IF NOT EXISTS rulings (
    table_id TEXT NOT NULL, alert_id TEXT NOT NULL, hand_id BIGINT, seq BIGINT NOT NULL,
    ts DOUBLE PRECISION NOT NULL, received DOUBLE PRECISION NOT NULL, dealer TEXT, ruling TEXT, reason TEXT,
    severity TEXT, message TEXT, citations TEXT, payload TEXT NOT NULL,
    acked DOUBLE PRECISION, acked_by TEXT,
    PRIMARY KEY (table_id, alert_id));
CREATE INDEX IF NOT EXISTS rulings_ts ON rulings (ts);
CREATE TABLE IF NOT EXISTS signins (
    table_id TEXT NOT NULL, seq BIGINT NOT NULL, ts DOUBLE PRECISION NOT NULL, dealer TEXT,
    badge TEXT, source TEXT,
    PRIMARY KEY (table_id, seq));
CREATE TABLE IF NOT EXISTS tables (
    table_id TEXT PRIMARY KEY, online INTEGER NOT NULL DEFAULT 0, seen DOUBLE PRECISION NOT NULL,
    last_seq BIGINT NOT NULL DEFAULT 0, game TEXT, rules TEXT, structure TEXT, stakes TEXT,
    hand_id BIGINT, street TEXT, in_hand INTEGER NOT NULL DEFAULT 0, dealer TEXT, dealer_seq BIGINT NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS room_log (
    stream TEXT NOT NULL, seq BIGINT NOT NULL, ts DOUBLE PRECISION NOT NULL, payload TEXT NOT NULL,
    PRIMARY KEY (stream, seq));
"""


class StoreError(PokerTableError, RuntimeError):
    """The floor's database could not be opened or written."""


@dataclass(frozen=True, slots=True)
class Row:
    """One thing to write: an ``op`` of :class:`Store` and its fields."""

    op: str
    fields: dict[str, Any]


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"), sort_keys=True)


class Store:
    """The floor's database.  ``Store.open("sqlite:///path.db")`` or ``Store.open("postgresql://...")``."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.postgres = url.startswith(("postgresql:", "postgres:"))
        self._lock = threading.RLock()
        try:
            if self.postgres:
                import psycopg

                self._conn: Any = psycopg.connect(url, autocommit=False)
            else:
                path = url.removeprefix("sqlite:///").removeprefix("sqlite://")
                if path not in ("", ":memory:"):
                    Path(path).parent.mkdir(parents=True, exist_ok=True)
                self._conn = sqlite3.connect(path or ":memory:", check_same_thread=False, isolation_level=None)
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=NORMAL")
        except Exception as exc:  # psycopg.OperationalError, sqlite3.Error
            raise StoreError(f"cannot open the floor database {redact(url)}: {exc}") from exc
        serial = "BIGSERIAL PRIMARY KEY" if self.postgres else "INTEGER PRIMARY KEY AUTOINCREMENT"
        with self.transaction() as cur:
            for statement in SCHEMA.format(serial=serial).split(";"):
                if statement.strip():
                    cur.execute(statement)

    @classmethod
    def open(cls, url: str) -> Store:
        if "://" not in url:
            url = "sqlite:///" + url
        return cls(url)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # ------------------------------------------------------------------ plumbing
    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.postgres else sql

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        with self._lock:
            cur = self._conn.cursor()
            try:
                if not self.postgres:
                    cur.execute("BEGIN IMMEDIATE")
                yield _Cursor(cur, self._sql)
                self._conn.commit() if self.postgres else cur.execute("COMMIT")
            except BaseException:
                if self.postgres:
                    self._conn.rollback()
                else:
                    cur.execute("ROLLBACK")
                raise
            finally:
                cur.close()

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self.transaction() as cur:
            cur.execute(sql, params)
            names = [d[0] for d in cur.description or ()]
            return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    # ------------------------------------------------------------------ writes
    def write(self, rows: Iterable[Row]) -> list[int]:
        """Write a batch in one transaction; returns, per row, 1 if it was new (0: already there)."""
        with self.transaction() as cur:
            return [getattr(self, f"_w_{row.op}")(cur, **row.fields) for row in rows]

    def _w_room(self, cur: Any, *, stream: str, seq: int, ts: float, payload: dict[str, Any]) -> int:
        """One input of the floor's director (a tournament's or the cash room's journal)."""
        cur.execute("INSERT INTO room_log (stream, seq, ts, payload) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (stream, seq, ts, _dump(payload)))
        return cur.rowcount

    def room_log(self, stream: str) -> list[dict[str, Any]]:
        """A director's journal in order, to replay it after a restart."""
        rows = self.query("SELECT payload FROM room_log WHERE stream = ? ORDER BY seq", (stream,))
        return [json.loads(r["payload"]) for r in rows]

    def _w_event(self, cur: Any, *, table_id: str, hand_id: int, seq: int, kind: str, sub: str, ts: float,
                 payload: dict[str, Any]) -> int:
        cur.execute("INSERT INTO events (table_id, hand_id, seq, kind, sub, ts, received, payload) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (table_id, hand_id, seq, kind, sub, ts, time.time(), _dump(payload)))
        return cur.rowcount

    def _w_hand_start(self, cur: Any, *, table_id: str, hand_id: int, seq: int, ts: float, payload: dict[str, Any],
                      dealer: str | None) -> int:
        stakes = _stakes(payload)
        dealer = dealer or _dealer_of(cur, table_id)
        cur.execute(
            "INSERT INTO hands (table_id, hand_id, start_seq, started, game, rules, structure, event, stakes, "
            "button, seats, dealer) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (table_id, hand_id, seq, ts, payload.get("game"), payload.get("rules"), payload.get("structure"),
             payload.get("event"), stakes, payload.get("button"),
             _dump(payload.get("seats")), dealer))
        new = cur.rowcount
        if new:
            # Its end may have come first (a bridge resending out of order): settle it now.
            cur.execute("SELECT seq, ts, payload FROM events WHERE table_id = ? AND hand_id = ? AND kind = 'hand_end' "
                        "AND seq >= ? ORDER BY seq LIMIT 1", (table_id, hand_id, seq))
            end = cur.fetchone()
            if end is not None:
                self._settle(cur, table_id, hand_id, end[0], end[1], json.loads(end[2]))
        self._table(cur, table_id, seq, ts, game=payload.get("game"), rules=payload.get("rules"),
                    structure=payload.get("structure"), stakes=stakes, hand_id=hand_id,
                    street=None, in_hand=1)
        return new

    def _w_hand_end(self, cur: Any, *, table_id: str, hand_id: int, seq: int, ts: float,
                    payload: dict[str, Any]) -> int:
        self._settle(cur, table_id, hand_id, seq, ts, payload)
        self._table(cur, table_id, seq, ts, in_hand=0)
        return 0

    def _settle(self, cur: Any, table_id: str, hand_id: int, seq: int, ts: float, payload: dict[str, Any]) -> None:
        cur.execute(
            "UPDATE hands SET end_seq = ?, ended = ?, result = ?, winners = ?, shown = ?, summary = ?, payouts = ? "
            "WHERE table_id = ? AND hand_id = ? AND start_seq = (SELECT MAX(start_seq) FROM hands "
            "WHERE table_id = ? AND hand_id = ? AND start_seq <= ?)",
            (seq, ts, payload.get("result"), _dump(payload.get("winners")), _dump(payload.get("shown")),
             payload.get("summary"), _dump(payload.get("payouts")), table_id, hand_id, table_id, hand_id, seq))

    def _w_holecards(self, cur: Any, *, table_id: str, hand_id: int, seq: int, seats: dict[str, Any]) -> int:
        """The delayed broadcast copy (the only hole cards that ever leave a table): the replay shows them."""
        cur.execute(
            "UPDATE hands SET holecards = ? WHERE table_id = ? AND hand_id = ? AND start_seq = (SELECT MAX(start_seq) "
            "FROM hands WHERE table_id = ? AND hand_id = ? AND start_seq <= ?)",
            (_dump(seats), table_id, hand_id, table_id, hand_id, seq))
        return 0

    def _w_ruling(self, cur: Any, *, table_id: str, seq: int, ts: float, alert: dict[str, Any],
                  dealer: str | None) -> int:
        if dealer is None and alert.get("hand_id") is not None:
            cur.execute("SELECT dealer FROM hands WHERE table_id = ? AND hand_id = ? ORDER BY start_seq DESC LIMIT 1",
                        (table_id, alert.get("hand_id")))
            found = cur.fetchone()
            dealer = found[0] if found else None
        dealer = dealer or _dealer_of(cur, table_id)
        cur.execute(
            "INSERT INTO rulings (table_id, alert_id, hand_id, seq, ts, received, dealer, ruling, reason, severity, "
            "message, citations, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (table_id, str(alert.get("id")), alert.get("hand_id"), seq, float(alert.get("ts") or ts), time.time(),
             dealer, alert.get("ruling"), alert.get("reason"), alert.get("severity"), alert.get("message"),
             _dump(alert.get("citations")), _dump(alert)))
        return cur.rowcount

    def _w_signin(self, cur: Any, *, table_id: str, seq: int, ts: float, dealer: str | None, badge: str | None,
                  source: str | None) -> int:
        cur.execute("INSERT INTO signins (table_id, seq, ts, dealer, badge, source) VALUES (?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT DO NOTHING", (table_id, seq, ts, dealer, badge, source))
        new = cur.rowcount
        self._table(cur, table_id, seq, ts)
        cur.execute("UPDATE tables SET dealer = ?, dealer_seq = ? WHERE table_id = ? AND dealer_seq <= ?",
                    (dealer, seq, table_id, seq))
        return new

    def _w_street(self, cur: Any, *, table_id: str, seq: int, ts: float, name: str) -> int:
        self._table(cur, table_id, seq, ts, street=name)
        return 0

    def _w_availability(self, cur: Any, *, table_id: str, online: bool) -> int:
        self._table(cur, table_id, 0, time.time())
        cur.execute("UPDATE tables SET online = ? WHERE table_id = ?", (int(online), table_id))
        return 0

    def _table(self, cur: Any, table_id: str, seq: int, ts: float, **fields: Any) -> None:
        """The at-a-glance row: only a newer sequence overwrites what an older one said."""
        cur.execute("INSERT INTO tables (table_id, seen, online) VALUES (?, ?, 1) ON CONFLICT DO NOTHING",
                    (table_id, ts))
        if not fields:
            return
        sets = ", ".join(f"{k} = ?" for k in fields)
        cur.execute(f"UPDATE tables SET {sets}, last_seq = ?, seen = ? WHERE table_id = ? AND last_seq <= ?",
                    (*fields.values(), seq, ts, table_id, seq))

    # ------------------------------------------------------------------ floor actions
    def acknowledge(self, table_id: str, alert_id: str, by: str = "floor") -> bool:
        with self.transaction() as cur:
            cur.execute("UPDATE rulings SET acked = ?, acked_by = ? WHERE table_id = ? AND alert_id = ? "
                        "AND acked IS NULL", (time.time(), by, table_id, alert_id))
            return cur.rowcount > 0

    def current_dealer(self, table_id: str) -> str | None:
        rows = self.query("SELECT dealer FROM tables WHERE table_id = ?", (table_id,))
        return rows[0]["dealer"] if rows else None

    def counts(self) -> dict[str, int]:
        out = {}
        for name in ("events", "hands", "rulings", "signins", "tables"):
            out[name] = int(self.query(f"SELECT COUNT(*) AS n FROM {name}")[0]["n"])
        return out


class _Cursor:
    """A DB-API cursor whose statements are written with ``?`` placeholders for both drivers."""

    def __init__(self, cur: Any, sql: Any) -> None:
        self._cur, self._rewrite = cur, sql

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._cur.execute(self._rewrite(sql), tuple(params))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cur, name)


def _stakes(hand_start: dict[str, Any]) -> str | None:
    """The stakes when the hand counts chips (``hand_start.stakes``: blinds, bring-in, limits, ante),
    e.g. ``"1/2"``, ``"2/4 limit"``, ``"1/2 ante 1"``; None otherwise."""
    stakes = hand_start.get("stakes")
    if not isinstance(stakes, dict):
        return None
    parts = []
    blinds = stakes.get("blinds")
    limits = stakes.get("limits")
    if isinstance(limits, list) and len(limits) == 2:
        parts.append(f"{limits[0]}/{limits[1]} limit")
    elif isinstance(blinds, list) and blinds:
        parts.append("/".join(str(b) for b in blinds))
    if stakes.get("bring_in"):
        parts.append(f"bring-in {stakes['bring_in']}")
    if stakes.get("ante"):
        parts.append(f"ante {stakes['ante']}")
    return " ".join(parts)[:40] or None


def _dealer_of(cur: Any, table_id: str) -> str | None:
    """The dealer signed in at a table (the newest sign-in the floor has)."""
    cur.execute("SELECT dealer FROM tables WHERE table_id = ?", (table_id,))
    found = cur.fetchone()
    return found[0] if found else None


def redact(url: str) -> str:
    """A database URL without its password, for messages."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        return f"{scheme}://{creds.split(':', 1)[0]}:***@{host}"
    return url
