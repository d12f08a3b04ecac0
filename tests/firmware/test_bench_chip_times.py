"""The chip bench's two-part latency: the chip's part (landing -> the frame leaves the board's USB,
chip time) plus the host's (the frame on the pty -> the subscriber, wall time)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from controller.bench.table_chip import _two_part_times, _written
from firmware_bridge.firmware import bridge_proto as fw

UIDS = [f"04{i:02X}5EED{i:02X}A080" for i in range(4)]


def frame(mtype: int, seq: int, antenna: int, uid: str) -> bytes:
    return fw.encode_frame(fw.PROTOCOL_VERSION, mtype, seq, fw.encode_uid_entry(antenna, bytes.fromhex(uid)))


def test_each_card_gets_its_own_frame_and_a_flop_the_last_of_its_three() -> None:
    s = SimpleNamespace(
        moves={1: ("place", 3, UIDS[0], 1), 2: ("place", 20, UIDS[1], 1), 3: ("place", 21, UIDS[2], 1),
               4: ("place", 22, UIDS[3], 1), 5: ("remove", 3, UIDS[0], None), 6: ("place", 4, UIDS[0], 2)},
        flop_keys={4: [2, 3, 4]})
    moves = {1: 1_000_000.0, 2: 2_000_000.0, 3: 2_080_000.0, 4: 2_160_000.0, 5: 3_000_000.0, 6: 4_000_000.0}
    tail = frame(fw.T_TAG_ARRIVE, 3, 22, UIDS[3])
    writes = [  # (chip us, wall s, bytes): a frame may end in a later write than it starts
        (1_040_000.0, 100.0, frame(fw.T_TAG_ARRIVE, 0, 3, UIDS[0])),
        (2_030_000.0, 110.0, frame(fw.T_TAG_ARRIVE, 1, 20, UIDS[1])),
        (2_190_000.0, 115.0, tail[:5]),
        (2_200_000.0, 116.0, tail[5:]),
        (2_300_000.0, 120.0, frame(fw.T_TAG_ARRIVE, 2, 21, UIDS[2])),  # the second flop card came last
        (3_300_000.0, 130.0, frame(fw.T_TAG_LEAVE, 4, 3, UIDS[0])),
    ]
    times, chip_ms = _two_part_times(s, moves, writes)
    assert chip_ms[1] == pytest.approx(40.0) and times[1] == pytest.approx(100.0 - 0.040)
    assert chip_ms[3] == pytest.approx(220.0)  # the second card's own frame
    assert chip_ms[4] == pytest.approx(140.0)  # the flop: its third card landing -> the last of its frames
    assert times[4] == pytest.approx(120.0 - 0.140)  # (complete with the second card's frame)
    assert chip_ms[5] == pytest.approx(300.0) and times[5] == pytest.approx(130.0 - 0.300)
    assert 6 not in times and 6 not in chip_ms  # never reported: the score counts it lost


def test_the_host_stages_start_when_a_frame_s_last_byte_reached_the_pty() -> None:
    tail = frame(fw.T_TAG_ARRIVE, 7, 22, UIDS[3])
    writes = [(1.0, 10.0, frame(fw.T_TAG_ARRIVE, 6, 3, UIDS[0])), (2.0, 11.0, tail[:5]), (3.0, 12.5, tail[5:]),
              (4.0, 20.0, frame(fw.T_TAG_ARRIVE, 6, 4, UIDS[1]))]  # a reset board numbers again from 6
    assert _written(writes) == {6: [10.0, 20.0], 7: [12.5]}


def test_a_missing_flop_is_traced_from_the_board_to_the_subscriber() -> None:
    from controller.bench.table_chip import _frames, _missing_flops

    s = SimpleNamespace(
        moves={2: ("place", 20, UIDS[1], 1), 3: ("place", 21, UIDS[2], 1), 4: ("place", 22, UIDS[3], 1)},
        flops=[(1, ("2c", "3c", "4c"), 4)], flop_keys={4: [2, 3, 4]})
    moves = {2: 2_000_000.0, 3: 2_080_000.0, 4: 2_160_000.0}
    writes = [(2_030_000.0, 110.0, frame(fw.T_TAG_ARRIVE, 1, 20, UIDS[1])),
              (2_110_000.0, 111.0, frame(fw.T_TAG_ARRIVE, 2, 21, UIDS[2]))]  # the third never left
    fused = [(110.1, "board", UIDS[1], True, True, []), (111.1, "board", UIDS[2], True, True, []),
             (111.2, "seat:1", UIDS[0], True, True, ["Deal"])]
    msgs = [("t/event/board", {"cards": ["2c", "3c"]}, 112.0), ("t/alert", {"hand_id": 1, "reason": "x"}, 113.0),
            ("t/alert", {"hand_id": 2, "reason": "y"}, 114.0)]
    why = _missing_flops(s, {"flops_missing": 1}, {}, msgs, fused, _frames(writes), moves)
    assert [w["hand"] for w in why] == [1]
    cards = why[0]["cards"]
    assert [c["tag_arrive_left_chip_us"] for c in cards] == [[2_030_000.0], [2_110_000.0], []]
    assert [c["fusion"] for c in cards] == [[["board", True, True, []]], [["board", True, True, []]], []]
    assert why[0]["board_events_naming_its_cards"] == [["2c", "3c"]]
    assert why[0]["alerts_of_its_hand"] == ["x"]
    assert _missing_flops(s, {"flops_missing": 0}, {}, msgs, fused, _frames(writes), moves) == []


def test_the_dealer_s_pace_is_a_fraction() -> None:
    from controller.bench.table_chip import chip_session

    for pace in (0.0, -1.0, 1.5):
        with pytest.raises(ValueError, match="pace"):
            chip_session(None, 1, {}, pace=pace)  # type: ignore[arg-type]
