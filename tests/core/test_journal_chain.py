"""Issue 26: the journal as a hash chain.  Each entry carries the hash of the one before;
``verify_chain`` (and ``tablectl replay``) says where a chain breaks; journals written before the
chain (schema 1) stay readable and chain from where they were upgraded."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from controller.journal import GENESIS, Journal, chain_hash
from controller.rules.events import SeatPlayer, SetButton, event_from_dict
from tests.app.test_cli import _journal_with_a_hand, _tablectl


def _journal(path: Path, n: int = 6) -> None:
    with Journal(path) as j:
        for i in range(n):
            j.append(SeatPlayer(i % 6 + 1, f"p{i}"), at=1000.0 + i / 3, source="console", transaction=f"tx{i}")


def _raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def test_every_entry_carries_the_hash_of_the_one_before(tmp_path) -> None:
    path = tmp_path / "j.sqlite"
    _journal(path)
    with _raw(path) as db:
        rows = db.execute("SELECT seq, at, source, kind, data, hash FROM events ORDER BY seq").fetchall()
    prev = GENESIS
    for seq, at, source, kind, data, digest in rows:
        assert digest == chain_hash(prev, seq, at, source, kind, data)
        prev = digest
    with Journal(path) as j:
        report = j.verify_chain()
        assert report.ok and report.chained == 6 and report.unchained == 0 and report.head == prev
        assert [e.event.name for e in j.entries()] == [f"p{i}" for i in range(6)]


@pytest.mark.parametrize(("tamper", "broken_at"), [
    ("UPDATE events SET data = replace(data, 'p2', 'px') WHERE seq = 3", 3),  # an entry edited
    ("UPDATE events SET at = at + 60 WHERE seq = 4", 4),  # a timestamp moved
    ("UPDATE events SET source = 'rfid' WHERE seq = 2", 2),  # who did it
    ("DELETE FROM events WHERE seq = 2", 3),  # an entry removed: the next one no longer links
    ("UPDATE events SET seq = 10 WHERE seq = 5", 6),  # renumbered (moved to the end)
    ("UPDATE events SET hash = NULL WHERE seq = 5", 5),  # its hash stripped
])
def test_a_changed_journal_breaks_the_chain_where_it_was_changed(tmp_path, tamper: str, broken_at: int) -> None:
    path = tmp_path / "j.sqlite"
    _journal(path)
    with _raw(path) as db:
        db.execute(tamper)
    with Journal(path) as j:
        report = j.verify_chain()
    assert not report.ok and report.broken_at == broken_at, report


def test_an_inserted_entry_with_a_recomputed_hash_still_breaks_the_next_one(tmp_path) -> None:
    path = tmp_path / "j.sqlite"
    _journal(path)
    with _raw(path) as db:
        prev = db.execute("SELECT hash FROM events WHERE seq = 3").fetchone()[0]
        data = json.dumps(SetButton(2).to_dict(), separators=(",", ":"), sort_keys=True)
        db.execute("UPDATE events SET seq = seq + 100 WHERE seq > 3")
        db.execute("INSERT INTO events (seq, at, source, kind, data, hash) VALUES (4, 1001.1, 'console', "
                   "'set_button', ?, ?)", (data, chain_hash(prev, 4, 1001.1, "console", "set_button", data)))
    with Journal(path) as j:
        report = j.verify_chain()
    assert not report.ok and report.broken_at == 104 and report.chained == 4, report


def test_a_schema_1_journal_is_read_and_chained_from_its_upgrade(tmp_path) -> None:
    """Old journals stay readable: their entries are unchained, new ones chain after them."""
    path = tmp_path / "old.sqlite"
    with _raw(path) as db:
        db.executescript("""
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, source TEXT NOT NULL,
                                 kind TEXT NOT NULL, data TEXT NOT NULL);
            CREATE TABLE transactions (tx TEXT PRIMARY KEY, seq INTEGER NOT NULL);
            CREATE TABLE hands (hand_id INTEGER PRIMARY KEY, setup TEXT NOT NULL, first_seq INTEGER NOT NULL,
                                last_seq INTEGER NOT NULL, outcome TEXT NOT NULL);
            INSERT INTO meta VALUES ('schema', '1'), ('published_seq', '2');
        """)
        for i in range(3):
            data = json.dumps(SeatPlayer(i + 1, f"old{i}").to_dict(), separators=(",", ":"), sort_keys=True)
            db.execute("INSERT INTO events (at, source, kind, data) VALUES (?, 'console', 'seat_player', ?)",
                       (900.0 + i, data))
    with Journal(path) as j:
        assert [e.event.name for e in j.entries()] == ["old0", "old1", "old2"]
        assert j.published_seq == 2
        j.append(SeatPlayer(4, "new"), at=950.0, source="console")
        report = j.verify_chain()
        assert report.ok and report.unchained == 3 and report.chained == 1, report
        assert event_from_dict(json.loads(_raw(path).execute(
            "SELECT data FROM events WHERE seq = 4").fetchone()[0])).name == "new"


def test_tablectl_replay_verifies_the_chain_and_says_where_it_breaks(tmp_path) -> None:
    cfg = _journal_with_a_hand(tmp_path)
    proc = _tablectl("replay", "--config", str(cfg))
    assert proc.returncode == 0 and "hash chain verified" in proc.stdout, proc.stdout + proc.stderr
    with _raw(tmp_path / "journal.sqlite") as db:
        db.execute("UPDATE events SET data = replace(data, '\"call\"', '\"check\"') WHERE kind = 'act' AND seq = 9")
        assert db.total_changes == 1
    proc = _tablectl("replay", "--config", str(cfg))
    assert proc.returncode == 1 and "hash chain BROKEN at seq 9" in proc.stderr, proc.stdout + proc.stderr
    data = json.loads(_tablectl("replay", "--config", str(cfg), "--json").stdout)
    assert data["chain"]["ok"] is False and data["chain"]["broken_at"] == 9
