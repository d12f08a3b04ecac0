"""The durable journal: round trips, kill -9, concurrent readers, corrupt rows, hands, outbox cursor."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from controller.journal import HandRecord, Journal, JournalError
from controller.rules import events as ev
from controller.rules.cards import Card
from controller.rules.chips import Stakes
from controller.rules.engine import HandEngine
from controller.rules.events import (
    EVENT_TYPES,
    Acknowledge,
    Act,
    BoardCards,
    Burn,
    Deal,
    EndHand,
    HandSetup,
    NewHand,
    SeatPlayer,
    StartHand,
)
from controller.rules.rotations import get_rotation, rotation_event

REPO = Path(__file__).resolve().parents[2]
C = Card.parse
SETUP = HandSetup(game="holdem", rules="robert", seats=(1, 2, 3), button=3, structure="no_limit",
                  small_blind=1, big_blind=2, blinds_given=True, previous_button=2)

#: One event of every kind :mod:`controller.rules.events` defines (named through the module, so a new
#: kind is one line here), each with its optional fields set where it has any.
ONE_OF_EACH = [
    ev.StartHand(SETUP),
    ev.Deal(1, C("Ah"), face="up", source="rfid"),
    ev.Deal(2, C("Kd@B")),
    ev.Burn(C("2c"), source="camera"),
    ev.BoardCards((C("3c"), C("4d"), C("5h"))),
    ev.Stub((C("6s"), C("7s"))),
    ev.Muck(C("8h")),
    ev.Aside(C("9h")),
    ev.Boxed(C("Th")),
    ev.Expose(2, C("Jh"), source="dealer"),
    ev.Act(1, "raise", all_in=True, amount=250),
    ev.Discard(3, 2),
    ev.Report("boxed_card", seat=4),
    ev.EndHand(),
    ev.SeatPlayer(4, "Alice", post=True),
    ev.UnseatPlayer(4),
    ev.SetButton(5),
    ev.ChangeGame("stud", rules="tda", structure="limit", event="tournament"),
    ev.NewHand(source="panel"),
    ev.CallMisdeal("button_out_of_position"),
    ev.Acknowledge(alert="shuffler_fault"),
    ev.ShufflerFault(detail="jam"),
    ev.DealerSignIn("Dana", badge="04a1b2c3", source="nfc"),
    ev.UnknownTagRead("seat:3", "04A1B2C3"),
    ev.CameraReport("camera_mismatch", "board", "Ah", "tag 04A1 says Kd"),
    ev.Deal(3, C("joker")),
    ev.StartHand(ev.HandSetup(game="stud", rules="tda", seats=(1, 4), structure="limit",
                              chips=Stakes({1: 900, 4: 1200}, ante=5, bring_in=10, limits=(20, 40)))),
    ev.Put(4, (1000, 100), declare="raise", to=1500),
    ev.SetStack(4, add=500),
    ev.SetLevel(advance=True),
    ev.SeatPlayer(6, "Bo", stack=20000),
    ev.CallClock(4),
    ev.SitOut(4),
    ev.SitIn(4, post=True),
    ev.StartDraw(),
    rotation_event("horse", {"horse": get_rotation("horse")}),
    ev.Looked(4),
    ev.ConfirmDeals(("seat:3", "burn", "board", "board"), (C("Ah"), C("Kd"), C("2c"), C("3c"))),
    ev.SetBroadcastDelay(12.5),
    ev.SetBroadcastDelay("end_of_hand", source="daemon"),
]


def test_every_event_type_round_trips(tmp_path: Path) -> None:
    assert {type(e) for e in ONE_OF_EACH} == set(EVENT_TYPES.values())
    with Journal(tmp_path / "j.sqlite") as j:
        seqs = [j.append(e, at=1000.0 + i, source=f"src{i}") for i, e in enumerate(ONE_OF_EACH)]
        assert seqs == list(range(1, len(ONE_OF_EACH) + 1))
        assert j.last_seq == len(ONE_OF_EACH)
    with Journal(tmp_path / "j.sqlite") as j:
        entries = list(j.entries())
        assert [e.event for e in entries] == ONE_OF_EACH
        assert [e.seq for e in entries] == seqs
        assert [e.at for e in entries] == [1000.0 + i for i in range(len(ONE_OF_EACH))]
        assert [e.source for e in entries] == [f"src{i}" for i in range(len(ONE_OF_EACH))]
        assert [e.seq for e in j.entries(after=20)] == seqs[20:]
        assert j.entry(3).event == Deal(2, C("Kd@B"))


def test_wal_and_full_sync(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as j:
        assert j._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert j._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_normal_sync_and_a_bad_mode(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", sync="normal") as j:
        assert j._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert j._db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    with pytest.raises(ValueError, match="sync must be one of full, normal, got 'off'"):
        Journal(tmp_path / "k.sqlite", sync="off")
    assert not (tmp_path / "k.sqlite").exists()  # refused before anything was created


def test_seq_is_never_reused_and_empty_journal(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "dir" / "j.sqlite"  # the folder is created
    with Journal(path) as j:
        assert j.last_seq == 0 and list(j.entries()) == []
        j.append(NewHand(), at=1.0)
        j.append(NewHand(), at=2.0)
        j._db.execute("DELETE FROM events WHERE seq = 2")
        assert j.append(NewHand(), at=3.0) == 3


def test_replay_restores_the_engine_exactly(tmp_path: Path) -> None:
    setup = HandSetup(game="holdem", rules="robert", seats=(1, 2, 3), button=1)
    events = [
        Deal(2, C("As")), Deal(3, C("Kd")), Deal(1, C("Qh")), Deal(2, C("Ac")), Deal(3, C("Ad")), Deal(1, C("Ah")),
        Act(1, "raise", amount=6), Act(2, "call"), Act(3, "fold"), Burn(C("2c")),
        BoardCards((C("3c"), C("4d"), C("9h"))),
    ]
    live = HandEngine(setup)
    with Journal(tmp_path / "j.sqlite") as j:
        j.append(StartHand(setup), at=0.0)
        for i, ev in enumerate(events):
            j.append(ev, at=float(i))
            live.apply(ev)
    with Journal(tmp_path / "j.sqlite") as j:
        replayed = None
        for entry in j.entries():
            if isinstance(entry.event, StartHand):
                replayed = HandEngine(entry.event.setup)
            else:
                replayed.apply(entry.event)
    assert replayed is not None
    assert replayed.snapshot() == live.snapshot()
    assert replayed.hole_cards() == live.hole_cards()


CHILD = r"""
import sys, time
sys.path.insert(0, {repo!r})
from controller.rules.cards import Card
from controller.rules.events import Deal, Act
from controller.journal import Journal
j = Journal({path!r}, sync={sync!r})
print("ready", flush=True)
for i in range(100000):
    ev = Deal(1 + i % 9, Card.parse("Ah")) if i % 2 else Act(1 + i % 9, "bet", amount=i)
    seq = j.append(ev, at=time.time(), source="child")
    print(seq, flush=True)
"""


@pytest.mark.parametrize("sync", ["full", "normal"])
def test_every_acknowledged_append_survives_kill_9(tmp_path: Path, sync: str) -> None:
    """Both sync modes keep every acknowledged append through the process's sudden death
    (only ``full`` also keeps it through a power cut, which a test cannot cut)."""
    path = tmp_path / "j.sqlite"
    code = CHILD.format(repo=str(REPO), path=str(path), sync=sync)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    acknowledged: list[int] = []
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        while len(acknowledged) < 150:
            line = proc.stdout.readline()
            assert line, "child died early"
            acknowledged.append(int(line))
        os.kill(proc.pid, signal.SIGKILL)  # mid-stream: the child is still appending
        # Read through the text wrapper, whose buffer may already hold lines read ahead
        # (communicate() would read the pipe beneath it and miss them).
        rest = proc.stdout.read()
        proc.wait(timeout=10)
        acknowledged += [int(x) for x in rest.split()]  # printed before the kill landed
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    with Journal(path) as j:
        stored = [e.seq for e in j.entries()]  # every row decodes
        assert set(acknowledged) <= set(stored)
        assert stored == list(range(1, len(stored) + 1))
        assert len(stored) - len(acknowledged) <= 1  # at most the append in flight
        assert j.append(NewHand(), at=0.0) == len(stored) + 1


def test_concurrent_reader_sees_a_growing_prefix(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    writer = Journal(path)
    reader = Journal(path)  # a second connection, as the publisher or an export would open
    total = 150
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for i in range(total):
                writer.append(Act(1 + i % 9, "bet", amount=i), at=float(i))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    t = threading.Thread(target=write)
    t.start()
    seen = 0
    deadline = time.monotonic() + 15
    try:
        while seen < total and time.monotonic() < deadline:
            entries = list(reader.entries())
            assert [e.seq for e in entries] == list(range(1, len(entries) + 1))
            assert [e.event.amount for e in entries] == list(range(len(entries)))
            assert len(entries) >= seen
            seen = len(entries)
    finally:
        t.join()
        writer.close()
    assert not errors
    assert reader.last_seq == total
    assert len(list(reader.entries())) == total
    reader.close()


def test_same_journal_shared_between_threads(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as j:
        def work(n: int) -> None:
            for i in range(50):
                j.append(Act(n, "check"), at=float(i))

        threads = [threading.Thread(target=work, args=(n,)) for n in range(1, 5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert [e.seq for e in j.entries()] == list(range(1, 201))


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("data", "{not json", "not JSON"),
        ("data", '{"kind": "teleport", "seat": 1}', "unknown event kind 'teleport'"),
        ("data", '{"kind": "deal", "seat": 1, "card": "Zz"}', "not a card"),
        ("data", '{"kind": "act", "seat": 1, "action": "dance"}', "act.action"),
        ("kind", "burn", "does not match"),
    ],
)
def test_corrupt_row_raises_naming_its_seq(tmp_path: Path, column: str, value: str, message: str) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as j:
        for i in range(5):
            j.append(Deal(1, C("Ah")), at=float(i))
    db = sqlite3.connect(path)
    db.execute(f"UPDATE events SET {column} = ? WHERE seq = 3", (value,))
    db.commit()
    db.close()
    with Journal(path) as j:
        it = j.entries()
        assert [next(it).seq, next(it).seq] == [1, 2]
        with pytest.raises(JournalError, match=r"row seq 3: .*" + message):
            next(it)
        with pytest.raises(JournalError, match="seq 3"):
            list(j.entries())
        assert [e.seq for e in j.entries(after=3)] == [4, 5]


def test_not_a_journal(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(JournalError, match="not a usable journal"):
        Journal(path)


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    Journal(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    db.commit()
    db.close()
    with pytest.raises(JournalError, match="schema version 99"):
        Journal(path)


def test_closed_journal(tmp_path: Path) -> None:
    j = Journal(tmp_path / "j.sqlite")
    j.close()
    j.close()
    with pytest.raises(JournalError, match="closed"):
        j.append(NewHand(), at=0.0)


def test_append_rejects_bad_input(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as j:
        with pytest.raises(TypeError):
            j.append({"kind": "new_hand"}, at=0.0)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="finite"):
            j.append(NewHand(), at=float("nan"))
        assert j.last_seq == 0


def test_hand_records(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as j:
        j.append(SeatPlayer(1, "A"), at=0.0)
        first = j.append(StartHand(SETUP), at=1.0)
        j.append(Deal(1, C("Ah")), at=2.0)
        j.append(Acknowledge(), at=2.5)
        last = j.append(EndHand(), at=3.0)
        j.append(NewHand(), at=4.0)
        outcome = {"rulings": [{"kind": "irregularity", "reason": "exposed_card"}], "winners": [1], "pot": 30}
        j.record_hand(7, SETUP, first, last, outcome)
        with pytest.raises(ValueError, match="beyond"):
            j.record_hand(8, SETUP, first, 99, {})
        with pytest.raises(ValueError, match="seq range"):
            j.record_hand(8, SETUP, 5, 4, {})
    with Journal(path) as j:
        assert j.hands() == [HandRecord(7, SETUP, first, last, outcome)]
        assert j.hand_events(7) == [StartHand(SETUP), Deal(1, C("Ah")), Acknowledge(), EndHand()]
        j.record_hand(7, SETUP, first, last, {"winners": [2]})  # recorded again: the latest wins
        assert j.hand(7).outcome == {"winners": [2]}
        assert len(j.hands()) == 1
        with pytest.raises(KeyError):
            j.hand_events(3)


def test_published_cursor_is_durable(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as j:
        assert j.published_seq == 0
        for i in range(10):
            j.append(Act(1, "check"), at=float(i))
        j.mark_published(4)
        j.mark_published(2)  # never backwards (a late acknowledgement)
        assert j.published_seq == 4
        with pytest.raises(ValueError, match="newest is 10"):
            j.mark_published(11)
    with Journal(path) as j:  # after a restart the publisher resumes from the cursor
        assert j.published_seq == 4
        assert [e.seq for e in j.unpublished()] == [5, 6, 7, 8, 9, 10]
        j.mark_published(10)
        assert list(j.unpublished()) == []


def test_the_cursor_commits_without_a_flush_and_appends_stay_flushed(tmp_path: Path) -> None:
    """The cursor's move is committed (another connection reads it: a crash of the process keeps
    it) without a flush of its own, and every append after it is flushed again (synchronous=FULL):
    its flush no longer holds the journal's lock while a card waits to be journaled."""
    path = tmp_path / "j.sqlite"
    for sync, level in (("full", 2), ("normal", 1)):
        with Journal(tmp_path / f"{sync}.sqlite", sync=sync) as j:
            j.append(Act(1, "check"), at=0.0)
            j.mark_published(1)
            assert j._db.execute("PRAGMA synchronous").fetchone()[0] == level
    with Journal(path) as j:
        for i in range(3):
            j.append(Act(1, "check"), at=float(i))
        j.mark_published(3)
        other = sqlite3.connect(path)
        try:
            assert other.execute("SELECT value FROM meta WHERE key = 'published_seq'").fetchone()[0] == "3"
        finally:
            other.close()


def test_entries_reads_in_batches(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as j:
        j._db.execute("BEGIN")
        for i in range(1234):
            j._db.execute("INSERT INTO events (at, source, kind, data) VALUES (?, '', 'new_hand', ?)",
                          (float(i), '{"kind": "new_hand", "source": "console"}'))
        j._db.execute("COMMIT")
        seqs = [e.seq for e in j.entries()]
        assert seqs == list(range(1, 1235))
        assert [e.seq for e in j.entries(after=1000)] == list(range(1001, 1235))
