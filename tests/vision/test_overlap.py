"""Cards inside one outline around several (vision.overlap): the corners of a fan or a pile imply
card-sized rectangles, read whole by the recogniser's own reader."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from tests.vision.test_real_cards import DATASET, needs_photos
from vision import overlap
from vision.detect import DetectParams, quad_iou
from vision.recognizer import Recognizer
from vision.yolo import _iou, find_names, load_photo, parse_class_name


def _rect(cx: float, cy: float, w: float, h: float, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    pts = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    return (pts @ np.array([[c, -s], [s, c]]).T + [cx, cy]).astype(np.float32)


def test_a_fans_corners_imply_its_cards() -> None:
    # two cards on felt, the second over the first's corner: one outline; the top card's own corners
    # (two whole sides between three of them) give the card's size, and a rectangle where it lies
    frame = np.full((480, 640, 3), (40, 90, 40), np.uint8)
    cards = [_rect(200, 200, 126, 176, 0.0), _rect(320, 300, 126, 176, 0.1)]
    for q in cards:
        cv2.fillConvexPoly(frame, q.astype(np.int32), (235, 235, 235))
        cv2.polylines(frame, [q.astype(np.int32)], True, (120, 120, 120), 1)
    blobs = overlap.blobs(frame, DetectParams(), 1.5 * 126 * 176)
    assert len(blobs) == 1
    outline = overlap.Outline(blobs[0], 0.06 * 126, 0.4 * 126, frame.shape[:2])
    short, long_ = np.median(outline.whole_cards(), 0)
    assert abs(short - 126) < 8 and abs(long_ - 176) < 10, outline.whole_cards()
    rects = [q for _, q in outline.cards((short, long_))]
    assert max(quad_iou(q, cards[1]) for q in rects) > 0.85
    assert max(quad_iou(q, cards[0]) for q in rects) > 0.85  # the first card, from its uncovered corners
    # a rectangle lies inside the outline: none reaches off the cards
    assert all(overlap._inside(np.full((480, 640), 255, np.uint8), q) > 0.99 for q in rects)


def test_a_corner_the_frame_cuts_is_no_card_corner() -> None:
    frame = np.full((300, 400, 3), (40, 90, 40), np.uint8)
    cv2.rectangle(frame, (250, 150), (399, 299), (235, 235, 235), -1)  # a card running off the frame
    cv2.rectangle(frame, (150, 50), (276, 226), (235, 235, 235), -1)  # and one on it
    (blob,) = overlap.blobs(frame, DetectParams(), 100)
    outline = overlap.Outline(blob, 6, 40, frame.shape[:2])
    corners = [tuple(outline.poly[i]) for i, c in enumerate(outline.corner) if c]
    assert corners and all(x < 390 and y < 290 for x, y in corners), corners


def test_no_named_card_and_no_outline_corner_reads_nothing() -> None:
    frame = np.full((300, 400, 3), (40, 90, 40), np.uint8)
    assert overlap.hidden_cards(lambda img: pytest.fail("nothing to read"), DetectParams(), frame, [],
                                np.zeros(2, np.float32)) == []


@needs_photos
@pytest.mark.parametrize("photo, card", [("IMG_20220316_141646", "Qs"), ("IMG_20220316_165643", "Jd")])
def test_a_card_on_top_of_a_pile_is_read_from_its_corners(photo: str, card: str, monkeypatch) -> None:
    """Train photos (where this was built): one outline around five cards; the queen of spades at the
    fan's end, the jack of diamonds on top of a pile, are named only from the rectangles their corners
    imply (read whole: the same reader and decision as a card's own outline)."""
    from vision.bench import REAL_UNSTRETCH
    from vision.scenes import recorded_mirrors

    path = sorted(DATASET.glob(f"*/images/{photo}_jpg*.jpg"))[0]
    ph = load_photo(path, [parse_class_name(n) for n in find_names(path.parent.parent)], REAL_UNSTRETCH,
                    mirrored=recorded_mirrors(DATASET).get(path.name, False))
    assert ph is not None
    box = next(c.box for c in ph.cards if c.face == card)
    rec = Recognizer.two_reader()

    def named() -> list[str]:
        return [d.card.face for d in rec.recognize(ph.image) if d.card is not None and d.index is None
                and _iou(d.box, box) > 0.5]

    assert named() == [card]
    monkeypatch.setattr(overlap, "HIDDEN_CARDS", False)
    assert named() == []

