"""Camera recognition: synthetic cards, frames, the fallback logic, labels and calibration.

The full measurement (2,080 held-back cards) is ``vision.run_bench()``; these tests use
small samples and assert the targets with margin.
"""

from __future__ import annotations

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")
pytest.importorskip("PIL")

from controller.rules.cards import Card, standard_deck  # noqa: E402
from controller.rules.decks import Deck, DeckRegistry  # noqa: E402
from controller.rules.events import Deal, Expose  # noqa: E402
from firmware_bridge.fusion import Fusion  # noqa: E402
from firmware_bridge.zones import Zone  # noqa: E402
from tests.fakes import ManualClock as Clock  # noqa: E402
from vision import (  # noqa: E402
    CameraCard,
    CameraFallback,
    CameraLayout,
    CameraMismatch,
    Detection,
    ExposedCard,
    LabelStore,
    Recognizer,
    UnreadCard,
    capture_reference,
    recognize_files,
)
from vision.synth import SyntheticCamera, card_scene, synthetic_layout  # noqa: E402

SEAT1 = Zone("seat", 1)
BOARD = Zone("board")


@pytest.fixture(scope="module")
def rec() -> Recognizer:
    return Recognizer.stock()


def C(text: str) -> Card:
    return Card.parse(text)


# -- the recogniser ------------------------------------------------------------------------
def test_held_back_sample_meets_targets_with_margin(rec: Recognizer) -> None:
    deck = standard_deck()
    n = 208  # four decks, held-back fonts, seeds outside both training and run_bench
    ok = wrong = unknown = 0
    for i in range(n):
        s = card_scene(deck[i % 52], 7_000_000 + i, split="test")
        det = rec.recognize_crop(s.bgr)
        if det is None or det.card is None:
            unknown += 1
        elif det.card.face == deck[i % 52].face:
            ok += 1
        else:
            wrong += 1
    assert ok / n >= 0.97, (ok, wrong, unknown)
    assert wrong <= 1, (ok, wrong, unknown)
    # time per crop (< 10 ms) is measured by `tablectl bench vision`, not here: a shared CPU makes timed tests flaky


def test_detection_has_box_confidence_and_json(rec: Recognizer) -> None:
    s = card_scene(C("Qh"), 11, split="test", cover=0.0)
    dets = rec.recognize(s.bgr)
    assert len(dets) == 1
    d = dets[0].to_dict()
    assert d["card"] == "Qh" and 0.5 <= d["confidence"] <= 1.0 and d["face"] == "up"
    x, y, w, h = d["box"]
    qx, qy = s.quads[0][:, 0], s.quads[0][:, 1]
    assert abs(x - qx.min()) < 8 and abs(y - qy.min()) < 8 and abs(x + w - qx.max()) < 8


def test_unknown_rather_than_guess_on_a_blank_card(rec: Recognizer) -> None:
    img = np.full((280, 200, 3), 245, np.uint8)
    r = rec.read(img)
    assert r.card is None and r.face == "up"


def test_frame_scan_sorts_cards_into_zones_and_sees_face_down(rec: Recognizer) -> None:
    cam = SyntheticCamera(seed=5)
    layout = synthetic_layout(seat_face="down")
    s = cam.frame({"board/0": C("Ah"), "board/1": C("Td"), "board/2": C("7c"),
                   "seat:1/0": (C("Ks"), "down"), "seat:2/1": C("3h")})
    seen = rec.scan(s.bgr, layout)
    board = sorted(d.slot for d in seen[BOARD])
    assert board == [0, 1, 2]
    faces = {d.slot: d.card.face for d in seen[BOARD] if d.card is not None}
    assert sum(faces.get(i) == f for i, f in enumerate(["Ah", "Td", "7c"])) >= 2
    assert all(faces.get(i) in (None, f) for i, f in enumerate(["Ah", "Td", "7c"]))  # never a wrong card
    (down,) = seen[SEAT1]
    assert down.face == "down" and down.card is None
    (up,) = seen[Zone("seat", 2)]
    assert up.face == "up" and up.card in (None, C("3h"))


def test_seven_cards_per_1280x720_frame_found(rec: Recognizer) -> None:
    """Frame rate is measured by ``tablectl bench vision`` (a timed test would be flaky on a shared CPU)."""
    cam = SyntheticCamera(seed=9)
    frames = [cam.random_frame(7) for _ in range(4)]
    found = sum(len([d for d in rec.recognize(f.bgr) if d.card is not None or d.face == "down"]) for f in frames)
    assert frames[0].image.shape == (720, 1280, 3)
    assert found >= 26


def test_recognize_files(tmp_path, rec: Recognizer) -> None:
    s = card_scene(C("9s"), 3, split="test", cover=0.0)
    good = tmp_path / "card.png"
    cv2.imwrite(str(good), s.bgr)
    bad = tmp_path / "nope.png"
    bad.write_bytes(b"not an image")
    out = list(recognize_files([good, bad], rec))
    assert out[0]["file"] == str(good) and set(out[0]) >= {"file", "card", "confidence", "box"}
    assert out[0]["card"] in ("9s", None)
    assert out[-1]["file"] == str(bad) and out[-1]["card"] is None and "error" in out[-1]


def test_layout_round_trip() -> None:
    layout = CameraLayout.from_dict({"board/0": [10, 20, 100, 150],
                                     "seat:3": {"rect": [0, 400, 300, 200], "expect_face": "down"}})
    assert layout.locate(50, 50).slot == 0
    assert layout.locate(10, 500).zone == Zone("seat", 3)
    assert layout.expect_face(Zone("seat", 3)) == "down"
    assert CameraLayout.from_dict(layout.to_dict()) == layout


def test_synthetic_data_is_seeded() -> None:
    a, b = card_scene(C("Jc"), 42), card_scene(C("Jc"), 42)
    assert np.array_equal(a.image, b.image)
    assert not np.array_equal(a.image, card_scene(C("Jc"), 43).image)
    f = SyntheticCamera(seed=1).random_frame(7)
    assert f.image.shape == (720, 1280, 3) and len(f.cards) == 7 and len(set(f.cards)) == 7


# -- the fallback (pure) -------------------------------------------------------------------
def det(card: str | None, zone: Zone = SEAT1, x: float = 300, face: str = "up", conf: float = 0.95) -> Detection:
    quad = np.array([[x - 60, 400], [x + 60, 400], [x + 60, 570], [x - 60, 570]], np.float32)
    return Detection(None if card is None else C(card), conf if card else 0.0, quad, face, None, zone, None)


def test_dead_tag_is_filled_by_the_camera() -> None:
    clock = Clock()
    fb = CameraFallback([SEAT1], tag_timeout=1.5, clock=clock)
    assert fb.observe({SEAT1: [det("Ah")]}) == []
    clock.advance(0.1)
    assert fb.observe({SEAT1: [det("Ah")]}) == []
    clock.advance(1.0)
    assert fb.poll() == []
    clock.advance(0.5)
    (out,) = fb.poll()
    assert isinstance(out, CameraCard) and out.zone == SEAT1 and out.card == C("Ah")
    clock.advance(1.0)
    assert fb.poll() == []  # once


def test_tag_read_in_time_means_no_camera_card_and_agreement_is_silent() -> None:
    clock = Clock()
    fb = CameraFallback([SEAT1], clock=clock)
    fb.observe({SEAT1: [det("Ah")]})
    clock.advance(0.3)
    assert fb.tag_read(SEAT1, C("Ah")) == []
    fb.observe({SEAT1: [det("Ah")]})
    clock.advance(5)
    assert fb.poll() == []


def test_tag_before_the_camera_sees_the_card() -> None:
    clock = Clock()
    fb = CameraFallback([BOARD], clock=clock)
    assert fb.tag_read("board", C("7c")) == []
    clock.advance(0.2)
    fb.observe({BOARD: [det("7c", BOARD)]})
    fb.observe({BOARD: [det("7c", BOARD)]})
    clock.advance(5)
    assert fb.poll() == []


def test_rfid_and_camera_disagree_raise_an_alert() -> None:
    clock = Clock()
    fb = CameraFallback([BOARD], clock=clock)
    fb.observe({BOARD: [det("Kd", BOARD)]})
    clock.advance(0.1)
    fb.observe({BOARD: [det("Kd", BOARD)]})
    assert fb.tag_read(BOARD, Card.parse("Qs@B")) == []  # the Qs may not be in the camera's view yet
    clock.advance(1.0)
    fb.observe({BOARD: [det("Kd", BOARD)]})
    assert fb.poll() == []
    clock.advance(0.5)  # the tag and the Kd waited for each other in vain, for two frames after the tag
    (alert,) = fb.observe({BOARD: [det("Kd", BOARD)]}) + fb.poll()
    assert isinstance(alert, CameraMismatch) and alert.rfid == Card.parse("Qs@B") and alert.camera.face == "Kd"
    clock.advance(0.1)
    assert fb.observe({BOARD: [det("Kd", BOARD)]}) == []  # once per card


def test_one_misread_frame_is_not_an_identity() -> None:
    clock = Clock()
    fb = CameraFallback([SEAT1], clock=clock, min_votes=2)
    fb.observe({SEAT1: [det("Ah")]})
    clock.advance(0.1)
    fb.observe({SEAT1: [det("Ad")]})
    clock.advance(0.1)
    assert fb.tag_read(SEAT1, C("Ah")) == []  # 1 vote each: no identity, no mismatch


def _tagged_face_down_ts() -> tuple[Clock, CameraFallback]:
    """Seat 1 (hole cards face down) holding a face-down card the camera saw twice, tagged Ts."""
    clock = Clock()
    fb = CameraFallback([SEAT1], clock=clock, expect_face={SEAT1: "down"})
    fb.observe({SEAT1: [det(None, face="down")]})
    fb.tag_read(SEAT1, C("Ts"))
    clock.advance(0.1)
    fb.observe({SEAT1: [det(None, face="down")]})
    return clock, fb


def test_exposed_hole_card() -> None:
    clock, fb = _tagged_face_down_ts()
    assert fb.observe({SEAT1: [det("Ts")]}) == []
    clock.advance(0.1)
    (exp,) = fb.observe({SEAT1: [det("Ts")]})
    assert isinstance(exp, ExposedCard) and exp.dealt
    assert exp.to_event() == Expose(seat=1, card=C("Ts"), source="camera")


def test_a_face_up_look_the_camera_cannot_read_is_no_exposure_of_a_tagged_card() -> None:
    """The arm64 proof's demo misdealt a hand (``early_card_exposed``): a slow camera's two looks
    found one outline around seat 1's two face-down cards, its corners on their white borders, so
    "face up", unnamed; the outline matched a tagged card's track.  A face the camera cannot read
    as the tag's card is no exposure; one it reads as that card is (``test_exposed_hole_card``)."""
    clock, fb = _tagged_face_down_ts()
    out = []
    for _ in range(4):  # up, unnamed, in every look
        clock.advance(0.1)
        out += fb.observe({SEAT1: [det(None, face="up")]}) + fb.poll()
    assert not [o for o in out if isinstance(o, ExposedCard)], out
    clock.advance(0.1)
    fb.observe({SEAT1: [det("Ts")]})
    clock.advance(0.1)
    (exp,) = [o for o in fb.observe({SEAT1: [det("Ts")]}) if isinstance(o, ExposedCard)]
    assert exp.dealt and exp.card == C("Ts")


def test_card_arriving_face_up_with_a_dead_tag_is_a_face_up_deal() -> None:
    clock = Clock()
    fb = CameraFallback([SEAT1], clock=clock, expect_face={SEAT1: "down"})
    fb.observe({SEAT1: [det("9h")]})
    clock.advance(0.1)
    assert fb.observe({SEAT1: [det("9h")]}) == []
    clock.advance(2)
    (exp,) = fb.poll()
    assert isinstance(exp, ExposedCard) and not exp.dealt
    assert exp.to_event() == Deal(seat=1, card=C("9h"), face="up", source="camera")


def test_unreadable_card_with_no_tag_is_reported() -> None:
    clock = Clock()
    fb = CameraFallback([SEAT1], clock=clock, tag_timeout=1.0)
    fb.observe({SEAT1: [det(None, face="down")]})
    clock.advance(0.1)
    fb.observe({SEAT1: [det(None, face="down")]})
    clock.advance(1.0)
    fb.observe({SEAT1: [det(None, face="down")]})
    assert fb.poll() == []
    clock.advance(1.0)  # twice the tag time-out: the camera had its chance too
    (alert,) = fb.observe({SEAT1: [det(None, face="down")]}) + fb.poll()
    assert isinstance(alert, UnreadCard) and alert.face == "down"


def test_lost_tracks_and_new_hand() -> None:
    clock = Clock()
    fb = CameraFallback([SEAT1], clock=clock, lost_after=0.5)
    fb.observe({SEAT1: [det("Ah")]})
    clock.advance(0.1)
    fb.observe({SEAT1: [det("Ah")]})
    clock.advance(0.6)
    fb.observe({SEAT1: []})  # the card went away before the time-out
    clock.advance(2)
    assert fb.poll() == []
    fb.observe({SEAT1: [det("Ah")]})
    fb.new_hand()
    clock.advance(2)
    assert fb.poll() == []


def test_tags_label_the_camera_crops() -> None:
    clock = Clock()
    store = LabelStore()
    fb = CameraFallback([BOARD], clock=clock, labels=store)
    s = card_scene(C("5d"), 1, split="train", cover=0.0)
    rec_free = Detection(None, 0.2, np.zeros((4, 2), np.float32), "up",
                         cv2.resize(s.bgr, (200, 280)), BOARD, 0)  # an unknown read, with its crop
    fb.observe({BOARD: [rec_free]})
    clock.advance(0.1)
    fb.observe({BOARD: [rec_free]})  # (a tag goes to an unnamed card seen in min_votes looks)
    fb.tag_read(BOARD, C("5d"))
    assert len(store) == 1 and store.counts() == {"5d": 1}


def test_note_events_reads_rfid_fusion_outputs() -> None:
    clock = Clock()
    fb = CameraFallback([SEAT1, BOARD], clock=clock)
    fb.observe({SEAT1: [det("Ah")], BOARD: [det("Kd", BOARD, x=900)]})
    clock.advance(0.1)
    fb.observe({SEAT1: [det("Ah")], BOARD: [det("Kd", BOARD, x=900)]})
    out = fb.note_events([Deal(seat=1, card=C("Ah"), source="rfid"), Deal(seat=1, card=C("Ah"), source="camera")])
    assert out == []
    clock.advance(2)
    (only,) = fb.poll()
    assert isinstance(only, CameraCard) and only.zone == BOARD  # the board card had no tag


# -- end to end at the Fusion level ---------------------------------------------------------
def test_dead_tag_filled_in_by_the_camera_end_to_end(rec: Recognizer) -> None:
    deck = Deck("A")
    deck.add("0401", C("Ah"))
    fusion_clock, clock = Clock(), Clock()
    fusion = Fusion(DeckRegistry([deck]), clock=fusion_clock)
    cam = SyntheticCamera(seed=21)
    layout = synthetic_layout()  # a rail camera: seats seen face up by design
    fb = CameraFallback(layout, tag_timeout=1.5, clock=clock)
    outs = []
    for _ in range(4):  # the card enters seat 1; its tag never reads
        frame = cam.frame({"seat:1/0": C("Qc")})
        outs += fb.observe(rec.scan(frame.bgr, layout))
        clock.advance(0.5)
    outs += fb.poll()
    (cam_card,) = outs
    assert isinstance(cam_card, CameraCard) and cam_card.zone == SEAT1 and cam_card.card == C("Qc")
    events = fusion.camera_identified(cam_card.zone, cam_card.card)
    assert events == [Deal(seat=1, card=C("Qc"), face=None, source="camera")]


# -- the deck in play ------------------------------------------------------------------------
def test_label_store_refine_and_measure(tmp_path, rec: Recognizer) -> None:
    store = LabelStore(tmp_path / "labels")
    cam = SyntheticCamera(seed=3, split="test")  # an unseen font: "the deck in play"
    cards = standard_deck()[::4]
    for c in cards:
        f = cam.frame({"board/2": c})
        assert store.add_labeled(f.bgr, c)  # a whole frame with one card
    two = cam.frame({"board/0": C("Ah"), "board/1": C("Kd")})
    assert not store.add_labeled(two.bgr, C("Ah"))  # ambiguous: not stored
    assert len(LabelStore(tmp_path / "labels")) == len(cards)  # persisted
    rec.model.save(tmp_path / "model.npz")
    own = Recognizer(rec.model.__class__.load(tmp_path / "model.npz"))  # a copy to refine
    report = store.refine(own, holdout=0.25)
    assert report["labels"] == len(cards) and report["held_out"] == 3
    assert report["after"]["wrong"] <= report["before"]["wrong"] + 1e-9
    refined = report["recognizer"]
    assert refined.model.extra > 0 and rec.model.extra == 0  # the stock model is untouched
    m = store.measure(refined)
    assert m["n"] == len(cards) and m["correct"] >= 0.9 and m["wrong"] == 0


def test_capture_reference_from_a_camera() -> None:
    cam = SyntheticCamera(seed=4)
    shown: list[Card] = []
    store = LabelStore()
    cards = [C("Ah"), C("7d"), C("Qs")]

    def grab():
        return cam.frame({"board/2": shown[-1]}).bgr

    report = capture_reference(grab, store, cards, prompt=shown.append, shots=2)
    assert report == {"captured": {"Ah": 2, "7d": 2, "Qs": 2}, "missing": []}
    assert store.counts() == {"7d": 2, "Ah": 2, "Qs": 2}


def test_a_tag_waits_for_its_own_card_on_a_board_with_a_dead_tag() -> None:
    """The flop comes down together: the dead-tag card is named first, the tag of another card
    arrives before the camera sees that card.  No disagreement; the dead one is the camera's."""
    clock = Clock()
    fb = CameraFallback([BOARD], clock=clock)
    fb.observe({BOARD: [det(None, BOARD, x=300)]})  # the 8d (dead tag), not yet named
    assert fb.tag_read(BOARD, C("4c")) == []  # tentatively on the only card the camera sees
    clock.advance(0.1)
    assert fb.observe({BOARD: [det("8d", BOARD, x=300), det(None, BOARD, x=600)]}) == []
    clock.advance(0.1)
    assert fb.observe({BOARD: [det("8d", BOARD, x=300), det("4c", BOARD, x=600)]}) == []
    clock.advance(0.1)
    assert fb.observe({BOARD: [det("8d", BOARD, x=300), det("4c", BOARD, x=600)]}) == []
    clock.advance(2)
    (only,) = fb.poll()
    assert isinstance(only, CameraCard) and only.card == C("8d")


def test_a_camera_slower_than_the_tag_time_out_raises_no_false_alarm() -> None:
    """The false alarm of the arm64 demo: the camera needs longer per frame (1.5 s) than
    ``tag_timeout`` (emulation, a loaded Pi Zero), so each frame is recognised well after it was
    captured.  The 4c's tag reads as the flop comes down with the 8d, whose tag is dead.  The tag
    has not waited in vain before the camera saw frames captured after it: it is not dropped, it
    finds its card, and only the dead-tag 8d is the camera's.  A tag whose card the camera names
    otherwise is still a mismatch once the camera had that chance."""
    clock = Clock()
    fb = CameraFallback([BOARD], clock=clock, tag_timeout=1.2, min_votes=2)

    def frame(*dets: Detection) -> list:
        captured = clock()
        clock.advance(1.5)  # recognised 1.5 s after it was grabbed
        return fb.observe({BOARD: list(dets)}, now=captured) + fb.poll()

    assert frame() == []
    clock.advance(0.2)
    assert fb.tag_read(BOARD, C("4c")) == []  # grabbed just before the flop came down
    assert frame() == []
    assert frame(det("8d", BOARD, x=300), det("4c", BOARD, x=600)) == []
    out = frame(det("8d", BOARD, x=300), det("4c", BOARD, x=600))
    assert [(type(o), o.card) for o in out] == [(CameraCard, C("8d"))]  # the dead tag, filled in
    assert frame(det("8d", BOARD, x=300), det("4c", BOARD, x=600)) == []
    clock.advance(0.2)
    assert fb.tag_read(BOARD, C("Jh")) == []  # a mis-enrolled tag on the Qh
    assert frame(det("8d", BOARD, x=300), det("4c", BOARD, x=600)) == []
    assert frame(det("8d", BOARD, x=300), det("4c", BOARD, x=600), det("Qh", BOARD, x=900)) == []
    (alert,) = frame(det("8d", BOARD, x=300), det("4c", BOARD, x=600), det("Qh", BOARD, x=900))
    assert isinstance(alert, CameraMismatch) and alert.rfid == C("Jh") and alert.camera.face == "Qh"


def test_hole_cards_swap_tentative_tags_when_the_camera_names_one() -> None:
    """Two face-down cards get the seat's two tags in turn; when one is turned up and named, the
    tags follow the names, and nothing is alerted."""
    clock = Clock()
    fb = CameraFallback([SEAT1], clock=clock)
    fb.observe({SEAT1: [det(None, face="down", x=200), det(None, face="down", x=500)]})
    fb.tag_read(SEAT1, C("Ts"))
    fb.tag_read(SEAT1, C("9h"))
    for _ in range(3):
        clock.advance(0.1)
        assert fb.observe({SEAT1: [det("9h", x=200), det(None, face="down", x=500)]}) == []
    clock.advance(5)
    assert fb.poll() == []
    assert sorted((t.tag.face, t.tentative) for t in fb._tracks if t.tag) == [("9h", False), ("Ts", True)]


def test_the_scene_gate_recognises_a_frame_only_when_the_table_changed() -> None:
    """The camera loop skips the recogniser for a frame like the last one recognised: sensor noise
    is no change; a card coming down, or turned over, is."""
    from vision.source import SceneGate

    cam = SyntheticCamera(seed=8)
    empty = cam.frame({"board/0": C("Ah")}).bgr  # the Ah on the board
    rng = np.random.default_rng(1)

    def noisy(img: np.ndarray) -> np.ndarray:
        return np.clip(img.astype(np.int16) + rng.normal(0, 4, img.shape).astype(np.int16), 0, 255).astype(np.uint8)

    gate = SceneGate()
    assert gate.changed(empty)  # the first frame
    assert not gate.changed(empty.copy()) and not gate.changed(noisy(empty)) and not gate.changed(noisy(empty))
    flop = empty.copy()
    cv2.rectangle(flop, (900, 300), (1020, 470), (245, 245, 245), -1)  # a card (the smallest, 170 px) comes down
    assert gate.changed(flop)
    assert not gate.changed(noisy(flop))
    down = flop.copy()
    cv2.rectangle(down, (908, 308), (1012, 462), (40, 30, 170), -1)  # and is turned over: its back
    assert gate.changed(down)  # turned face down

