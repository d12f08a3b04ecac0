"""The card finder and what it hands the readers: blanking cards already read, and the
diagnosis of why a card got no read (vision.detect, vision.bench)."""

from __future__ import annotations

import cv2
import numpy as np

from controller.rules.cards import Card
from vision.bench import _no_read_cause
from vision.corners import read_indices
from vision.detect import (
    DetectParams,
    _grow,
    _unexplained_paper,
    blank_cards,
    find_edge_quads,
    find_more_quads,
    find_quads,
    quad_iou,
)
from vision.recognizer import Detection, Recognizer, index_model
from vision.synth import CAMERA_CARD_H, SyntheticCamera, card_quad, place, render_back, render_card
from vision.yolo import LabelledCard


def _faces(img: np.ndarray) -> set[str]:
    return {r.face for r in read_indices(img, index_model()) if r.confidence > 0.5}


def test_blanking_a_read_card_leaves_a_dim_frames_other_indices_readable() -> None:
    # a dim photo: paper is grey; the index finder takes the exposure from the brightest pixels
    cam = SyntheticCamera(seed=0, split="test", effects=0.0)
    s = cam.frame({"board/0": Card.parse("Ah"), "board/1": Card.parse("7c"), "board/2": Card.parse("Kd")})
    dim = (s.bgr.astype(np.float32) * 0.5).astype(np.uint8)
    assert _faces(dim) == {"Ah", "7c", "Kd"}
    white = blank_cards(dim, [s.quads[0]], paper=False)  # pure white, brighter than any paper in view
    assert (white[tuple(s.quads[0].mean(0).astype(int))[::-1]] == 255).all()
    assert _faces(white) == set()  # what went wrong: no index found on the other cards
    out = blank_cards(dim, [s.quads[0]])
    assert _faces(out) == {"7c", "Kd"}  # the blanked card is gone, the others read
    assert np.array_equal(blank_cards(dim, []), dim) and out is not dim


def test_find_quads_says_what_became_of_each_outline() -> None:
    frame = np.full((480, 640, 3), 40, np.uint8)
    cv2.rectangle(frame, (60, 60), (200, 256), (235, 235, 235), -1)  # a card: 140 x 196, aspect 1.4
    cv2.rectangle(frame, (350, 100), (600, 180), (235, 235, 235), -1)  # a white strip: no card's aspect
    why: list = []
    quads = find_quads(frame, why=why)
    assert len(quads) == 1
    verdicts = sorted(v for _, v in why)
    assert verdicts == ["aspect", "card"], why
    box = next(b for b, v in why if v == "card")
    assert abs(box[0] - 60) <= 2 and abs(box[2] - 141) <= 3
    # the strip, rejected by its aspect, is handed on for a second look, where no card was found
    rejected: list = []
    assert len(find_quads(frame, rejected=rejected)) == 1 and len(rejected) == 1
    strip = np.array([[350, 100], [600, 100], [600, 180], [350, 180]], np.float32)
    assert quad_iou(rejected[0], strip) > 0.95
    none: list = []
    assert len(find_quads(frame, DetectParams(read_rejected=()), rejected=none)) == 1 and none == []
    assert len(find_more_quads(frame, quads, rejected)) == 1
    assert find_more_quads(frame, quads + [strip], rejected) == []  # a card found there: no second look


def _det(quad: list[list[float]], face: str = "up", index: tuple[float, float] | None = None) -> Detection:
    return Detection(None, 0.0, np.array(quad, np.float32), face, index=index)


def test_no_read_causes() -> None:
    card = LabelledCard("9s", (100.0, 100.0, 100.0, 140.0))
    own = [[100, 100], [200, 100], [200, 240], [100, 240]]
    assert _no_read_cause(card, [_det(own)], []) == "outline found, no index read"
    assert _no_read_cause(card, [_det(own, "down")], []) == "outline found, read face down"
    assert _no_read_cause(card, [], []) == "no outline"
    assert _no_read_cause(card, [], [((100, 100, 100, 140), "aspect")]) == "outline rejected: aspect"
    # one outline around this card and its neighbour
    assert _no_read_cause(card, [], [((100, 100, 260, 140), "card")]) == "outline spans several cards"
    # an index read's card is not the outline's
    assert _no_read_cause(card, [_det(own, index=(110.0, 110.0))], []) == "no outline"



def test_a_card_seen_from_the_side_is_found_and_two_overlapping_cards_are_not_one() -> None:
    frame = np.full((480, 640, 3), 40, np.uint8)
    # one card foreshortened to half its height (seen 55 degrees off overhead): aspect 2.2, not 1.4
    oblique = np.array([[40, 200], [260, 190], [262, 290], [42, 300]], np.int32)
    cv2.fillConvexPoly(frame, oblique, (235, 235, 235))
    # two cards, each of aspect 1.4, overlapping into a blob about as wide as high: notched, no card
    cv2.rectangle(frame, (360, 60), (460, 200), (235, 235, 235), -1)
    cv2.rectangle(frame, (430, 100), (530, 240), (235, 235, 235), -1)
    why: list = []
    quads = find_quads(frame, why=why)
    found = sorted(tuple(int(v) for v in box) for box, verdict in why if verdict == "card")
    assert len(found) == 1 and abs(found[0][0] - 40) <= 3 and abs(found[0][2] - 223) <= 4, why
    assert [v for box, v in why if box[0] > 300] == ["aspect"]  # the two cards' blob: no card
    area = cv2.contourArea(oblique.astype(np.float32))
    assert len(quads) == 1 and abs(cv2.contourArea(quads[0]) - area) < 0.1 * area
    # the same card with the oblique rule off: rejected for its aspect, as before
    why_off: list = []
    assert find_quads(frame, DetectParams(oblique_aspect_hi=None), why_off) == []
    assert sorted(v for _, v in why_off) == ["aspect", "aspect"]


def test_a_seats_two_touching_hole_cards_are_two_cards_not_one_outline() -> None:
    # the arm64 demo's false alarms: one outline around a seat's two face-down cards (126 x 88 of
    # card for two 63 x 88 cards side by side: a card's aspect); the board's cards give the card size
    cam = SyntheticCamera(seed=1, effects=0.0)
    rng = np.random.default_rng(0)
    frame = cam._felt.copy()
    h = CAMERA_CARD_H
    w = h * 63 / 88
    backs = [card_quad((cx, 520), h, 0.02, 0.0, rng) for cx in (300, 300 + w - 2)]  # overlapping by 2 px
    for q in backs:
        place(frame, render_back(cam.style), q)
    for i, face in enumerate(("Ah", "7c", "Kd")):
        place(frame, render_card(Card.parse(face), cam.style, rng), card_quad((400 + 150 * i, 200), h, 0, 0.0, rng))
    assert len(find_quads(frame, DetectParams(pair_area=None))) == 4  # the two backs: one outline
    why: list = []
    quads = find_quads(frame, why=why)
    assert len(quads) == 5 and sorted(v for _, v in why) == ["card"] * 3 + ["split"]
    for back in backs:
        assert max(quad_iou(back, q) for q in quads) > 0.85
    # the camera sees two face-down cards there, each where one lies (the fallback tracks each)
    down = [d for d in Recognizer.stock().recognize(frame) if d.face == "down"]
    assert len(down) == 2
    for back in backs:
        assert min(float(np.linalg.norm(np.array(d.center) - back.mean(0))) for d in down) < 10


def test_a_white_card_on_a_light_table_is_outlined_by_its_edges_and_nothing_else_is() -> None:
    # a white card on a light grey table (215): both above the whiteness threshold's upper bound, the
    # mask is one blob the size of the frame (no outline of a card's shape); the card's edge is still there
    cam = SyntheticCamera(seed=1, effects=0.0)
    rng = np.random.default_rng(0)
    frame = np.full((720, 1280, 3), 215, np.uint8)
    card = card_quad((400, 360), CAMERA_CARD_H, 0.2, 0.0, rng)
    place(frame, render_card(Card.parse("7c"), cam.style, rng), card)
    # two patches of card shape on the table: one white (a card's blank back, say), one coloured: not paper
    blank = card_quad((800, 360), CAMERA_CARD_H, 0.0, 0.0, rng)
    cv2.fillConvexPoly(frame, blank.astype(np.int32), (240, 240, 240))
    cv2.fillConvexPoly(frame, card_quad((1100, 360), CAMERA_CARD_H, 0.0, 0.0, rng).astype(np.int32), (150, 200, 245))
    why: list = []
    assert find_quads(frame, why=why) == [] and [v for _, v in why] == ["big"]
    on = DetectParams(edge_canny=(8, 20))
    quads = find_edge_quads(frame, [], on)
    assert len(quads) == 2, quads
    assert sorted(max(quad_iou(q, k) for k in quads) for q in (card, blank))[0] > 0.95
    assert find_edge_quads(frame, [], DetectParams(edge_canny=None)) == []  # off when asked
    assert len(find_edge_quads(frame, [], DetectParams())) == 2  # shipped on
    assert len(find_edge_quads(frame, [card], on)) == 1  # a card found otherwise is not outlined again
    # the camera: the seven read at its index (its outline not read again), the blank read whole, not named
    assert [str(d.card) for d in Recognizer.two_reader(detect=on).recognize(frame)] == ["7c"]


def test_edges_are_looked_for_only_around_paper_no_card_found_explains() -> None:
    # green felt, every card found: no paper left unexplained, the edge finder does nothing (and costs little)
    frame = np.zeros((720, 1280, 3), np.uint8)
    frame[:] = (60, 120, 40)
    rng = np.random.default_rng(1)
    cam = SyntheticCamera(seed=1, effects=0.0)
    cards = [card_quad((300 + 300 * i, 360), CAMERA_CARD_H, 0.1 * i, 0.0, rng) for i in range(3)]
    for face, q in zip(("7c", "Kd", "2h"), cards, strict=True):
        place(frame, render_card(Card.parse(face), cam.style, rng), q)
    params = DetectParams()
    assert _unexplained_paper(frame, cards, params, params.min_card_px) == []
    assert find_edge_quads(frame, cards, params) == []
    # one of them not found: its paper is unexplained, the box around it holds it
    boxes = _unexplained_paper(frame, cards[:2], params, params.min_card_px)
    assert len(boxes) == 1
    x, y, w, h = boxes[0]
    c = cards[2]
    assert x <= c[:, 0].min() and y <= c[:, 1].min() and x + w >= c[:, 0].max() and y + h >= c[:, 1].max()
    assert w < 2 * (c[:, 0].max() - c[:, 0].min())  # the box is the card's, not the frame's
    # a dark table: no paper (min(B, G, R) under edge_gate), the edge finder does nothing
    assert _unexplained_paper(np.full((720, 1280, 3), 20, np.uint8), [], params, params.min_card_px) == []


def test_grow_moves_each_side_outward() -> None:
    q = np.array([[10, 10], [110, 10], [110, 150], [10, 150]], np.float32)
    want = np.array([[8, 8], [112, 8], [112, 152], [8, 152]], np.float32)
    assert np.allclose(_grow(q, 2.0), want, atol=1e-4)
    assert np.allclose(_grow(q[::-1].copy(), 2.0), want[::-1], atol=1e-4)  # either orientation


def test_a_court_card_whose_white_is_only_a_broken_frame_is_still_a_card() -> None:
    # white only in a thin frame around a dark picture, the frame broken where the picture meets the
    # card's edge: the outline fills under min_fill of its hull, but its hull is a card's quadrilateral
    frame = np.full((480, 640, 3), 40, np.uint8)
    cv2.rectangle(frame, (100, 80), (240, 276), (235, 235, 235), -1)  # 141 x 197: aspect 1.4
    cv2.rectangle(frame, (114, 94), (226, 262), (60, 40, 120), -1)  # the picture
    cv2.rectangle(frame, (100, 150), (114, 200), (60, 40, 120), -1)  # reaching the left edge: frame broken
    why: list = []
    quads = find_quads(frame, why=why)
    assert [v for _, v in why] == ["card"] and len(quads) == 1
    assert quad_iou(quads[0], np.array([[100, 80], [241, 80], [241, 277], [100, 277]], np.float32)) > 0.9
    why_off: list = []
    assert find_quads(frame, DetectParams(card_hull=False), why_off) == [] and [v for _, v in why_off] == ["fill"]
