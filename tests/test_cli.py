"""``tablectl`` subcommands as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from controller.cards import standard_deck
from controller.decks import DeckRegistry


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
