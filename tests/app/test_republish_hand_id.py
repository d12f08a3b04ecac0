"""A restart republishes what the broker never acknowledged under the hand it belongs to.

The 200-hand fault bench saw it (hand 196 of seed 26): a ``kill -9`` right after a new hand began,
with the delivered cursor still inside the hand before (it is stored a moment after the broker's
acknowledgement); the restart republished that hand's last board and its end stamped with the hand
in play.  The display and the console got an ``event/board`` naming the new hand and listing the
old board, three of whose cards were face down in the new hand (the cards had been shuffled and
dealt again): a board the new hand never had, and to anyone reading it, that hand's hole cards.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path

from controller.demo.config import demo_config
from controller.journal import Journal
from controller.mqtt.contract import Topics
from controller.rules.cards import Card
from controller.rules.events import Act, BoardCards, Burn, Deal, NewHand, SeatPlayer, SetButton
from controller.rules.table import Table
from controller.service import TableService
from tests.mqtt_util import Client, require_mosquitto, start_daemon, wait_until

require_mosquitto()

T = Topics("poker", "t1")
FLOP = ("8s", "Th", "Ad")
CARD = re.compile(r"\b[2-9TJQKA][cdhs]\b")


def c(text: str) -> Card:
    return Card.parse(text)


def _journal_cut_by_a_kill(path: Path, broker_port: int) -> tuple[dict[int, int], set[str]]:
    """Hand 1 to its end over a flop, then hand 2 dealt with the flop's cards among its hole cards;
    the delivered cursor left just before hand 1's flop, as a ``kill -9`` leaves it.  Returns the
    hand of every seq from hand 1's start, and hand 2's face-down cards."""
    cfg = demo_config("t1", size=6, journal=path, mqtt_url=f"mqtt://127.0.0.1:{broker_port}", broadcast_delay=0)
    hand_of: dict[int, int] = {}
    with Journal(path) as journal:
        svc = TableService(Table(**cfg.table_kwargs()), journal=journal)

        def submit(event) -> None:
            svc.submit(event, source="rfid")
            if svc.engine is not None:
                hand_of[svc.seq] = svc.hand_id

        for seat in (1, 2, 3, 4):
            submit(SeatPlayer(seat, f"p{seat}"))
        submit(SetButton(4))
        submit(NewHand())
        for i, card in enumerate(["Ah", "Kd", "Qs", "Jc", "9h", "9d", "7s", "7c"]):
            submit(Deal(i % 4 + 1, c(card), source="rfid"))
        for seat, action in ((3, "call"), (4, "call"), (1, "call"), (2, "check")):
            submit(Act(seat, action))
        submit(Burn(c("2c")))
        journal.mark_published(svc.seq)  # the broker had everything up to the flop
        submit(BoardCards(tuple(c(x) for x in FLOP), source="rfid"))
        for seat, action in ((1, "bet"), (2, "fold"), (3, "fold"), (4, "fold")):
            submit(Act(seat, action))
        assert svc.engine is not None and svc.engine.over
        submit(NewHand())
        hand2 = ["8s", "5d", "Th", "4c", "Ad", "3h", "2s", "6c"]  # the flop's cards, shuffled back in
        for i, card in enumerate(hand2):  # the button moved to seat 1: seat 2 gets the first card
            submit(Deal((i + 1) % 4 + 1, c(card), source="rfid"))
        assert svc.hand_id == 2
    return hand_of, set(hand2)


def test_restart_republishes_each_message_under_its_own_hand(tmp_path, broker, passwords) -> None:
    path = tmp_path / "journal.sqlite"
    hand_of, face_down_in_2 = _journal_cut_by_a_kill(path, broker.port)
    display = Client(broker, "display", passwords["display"], name=f"display-{uuid.uuid4().hex[:6]}")
    wait_until(lambda: bool(display.connacks), what="display connected")
    display.subscribe(T.root + "/event/#")
    d = start_daemon(path, broker, passwords)
    try:
        wait_until(lambda: len(display.json(T.event("card"))) == 8, timeout=10, what="hand 2's cards republished")
        events = [json.loads(m.payload) for m in list(display.messages)
                  if m.topic.startswith(T.root + "/event/") and m.payload]
        boards = [e for e in events if e["kind"] == "board"]
        assert boards and all(e["hand_id"] == 1 for e in boards), boards
        wrong = [(e["kind"], e["seq"], e["hand_id"], hand_of[e["seq"]]) for e in events
                 if e["seq"] in hand_of and e["hand_id"] != hand_of[e["seq"]]]
        assert not wrong, f"(kind, seq, stamped, its hand): {wrong}"
        # And so no message naming hand 2 lists a card face down in it (the bench's leak check).
        for e in events:
            if e["hand_id"] == 2:
                assert not set(CARD.findall(json.dumps(e))) & face_down_in_2, e
    finally:
        d.stop()
        display.close()


def test_an_old_hands_end_republished_under_the_end_of_hand_delay_shows_that_hands_state(
        tmp_path, broker, passwords) -> None:
    """Under the end-of-hand delay the overlay gets a hand's state only once it is over.  The
    republished end of hand 1 (its delivered cursor before the flop) used to release the table's
    state of *now* as hand 1's final state: hand 2, in play, on air (its seats, its bets) before it
    was over.  It now releases the state hand 1 ended in, kept while the journal was replayed."""
    path = tmp_path / "journal.sqlite"
    _journal_cut_by_a_kill(path, broker.port)
    display = Client(broker, "display", passwords["display"], name=f"display-{uuid.uuid4().hex[:6]}")
    overlay = Client(broker, "overlay", passwords["overlay"], name=f"overlay-{uuid.uuid4().hex[:6]}")
    wait_until(lambda: bool(display.connacks) and bool(overlay.connacks), what="display and overlay connected")
    display.subscribe(T.root + "/event/#")
    overlay.subscribe(T.root + "/broadcast/#")
    d = start_daemon(path, broker, passwords, delay="end_of_hand")
    try:
        wait_until(lambda: len(display.json(T.event("card"))) == 8, timeout=10, what="hand 2's cards republished")
        wait_until(lambda: any(s.get("hand") is not None for s in overlay.json(T.broadcast("state"))), timeout=10,
                   what="a hand's state on the overlay")
        states = overlay.json(T.broadcast("state"))
        in_play = [s for s in states if s.get("hand") is not None and s.get("hand_id") == 2]
        assert not in_play, f"hand 2's state on air before it was over: {in_play[0]}"
        [final] = [s for s in states if s.get("hand_id") == 1]
        assert tuple(final["hand"]["board"]) == FLOP, final["hand"]
        assert final["hand"]["seats"]["1"]["cards"] == 2, final["hand"]["seats"]  # hand 1's seats, not hand 2's
    finally:
        d.stop()
        display.close()
        overlay.close()


def test_an_old_hands_end_republished_with_a_delay_in_seconds_clears_only_its_own_secret(
        tmp_path, broker, passwords) -> None:
    """With a delay in seconds, a hand's end clears the overlay's retained hole cards after its final
    state.  Republished behind the next hand's hole cards (the same restart's batch), that clear came
    after them and wiped hand 2's retained copy: an overlay opened during hand 2 showed none."""
    path = tmp_path / "journal.sqlite"
    _journal_cut_by_a_kill(path, broker.port)
    d = start_daemon(path, broker, passwords, delay=1)
    try:
        time.sleep(2.5)  # the delay passes: what was queued is out
        late = Client(broker, "overlay", passwords["overlay"], name=f"overlay-{uuid.uuid4().hex[:6]}")
        wait_until(lambda: bool(late.connacks), what="overlay connected")
        late.subscribe(T.broadcast("holecards"))
        wait_until(lambda: bool(late.payloads(T.broadcast("holecards"))), timeout=5, what="the retained hole cards")
        [retained] = late.payloads(T.broadcast("holecards"))
        assert retained, "hand 2's hole cards were cleared by hand 1's republished end"
        assert json.loads(retained)["hand_id"] == 2
        late.close()
    finally:
        d.stop()
