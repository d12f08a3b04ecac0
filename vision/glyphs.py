"""Reading one corner index of a warped card: segment rank and suit, colour, features, classifier.

A corner region (top-left of the upright card; the bottom-right one is rotated 180
degrees first) is turned into an ink map relative to its own paper, split into connected
components, and grouped in rows: the top row is the rank (``10`` is two components), the
next row below it the suit.  Each glyph is cut to its bounding box, resized to a fixed
size and described by a gradient-orientation histogram (HOG) plus its coarse pixels.
Colour (red or black) comes from the ink's chroma relative to the paper and restricts
the suit to two candidates before the shape decides.  The pips of a number card
(:func:`read_pips`) cross-check the index: their count backs a rank, their shape the suit.
Classifiers are multinomial logistic regressions (:class:`LinearHead`, numpy only).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from controller.rules.cards import RANKS

from .detect import WARP_H

CORNER_W, CORNER_H = 0.25, 0.32  # the index region, fractions of the card
RANK_SIZE = (24, 32)  # glyph raster (w, h)
SUIT_SIZE = (24, 24)
SUITS_RED, SUITS_BLACK = "dh", "cs"
SUIT_ORDER = "cdhs"


@dataclass
class CornerGlyphs:
    rank: np.ndarray  # feature vectors
    suit: np.ndarray
    redness: float  # > 0 red, < 0 black (see ``RED_SPLIT``)
    images: tuple[np.ndarray, np.ndarray] | None = None  # the glyph ink crops (rank, suit)


RED_SPLIT = 0.16


def corner_regions(card: np.ndarray) -> list[np.ndarray]:
    """The two index regions of an upright warped card, each as if it were top-left."""
    h, w = card.shape[:2]
    cw, ch = int(w * CORNER_W), int(h * CORNER_H)
    return [card[:ch, :cw], card[h - ch:, w - cw:][::-1, ::-1]]


def _hog(g: np.ndarray, cell: int = 4, bins: int = 9) -> np.ndarray:
    gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=1)
    gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=1)
    mag, ang = cv2.cartToPolar(gx, gy)
    b = (ang * (bins / (2 * np.pi))).astype(np.int32) % bins
    h, w = g.shape
    cy = (np.arange(h) // cell)[:, None]
    cx = (np.arange(w) // cell)[None, :]
    ncx = w // cell
    idx = ((cy * ncx + cx) * bins + b).ravel()
    hist = np.bincount(idx, weights=mag.ravel(), minlength=(h // cell) * ncx * bins).astype(np.float32)
    hist = np.sqrt(hist)
    return hist / (np.linalg.norm(hist) + 1e-6)


def glyph_features(glyph: np.ndarray, size: tuple[int, int], aspect: float) -> np.ndarray:
    """Feature vector of an ink glyph (float 0..1, tight crop)."""
    g = cv2.resize(glyph, size, interpolation=cv2.INTER_AREA)
    g = cv2.GaussianBlur(g, (3, 3), 0.6)
    hog = np.concatenate([_hog(g), 0.7 * _hog(g, cell=8)])
    px = cv2.resize(g, (size[0] // 3, size[1] // 3), interpolation=cv2.INTER_AREA).ravel()
    px = px - px.mean()
    px = px / (np.linalg.norm(px) + 1e-6)
    f = np.concatenate([hog, 0.6 * px, [0.25 * np.log(max(aspect, 0.05))]]).astype(np.float32)
    return f / (np.linalg.norm(f) + 1e-6)


def _ink_blobs(region: np.ndarray, dark_every: int,
               paper_at: float) -> tuple[np.ndarray, int, np.ndarray, np.ndarray, np.ndarray] | None:
    """The ink of a region (BGR or gray), 0 to 1, and its blobs as ``cv2.connectedComponentsWithStats``
    gives them (count, labels, stats, centroids); None when the region has no contrast.  Ink is
    measured between the region's own darkest ink and its paper (the ``1/dark_every`` and
    ``paper_at`` quantiles)."""
    gray = cv2.cvtColor(region, cv2.COLOR_BGR2GRAY) if region.ndim == 3 else region
    flat = gray.ravel()
    k = flat.size
    part = np.partition(flat, (k // dark_every, int(k * paper_at)))
    dark, paper = float(part[k // dark_every]), float(part[int(k * paper_at)])
    if paper - dark < 40:
        return None
    ink = np.clip((paper - gray.astype(np.float32)) / (paper - dark), 0, 1)
    binary = (ink > 0.45).astype(np.uint8)
    n, labels, stats, cents = cv2.connectedComponentsWithStats(binary, connectivity=8)
    return ink, n, labels, stats, cents


def read_corner(region: np.ndarray) -> CornerGlyphs | None:
    """Rank and suit features of one index region (BGR), or None when it does not segment."""
    blobs = _ink_blobs(region, dark_every=50, paper_at=0.75)
    if blobs is None:
        return None
    ink, n, labels, stats, _ = blobs
    H, W = ink.shape
    keep = np.zeros(n, bool)
    for i in range(1, n):
        x, y, w, h, a = stats[i]
        if a < 5 or x > 0.6 * W:  # specks; pips or a court frame beyond the index column
            continue
        if x + w >= W or y + h >= H:  # runs out of the region: not part of the index
            continue
        if x <= 0 or y <= 0:  # a glyph cut by a loose warp, or felt / the rounded corner / an edge
            if (x <= 0 and y <= 0) or h > 0.15 * WARP_H or w > 0.6 * W or min(w, h) < 0.03 * WARP_H:
                continue
        keep[i] = True
    if not keep.any():
        return None
    mask = keep[labels]
    prof = mask.sum(1)
    # bands of rows with ink, top to bottom: the rank, then the suit
    bands: list[tuple[int, int]] = []
    on = prof > 0
    y = 0
    while y < H:
        if on[y]:
            y0 = y
            while y < H and on[y]:
                y += 1
            if y - y0 >= 0.02 * WARP_H:
                bands.append((y0, y))
        y += 1
    if not bands:
        return None
    (r0, r1), rest = bands[0], bands[1:]
    if r1 - r0 > 0.15 * WARP_H or not rest:  # rank and suit touch: cut at the thinnest row
        if r1 - r0 < 0.11 * WARP_H:
            return None
        lo, hi = int((r1 - r0) * 0.45), int((r1 - r0) * 0.8)
        cut = r0 + lo + int(np.argmin(prof[r0 + lo:r0 + hi]))
        (r0, r1), (s0, s1) = (r0, cut), (cut + 1, r1)
    else:
        s0, s1 = rest[0]

    def cols(a: int, b: int) -> tuple[int, int]:
        xs = np.nonzero(mask[a:b].any(0))[0]
        return (int(xs[0]), int(xs[-1]) + 1) if len(xs) else (0, 0)

    rx = cols(r0, r1)
    rbox = (rx[0], r0, rx[1], r1)
    sx = cols(s0, s1)
    sbox = (sx[0], s0, sx[1], s1)
    # plausible index geometry (a bad warp makes glyphs too big or too small)
    rh, sh = (rbox[3] - rbox[1]) / WARP_H, (sbox[3] - sbox[1]) / WARP_H
    if not (0.055 <= rh <= 0.14 and 0.025 <= sh <= 0.10 and rbox[1] < 0.1 * WARP_H):
        return None
    inkm = ink * mask
    feats, crops = [], []
    for (a0, b0, a1, b1), size in ((rbox, RANK_SIZE), (sbox, SUIT_SIZE)):
        g = inkm[b0:b1, a0:a1]
        ys, xs = np.nonzero(g > 0.3)
        if len(ys) < 4:
            return None
        g = g[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
        crops.append(g)
        feats.append(glyph_features(g, size, g.shape[1] / g.shape[0]))
    redness = -1.0
    if region.ndim == 3:
        core = mask & (ink > 0.55)
        bg = ink < 0.08
        if core.sum() >= 4 and bg.sum() >= 10:
            px = region.astype(np.float32)
            ic = px[core].mean(0)
            pc = px[bg].mean(0) + 1.0
            d = (pc - ic) / pc  # absorption per channel, B G R
            # red ink absorbs green and blue much more than red; black absorbs all alike
            redness = float(min(d[0], d[1]) - d[2])
    return CornerGlyphs(feats[0], feats[1], redness, (crops[0], crops[1]))


@dataclass
class Pips:
    """The centre of a number card: one suit feature per pip (upright), and how many there are."""

    suits: list[np.ndarray]  # per pip: 1 x D, or 2 x D (both ways up) for a pip on the centre line
    count: int
    width: float = 0.0  # median pip width, fraction of the card width (an ace's pip is big)


PIP_BOX = (0.26, 0.74, 0.08, 0.92)  # x0, x1, y0, y1 of the pip area, fractions of the card


def read_pips(card: np.ndarray, max_feats: int = 4) -> Pips:
    """Pips in the centre of an upright warped card (BGR).  Court pictures give odd shapes: the
    caller only uses this for number ranks."""
    h, w = card.shape[:2]
    x0, x1, y0, y1 = (int(PIP_BOX[0] * w), int(PIP_BOX[1] * w), int(PIP_BOX[2] * h), int(PIP_BOX[3] * h))
    blobs = _ink_blobs(card[y0:y1, x0:x1], dark_every=100, paper_at=0.6)
    if blobs is None:
        return Pips([], 0)
    ink, n, labels, stats, cents = blobs
    H, W = ink.shape
    cands = []
    for i in range(1, n):
        x, y, bw, bh, a = stats[i]
        if x <= 0 or y <= 0 or x + bw >= W or y + bh >= H:
            continue
        if not (0.035 * h <= bh <= 0.2 * h and 0.05 * w <= bw <= 0.3 * w) or a < 0.35 * bw * bh:
            continue
        cands.append(i)
    if not cands:
        return Pips([], 0)
    # pips of one card have one size: keep those near the median height
    med = float(np.median([stats[i, 3] for i in cands]))
    cands = [i for i in cands if 0.75 * med <= stats[i, 3] <= 1.3 * med]
    if len(cands) == 1:  # a lone pip counts only in the middle of the card (an ace)
        x, y, bw, bh, _ = stats[cands[0]]
        if abs(x + bw / 2 - W / 2) > 0.06 * w or abs(y + bh / 2 - H / 2) > 0.06 * h:
            cands = []
    if not cands:
        return Pips([], 0)
    feats = []
    # the pips nearest the centre line are the least likely to be cut or covered
    for i in sorted(cands, key=lambda i: abs(cents[i][0] - W / 2))[:max_feats]:
        x, y, bw, bh, _ = stats[i]
        g = np.ascontiguousarray(ink[y:y + bh, x:x + bw] * (labels[y:y + bh, x:x + bw] == i))
        cy = y + bh / 2 - H / 2
        if abs(cy) < 0.04 * h:  # a centre pip: which way up depends on how the card lies
            feats.append(np.stack([glyph_features(g, SUIT_SIZE, bw / bh),
                                   glyph_features(np.ascontiguousarray(g[::-1, ::-1]), SUIT_SIZE, bw / bh)]))
        else:  # pips in the half away from the reading edge are printed upside down
            feats.append(glyph_features(np.ascontiguousarray(g[::-1, ::-1]) if cy > 0 else g, SUIT_SIZE, bw / bh)[None])
    return Pips(feats, len(cands), float(np.median([stats[i, 2] for i in cands])) / w)


ANCHOR_L2 = 0.02


class LinearHead:
    """Multinomial logistic regression over glyph features (trained with Adam, L2 penalty).

    Training examples are kept (``X``, ``y``, per-example ``w``) so that examples of the
    deck in play can be added with more weight and the head re-fitted in a second.
    """

    def __init__(self, classes: str, X: np.ndarray | None = None, y: np.ndarray | None = None,
                 w: np.ndarray | None = None, l2: float = 1e-4) -> None:
        self.classes = classes
        self.X = np.zeros((0, 0), np.float32) if X is None else X.astype(np.float32)
        self.y = np.zeros(0, np.int32) if y is None else y.astype(np.int32)
        self.w = np.ones(len(self.y), np.float32) if w is None else w.astype(np.float32)
        self.l2 = l2
        self.W: np.ndarray | None = None
        self.b: np.ndarray | None = None
        self.anchor: tuple[np.ndarray, np.ndarray] | None = None  # stock (W, b) when fine-tuning

    def add(self, X: np.ndarray, y: np.ndarray, weight: float = 1.0) -> None:
        if len(y) == 0:
            return
        X = X.astype(np.float32)
        self.X = np.vstack([self.X, X]) if len(self.y) else X
        self.y = np.concatenate([self.y, y.astype(np.int32)])
        self.w = np.concatenate([self.w, np.full(len(y), weight, np.float32)])

    def fit(self, epochs: int = 400, lr: float = 0.05, seed: int = 0) -> LinearHead:
        """Fit on the stored examples.  A head with an ``anchor`` (the stock weights) is fine-tuned
        from it, its weights pulled back towards it: the deck's examples adjust, not replace."""
        n, d = self.X.shape
        k = len(self.classes)
        if n == 0:
            return self
        rng = np.random.default_rng(seed)
        if self.anchor is not None:
            W0, b0 = self.anchor
            W, b = W0.copy(), b0.copy()
            epochs, lr = min(epochs, 150), 0.01
        else:
            W0, b0 = np.zeros((d, k), np.float32), np.zeros(k, np.float32)
            W = (rng.normal(0, 0.01, (d, k))).astype(np.float32)
            b = np.zeros(k, np.float32)
        l2 = self.l2 if self.anchor is None else ANCHOR_L2
        Y = np.zeros((n, k), np.float32)
        Y[np.arange(n), self.y] = 1
        sw = (self.w / self.w.sum())[:, None].astype(np.float32)
        mW, vW, mb, vb = (np.zeros_like(W), np.zeros_like(W), np.zeros_like(b), np.zeros_like(b))
        b1, b2 = 0.9, 0.999
        for t in range(1, epochs + 1):
            Z = self.X @ W + b
            Z -= Z.max(1, keepdims=True)
            P = np.exp(Z)
            P /= P.sum(1, keepdims=True)
            G = (P - Y) * sw
            gW = self.X.T @ G + l2 * (W - W0)
            gb = G.sum(0)
            mW = b1 * mW + (1 - b1) * gW
            vW = b2 * vW + (1 - b2) * gW * gW
            mb = b1 * mb + (1 - b1) * gb
            vb = b2 * vb + (1 - b2) * gb * gb
            a = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
            W -= a * mW / (np.sqrt(vW) + 1e-8)
            b -= a * mb / (np.sqrt(vb) + 1e-8)
        self.W, self.b = W, b
        return self

    def logits(self, F: np.ndarray) -> np.ndarray:
        assert self.W is not None and self.b is not None, "fit() first"
        return F @ self.W + self.b


def log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


RANK_CLASSES = RANKS
SUIT_CLASSES = SUIT_ORDER
