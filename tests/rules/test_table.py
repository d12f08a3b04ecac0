"""Button and blinds across hands (RRoP s4, TDA 30-32, 33-C)."""

from __future__ import annotations

import pytest

from controller.rules.cards import Card
from controller.rules.events import Deal
from controller.rules.table import Table, TableError


def _positions(t: Table) -> tuple:
    s = t.start_hand().setup
    return s.button, s.small_blind, s.big_blind, s.seats


def _table(n: int, **kw) -> Table:
    t = Table(size=kw.pop("size", 9), **kw)
    for seat in range(1, n + 1):
        t.seat(seat, f"p{seat}")
    return t


def test_moving_button_moves_one_player_each_hand() -> None:
    t = _table(4, size=6)
    t.set_button(4)
    assert _positions(t)[:3] == (4, 1, 2)
    assert _positions(t)[:3] == (1, 2, 3)
    assert _positions(t)[:3] == (2, 3, 4)


def test_dead_button_when_a_player_leaves_tournament() -> None:
    t = _table(6, size=6, rules="tda", event="tournament")
    t.set_button(6)
    assert _positions(t)[:3] == (6, 1, 2)
    assert _positions(t)[:3] == (1, 2, 3)
    t.unseat(3)  # the player due for the small blind leaves
    button, sb, bb, seats = _positions(t)
    assert (button, sb, bb) == (2, None, 4) and 3 not in seats  # dead small blind
    button, sb, bb, seats = _positions(t)
    assert (button, sb, bb) == (3, 4, 5) and 3 not in seats  # dead button on the empty seat


def test_heads_up_button_posts_small_blind_and_blinds_alternate() -> None:
    t = _table(3, size=6)
    t.set_button(3)
    _positions(t)
    t.unseat(1)
    seen = [_positions(t)[:3] for _ in range(3)]
    for button, sb, bb in seen:
        assert button == sb and bb != button
    assert [s[2] for s in seen] == [2, 3, 2] or [s[2] for s in seen] == [3, 2, 3]


def test_new_cash_player_waits_for_big_blind() -> None:
    t = _table(4, size=6)
    t.set_button(4)
    _positions(t)  # button 4, sb 1, bb 2
    t.seat(5, "newcomer")
    for expected in ((1, 2, 3), (2, 3, 4)):
        button, sb, bb, seats = _positions(t)
        assert (button, sb, bb) == expected and 5 not in seats
    button, sb, bb, seats = _positions(t)  # the big blind reaches the newcomer
    assert (button, sb, bb) == (3, 4, 5) and 5 in seats


def test_new_player_who_posts_is_dealt_in_unless_between_blind_and_button() -> None:
    t = _table(4, size=8)
    t.set_button(4)
    _positions(t)  # button 4, sb 1, bb 2
    t.seat(6, "poster", post=True)
    button, sb, bb, seats = _positions(t)  # button 1, sb 2, bb 3
    assert 6 in seats


def test_misdeal_redeal_is_exact_replay() -> None:
    t = _table(4)
    t.set_button(2)
    first = t.start_hand()
    first.apply(Deal(1, Card.parse("Ah")))  # wrong seat: misdeal
    assert first.over
    again = t.start_hand(redeal=True)
    assert again.setup == first.setup  # TDA 33-C: the button does not move
    assert t.start_hand().setup.button != first.setup.button


def test_seating_errors_are_clear() -> None:
    t = _table(2, size=6)
    with pytest.raises(TableError, match="taken"):
        t.seat(1, "x")
    with pytest.raises(TableError, match="not on a 6-seat"):
        t.seat(7, "x")
    with pytest.raises(TableError, match="empty"):
        t.unseat(5)
    t.unseat(2)
    with pytest.raises(TableError, match="two players"):
        t.start_hand()


def test_stud_has_no_button() -> None:
    t = _table(3, game="stud")
    setup = t.start_hand().setup
    assert setup.button is None and setup.seats == (1, 2, 3)
