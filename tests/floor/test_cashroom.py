"""The cash room's lists (RRoP s2 Seating): three games filled from one list with a must-move chain."""

from __future__ import annotations

import pytest

from controller.floor.cashroom import CashRoom, CashRoomError


def _room() -> CashRoom:
    room = CashRoom()
    room.open_game("T1", "holdem", "1/2")
    for i in range(30):
        room.join_list(f"p{i:02d}", "holdem", "1/2", present=True)
    return room


def test_three_games_fill_from_one_list_and_the_must_move_chain_feeds_the_main_game() -> None:
    """RRoP s2 Seating 9: "The must-move list is maintained in the same order as the original waiting
    list." A seat in the main game goes to the must-move game's earliest name; the seat he frees goes
    to the next must-move game's earliest; the last one to the list."""
    room = _room()
    for s in range(1, 10):
        room.seat_opens("T1", s)
    room.open_game("T2", "holdem", "1/2", feeds="T1")
    for s in range(1, 10):
        room.seat_opens("T2", s)
    room.open_game("T3", "holdem", "1/2", feeds="T2")
    for s in range(1, 10):
        room.seat_opens("T3", s)
    assert sorted(room.games["T1"].players.values()) == [f"p{i:02d}" for i in range(9)]
    assert sorted(room.games["T2"].players.values()) == [f"p{i:02d}" for i in range(9, 18)]
    assert sorted(room.games["T3"].players.values()) == [f"p{i:02d}" for i in range(18, 27)]
    assert room.lists[("holdem", "1/2")] == ["p27", "p28", "p29"]
    # p03 leaves the main game: p09 (first on the original list among T2's players) must move
    out = room.seat_opens("T1", 4)
    must = [d for d in out if d.kind == "must_move"]
    assert must and must[0].data["player"] == "p09" and must[0].citations[0] == "RRoP s2 Seating 9"
    assert room.games["T1"].open_seats() == []  # the seat is held for him
    out = room.answer_move("p09", accept=True)
    assert room.where("p09") == ("T1", 4)
    chain = [d for d in out if d.kind == "must_move"]
    assert chain and chain[0].data["player"] == "p18" and chain[0].data["table"] == "T2"
    out = room.answer_move("p18", accept=True)
    seated = [d for d in out if d.kind == "seat"]
    assert seated and seated[0].data["player"] == "p27" and seated[0].data["table"] == "T3"
    # p10 refuses his move: he quits and is barred from the list for an hour; p11 is next
    room.seat_opens("T1", 5)
    out = room.answer_move("p10", accept=False, t=100.0)
    assert [d.kind for d in out][:2] == ["forced_quit", "must_move"] and out[1].data["player"] == "p11"
    assert room.where("p10") is None
    with pytest.raises(CashRoomError, match="one hour"):
        room.join_list("p10", "holdem", "1/2", present=True, t=100.0 + 3599)
    room.join_list("p10", "holdem", "1/2", present=True, t=100.0 + 3601)
    seated = {p for g in room.games.values() for p in g.players.values()}
    assert len(seated) == sum(len(g.players) for g in room.games.values())  # RRoP s2 Seating 4
    replayed = CashRoom.replay(room.events)
    assert [d.describe() for d in replayed.decisions] == [d.describe() for d in room.decisions]


def test_a_player_in_the_game_has_precedence_for_a_seat_rrop_s2_seating_12() -> None:
    """RRoP s2 Seating 12: "A player who is already in the game has precedence over a new player for
    any seat when it becomes available. [...] the one who asks the earliest has preference." """
    room = _room()
    for s in range(1, 10):
        room.seat_opens("T1", s)
    room.request_seat_change("p05")
    room.request_seat_change("p02", seat=1)
    out = room.seat_opens("T1", 1)  # p00 leaves seat 1: p05 asked first and takes any seat
    assert out[1].kind == "seat_change" and out[1].data["player"] == "p05"
    assert room.where("p05") == ("T1", 1)
    # p05's old seat 6 goes to the list
    assert out[-1].kind == "seat" and out[-1].data["seat"] == 6 and out[-1].data["player"] == "p09"


def test_presence_transfers_and_the_game_most_in_need_rrop_s2_seating_1_and_3() -> None:
    """RRoP s2 Seating 1: "You must be present to add your name to a waiting list." s2 Seating 3: "A
    new player will be sent to the game most in need of an additional player. A transfer to a similar
    game is not allowed if the game being left will then have fewer players than the game being
    entered." """
    room = _room()
    with pytest.raises(CashRoomError, match="present"):
        room.join_list("absent", "holdem", "1/2", present=False)
    room.open_game("T4", "holdem", "1/2")
    for _ in range(5):
        room.seat_new_player("holdem", "1/2")  # alternate between the two games, the shorter first
    assert sorted(len(room.games[t].players) for t in ("T1", "T4")) == [2, 3]
    short = min(("T1", "T4"), key=lambda t: len(room.games[t].players))
    long_ = "T4" if short == "T1" else "T1"
    mover = next(iter(room.games[short].players.values()))
    refused = room.request_table_change(mover, long_)
    assert refused.kind == "refused" and refused.citations == ("RRoP s2 Seating 3",)
    mover = next(iter(room.games[long_].players.values()))
    assert room.request_table_change(mover, short).kind == "refused"  # 3 -> 2 and 2 -> 3: fewer left behind
    for _ in range(3):
        room.seat_opens(long_, room.games[long_].open_seats()[0])  # the long game gets 3 more: 6 against 2
    mover = next(iter(room.games[long_].players.values()))
    moved = room.request_table_change(mover, short)  # 6 -> 5 and 2 -> 3: allowed
    assert moved.kind == "table_change" and room.where(mover)[0] == short
    with pytest.raises(CashRoomError, match="same form and stakes"):
        room.open_game("T9", "omaha", "1/2", feeds="T1")
