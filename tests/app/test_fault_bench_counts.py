"""Issue 26, F5: the fault bench's dealer waits until the display shows the cards he pitched before
he acts.  An ``event/board`` lists the whole board so far (3, then 4, then 5 cards), and the bench
summed them as if each held only its new cards: the river counted 12 board cards, so from the turn
on the dealer acted without waiting; a river that came late (a replay after a corruption burst) found
him at the scoop, the table waited for it and every later hand was refused."""

from __future__ import annotations

import json
import time

from controller.bench.faults import Record, Recorder
from controller.bench.faults import _free_port as free_port  # noqa: PLC2701 - a port nothing listens on


def _recorder() -> Recorder:
    return Recorder("127.0.0.1", free_port(), "controller", "x", ["#"])  # no broker: fed by hand


def test_the_board_counts_its_cards_once_per_hand_and_a_repeat_once() -> None:
    rec = _recorder()
    try:
        root = "poker/t1/event/"
        feed = [("card", {"seq": 1, "hand_id": 1, "seat": 1}), ("card", {"seq": 2, "hand_id": 1, "seat": 2}),
                ("burn", {"seq": 3, "hand_id": 1, "count": 1}),
                ("board", {"seq": 4, "hand_id": 1, "kind": "board", "cards": ["Qc", "Kh", "2h"]}),
                ("burn", {"seq": 5, "hand_id": 1, "count": 1}),
                ("board", {"seq": 6, "hand_id": 1, "kind": "board", "cards": ["Qc", "Kh", "2h", "4c"]}),
                ("board", {"seq": 6, "hand_id": 1, "kind": "board", "cards": ["Qc", "Kh", "2h", "4c"]}),
                ("burn", {"seq": 7, "hand_id": 1, "count": 1})]
        with rec.lock:
            rec.records += [Record(time.monotonic(), root + kind, json.dumps(p).encode()) for kind, p in feed]
        count = lambda: rec.cards(root + "card", (root + "burn", root + "board"))  # noqa: E731
        assert count() == 2 + 3 + 4  # two hole cards, three burns, the board of four (not 3 + 4 + 4)
        with rec.lock:
            rec.records.append(Record(time.monotonic(), root + "board", json.dumps(
                {"seq": 8, "hand_id": 1, "kind": "board", "cards": ["Qc", "Kh", "2h", "4c", "4d"]}).encode()))
            rec.records.append(Record(time.monotonic(), root + "board", json.dumps(
                {"seq": 20, "hand_id": 2, "kind": "board", "cards": ["As", "Ad", "Ah"]}).encode()))
        assert count() == 2 + 3 + 5 + 3  # the river makes five; the next hand's flop counts anew
    finally:
        rec.close()
