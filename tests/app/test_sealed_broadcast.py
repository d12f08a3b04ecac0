"""A delay nobody can beat: a whole session verified from the public and broadcast topics alone.

The daemon runs on a real Mosquitto with the shipped ACL.  Two readers stand outside the table:
the display's login (public topics: the commitments, ``event/hand_end``) and the overlay's
(``broadcast/#``).  What they received, and when, is all :class:`BroadcastVerifier` sees; it
opens every sealed snapshot with its key, checks no key came before its delay, and checks every
seat's cards against the commitment made before the snapshot went out.  The delay changes twice
during the session (seconds -> end of hand -> seconds) without a hand lost or a key early.
"""

from __future__ import annotations

import json
import threading
import time
import uuid

from controller.mqtt.contract import Topics, validate
from controller.mqtt.sealed import BroadcastVerifier, b64, unb64
from controller.rules.cards import Card
from controller.rules.events import Act, Deal, NewHand, SeatPlayer, SetButton
from tests.mqtt_util import Client, require_mosquitto, start_daemon, wait_until

require_mosquitto()

TABLE = "t1"
T = Topics("poker", TABLE)
DELAY = 2  # the switch below is journaled (a disk flush) before it applies: room for a loaded machine


class Reader:
    """One login outside the table, recording (received, relative topic, payload)."""

    def __init__(self, broker, passwords, role: str, topics: list[str]) -> None:
        self.got: list[tuple[float, str, bytes]] = []
        self.lock = threading.Lock()
        self.client = Client(broker, role, passwords[role], name=f"{role}-{uuid.uuid4().hex[:6]}")
        self.client.connected()
        self.client.c.on_message = self._on
        for t in topics:
            self.client.subscribe(t)

    def _on(self, c, u, m) -> None:
        with self.lock:
            self.got.append((time.monotonic(), m.topic[len(T.root) + 1:], m.payload))

    def on(self, rel: str) -> list[tuple[float, dict]]:
        with self.lock:
            return [(t, json.loads(p)) for t, r, p in self.got if r == rel and p]

    def wait_all_out(self, hands: int, what: str) -> None:
        """Until ``hands`` hands' salts are out (``broadcast/reveal``) and a key for every sealed snapshot."""
        wait_until(lambda: len(self.on("broadcast/reveal")) == hands, timeout=15, what=what)
        wait_until(lambda: len(self.on("broadcast/key")) == len(self.on("broadcast/sealed")), timeout=10,
                   what="every key")


def _deal(d, cards: list[str]) -> None:
    d.submit(NewHand())
    for card in cards:  # each to the seat the dealing order says (left of the button first)
        d.submit(Deal(d.service.engine.snapshot()["next_seat"], Card.parse(card), source="rfid"))


def _fold_out(d) -> None:
    while not d.service.engine.over:  # everyone but the big blind folds in turn
        d.submit(Act(d.service.engine.to_act, "fold"))


def test_a_whole_session_verifies_from_the_public_and_broadcast_topics_alone(tmp_path, broker, passwords) -> None:
    public = Reader(broker, passwords, "display", [T.commitment, T.event("hand_end")])
    chain = Reader(broker, passwords, "overlay", [T.root + "/broadcast/#"])
    d = start_daemon(tmp_path / "journal.sqlite", broker, passwords, delay=DELAY)
    try:
        for seat in (1, 2, 3, 4):
            d.submit(SeatPlayer(seat, f"p{seat}"))
        d.submit(SetButton(4))
        hands = [["Ah", "Kd", "Qs", "Jc", "Th", "9d", "8s", "7c"],
                 ["2h", "3d", "4s", "5c", "6h", "7d", "8h", "9c"],
                 ["As", "Ks", "Qh", "Jd", "Ts", "9h", "8d", "7s"]]
        _deal(d, hands[0])
        _fold_out(d)
        # Hand 2: dealt under the 2 s delay, which becomes end_of_hand before its keys are due.
        _deal(d, hands[1])
        wait_until(lambda: any(m["hand_id"] == 2 for _t, m in chain.on("broadcast/sealed")), what="hand 2 sealed")
        d.set_broadcast_delay("end_of_hand")
        switched = time.monotonic()
        time.sleep(DELAY + 0.5)  # past the 2 s the keys were sealed with: they must still be held
        held = [m for t, m in chain.on("broadcast/key") if m["hand_id"] == 2]
        assert not held, f"{len(held)} keys of hand 2 left before its end, after a switch to end_of_hand"
        _fold_out(d)
        # Hand 3: dealt under end_of_hand, back to 1 s before it ends (held until its end, then out).
        _deal(d, hands[2])
        wait_until(lambda: any(m["hand_id"] == 3 for _t, m in chain.on("broadcast/sealed")), what="hand 3 sealed")
        d.set_broadcast_delay(DELAY)
        _fold_out(d)
        chain.wait_all_out(3, "the three hands' salts")
    finally:
        d.stop()
        public.client.close()
        chain.client.close()

    # Every payload follows its schema (controller/mqtt/schemas).
    names = {"commitment": "commitment", "broadcast/sealed": "broadcast_sealed", "broadcast/key": "broadcast_key",
             "broadcast/reveal": "broadcast_reveal"}
    checked = 0
    for _t, rel, payload in public.got + chain.got:
        if rel in names and payload:
            validate(names[rel], json.loads(payload))
            checked += 1
    assert checked >= 3 * 4

    verifier = BroadcastVerifier(TABLE)
    for t, rel, payload in sorted(public.got + chain.got):
        verifier.feed(rel, payload, t)
    report = verifier.report()
    assert report["ok"], report
    # Several cards dealt at once go out as one snapshot (the state's debounce): at least one a hand.
    assert report["deals"] == 3 and report["opened"] == report["snapshots"] >= 3
    assert report["seats_verified"] >= 3 * 4 and report["commitments"] >= 3 * 4
    # What went on air, opened and checked against the commitments, is what was dealt.
    for hand_id, cards in enumerate(hands, start=1):
        shown = report["last_shown"][hand_id]
        assert sorted(c for seat in shown.values() for c in seat) == sorted(cards)
    # Hand 2's keys waited for its end (the switch), none before; hand 3's too.
    end2 = next(t for t, m in public.on("event/hand_end") if m["hand_id"] == 2)
    assert all(t >= end2 - 0.05 and t > switched + DELAY for t, m in chain.on("broadcast/key") if m["hand_id"] == 2)
    # Hand 3's snapshots sealed under end_of_hand waited for its end, though the delay became 1 s
    # before it (one sealed after the switch, a moment later, carries 1 s: the verifier held it to that).
    end3 = next(t for t, m in public.on("event/hand_end") if m["hand_id"] == 3)
    under_end = {m["seq"] for t, m in chain.on("broadcast/sealed") if m["hand_id"] == 3 and m["delay"] == "hand_end"}
    assert under_end
    assert all(t >= end3 - 0.05 for t, m in chain.on("broadcast/key") if m["seq"] in under_end)
    last = max(chain.on("broadcast/sealed"), key=lambda x: x[1]["seq"])[1]
    assert last["alg"] == "AES-256-GCM"
    # Nothing public or on the chain carries a hole card in the clear, but the delayed copy.
    for _t, rel, payload in public.got + [g for g in chain.got if g[1] != "broadcast/holecards"]:
        for card in hands[2]:
            assert f'"{card}"'.encode() not in payload, (rel, card)

    # The same streams, altered: the verifier says so.
    forged = BroadcastVerifier(TABLE)
    for t, rel, payload in sorted(public.got + chain.got):
        if rel == "broadcast/sealed" and payload:
            msg = json.loads(payload)
            if msg["seq"] == last["seq"]:
                ct = bytearray(unb64(msg["ciphertext"]))
                ct[0] ^= 1
                payload = json.dumps(dict(msg, ciphertext=b64(bytes(ct)))).encode()
        if rel == "commitment" and payload:
            msg = json.loads(payload)
            payload = json.dumps(dict(msg, seats={s: "0" * 64 for s in msg["seats"]})).encode()
        forged.feed(rel, payload, t)
    bad = forged.report()
    assert not bad["ok"] and bad["tampered"] == 1  # the snapshot does not open: its 4 seats are not checked
    assert bad["mismatched"] == report["seats_verified"] - 4 and bad["seats_verified"] == 0
    assert bad["problems"]
