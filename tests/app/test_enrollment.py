"""Enrollment state machine, registry persistence and the CLI glue (scripted reads)."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace

import pytest
from rich.console import Console

from controller.app.enrollment import (
    UNDO,
    Enrollment,
    EnrollmentError,
    enroll_cli,
    line_reads,
    parse_read_line,
    run_enrollment,
)
from controller.rules.cards import Card, standard_deck
from controller.rules.decks import Deck, DeckRegistry


def uid(n: int, deck: int = 0xA) -> str:
    return f"04{deck:02X}{n:08X}"


def card(text: str, deck: str = "A") -> Card:
    return Card.parse(text, deck)


@pytest.fixture
def registry_path(tmp_path):
    return tmp_path / "state" / "decks.json"


def registry_with_deck_b() -> DeckRegistry:
    deck = Deck("B", "blue")
    for i, c in enumerate(standard_deck("B")):
        deck.add(uid(i, 0xB), c)
    return DeckRegistry([deck])


def test_in_order_enrollment_and_finish_saves(registry_path):
    reg = DeckRegistry()
    e = Enrollment("A", reg, back="red")
    assert e.progress == (0, 52) and e.expected == card("2c")
    first = e.feed(uid(0))
    assert first.status == "enrolled" and first.card == card("2c") and first.expected == card("2d")
    assert (first.done, first.total) == (1, 52)
    for i in range(1, 52):
        step = e.feed(uid(i))
        assert step.ok
    assert e.complete and e.expected is None and step.complete and step.card == card("As")
    deck = e.finish(registry_path)
    assert deck.id == "A" and deck.back == "red" and len(deck.tags) == 52
    assert reg.lookup(uid(13)).card == card("5d")  # 13th in 2c 2d 2h 2s 3c ... order (0-based)
    saved = DeckRegistry.load(registry_path)
    assert saved.lookup(bytes.fromhex(uid(51))).card == card("As")
    assert saved.decks["A"].back == "red"
    assert not list(registry_path.parent.glob("*.tmp"))
    with pytest.raises(EnrollmentError):
        e.feed(uid(99))


def test_repeat_of_last_tag_is_silent_other_duplicates_rejected():
    e = Enrollment("A", DeckRegistry())
    e.feed(uid(0))
    e.feed("04:0a:00:00:00:01")  # separators and case do not matter
    again = e.feed(uid(1))
    assert again.status == "repeat" and again.ok and again.card == card("2d")
    assert e.progress == (2, 52)
    dup = e.feed(uid(0))
    assert dup.status == "rejected" and dup.reason == "duplicate"
    assert "already enrolled as 2c" in dup.message
    assert e.progress == (2, 52) and e.expected == card("2h")


def test_stray_tag_from_another_deck_is_rejected():
    reg = registry_with_deck_b()
    e = Enrollment("A", reg)
    step = e.feed(uid(5, 0xB))
    assert step.reason == "stray" and "deck B" in step.message and "3d@B" in step.message
    assert e.progress == (0, 52)


@pytest.mark.parametrize("bad", [None, "", "  ", "zz-not-hex", b""])
def test_unreadable_uid_is_rejected(bad):
    e = Enrollment("A", DeckRegistry())
    step = e.feed(bad)
    assert step.status == "rejected" and step.reason == "unreadable" and step.uid is None


def test_card_codes_enroll_in_any_order_and_mix_with_uncoded():
    e = Enrollment("A", DeckRegistry())
    assert e.feed(uid(0), "As").card == card("As")
    assert e.expected == card("2c")  # an uncoded tag fills the first gap
    assert e.feed(uid(1)).card == card("2c")
    assert e.feed(uid(2), "2d@A").card == card("2d")  # hw.nfc's canonical form
    assert e.feed(uid(3), "card:2h").card == card("2h")  # the tag-memory form
    assert e.feed(uid(4), " ").card == card("2s")  # blank code = no code
    assert e.expected == card("3c")
    assert e.progress == (5, 52)


def test_card_code_rejections():
    e = Enrollment("A", DeckRegistry())
    e.feed(uid(0), "Ah")
    taken = e.feed(uid(1), "Ah")
    assert taken.reason == "card_taken" and uid(0) in taken.message
    assert e.feed(uid(2), "Ah@B").reason == "wrong_deck"
    assert e.feed(uid(3), "zz").reason == "bad_code"
    assert e.feed(uid(4), "joker").reason == "unknown_card"
    assert e.progress == (1, 52)


def test_undo():
    e = Enrollment("A", DeckRegistry())
    assert e.undo().reason == "empty"
    e.feed(uid(0))
    e.feed(uid(1))
    step = e.undo()
    assert step.status == "undone" and step.card == card("2d") and step.uid == uid(1)
    assert e.progress == (1, 52) and e.expected == card("2d")
    # the undone tag can be tapped again; the previous tag is now the "last" one
    assert e.feed(uid(0)).status == "repeat"
    assert e.feed(uid(1)).card == card("2d")


def test_complete_deck_rejects_more_and_finish_needs_all_cards(registry_path):
    order = [card("Ah"), card("Kh")]
    e = Enrollment("A", DeckRegistry(), order=order)
    e.feed(uid(0))
    with pytest.raises(EnrollmentError, match="incomplete"):
        e.finish(registry_path)
    assert not registry_path.exists()
    e.feed(uid(1))
    assert e.feed(uid(2)).reason == "complete"
    assert e.feed(uid(1)).status == "repeat"
    e.finish(registry_path)
    assert DeckRegistry.load(registry_path).lookup(uid(1)).card == card("Kh")


def test_re_enrolling_needs_confirmation(registry_path):
    reg = DeckRegistry()
    first = Enrollment("A", reg, order=[card("Ah")])
    first.feed(uid(0))
    first.finish(registry_path)
    with pytest.raises(EnrollmentError, match="already enrolled"):
        Enrollment("A", reg, order=[card("Ah")])
    again = Enrollment("A", reg, order=[card("Ah")], replace=True)
    # the old tag of the same deck is not a stray: it is being re-enrolled
    assert again.feed(uid(0), "Ah").status == "enrolled"
    again.finish(registry_path)
    again2 = Enrollment("A", reg, order=[card("Ah")], replace=True)
    again2.feed(uid(7))
    again2.finish(registry_path)
    saved = DeckRegistry.load(registry_path)
    assert saved.lookup(uid(7)).card == card("Ah") and saved.lookup(uid(0)).card is None


def test_failed_save_leaves_registry_untouched(tmp_path):
    reg = DeckRegistry()
    e = Enrollment("A", reg, order=[card("Ah")])
    e.feed(uid(0))
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(OSError):
        e.finish(blocker / "decks.json")
    assert "A" not in reg.decks and not e.finished


def test_bad_order_and_deck_id():
    with pytest.raises(EnrollmentError):
        Enrollment("A", DeckRegistry(), order=[card("Ah"), card("Ah")])
    with pytest.raises(EnrollmentError):
        Enrollment("A", DeckRegistry(), order=[])
    for bad in ("", "A@B", "A B"):
        with pytest.raises(EnrollmentError):
            Enrollment(bad, DeckRegistry())


def test_run_enrollment_with_progress_callback_and_undo():
    e = Enrollment("A", DeckRegistry(), order=[card("2c"), card("2d"), card("2h")])
    seen = []
    reads = iter(
        [(uid(0), None), uid(1), UNDO, (uid(1), "2d"), SimpleNamespace(uid=uid(2), card_code=None), (uid(3),)]
    )
    steps = run_enrollment(reads, e, seen.append)
    assert [s.status for s in steps] == ["enrolled", "enrolled", "undone", "enrolled", "enrolled"]
    assert seen == steps and e.complete
    assert next(reads) == (uid(3),)  # stopped at completion, the rest of the stream untouched


def test_line_reads():
    assert parse_read_line("  ") is None
    assert parse_read_line("u") is UNDO
    assert parse_read_line("04A1 Ah@A") == ("04A1", "Ah@A")
    assert list(line_reads(["04A1\n", "\n", "undo\n"])) == [("04A1", None), UNDO]


def console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=400, force_terminal=False, color_system=None), out


def test_enroll_cli_full_deck(registry_path):
    con, out = console()
    reads = [(uid(i), None) for i in range(3)]
    reads += [(uid(2), None), (uid(0), None), (uid(9, 0xB), None)]  # repeat, duplicate, then unknown tag
    reads += [(uid(i), None) for i in range(3, 52)]
    args = SimpleNamespace(deck="A", registry=str(registry_path), back="red", replace=False)
    assert enroll_cli(args, iter(reads), con) == 0
    text = out.getvalue()
    assert "rejected" in text and "already enrolled as 2c" in text
    assert "deck A enrolled" in text and "1 reads rejected" in text
    data = json.loads(registry_path.read_text())
    assert data["decks"][0]["id"] == "A" and len(data["decks"][0]["tags"]) == 52
    assert data["decks"][0]["tags"][uid(9, 0xB)] == "2s"  # unknown to the registry: the next card


def test_enroll_cli_incomplete_saves_nothing(registry_path):
    con, out = console()
    args = SimpleNamespace(deck="A", registry=str(registry_path))
    assert enroll_cli(args, iter([(uid(0), None), UNDO, (uid(1), None)]), con) == 1
    assert "incomplete" in out.getvalue() and "1/52" in out.getvalue() and "undid 2c" in out.getvalue()
    assert not registry_path.exists()


def test_enroll_cli_refuses_existing_deck_without_replace(registry_path):
    registry_with_deck_b().save(registry_path)
    con, out = console()
    assert enroll_cli(SimpleNamespace(deck="B", registry=registry_path), iter([]), con) == 2
    assert "already enrolled" in out.getvalue()
    # Issue 27: the error names the command's option, not a Python argument.
    assert "tablectl enroll --deck B --replace" in out.getvalue() and "replace=True" not in out.getvalue()
    con, out = console()
    reads = iter([(uid(i, 0xC), None) for i in range(52)])
    assert enroll_cli(SimpleNamespace(deck="B", registry=registry_path, replace=True), reads, con) == 0
    assert DeckRegistry.load(registry_path).lookup(uid(0, 0xC)).card == card("2c", "B")


def test_enroll_cli_corrupt_registry(registry_path):
    registry_path.parent.mkdir(parents=True)
    registry_path.write_text("{not json")
    con, out = console()
    assert enroll_cli(SimpleNamespace(deck="A", registry=registry_path), iter([]), con) == 2
    assert "not valid JSON" in out.getvalue()


def test_enroll_cli_interrupted(registry_path):
    def reads():
        yield (uid(0), None)
        raise KeyboardInterrupt

    con, out = console()
    assert enroll_cli(SimpleNamespace(deck="A", registry=registry_path), reads(), con) == 130
    assert not registry_path.exists()


def test_enrollment_module_imports_no_hardware_library():
    import ast
    from pathlib import Path

    import controller.app.enrollment as mod

    tree = ast.parse(Path(mod.__file__).read_text())
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not names & {"gpiozero", "nfc", "ndef", "hw", "serial", "usb1"}
