"""``tablectl`` subcommands as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from controller.rules.cards import standard_deck
from controller.rules.decks import DeckRegistry


def _tablectl(*args: str, stdin: str = "", env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-m", "controller.cli", *args], input=stdin, capture_output=True,
                          text=True, timeout=120, env=full_env)


def test_enroll_from_stdin_saves_the_deck(tmp_path: Path) -> None:
    uids = [f"04{i:02X}AABBCC" for i in range(52)]
    proc = _tablectl("enroll", "--deck", "B", stdin="\n".join(uids) + "\n",
                     env={"TABLECTL_STATE_DIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    registry = DeckRegistry.load(tmp_path / "decks.json")
    cards = [registry.lookup(u).card for u in uids]
    assert [c.face for c in cards] == [c.face for c in standard_deck()]
    assert {c.deck for c in cards} == {"B"}
    assert registry.lookup("FFFFFFFF").card is None


def test_enroll_rejects_duplicates_and_saves_nothing_when_short(tmp_path: Path) -> None:
    uids = [f"04{i:02X}AABBCC" for i in range(10)] + ["0401AABBCC"]
    proc = _tablectl("enroll", "--deck", "A", stdin="\n".join(uids) + "\n",
                     env={"TABLECTL_STATE_DIR": str(tmp_path)})
    assert proc.returncode == 1
    assert "already" in proc.stdout.lower() or "duplicate" in proc.stdout.lower()
    assert not (tmp_path / "decks.json").exists()


def test_broken_registry_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "decks.json").write_text("{not json")
    proc = _tablectl("enroll", "--deck", "A", stdin="", env={"TABLECTL_STATE_DIR": str(tmp_path)})
    assert proc.returncode == 2
    assert "decks.json" in proc.stdout and "JSON" in proc.stdout
    assert (tmp_path / "decks.json").read_text() == "{not json"  # nothing else changed


def test_scenario_json_is_parseable(repo: Path) -> None:
    proc = _tablectl("scenario", "--check", "--json", str(repo / "tests" / "scenarios" / "holdem_joker_scrap.yaml"))
    obj = json.loads(proc.stdout)
    assert obj["passed"] and obj["rulings"][0]["reason"] == "joker"


def _journal_with_a_hand(tmp_path: Path) -> Path:
    from controller.journal import Journal
    from controller.rules.cards import Card
    from controller.rules.events import Act, BoardCards, Deal, NewHand, SeatPlayer, SetButton
    from controller.rules.table import Table
    from controller.service import TableService

    cfg = tmp_path / "table.toml"
    cfg.write_text('[table]\nid = "t1"\nsize = 6\ngame = "holdem"\n\n[stakes]\nsmall_blind = 1\nbig_blind = 2\n\n'
                   f'[journal]\npath = "{tmp_path / "journal.sqlite"}"\n')
    with Journal(tmp_path / "journal.sqlite") as journal:
        svc = TableService(Table(size=6, stakes={"blinds": [1, 2]}, starting_stack=200), journal=journal)
        for seat in (1, 2):
            svc.submit(SeatPlayer(seat, f"p{seat}"))
        svc.submit(SetButton(2))
        svc.submit(NewHand())
        for seat, card in ((1, "Ah"), (2, "Kd"), (1, "As"), (2, "Kh")):
            svc.submit(Deal(seat, Card.parse(card)))
        svc.submit(Act(2, "call"))
        svc.submit(Act(1, "check"))
        for board in (("2c", "7d", "9s"), ("Jc",), ("3h",)):
            svc.submit(BoardCards(tuple(Card.parse(x) for x in board)))
            svc.submit(Act(1, "check"))
            svc.submit(Act(2, "check"))
        svc.submit(NewHand())
        svc.submit(Deal(1, Card.parse("Qs")))  # hand 2 in progress: the wrong seat starts it
    return cfg


def test_replay_lists_hands_and_the_hand_in_progress(tmp_path: Path) -> None:
    cfg = _journal_with_a_hand(tmp_path)
    proc = _tablectl("replay", "--config", str(cfg))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "hand    1  holdem" in proc.stdout and "showdown" in proc.stdout
    # Heads-up the button moved from seat 2 to seat 1; dealing from seat 1 deals as if it had not.
    assert "button_out_of_position" in proc.stdout
    data = json.loads(_tablectl("replay", "--config", str(cfg), "--json").stdout)
    assert data["hands"][0]["outcome"]["result"] == "showdown"
    assert data["hands"][0]["outcome"]["winners"][0]["seat"] == 1


def test_export_phh_readable_by_pokerkit(tmp_path: Path) -> None:
    from pokerkit import HandHistory

    cfg = _journal_with_a_hand(tmp_path)
    out = tmp_path / "hands"
    out.mkdir()
    proc = _tablectl("export", "--phh", "--config", str(cfg), str(out))
    assert proc.returncode == 0, proc.stderr
    files = sorted(out.glob("*.phh"))
    assert len(files) == 1
    hh = HandHistory.loads(files[0].read_text())
    states = list(hh)
    assert states[-1].status is False  # the hand ran to its end in PokerKit
    assert hh.starting_stacks == [200, 200] and states[-1].stacks == hh.finishing_stacks


def test_run_with_a_broken_config_names_the_key(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text('[table]\nid = "t 1"\nsize = 42\n')
    proc = _tablectl("run", "--config", str(cfg))
    assert proc.returncode == 2
    assert "table.size" in proc.stderr and "table.id" in proc.stderr


def test_enroll_on_an_antenna_of_the_bridge(tmp_path: Path) -> None:
    """Tap the 52 cards on antenna 3 of the (emulated) antenna controller."""
    import queue
    import threading
    import time

    from firmware_bridge.emulator import Emulator

    link = str(tmp_path / "ttyEMU")
    uids = [f"04{i:02X}BEEF01" for i in range(52)]
    with Emulator(8, link_path=link) as emu:
        proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "enroll", "--deck", "C", "--serial", link,
                                 "--antenna", "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, TABLECTL_STATE_DIR=str(tmp_path)))

        try:
            # Tap once the command is listening (the link synced), however slowly it started; a command
            # that never gets there fails the test instead of hanging the suite.
            first: queue.Queue[str] = queue.Queue()
            reader = threading.Thread(target=lambda: first.put(proc.stdout.readline() if proc.stdout else ""))
            reader.daemon = True
            reader.start()
            try:
                line = first.get(timeout=60)
            except queue.Empty:
                proc.kill()
                pytest.fail(f"tablectl enroll did not start listening within 60 s: {proc.communicate()[1][-2000:]}")
            assert "Tap each card" in line, line + proc.communicate(timeout=10)[1][-2000:]

            def tap() -> None:
                for uid in uids:
                    emu.place(3, uid)
                    if uid == uids[10]:
                        emu.place(5, "04FFFF0000")  # a tag on another antenna is not enrolled
                    time.sleep(0.06)
                    emu.remove(3, uid)
                    time.sleep(0.06)

            t = threading.Thread(target=tap)
            t.start()
            out, err = proc.communicate(timeout=60)
            t.join()
        finally:  # a command that failed its test never outlives it
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 0, out + err
    registry = DeckRegistry.load(tmp_path / "decks.json")
    assert [registry.lookup(u).card.face for u in uids] == [c.face for c in standard_deck()]
