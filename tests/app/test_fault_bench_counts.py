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


def test_the_dealer_enters_the_cards_he_pitched_that_the_display_does_not_show() -> None:
    """After 8 s without the table showing a card he pitched (and no question from it), the bench's
    dealer names it (``request/confirm``), as a dealer does: the river the table never heard of."""
    from types import SimpleNamespace

    from controller.bench.faults import HandLog, Pitched, confirm_missing

    sent: list[tuple[str, dict]] = []
    hand = {"seats": {"1": {"cards": 2}, "2": {"cards": 2}}, "burns": 3, "board": ["Qs", "Jh", "Tc", "9d"]}
    rig = SimpleNamespace(
        topics=SimpleNamespace(state="poker/t1/state"),
        watch={"display": SimpleNamespace(parsed=lambda topic: [{"hand": hand}])},
        console=SimpleNamespace(request=lambda name, fields: sent.append((name, fields)) or {"ok": True}))
    pitched = Pitched(1, [("seat:1", "Ah"), ("seat:2", "Kd"), ("seat:1", "Ac"), ("seat:2", "Kc"),
                          ("burn", "2c"), ("board", "Qs"), ("board", "Jh"), ("board", "Tc"),
                          ("burn", "3c"), ("board", "9d"), ("burn", "4c"), ("board", "8h")])
    log = HandLog(0, "holdem", "corrupt")
    assert confirm_missing(rig, pitched, log)  # type: ignore[arg-type]
    assert sent == [("confirm", {"cards": [{"to": "board", "card": "8h"}]})]
    hand["board"] = [*hand["board"], "8h"]
    assert not confirm_missing(rig, pitched, log)  # type: ignore[arg-type] - nothing missing: nothing sent
    assert len(sent) == 1 and not log.refused


def test_a_confirm_giving_every_seat_as_many_cards_counts_each_card_and_a_repeat_once() -> None:
    """The dealer's ``request/confirm`` of two cards to each of two seats gives four ``event/card``
    under one seq, two per seat: alike copies per seat, which the count took for a repeat (two
    cards, so the dealer waited 8 s for cards the display showed).  The answer to his confirm
    names the seq and its outputs: the cards he named, all taken, are counted; a repeat once."""
    from types import SimpleNamespace

    from controller.bench.faults import HandLog, Pitched, confirm_missing

    rec = _recorder()
    try:
        root = "poker/t1/event/"
        count = lambda: rec.cards(root + "card", (root + "burn", root + "board"))  # noqa: E731
        confirm = [{"seq": 9, "hand_id": 1, "seat": seat} for seat in (1, 2, 1, 2)]
        with rec.lock:
            rec.records += [Record(time.monotonic(), root + "card", json.dumps(p).encode()) for p in confirm]
        assert count() == 2  # unknown yet: alike copies per seat may be a repeat (never counted more)
        hand = {"seats": {"1": {"cards": 0}, "2": {"cards": 0}}, "burns": 0, "board": []}
        answer = {"ok": True, "result": {"seq": 9, "outputs": ["card", "card", "card", "card", "holecards"]}}
        rig = SimpleNamespace(topics=SimpleNamespace(state="poker/t1/state"), ctl=rec,
                              watch={"display": SimpleNamespace(parsed=lambda topic: [{"hand": hand}])},
                              console=SimpleNamespace(request=lambda name, fields: answer))
        pitched = Pitched(1, [("seat:1", "Ah"), ("seat:2", "Kd"), ("seat:1", "Ac"), ("seat:2", "Kc")])
        assert confirm_missing(rig, pitched, HandLog(0, "holdem", "stall"))  # type: ignore[arg-type]
        assert count() == 4
        with rec.lock:  # the controller's outbox sends them all again after an outage
            rec.records += [Record(time.monotonic(), root + "card", json.dumps(p).encode()) for p in confirm]
        assert count() == 4
        # A confirm the table did not take whole (it had one of each seat's cards already: skipped)
        # is not known per seat: its one card per seat, then a repeat, count two, never four.
        answer["result"] = {"seq": 12, "outputs": ["card", "card", "holecards"]}
        assert confirm_missing(rig, pitched, HandLog(0, "holdem", "stall"))  # type: ignore[arg-type]
        with rec.lock:
            rec.records += [Record(time.monotonic(), root + "card", json.dumps(
                {"seq": 12, "hand_id": 1, "seat": seat}).encode()) for seat in (1, 2, 1, 2)]
        assert count() == 4 + 2
    finally:
        rec.close()


def test_the_dealer_answers_a_question_that_comes_while_he_waits_for_the_end() -> None:
    """The 200-hand run on d940dfc, hand 75: all in, every card pitched; the table's "order unknown:
    confirm" of the flop reached the display (a broker outage) after his last card, and the dealer,
    waiting for the hand's end, never answered it: the table waited and the hand went unfinished."""
    from types import SimpleNamespace

    from controller.bench.faults import HandLog, Pitched, wait_for_the_end

    sent: list[tuple[str, dict]] = []
    hand = {"seats": {"1": {"cards": 2}, "2": {"cards": 2}}, "burns": 1, "board": []}
    ends: list[dict] = []
    alerts = [{"reason": "order_unknown", "seq": 12}]

    def request(name: str, fields: dict) -> dict:
        sent.append((name, fields))
        ends.append({"seq": 13})  # the table has its flop: the hand runs out to its end
        return {"ok": True, "result": {"seq": 13, "outputs": ["board"]}}

    topics = SimpleNamespace(state="poker/t1/state", alert="poker/t1/alert")
    rig = SimpleNamespace(
        topics=topics, confirms=0, card_count=lambda: 7, events=lambda kind: ends,
        watch={"display": SimpleNamespace(parsed=lambda t: alerts if t == topics.alert else [{"hand": hand}])},
        console=SimpleNamespace(request=request))
    pitched = Pitched(1, [("seat:1", "Ah"), ("seat:2", "Kd"), ("seat:1", "Ac"), ("seat:2", "Kc"),
                          ("burn", "2c"), ("board", "Th"), ("board", "Ks"), ("board", "3h")])
    assert wait_for_the_end(rig, 1, pitched, HandLog(74, "holdem", "outage"), timeout=8)  # type: ignore[arg-type]
    assert sent == [("confirm", {"cards": [{"to": "board", "card": c} for c in ("Th", "Ks", "3h")]})]


def test_a_page_check_the_benchs_own_kill_overlaps_waits_for_the_restarted_daemon() -> None:
    """The 200-hand runs' one page "not answering after a flood": the flood (slow to open, its
    connections waiting for SYN retries) ran into the next hand's kill -9, and the check's 10 s
    ran out while the daemon the bench had killed was still restarting (restarts took up to 17 s).
    A restart begun during the check now starts its clock again from the new daemon's ``online``;
    and every failed try is recorded with its error."""
    import threading
    from types import SimpleNamespace

    from controller.app.webserver import DEFAULT_ROOT, WebServer
    from controller.bench.faults import Restart, Rig

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    restarts: list[Restart] = []
    servers: list[WebServer] = []

    def kill_and_restart() -> None:  # the page's daemon is down at the check; a restart begins, 1.5 s
        time.sleep(0.1)
        restart = Restart(time.monotonic())
        restarts.append(restart)
        time.sleep(1.5)
        servers.append(WebServer(DEFAULT_ROOT, port=port, pages=("display",)))
        restart.online = time.monotonic()

    rig = SimpleNamespace(restarts=restarts, proc=None, pid=lambda: None)
    thread = threading.Thread(target=kill_and_restart)
    thread.start()
    try:
        check = Rig.page_answers(rig, url, 1.0)  # type: ignore[arg-type]
    finally:
        thread.join()
        for server in servers:
            server.stop()
    assert check["answered_after_s"] is not None and check["answered_after_s"] >= 1.5, check
    assert check["restarts_begun_during_the_check"] == 1, check
    assert any("ConnectionRefusedError" in e for e in check["errors"]), check  # while it was down
    # Without a restart, a page that does not answer is reported, with its errors and its port's state.
    down = Rig.page_answers(SimpleNamespace(restarts=[], proc=None, pid=lambda: None), url, 0.5)  # type: ignore[arg-type]
    assert down["answered_after_s"] is None and down["tries"] >= 1 and "port_tcp_states" in down, down
