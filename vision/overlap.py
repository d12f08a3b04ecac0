"""Cards inside one outline around several: overlapping, fanned or touching cards.

The card finder (:mod:`vision.detect`) draws one outline around cards that overlap or touch; no
card's shape fits it, so none of them is read whole, and the corner-index reader
(:mod:`vision.corners`) misses those whose index is covered or lost in the neighbours' edges.  The
card on top of a pile, or at either end of a fan, still shows its own corner on the outline: a
convex corner of about a right angle whose two sides run along straight stretches of the outline.
A card's size on this table is known from the cards read whole in the frame (or from the outline's
own corners: a side between two of them is a whole side of one card), so each such corner implies a
card-sized rectangle (two, when either side may be the long one).  Each is warped upright and read
whole by the recogniser's own reader and decision (:meth:`vision.recognizer.Recognizer.read`: on
the two-reader camera the index reader must not dispute it, nor the centre contradict it, and
unconfirmed it needs the lone threshold), as a card's own outline would be: never less.  The two
rectangles of one corner must not name different cards.

Rules by which the choices were made, on the train scenes of the real photos only
(:mod:`vision.scenes`), most cards right with none wrong (ties to the fewer reads): the reader's own
decision (942 -> 945 right of 998, none wrong), not a second reader required on top (944); a card's own
outline that read whole but was not named is read again once, from its first corner (945), not never
(944: the rectangle on a corner can warp better than the outline's four-corner fit); outlines of at least
one card's area looked at (``MIN_BLOB`` 1.0: 947; 0.7: 947, 1.25 and 1.5: 945).  The geometric bounds
(``RIGHT_ANGLE``, ``MIN_SIDE``, ``MIN_INSIDE``, ``EPS``) are those of a card's shape, set before
measuring and not swept.  A frame whose every card found is named is not looked at (``SKIP_NAMED``:
the same 947 on train, half the cost on the bench's single-card crops).  On the dev scenes, measured
after: 847 -> 852 right of 954, the same 4 wrong.
The two-reader camera only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import cv2
import numpy as np

from .detect import ASPECT, DetectParams, min_channel, quad_iou, warp, whiteness_mask

MIN_BLOB = 1.0  # outlines of at least this many times a card's area are looked at (swept on train: 0.7, 1.0, 1.25, 1.5)
RIGHT_ANGLE = 0.34  # |cos| of a corner's angle at most this: 70 to 110 degrees
MIN_SIDE = 0.4  # each side of the corner at least this fraction of the card's short side
EPS = 0.06  # the outline's polygon fit, this fraction of a card's short side
FRAME_CARD = 0.2  # a card's short side, this fraction of the frame's long side, when no card is named
ONE_CARD = 1.5  # an outline under this many times a card's area is one card's (two side by side: 1.7 and more)
MIN_INSIDE = 0.9  # of the implied card's area inside the outline, at least
MAX_READS = 8  # implied cards read whole per frame, at most (speed)
MIN_READERS = 1  # readers that name the card, at least (2: a second reader must confirm it: fewer right on train)
SKIP_NAMED = True  # no look when every card found is named
HIDDEN_CARDS = True  # the two-reader camera reads them (:meth:`vision.recognizer.Recognizer.recognize`)
SEEN = 0.5  # an implied card overlapping a card named already (or re-read already) by IoU this much is that card


def card_size(dets: Sequence[Any], whole: bool = True) -> tuple[float, float] | None:
    """(short, long) side of a card in this frame: the median area of the cards named in it (``whole``:
    read whole, from their outline; else placed from their corner index), at a card's aspect; None
    when none is."""
    areas = [abs(cv2.contourArea(d.quad.astype(np.float32))) for d in dets
             if d.card is not None and (d.index is None) == whole]
    if not areas:
        return None
    short = float(np.sqrt(np.median(areas) / ASPECT))
    return short, short * ASPECT


def blobs(img: np.ndarray, params: DetectParams, min_area: float) -> list[np.ndarray]:
    """Outer outlines of the card finder's whiteness mask (:func:`vision.detect.whiteness_mask`) of at least
    ``min_area`` pixels, in ``img``'s pixels."""
    h, w = img.shape[:2]
    scale = min(1.0, params.work_width / max(w, 1))
    small = cv2.resize(img, (int(w * scale), int(h * scale)), interpolation=cv2.INTER_AREA) if scale < 1 else img
    mask = whiteness_mask(small, min_channel(small), params)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    return [c.reshape(-1, 2).astype(np.float32) / scale for c in contours
            if cv2.contourArea(c) >= min_area * scale * scale]


class Outline:
    """An outline's polygon fit and its corners: convex, about a right angle, each side at least
    ``min_side`` long, not on the edge of the ``frame`` (its height, width: a card it cuts shows no
    corner there).  A side between two such corners is a whole side of one card."""

    def __init__(self, outline: np.ndarray, eps: float, min_side: float, frame: tuple[int, ...]) -> None:
        self.poly = cv2.approxPolyDP(outline.reshape(-1, 1, 2), eps, True).reshape(-1, 2).astype(np.float32)
        n = len(self.poly)
        orient = np.sign(cv2.contourArea(self.poly, oriented=True)) or 1.0
        self.corner = []
        for i in range(n):
            a, b = self.poly[i - 1] - self.poly[i], self.poly[(i + 1) % n] - self.poly[i]
            la, lb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
            x, y = self.poly[i]
            inside = eps <= x <= frame[1] - 1 - eps and eps <= y <= frame[0] - 1 - eps  # the frame cuts no card here
            self.corner.append(n >= 4 and inside and min(la, lb) >= min_side
                               and abs(float(a @ b)) <= RIGHT_ANGLE * la * lb
                               and np.sign(float(a[0] * b[1] - a[1] * b[0])) != orient)  # convex: not a notch

    def sides(self, i: int) -> tuple[np.ndarray, np.ndarray, bool, bool]:
        """Corner ``i``'s two sides (vectors from it) and whether each is a whole side of a card."""
        n = len(self.poly)
        return (self.poly[i - 1] - self.poly[i], self.poly[(i + 1) % n] - self.poly[i],
                self.corner[i - 1], self.corner[(i + 1) % n])

    def whole_cards(self) -> list[tuple[float, float]]:
        """(short, long) of each corner whose two sides are whole sides of a card of a card's aspect."""
        out = []
        for i in range(len(self.poly)):
            a, b, whole_a, whole_b = self.sides(i)
            la, lb = sorted((float(np.linalg.norm(a)), float(np.linalg.norm(b))))
            if self.corner[i] and whole_a and whole_b and ASPECT / 1.15 <= lb / la <= ASPECT * 1.15:
                out.append((la, lb))
        return out

    def cards(self, size: tuple[float, float] | None) -> list[tuple[int, np.ndarray]]:
        """The card-sized rectangles the corners imply, each with the number of its corner: a whole
        side gives the card's size (the other side at a card's aspect, either way round, or the other
        whole side); a corner with no whole side takes the frame's card size (``size``: short, long),
        either side the long one.  A rectangle is kept when it lies inside the outline."""
        x0, y0, bw, bh = cv2.boundingRect(self.poly.astype(np.int32))
        filled = np.zeros((bh + 1, bw + 1), np.uint8)
        cv2.fillPoly(filled, [(self.poly - np.array([x0, y0], np.float32)).astype(np.int32)], 255)
        out = []
        for i in range(len(self.poly)):
            if not self.corner[i]:
                continue
            a, b, whole_a, whole_b = self.sides(i)
            la, lb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
            if whole_a and whole_b:
                sizes = [(la, lb)] if ASPECT / 1.15 <= max(la, lb) / min(la, lb) <= ASPECT * 1.15 else []
            elif whole_a:
                sizes = [(la, la * ASPECT), (la, la / ASPECT)]
            elif whole_b:
                sizes = [(lb * ASPECT, lb), (lb / ASPECT, lb)]
            else:
                sizes = [] if size is None else [(size[1], size[0]), (size[0], size[1])]
            ua = a / la
            vb = b - (b @ ua) * ua
            vb = vb / max(float(np.linalg.norm(vb)), 1e-6)
            p = self.poly[i]
            for along_a, along_b in sizes:
                if la > 1.15 * along_a or lb > 1.15 * along_b:
                    continue  # a side of the outline is longer than that side of the card
                q = np.array([p, p + along_a * ua, p + along_a * ua + along_b * vb, p + along_b * vb], np.float32)
                if _inside(filled, q - np.array([x0, y0], np.float32)) >= MIN_INSIDE:
                    out.append((i, q))
        return out


def _inside(filled: np.ndarray, q: np.ndarray) -> float:
    card: np.ndarray = np.zeros_like(filled)
    cv2.fillConvexPoly(card, q.astype(np.int32), 255)
    area = abs(cv2.contourArea(q))
    return cv2.countNonZero(card & filled) / max(area, 1.0)


def hidden_cards(read: Callable[[np.ndarray], Any], params: DetectParams, img: np.ndarray,
                 dets: Sequence[Any], off: np.ndarray) -> list[tuple[Any, np.ndarray]]:
    """``(reading, quad)`` of the cards read whole (``read``: the recogniser's reader of a warped card)
    from the rectangles the corners of outlines around several cards imply (:meth:`Outline.cards`),
    named as ``read`` decides (and ``MIN_READERS``); ``dets`` are the frame's cards found so far (their
    ``quad`` in frame pixels, ``off`` the region's offset in the frame), the quads are ``img``'s."""
    if all(d.card is not None for d in dets) and SKIP_NAMED:
        return []  # every card seen is named (a crop of one card, a neat table): nothing left unread here
    # the card's size: of the cards read whole in the frame, else of the corners of its outlines
    # with two whole sides, else of the cards placed from their index (these are rough)
    size = card_size(dets)
    rough = card_size(dets, whole=False)
    unit = (size or rough or (FRAME_CARD * max(img.shape[:2]),))[0]
    outlines = [Outline(o, EPS * unit, MIN_SIDE * unit, img.shape[:2])
                for o in blobs(img, params, MIN_BLOB * unit * unit * ASPECT)]
    if size is None:
        whole = [s for o in outlines for s in o.whole_cards()]
        size = (float(np.median([s[0] for s in whole])), float(np.median([s[1] for s in whole]))) if whole else rough
    named = [d.quad - off for d in dets if d.card is not None]  # cards named already: not read again
    # a card's own outline, read whole and not named, is read again once, from the first of its corners
    # (a rectangle on its corner may be warped better than the outline's four-corner fit)
    one = ONE_CARD * size[0] * size[1] if size is not None else 0.0
    unnamed = [d.quad - off for d in dets if d.card is None and d.index is None
               and abs(cv2.contourArea(d.quad.astype(np.float32))) < one]
    reread: list[np.ndarray] = []
    found: list[tuple[Any, np.ndarray]] = []
    reads = 0
    for outline in outlines:
        by_corner: dict[int, list[Any]] = {}
        for i, q in outline.cards(size):
            if any(quad_iou(q, k) >= SEEN for k in named) or reads >= MAX_READS:
                continue
            if any(quad_iou(q, k) >= SEEN for k in reread):
                continue
            reread += [k for k in unnamed if quad_iou(q, k) >= SEEN]
            reads += 1
            rd = read(warp(img, q))
            if rd.card is not None and rd.evidence is not None and rd.evidence.readers >= MIN_READERS:
                by_corner.setdefault(i, []).append((rd, q))
        for cands in by_corner.values():
            if len({rd.card for rd, _ in cands}) != 1:
                continue  # the two rectangles of one corner read as different cards
            rd, q = max(cands, key=lambda c: c[0].confidence)
            if any(quad_iou(q, k) >= SEEN for k in named):
                continue  # another corner of a card named already
            found.append((rd, q))
            named.append(q)
    return found
