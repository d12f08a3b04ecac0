"""PHH export: hands played through the engine, written as PHH, replayed by PokerKit."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from controller.journal import HandRecord, Journal
from controller.phh import PhhUnsupported, export_hand, export_phh
from controller.rules.cards import Card
from controller.rules.chips import ChipsError, Stakes
from controller.rules.engine import HandEngine
from controller.rules.events import (
    Act,
    BoardCards,
    Burn,
    Deal,
    Discard,
    EndHand,
    Event,
    HandSetup,
    Muck,
    SeatPlayer,
    StartHand,
)

pokerkit = pytest.importorskip("pokerkit")
HandHistory = pokerkit.HandHistory

C = Card.parse
STACK = 10_000
NL = {"blinds": (1, 2)}
LIMIT = {"blinds": (1, 2), "limits": (2, 4)}
STUD = {"ante": 1, "bring_in": 2, "limits": (5, 10)}


def stakes(seats, kind: dict) -> Stakes:
    return Stakes(stacks={s: STACK for s in seats}, **kind)


def play(setup: HandSetup, plan: list[tuple]) -> list[Event]:
    """Drive the engine: hole cards go to whichever seat it expects next, actions to the seat to act."""
    engine = HandEngine(setup)
    events: list[Event] = []

    def apply(ev: Event) -> None:
        engine.apply(ev)
        events.append(ev)

    for step in plan:
        kind = step[0]
        if kind == "hole":
            todo = {seat: [C(c) for c in text.split()] for seat, text in step[1].items()}
            while any(todo.values()):
                seat = engine.next_seat
                assert seat is not None and todo.get(seat), (seat, todo)
                apply(Deal(seat, todo[seat].pop(0)))
        elif kind == "burn":
            apply(Burn(C(step[1])))
        elif kind == "board":
            apply(BoardCards(tuple(C(c) for c in step[1].split())))
        elif kind == "discard":
            apply(Discard(step[1], step[2]))
        elif kind == "muck":
            apply(Muck(C(step[1])))
        else:
            seat = engine.to_act
            assert seat is not None, (step, engine.snapshot())
            amount = step[1] if len(step) > 1 else None
            apply(Act(seat, kind, amount=amount))
    apply(EndHand())
    assert not engine.rulings, engine.rulings
    return events


def replay(text: str) -> tuple[list[str], list[list[str]], object]:
    """Load with PokerKit, iterate every state; returns the board and every player's hole cards."""
    hh = HandHistory.loads(text)
    holes: list[list[str]] = []
    board: list[str] = []
    state = None
    for state in hh:
        for i, cards in enumerate(state.hole_cards):
            while len(holes) <= i:
                holes.append([])
            for c in cards:
                if repr(c) not in holes[i]:
                    holes[i].append(repr(c))
        board = [repr(c[0]) for c in state.board_cards]
    assert state is not None and not state.status  # the hand is over
    return board, holes, state


def export(setup: HandSetup, events: list[Event], _kind: dict | None = None, **kw) -> str:
    """The PHH text with TOML strings in double quotes (PokerKit writes single quotes), still valid TOML."""
    text = export_hand(HandRecord(1, setup, 1, len(events) + 1, {}), events, **kw)
    return "\n".join(line.replace("'", '"') if not line.startswith("#") else line for line in text.splitlines())


def holdem(seats=(1, 2, 3), button=3, structure="no_limit", game="holdem", chips=True) -> HandSetup:
    kind = LIMIT if structure == "limit" else NL
    return HandSetup(game=game, rules="robert", seats=seats, button=button, structure=structure,
                     chips=stakes(seats, kind) if chips else None)


def test_no_limit_holdem_showdown() -> None:
    setup = holdem()
    events = play(setup, [
        ("hole", {1: "As Ah", 2: "Kd Kh", 3: "7c 2d"}),
        ("raise", 6), ("call",), ("fold",),
        ("burn", "3s"), ("board", "Qc Jd 9h"), ("check",), ("bet", 10), ("raise", 40), ("call",),
        ("burn", "4s"), ("board", "Ts"), ("check",), ("check",),
        ("burn", "5s"), ("board", "2h"), ("bet", 100), ("call",),
    ])
    text = export(setup, events, NL, players={1: "Ann", 2: "Bob", 3: "Cy"}, table="t7", at=1_700_000_000.0)
    assert 'variant = "NT"' in text and "blinds_or_straddles = [1, 2, 0]" in text
    assert '"p3 cbr 6"' in text and '"p1 cbr 40"' in text and '"p1 sm AsAh"' in text
    assert 'players = ["Ann", "Bob", "Cy"]' in text and "seats = [1, 2, 3]" in text
    board, holes, state = replay(text)
    assert board == ["Qc", "Jd", "9h", "Ts", "2h"]
    assert holes == [["As", "Ah"], ["Kd", "Kh"], ["7c", "2d"]]
    assert state.stacks == [STACK + 148, STACK - 2, STACK - 146]


def test_button_not_seat_one_and_empty_seats() -> None:
    setup = holdem(seats=(2, 5, 7, 9), button=5)  # p1 = seat 7 (small blind), button seat 5 last
    events = play(setup, [
        ("hole", {7: "2c 3c", 9: "4c 5c", 2: "6c 7d", 5: "8c 9d"}),
        ("call",), ("call",), ("call",), ("check",),
        ("burn", "Ks"), ("board", "Ah Kh Qh"), ("check",), ("check",), ("bet", 8), ("fold",), ("fold",), ("fold",),
    ])
    text = export(setup, events, NL)
    assert "seats = [7, 9, 2, 5]" in text
    board, holes, state = replay(text)
    assert board == ["Ah", "Kh", "Qh"]
    assert holes == [["2c", "3c"], ["4c", "5c"], ["6c", "7d"], ["8c", "9d"]]


def test_heads_up_button_posts_small_blind() -> None:
    setup = holdem(seats=(4, 8), button=8)
    events = play(setup, [
        ("hole", {4: "Tc Td", 8: "Jc Jd"}),
        ("raise", 6), ("call",),  # the button (small blind) acts first preflop and raises to 6
        ("burn", "2s"), ("board", "3d 4h 5s"), ("check",), ("check",),
        ("burn", "6s"), ("board", "7h"), ("check",), ("check",),
        ("burn", "8s"), ("board", "9c"), ("check",), ("check",),
    ])
    text = export(setup, events, NL)
    assert "seats = [4, 8]" in text and "blinds_or_straddles = [1, 2]" in text and '"p2 cbr 6"' in text
    board, holes, state = replay(text)
    assert board == ["3d", "4h", "5s", "7h", "9c"]
    assert holes == [["Tc", "Td"], ["Jc", "Jd"]]


def test_no_limit_without_amounts_is_refused() -> None:
    setup = holdem()
    with pytest.raises(ChipsError, match="the amount is needed in no-limit"):
        play(setup, [("hole", {1: "As Ah", 2: "Kd Kh", 3: "7c 2d"}), ("raise",)])


def test_limit_holdem_derives_bet_sizes() -> None:
    setup = holdem(structure="limit")
    events = play(setup, [
        ("hole", {1: "As Ah", 2: "Kd Kh", 3: "7c 2d"}),
        ("raise",), ("call",), ("call",),
        ("burn", "3s"), ("board", "Qc Jd 9h"), ("bet",), ("raise",), ("fold",), ("call",),
        ("burn", "4s"), ("board", "Ts"), ("bet",), ("call",),
        ("burn", "5s"), ("board", "2h"), ("check",), ("check",),
    ])
    text = export(setup, events, LIMIT)
    assert 'variant = "FT"' in text and "small_bet = 2" in text and "big_bet = 4" in text
    assert '"p3 cbr 4"' in text and '"p1 cbr 2"' in text and '"p2 cbr 4"' in text  # small bets
    board, holes, _ = replay(text)
    assert board == ["Qc", "Jd", "9h", "Ts", "2h"] and holes[0] == ["As", "Ah"]


def test_pot_limit_omaha_and_limit_omaha8() -> None:
    for game, structure, code, stakes in (("omaha", "pot_limit", "PO", NL), ("omaha8", "limit", "FO/8", LIMIT)):
        setup = holdem(game=game, structure=structure)
        events = play(setup, [
            ("hole", {1: "As Ah Kc Kd", 2: "2c 3c 4d 5d", 3: "7c 8c 9s Ts"}),
            ("call",), ("call",), ("check",),
            ("burn", "Qs"), ("board", "6h 7h 8h"), ("check",), ("check",), ("check",),
            ("burn", "Js"), ("board", "Jh"), ("check",), ("check",), ("check",),
            ("burn", "3s"), ("board", "2h"), ("check",), ("check",), ("check",),
        ])
        text = export(setup, events, stakes)
        assert f'variant = "{code}"' in text
        board, holes, _ = replay(text)
        assert board == ["6h", "7h", "8h", "Jh", "2h"]
        assert holes == [["As", "Ah", "Kc", "Kd"], ["2c", "3c", "4d", "5d"], ["7c", "8c", "9s", "Ts"]]


@pytest.mark.parametrize(("game", "code"), [("stud", "F7S"), ("stud8", "F7S/8"), ("razz", "FR")])
def test_stud_games(game: str, code: str) -> None:
    setup = HandSetup(game=game, rules="robert", seats=(2, 4, 6), structure="limit", chips=stakes((2, 4, 6), STUD))
    streets = [
        ("hole", {2: "As Ks Qd", 4: "2c 3c 9h", 6: "4d 5d 2h"}),
        ("bring_in",), ("call",), ("call",),
        ("burn", "Jc"), ("hole", {2: "Qc", 4: "Th", 6: "6h"}), ("bet",), ("call",), ("call",),
        ("burn", "Jd"), ("hole", {2: "8s", 4: "7s", 6: "3s"}), ("check",), ("check",), ("check",),
        ("burn", "Js"), ("hole", {2: "7d", 4: "6s", 6: "8d"}), ("bet",), ("call",), ("call",),
        ("burn", "Jh"), ("hole", {2: "Ac", 4: "5c", 6: "Ad"}), ("check",), ("check",), ("check",),
    ]
    events = play(setup, streets)
    text = export(setup, events, STUD)
    assert f'variant = "{code}"' in text and "bring_in = 2" in text and "seats = [2, 4, 6]" in text
    board, holes, _ = replay(text)
    assert board == []
    assert holes == [["As", "Ks", "Qd", "Qc", "8s", "7d", "Ac"], ["2c", "3c", "9h", "Th", "7s", "6s", "5c"],
                     ["4d", "5d", "2h", "6h", "3s", "8d", "Ad"]]


def test_no_limit_deuce_to_seven_single_draw() -> None:
    setup = holdem(game="lowball_27", structure="no_limit")
    events = play(setup, [
        ("hole", {1: "2c 3d 4h 5s 9c", 2: "Kc Kd Ah Ad 7c", 3: "2d 3h 4s 6c 7d"}),
        ("call",), ("call",), ("check",),
        ("discard", 1, 1), ("discard", 2, 3), ("discard", 3, 0),
        ("muck", "9c"), ("muck", "Kc"), ("muck", "Kd"), ("muck", "Ah"),
        ("burn", "Qs"), ("hole", {1: "8d", 2: "2s 3s 4d"}),
        ("check",), ("bet", 10), ("call",), ("fold",),
    ])
    text = export(setup, events, NL)
    assert 'variant = "N2L1D"' in text
    assert '"p1 sd 9c"' in text and '"p2 sd KcKdAh"' in text and '"p3 sd"' in text
    board, holes, _ = replay(text)
    assert holes[0] == ["2c", "3d", "4h", "5s", "9c", "8d"]


def test_unidentified_discards_are_not_exported() -> None:
    setup = holdem(game="lowball_27", structure="no_limit")
    events = play(setup, [
        ("hole", {1: "2c 3d 4h 5s 9c", 2: "Kc Kd Ah Ad 7c", 3: "2d 3h 4s 6c 7d"}),
        ("call",), ("call",), ("check",),
        ("discard", 1, 1), ("discard", 2, 0), ("discard", 3, 0), ("burn", "Qs"), ("hole", {1: "8d"}),
        ("check",), ("check",), ("check",),
    ])
    with pytest.raises(PhhUnsupported, match="seat 1 drew 1 but 0 of the discards were identified"):
        export(setup, events, NL)


def test_unsupported_hands_say_why() -> None:
    with pytest.raises(PhhUnsupported, match=r"no variant for holdem \(pot_limit\)"):
        export(holdem(structure="pot_limit"), [], NL)
    with pytest.raises(PhhUnsupported, match="no variant for draw_high"):
        export(holdem(game="draw_high", structure="limit"), [], LIMIT)
    with pytest.raises(PhhUnsupported, match="without chip accounting"):
        export(holdem(chips=False), [], NL)
    setup = holdem()
    misdeal = [Deal(2, C("As"))]  # the first card to the wrong seat
    with pytest.raises(PhhUnsupported, match="misdeal"):
        export(setup, misdeal, NL)


def test_export_phh_from_a_journal(tmp_path: Path) -> None:
    setup = holdem()
    hand = play(setup, [("hole", {1: "As Ah", 2: "Kd Kh", 3: "7c 2d"}), ("raise", 6), ("fold",), ("fold",)])
    with Journal(tmp_path / "j.sqlite") as j:
        for seat, name in ((1, "Ann"), (2, "Bob"), (3, "Cy")):
            j.append(SeatPlayer(seat, name), at=0.0)
        first = j.append(StartHand(setup), at=1_700_000_000.0)
        for ev in hand:
            last = j.append(ev, at=1_700_000_001.0)
        j.record_hand(1, setup, first, last, {"winners": [3]})
        pl = HandSetup(game="holdem", rules="robert", seats=(1, 2, 3), button=1, structure="pot_limit",
                       chips=stakes((1, 2, 3), NL))
        f2 = j.append(StartHand(pl), at=2.0)
        l2 = j.append(EndHand(), at=3.0)
        j.record_hand(2, pl, f2, l2, {})
        stream = io.StringIO()
        result = export_phh(j, stream, table="t7")
        assert result.exported == [1]
        assert result.skipped == [(2, "PHH has no variant for holdem (pot_limit)")]
        hands = list(HandHistory.loads_all(stream.getvalue()))
        assert len(hands) == 1 and hands[0].players == ["Ann", "Bob", "Cy"] and hands[0].hand == 1
        assert hands[0].table == "t7" and hands[0].year == 2023
        list(hands[0])
        folder = tmp_path / "out"
        folder.mkdir()
        export_phh(j, folder)
        assert [p.name for p in folder.iterdir()] == ["hand-000001.phh"]
        with (folder / "hand-000001.phh").open("rb") as fp:
            list(HandHistory.load(fp))
        export_phh(j, tmp_path / "all.phhs")
        assert (tmp_path / "all.phhs").read_text() == stream.getvalue().replace("table = 't7'\n", "")


def test_a_replaced_exposed_card_is_left_out_and_noted() -> None:
    setup = holdem()
    deal = [Deal(1, C("As")), Deal(2, C("Kd")), Deal(3, C("7c"), face="up"), Deal(1, C("Ah")), Deal(2, C("Kh")),
            Deal(3, C("2d")), Deal(3, C("9s")), Burn(C("7c"))]  # exposed, replaced after the deal, used as burn
    rest = [Act(3, "fold"), Act(1, "call"), Act(2, "check"), Burn(C("3s")), BoardCards((C("Qc"), C("Jd"), C("9h"))),
            Act(1, "bet", amount=4), Act(2, "fold"), EndHand()]
    text = export(setup, deal + rest, NL)
    assert '"d dh p3 2d9s"' in text and "7c was replaced" in text
    assert '_rulings = ["irregularity: exposed_card (replace_after_deal)"]' in text
    board, holes, _ = replay(text)
    assert board == ["Qc", "Jd", "9h"] and holes[2] == ["2d", "9s"]


def test_a_stud_hi_lo_all_in_run_out_writes_each_street() -> None:
    """Issue 27: both all in on third street, fourth to seventh dealt with no action between them:
    PokerKit takes one 'd dh' per player per street (one line of four cards was a KeyError)."""
    setup = HandSetup(game="stud8", rules="robert", seats=(2, 4), structure="limit",
                      chips=Stakes(stacks={2: 6, 4: 6}, **STUD))
    events = play(setup, [
        ("hole", {2: "As Ks 2d", 4: "4c 3c Kh"}), ("bring_in",), ("complete",), ("call",),
        ("burn", "Jc"), ("hole", {2: "Qc", 4: "Th"}), ("burn", "Jd"), ("hole", {2: "8s", 4: "7s"}),
        ("burn", "Js"), ("hole", {2: "7d", 4: "6s"}), ("burn", "Jh"), ("hole", {2: "Ac", 4: "5c"}),
    ])
    text = export(setup, events, STUD)
    assert '"d dh p1 Qc", "d dh p2 Th", "d dh p1 8s"' in text
    _, holes, state = replay(text)
    assert holes == [["As", "Ks", "2d", "Qc", "8s", "7d", "Ac"], ["4c", "3c", "Kh", "Th", "7s", "6s", "5c"]]
    assert list(state.stacks) == [0, 12]  # seat 4 scoops: a seven-high straight and a 7-6-5-4-3 low


def test_export_to_a_folder_that_does_not_exist(tmp_path: Path) -> None:
    setup = holdem()
    hand = play(setup, [("hole", {1: "As Ah", 2: "Kd Kh", 3: "7c 2d"}), ("raise", 6), ("fold",), ("fold",)])
    with Journal(tmp_path / "j.sqlite") as j:
        first = j.append(StartHand(setup), at=1.0)
        last = first
        for ev in hand:
            last = j.append(ev, at=2.0)
        j.record_hand(1, setup, first, last, {})
        result = export_phh(j, tmp_path / "hands" / "today")
        assert result.exported == [1]
        assert [p.name for p in (tmp_path / "hands" / "today").iterdir()] == ["hand-000001.phh"]
        export_phh(j, tmp_path / "sets" / "all.phhs")  # a set's folder is made too
        assert list(HandHistory.loads_all((tmp_path / "sets" / "all.phhs").read_text()))


def test_a_200_hand_session_replays_in_pokerkit(tmp_path: Path) -> None:
    """Issue 27: every hand of a 200-hand simulated session (every game, both profiles, chips)
    that PHH can express is exported, loads in PokerKit, plays to its end and finishes on the
    stacks our chip accounting paid; the others are skipped for a reason PHH cannot express."""
    import random

    from controller.rules.events import ChangeGame
    from controller.rules.scenario import Scenario
    from controller.rules.table import Table
    from controller.service import Rejected, TableService
    from controller.sim import dealer as dealer_sim

    with Journal(tmp_path / "j.sqlite", sync="normal") as j:
        svc = TableService(Table(size=10), journal=j)
        for hand in dealer_sim.session(random.Random(27), 200, chips=True):
            setup = Scenario.from_dict(hand).setup
            svc.submit(ChangeGame(setup.game, setup.rules, setup.structure, setup.event))
            svc.submit(StartHand(setup))
            for ev in Scenario.from_dict(hand).events:
                try:
                    svc.submit(ev)
                except Rejected:
                    pass
            if svc.engine is not None and not svc.engine.over:
                svc.submit(EndHand())
        result = export_phh(j, tmp_path / "hands")
    assert len(result.exported) + len(result.skipped) == 200 and len(result.exported) >= 80
    allowed = ("PHH has no variant", "a big bet on fourth street", "the hand ended in a misdeal")
    assert all(reason.startswith(allowed) for _, reason in result.skipped), result.skipped
    for hand_id in result.exported:
        hh = HandHistory.loads((tmp_path / "hands" / f"hand-{hand_id:06d}.phh").read_text())
        states = list(hh)
        state = states[-1]
        assert not state.status, hand_id
        assert list(state.stacks) == list(hh.finishing_stacks), hand_id
