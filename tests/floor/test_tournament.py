"""The tournament on the floor (issue 23): each rule applied, quoted, and a whole event simulated.

Pure logic, no server: the floor's decisions are a function of the journaled inputs, so a
simulated 100-player, 12-table event runs here in about a second and every step is checked
against the rule it applies.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.floor.tournament.chiprace import ChipRaceError, cards_needed, chip_race
from controller.floor.tournament.clock import ActionClock
from controller.floor.tournament.seating import SeatingError, Tournament, _clockwise
from controller.floor.tournament.structure import Level, Structure, StructureError, TournamentClock
from controller.rules.cards import standard_deck

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "tournament.toml"


def _structure(**kw) -> Structure:
    base = dict(name="t", levels=(Level(1, 100, 200, 20), Level(2, 200, 400, 20, break_minutes=5, colour_up=(25,)),
                                  Level(3, 300, 600, 20)),
                denominations=(25, 100, 500), starting_stack=10000)
    base.update(kw)
    return Structure(**base)


# ------------------------------------------------------------------ structure and clock (TDA 21)
def test_the_example_structure_loads_and_a_misspelt_key_is_an_error(tmp_path: Path) -> None:
    s = Structure.load(EXAMPLE)
    assert s.levels[1].colour_up == (25,) and s.denominations_after(2) == (100, 500, 1000, 5000)
    bad = tmp_path / "bad.toml"
    bad.write_text(EXAMPLE.read_text().replace("big_blind_ante = 300", "big_blind_antee = 300"))
    with pytest.raises(StructureError, match="level 2: unknown keys \\['big_blind_antee'\\]"):
        Structure.load(bad)
    bad.write_text(EXAMPLE.read_text().replace("colour_up = [25]", "colour_up = [50]"))
    with pytest.raises(StructureError, match="colours up \\[50\\], not in play"):
        Structure.load(bad)


def test_a_new_level_applies_to_the_next_hand_tda_21() -> None:
    """TDA 21: "The new level applies to the next hand. A hand begins on the first riffle; push of the
    shuffler button, or on the dealer push." A hand begun before zero plays the old level."""
    clock = TournamentClock(_structure(), start=1000.0)
    assert clock.level_for_hand(1000 + 20 * 60 - 1).number == 1
    assert clock.level_for_hand(1000 + 20 * 60).number == 2
    reading = clock.reading(1000 + 40 * 60 + 30)  # level 2 over: its 5-minute break
    assert reading.on_break and reading.seconds_left == pytest.approx(270)
    assert clock.level_for_hand(1000 + 40 * 60 + 30) is None  # no hand begins on a break
    assert clock.level_for_hand(1000 + 45 * 60).number == 3
    clock.pause(1000 + 50 * 60)
    clock.resume(1000 + 60 * 60)
    assert clock.reading(1000 + 60 * 60).seconds_left == pytest.approx(15 * 60)
    assert clock.reading(1000 + 60 * 60).describe()["next"] is None


# ------------------------------------------------------------------ the action clock (TDA 26)
def test_calling_a_clock_fifty_seconds_a_ten_second_count_then_the_hand_is_dead_tda_26() -> None:
    """TDA 26: "a player has up to 50 seconds to act. If action is not taken before time expires,
    there will be a 10-second count. If the player does not act by the end of the count, the hand is
    dead. A tie goes to the player." """
    clock = ActionClock("t7", seat=4, called=100.0)
    assert clock.phase(149.9) == "running" and clock.seconds_left(120) == pytest.approx(30)
    assert clock.phase(150.0) == "count" and clock.seconds_left(155) == pytest.approx(5)
    assert clock.phase(161.0, acted=160.0) == "acted"  # the tie goes to the player
    assert clock.ruling(160.0) is None
    ruling = clock.ruling(160.01)
    assert ruling["ruling"] == "dead_hand" and ruling["citations"] == ["TDA 26"] and ruling["seat"] == 4


# ------------------------------------------------------------------ the chip race (TDA 22, RRoP s15 8)
def test_chip_race_worked_example_nobody_raced_out_one_chip_at_most() -> None:
    """RRoP s15 8: "If a player has no chips after the race has been held, he will be given a chip of
    the higher denomination before anyone else is awarded a chip." TDA 22-A: "a maximum of one chip
    awarded to a player"."""
    stacks = {1: {25: 3, 500: 2}, 2: {25: 1, 100: 5}, 3: {25: 2}, 4: {25: 4, 100: 1}}
    assert cards_needed(stacks, [25], [100, 500]) == 6
    # deal order: seat 1 gets its three cards, then seat 2, then seat 3 (seat 4 has no odd chip)
    res = {r.seat: r for r in chip_race(stacks, [25], [100, 500], ["2c", "3c", "4c", "Ks", "5d", "6d"])}
    assert res[3].cards == ("5d", "6d") and res[1].cards == ("2c", "3c", "4c")
    # odd values 75 + 25 + 50 = 150: one new chip; seat 3 would be raced out, so it gets it first
    assert res[3].awarded and res[3].value_after == 100 and "raced out" in res[3].why
    # 50 left in the pool is half a new chip: the highest card remaining (Ks) takes it; the 4c gets none
    assert res[2].awarded and res[2].value_after == 600 and "half" in res[2].why
    assert not res[1].awarded and res[1].value_after == 1000
    assert res[4].value_after == 200 and res[4].odd_chips == 0  # four 25s changed up directly


def test_chip_race_highest_card_by_suit_wins_and_half_a_chip_takes_the_leftover() -> None:
    """RRoP s15 8: "the player with the highest card remaining will receive a new chip if he has half
    or more of the quantity of lower-denomination chips needed, otherwise nothing." """
    stacks = {1: {25: 3, 100: 10}, 2: {25: 2, 100: 10}, 3: {25: 3, 100: 10}}
    # odd 75 + 50 + 75 = 200: two chips; cards: seat 1 Qh Qs 2c, seat 2 Qd 3c, seat 3 Kc 4c 5c
    res = {r.seat: r for r in chip_race(stacks, [25], [100], ["Qh", "Qs", "2c", "Qd", "3c", "Kc", "4c", "5c"])}
    assert res[3].awarded and res[1].awarded and not res[2].awarded  # Kc > Qs > Qd
    stacks = {1: {25: 2, 100: 1}, 2: {25: 3, 100: 1}}  # 50 + 75 = 125: one chip, 25 left over
    res = {r.seat: r for r in chip_race(stacks, [25], [100], ["Ah", "Kh", "2c", "3c", "4c"])}
    assert res[1].awarded and not res[2].awarded  # seat 2 had 75, but only 25 remain in the pool
    stacks = {1: {25: 2, 100: 1}, 2: {25: 2, 100: 1}, 3: {25: 3}}  # 50 + 50 + 75 = 175: one chip, 75 left
    res = {r.seat: r for r in chip_race(stacks, [25], [100], ["Ah", "Kh", "2c", "3c", "4c", "5c", "6c"])}
    assert res[3].awarded and "raced out" in res[3].why  # nothing left but odd chips: a chip first
    assert res[1].awarded and not res[2].awarded  # then 75 left is half or more: Ah, the highest card
    # equal cards never happen: the same card twice is a misdeal of the race
    stacks = {1: {25: 2, 100: 1}, 2: {25: 3, 100: 1}}
    with pytest.raises(ChipRaceError, match="twice"):
        chip_race(stacks, [25], [100], ["Ah", "Ah", "2c", "3c", "4c"])
    with pytest.raises(ChipRaceError, match="needs 5 cards"):
        chip_race(stacks, [25], [100], ["Ah"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 6)), min_size=2, max_size=10), st.randoms())
def test_chip_race_properties(rows, rnd) -> None:
    stacks = {i + 1: {25: a, 100: b} for i, (a, b) in enumerate(rows)}
    deck = [c.face for c in standard_deck()]
    need = cards_needed(stacks, [25], [100])
    cards = rnd.sample(deck, need)
    results = chip_race(stacks, [25], [100], cards)
    before = sum(r.value_before for r in results)
    after = sum(r.value_after for r in results)
    for r in results:
        assert r.value_after % 100 == 0
        assert r.value_after >= (100 if r.value_before else 0)  # nobody raced out
        assert r.value_after - (r.value_before - (r.value_before % 100)) in (0, 100)  # one chip at most
    assert abs(after - before) < 100 * max(1, sum(1 for r in results if r.odd_chips))


# ------------------------------------------------------------------ seating
def _tournament(players: int, tables: int, seed: int = 7, **kw) -> Tournament:
    t = Tournament(_structure(**kw), seed)
    for i in range(players):
        t.register(f"p{i:03d}")
    t.start(list(range(1, tables + 1)))
    return t


def test_random_seating_is_even_and_reproducible_from_the_seed_tda_6() -> None:
    """TDA 6: "Tournament and satellite seats will be randomly assigned." """
    a, b, c = _tournament(100, 12), _tournament(100, 12), _tournament(100, 12, seed=8)
    assert sorted(Counter(a.counts().values()).items()) == [(8, 8), (9, 4)]
    seats = {(p.table, p.seat) for p in a.players.values()}
    assert len(seats) == 100
    assert [(p.table, p.seat) for p in a.players.values()] == [(p.table, p.seat) for p in b.players.values()]
    assert [(p.table, p.seat) for p in a.players.values()] != [(p.table, p.seat) for p in c.players.values()]
    with pytest.raises(SeatingError, match="need 12 tables"):
        _tournament(100, 11)


def test_late_entry_between_the_small_blind_and_the_button_waits_tda_7() -> None:
    """TDA 7: late entries are "randomly seated at any position and dealt in except between SB and
    button"."""
    t = _tournament(16, 2)
    t.positions(1, button=5, small_blind=8, big_blind=9)
    for seat in _clockwise(5, 9):
        free = seat not in t.planned(1)
        if free:
            assert t._between_sb_and_button(t.tables[1], seat) == (seat in (6, 7))
    decided = [d for i in range(2) for d in t.late_entry(f"late{i}")]
    for d in decided:
        assert d.citations == ("TDA 7",) and ("waits" in d.text) == d.data["waits"]
    assert len(t.active()) == 18 and t.counts() == {1: 9, 2: 9}
    with pytest.raises(SeatingError, match="no open seat"):
        t.late_entry("late2")


def test_balancing_moves_the_player_due_for_the_big_blind_to_the_earliest_seat_due_for_it() -> None:
    """RRoP s15 14: "the player due for the big blind will be automatically selected to move, and will
    be given the earliest seat due for the big blind if more than one seat is open." TDA 9-C: "Full-table
    play will halt on tables 3 or more players short of the table with the most players." """
    t = _tournament(27, 3)
    seats1 = sorted(t.planned(1))
    t.positions(1, button=seats1[0], small_blind=seats1[1], big_blind=seats1[2])
    seats3 = sorted(t.planned(3))
    t.positions(3, button=seats3[0], small_blind=seats3[1], big_blind=seats3[2])
    t.tables[3].size = 10  # table 3 gets one open seat to show "earliest due for the big blind"
    gone = [t.planned(3)[s] for s in seats3[3:6]]
    out = t.bust([{"table": 3, "players": {name: 1000 * (i + 1) for i, name in enumerate(gone)}}])
    assert [d.kind for d in out].count("bust") == 3
    moves = [d for d in out if d.kind == "move"]
    assert moves and all("RRoP s15 14" in d.citations for d in moves)
    first = moves[0]
    assert first.data["player"] == t.players[first.data["player"]].name
    halts = [d for d in out if d.kind == "halt"]
    assert halts and halts[0].data["table"] == 3 and halts[0].citations == ("TDA 9-C",)
    # the giving table's mover was the first seat after its big blind
    give = t.players[first.data["player"]].table
    g = t.tables[give]
    occupied = set(t.present(give))
    assert first.data["player"] == t.present(give)[next(s for s in _clockwise(g.big_blind, g.size) if s in occupied)]
    # the seat given is the first open seat after the taking table's big blind
    bb3 = t.tables[3].big_blind
    open3 = [s for s in _clockwise(bb3, 10) if s not in {p.seat for p in t.active() if p.table == 3
                                                            and p.moving_to is None}]
    assert first.data["seat"] == open3[0]
    resumed = [d for m in moves for d in t.confirm_move(m.data["player"])]
    assert any(d.kind == "resume" for d in resumed) and not t.tables[3].halted
    assert max(t.counts().values()) - min(t.counts().values()) <= 1  # RRoP s15 16: six tables or less


def _play(t: Tournament, rng: random.Random, table: int) -> None:
    """One hand at ``table``: the button moves to the next player present; the table reports it."""
    tab = t.tables[table]
    seats = t.present(table)
    if len(seats) < 2:
        return
    start = tab.button or min(seats)
    button = next(s for s in _clockwise(start, tab.size) if s in seats)
    after = [s for s in _clockwise(button, tab.size) if s in seats and s != button]
    sb, bb = (button, after[0]) if len(after) == 1 else (after[0], after[1])
    t.positions(table, button, sb, bb)


def test_a_hundred_player_tournament_on_twelve_tables_runs_to_the_final_table_by_the_rules() -> None:
    """Seating, balancing (RRoP s15 14, 16), halting (TDA 9-C), breaking in a pre-set order by the
    2-step random process (RRoP s15 12, TDA 9 RP), redraws at three, two and one tables (RRoP s15 17),
    the final table of nine (TDA 10), hand-for-hand near the money and the finishing places
    (RRoP s15 35), all replayed from the journal to the same decisions."""
    rng = random.Random(2026)
    t = _tournament(100, 12, seed=11, paid_places=15, hand_for_hand_margin=2)
    broken_order: list[int] = []
    redraws: list[int] = []
    h4h_seen = False
    while len(t.active()) > 1:
        table = rng.choice(sorted(n.number for n in t.open_tables()))
        _play(t, rng, table)
        seats = t.present(table)
        staying = [n for n in seats.values() if t.players[n].moving_to is None]
        k = min(len(staying) - 1, rng.choice([0, 0, 1, 1, 2]), len(t.active()) - 1)
        if k <= 0:
            continue
        losers = rng.sample(sorted(staying), k)
        hand = [{"table": table, "players": {n: rng.randrange(100, 5000) for n in losers}}]
        if t.hand_for_hand and len(t.open_tables()) > 1:
            other = next(n.number for n in t.open_tables() if n.number != table)
            others = [n for n in t.present(other).values() if t.players[n].moving_to is None]
            if len(others) > 1 and len(t.active()) - k - 1 >= 1:
                hand.append({"table": other, "players": {rng.choice(sorted(others)): 700}})
        left_before = len(t.active())
        out = t.bust(hand)
        h4h_seen |= t.hand_for_hand
        for d in out:
            if d.kind == "break":
                broken_order.append(d.data["table"])
                movers = [m for m in out if m.kind == "move" and m.data.get("card") and
                          m.data["player"] in d.data["players"]]
                ranks = [m.data["card"] for m in movers]
                assert len(movers) == len(d.data["players"]) and len(set(ranks)) == len(ranks)  # one card each
                keyed = sorted(ranks, key=lambda c: ("23456789TJQKA".index(c[0]), "cdhs".index(c[1])), reverse=True)
                assert ranks == keyed  # seat cards go out from the highest card by suit, in their scrambled order
                assert [[m.data["table"], m.data["seat"]] for m in movers] == d.data["seat_cards"]
            if d.kind == "redraw":
                redraws.append(len(d.data["tables"]))
        n_busted = sum(len(h["players"]) for h in hand)
        assert len(t.active()) == left_before - n_busted
        # the dealers carry out every move after their hand
        for p in [p for p in t.active() if p.moving_to]:
            t.confirm_move(p.name)
        counts = t.counts()
        assert all(c <= t.structure.table_size for c in counts.values())
        if len(counts) > 1:
            assert max(counts.values()) - min(counts.values()) <= (2 if len(counts) > 6 else 1)
            assert not any(x.halted for x in t.open_tables())  # every move made: nobody 3 short
        if len(t.active()) <= t.structure.final_table:
            assert len(counts) == 1  # TDA 10: the final table
        seats_taken = [(p.table, p.seat) for p in t.active()]
        assert len(seats_taken) == len(set(seats_taken))
    # tables broke in the pre-set order (the last opened first), then redraws at 3, 2 and 1 tables
    assert broken_order == sorted(broken_order, reverse=True) and broken_order[0] == 12
    assert redraws == [3, 2, 1]
    assert h4h_seen and not t.hand_for_hand
    places = sorted(p.place for p in t.players.values() if p.place)
    assert len(places) == 99 and max(places) == 100 and 1 not in places
    # a tie shares a place; otherwise every place from 2 to 100 is taken once
    assert all(p.tied for p in t.players.values() if p.place and places.count(p.place) > 1)
    replayed = Tournament.replay(t.structure, t.events)
    assert [d.describe() for d in replayed.decisions] == [d.describe() for d in t.decisions]


def test_busts_in_one_hand_at_one_table_rank_by_starting_chips_rrop_s15_35() -> None:
    """RRoP s15 35: "If two (or more) players go broke during the same hand, the player starting the
    hand with the larger amount of money finishes in the higher tournament place." """
    t = _tournament(18, 2)
    a, b = list(t.planned(1).values())[:2]
    out = [d for d in t.bust([{"table": 1, "players": {a: 500, b: 900}}]) if d.kind == "bust"]
    assert {d.data["player"]: d.data["place"] for d in out} == {b: 17, a: 18}
    assert all(d.citations == ("RRoP s15 35", "RRoP s15 20") for d in out)
    with pytest.raises(SeatingError, match="not playing"):
        t.bust([{"table": 1, "players": {a: 1}}])
    with pytest.raises(SeatingError, match="journal starts"):
        Tournament.replay(t.structure, t.events[1:])


def test_a_break_waits_for_the_cards_the_antennas_read_tda_9() -> None:
    """TDA 9 Recommended Procedure: "the dealer then deals one playing card face up to each player. The
    seat cards are then dealt out with the first seat card going to the player with the highest
    playing card by suit showing." With the antennas dealing, the floor waits for their reads."""
    t = Tournament(_structure(), seed=3, draw="antennas")
    for i in range(36):
        t.register(f"p{i:02d}")
    t.start([1, 2, 3, 4])
    t.bust([{"table": 1, "players": {n: 100 for n in list(t.planned(1).values())[:5]}}])
    out = t.bust([{"table": 2, "players": {n: 100 for n in list(t.planned(2).values())[:4]}}])
    brk = next(d for d in out if d.kind == "break")  # 27 left fit three tables: table 4 breaks
    assert brk.data["table"] == 4 and not [d for d in out if d.kind == "move" and d.data.get("card")]
    players = brk.data["players"]
    assert sum(t.counts().values()) == 27 and len(t.counts()) == 3  # seat cards hold their seats
    with pytest.raises(SeatingError, match="one card for each"):
        t.break_cards(4, {players[0]: "As"})
    with pytest.raises(SeatingError, match="same card twice"):
        t.break_cards(4, {p: "As" for p in players})
    faces = ["2c", "Ah", "Kd", "Ks", "9h", "Tc", "3d", "4s", "5h", "6c"]
    moves = t.break_cards(4, dict(zip(players, faces, strict=False)))
    moved = [d for d in moves if d.kind == "move"]
    by_card = sorted(zip(players, faces, strict=False), key=lambda pc: ("23456789TJQKA".index(pc[1][0]),
                                                                         "cdhs".index(pc[1][1])), reverse=True)
    assert [d.data["player"] for d in moved] == [p for p, _ in by_card]  # Ah first, then Ks, Kd ...
    assert [[d.data["table"], d.data["seat"]] for d in moved] == brk.data["seat_cards"]
    replayed = Tournament.replay(t.structure, t.events)
    assert [d.describe() for d in replayed.decisions] == [d.describe() for d in t.decisions]
