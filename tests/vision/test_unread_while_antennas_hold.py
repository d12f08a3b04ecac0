"""A card is "unread" (the ``card_unread`` irregularity, RRoP s3 Irregularities 3: the dealer must
identify it; a hand then short of it is misdealt, RRoP s3 Misdeals 1(e)) only when neither its tag
nor the camera named it.  Under load (load 16-20 on two cores) the 60-hand dead-tag demo raised it
for face-down hole cards whose tags the antennas had read but held back: the board was rebooting
after a missed heartbeat, or two cards of unknown order waited for the dealer's answer and the
arrivals after them with them.  The camera, which can never name a face-down card, counted those
seconds as its own failure.  Here the clock is advanced by hand and the camera's frames come late
(a slow recogniser: each frame observed well after it was captured)."""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np

from controller.geometry import Zone
from controller.rules.cards import Card
from firmware_bridge.emulator import Emulator
from firmware_bridge.fusion import OrderUnknown
from firmware_bridge.link import BridgeLink, LinkConfig
from firmware_bridge.zones import ZoneChange
from tests.bridge.fusion_util import fusion_of
from tests.fakes import ManualClock
from vision.fallback import CameraCard, CameraFallback, UnreadCard
from vision.recognizer import Detection
from vision.source import antennas_hold_tags

SEAT1 = Zone("seat", 1)
BOARD = Zone("board")


def _down() -> dict[Zone, list[Detection]]:
    quad = np.array([[240, 400], [360, 400], [360, 570], [240, 570]], np.float32)
    return {SEAT1: [Detection(None, 0.0, quad, "down", None, SEAT1, None)]}


def _slow_frames(fb: CameraFallback, clock: ManualClock, seconds: float, held: bool = False,
                 lag: float = 0.6, period: float = 0.2) -> list[object]:
    """Frames every ``period`` for ``seconds``, each observed ``lag`` after its capture (the
    recogniser is slow); ``held``: the antennas hold tags back meanwhile."""
    out: list[object] = []
    for _ in range(round(seconds / period)):
        clock.advance(period)
        if held:
            fb.tags_held()
        out += fb.observe(_down(), now=clock() - lag) + fb.poll()
    return out


def test_a_hole_card_whose_tag_the_antennas_hold_is_not_unread() -> None:
    clock = ManualClock()
    fb = CameraFallback([SEAT1], tag_timeout=1.2, clock=clock, expect_face={SEAT1: "down"})
    # The board reboots for 6 s (five times the unread time-out) while the card lies face down.
    assert _slow_frames(fb, clock, 6.0, held=True) == []
    # Back in sync, its inventory reports the card a second later: a tag, no alert ever.
    assert _slow_frames(fb, clock, 1.0) == []
    assert fb.tag_read(SEAT1, Card.parse("Ts")) == []
    assert _slow_frames(fb, clock, 5.0) == []


def test_an_untagged_card_is_unread_only_after_the_hold_and_fresh_frames() -> None:
    clock = ManualClock()
    fb = CameraFallback([SEAT1], tag_timeout=1.0, clock=clock, expect_face={SEAT1: "down"})
    assert _slow_frames(fb, clock, 4.0, held=True) == []
    released = clock()
    # Frames captured during the hold but recognised after it are no chance for the camera.
    for _ in range(6):
        clock.advance(0.05)
        assert fb.observe(_down(), now=released - 0.1) + fb.poll() == []
    out = _slow_frames(fb, clock, 3.0, lag=0.1)
    (alert,) = out  # the tag never came: unread, once, two time-outs after the hold
    assert isinstance(alert, UnreadCard) and alert.face == "down" and alert.t >= released + 2.0


def test_without_a_hold_the_unread_alert_is_unchanged() -> None:
    clock = ManualClock()
    fb = CameraFallback([SEAT1], tag_timeout=1.0, clock=clock, expect_face={SEAT1: "down"})
    out = _slow_frames(fb, clock, 3.0, lag=0.1)
    (alert,) = out
    assert isinstance(alert, UnreadCard) and 100.0 + 2.0 <= alert.t <= 100.0 + 2.4


def test_antennas_hold_tags_reads_the_link_and_the_dealers_question() -> None:
    fusion = fusion_of({"Qc": "01", "Kh": "02"})
    with Emulator(8) as emu, BridgeLink(emu.url, LinkConfig()) as link:
        rfid = SimpleNamespace(bridge=link, pipeline=SimpleNamespace(fusion=fusion))
        assert link.wait_synced(10)
        assert not antennas_hold_tags(rfid)
        # Two cards of unknown order (a stall): the dealer is asked, their tags wait for him.
        for uid, slot in (("01", 0), ("02", 1)):
            fusion.feed(ZoneChange(uid, SEAT1, True, slot, 100.0, False))
        fusion.poll(101.0)
        assert fusion.awaiting and antennas_hold_tags(rfid)
        fusion.confirmed({Card.parse("Qc"): "seat:1", Card.parse("Kh"): "seat:1"})
        assert not antennas_hold_tags(rfid)
        emu.unplug(5.0)  # the port vanishes: out of sync until the board is back and replayed
        deadline = time.monotonic() + 5.0
        while link.health().synced and time.monotonic() < deadline:
            time.sleep(0.02)
        assert antennas_hold_tags(rfid)
    assert not antennas_hold_tags(None)  # no antennas: nothing is held


def test_cards_of_unknown_order_are_tags_the_camera_heard_of() -> None:
    """The dealer's answer to the order question reaches the engine from the console, never the
    camera: the question itself tells it that the antennas read those tags.  Asked again, the same
    cards are not a second pair of tags (a spare tag in a zone could be called a mismatch)."""
    clock = ManualClock()
    fb = CameraFallback([SEAT1], tag_timeout=1.0, clock=clock, expect_face={SEAT1: "down"})
    quads = [np.array([[x - 60, 400], [x + 60, 400], [x + 60, 570], [x - 60, 570]], np.float32) for x in (300, 500)]
    two_down = {SEAT1: [Detection(None, 0.0, q, "down", None, SEAT1, None) for q in quads]}
    question = OrderUnknown(((SEAT1, Card.parse("Ts")), (SEAT1, Card.parse("9d"))))
    out: list[object] = []
    for i in range(30):  # 6 s of frames, the question once and again
        clock.advance(0.2)
        if i in (3, 12):
            out += fb.note_events([question])
        out += fb.observe(two_down, now=clock() - 0.3) + fb.poll()
    assert out == []


def _up(card: str | None) -> dict[Zone, list[Detection]]:
    quad = np.array([[840, 300], [960, 300], [960, 470], [840, 470]], np.float32)
    return {BOARD: [Detection(None if card is None else Card.parse(card), 0.95 if card else 0.0, quad, "up", None,
                              BOARD, None)]}


def test_a_frame_the_scene_gate_reused_is_no_look() -> None:
    """On a still table the scene gate hands the last recognition's cards on for every frame: one
    reading repeated is no second vote (a misread would become a card the camera deals), and one
    unsure look repeated is no proof the camera cannot read the card.  Meanwhile the camera loop
    asks for a real look (``wants_look``) for as long as a card waits for its verdict."""
    clock = ManualClock()
    fb = CameraFallback([BOARD], tag_timeout=1.0, clock=clock)
    assert fb.observe(_up("Kd")) == [] and fb.wants_look()
    for _ in range(20):  # 4 s of the same recognition, reused
        clock.advance(0.2)
        assert fb.observe(_up("Kd"), looked=False) + fb.poll() == []
    clock.advance(0.2)
    (filled,) = fb.observe(_up("Kd"))  # a second look agrees: the camera names the card
    assert isinstance(filled, CameraCard) and filled.card.face == "Kd" and not fb.wants_look()

    fb = CameraFallback([BOARD], tag_timeout=1.0, clock=clock)
    fb.observe(_up(None))  # one unsure look (the card half drawn), then reused
    for _ in range(20):
        clock.advance(0.2)
        assert fb.observe(_up(None), looked=False) + fb.poll() == []
    out: list[object] = []
    for _ in range(3):  # real looks, none can read it: now it is unread
        clock.advance(0.2)
        out += fb.observe(_up(None)) + fb.poll()
    (alert,) = out
    assert isinstance(alert, UnreadCard) and alert.face == "up"


def test_a_tag_whose_card_the_slow_camera_never_saw_is_no_mismatch_with_a_filled_in_card() -> None:
    """The demo under load: the turn's tag was dead and the camera filled it in (Ac); the river's
    tag (Ts) was read and the hand ended before the slow camera saw the river.  The Ts tag waited
    in vain, and was placed on the Ac the camera had named and reported: a false mismatch alert."""
    clock = ManualClock()
    fb = CameraFallback([BOARD], tag_timeout=1.0, clock=clock)
    fb.observe(_up("Ac"))
    clock.advance(0.6)
    fb.observe(_up("Ac"))
    clock.advance(0.6)
    (filled,) = fb.observe(_up("Ac")) + fb.poll()
    assert isinstance(filled, CameraCard) and filled.card.face == "Ac"
    assert fb.tag_read(BOARD, Card.parse("Ts")) == []  # the river, never in a frame
    out: list[object] = []
    for _ in range(10):
        clock.advance(0.3)
        out += fb.observe(_up("Ac")) + fb.poll()
    assert out == []
