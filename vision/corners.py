"""Finding and reading corner indices directly in a frame, with no card outline needed.

Overlapping cards, light tables and court pictures break card outlines, but a card's
corner index (the rank above a small suit) stays a sharp dark or red mark on white paper.
So the frame is searched for indices themselves:

1. **Ink by local contrast**: the per-pixel minimum of B, G, R (black and red ink are both
   dark in it, white stock is bright) against the mean of its neighbourhood
   (``cv2.adaptiveThreshold``), so no single global threshold; marks must also sit on
   bright, unsaturated paper (the ring around each mark is checked), which rejects felt
   texture and clutter.
2. **Rank-suit pairs**: every mark of glyph size is paired with the nearby smaller marks;
   the vector from rank to suit says which way the card's "down" is, so each pair is cut
   out upright (``PATCH``), whatever the card's rotation, and ``10`` is the union of the
   marks in the rank's row.
3. **Classifiers** (``IndexModel``: two multinomial logistic heads over gradient
   histograms of each glyph, plus the pair's geometry and the ink colour) say which rank,
   which suit, or "not an index" (pips, court pictures, print, clutter).  They are trained
   on real deck artwork rendered on varied backgrounds (``python -m vision.train``).
4. Each index also places its card: the index sits at a known place of the card's corner
   (learnt from the decks), so an index gives the card's quadrilateral; two indices of one
   card agree on it and are merged.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from .glyphs import RANK_CLASSES, RANK_SIZE, SUIT_CLASSES, SUIT_SIZE, glyph_features, log_softmax

# upright patch around one rank-suit pair: PX pixels per unit (the rank-to-suit distance)
PX = 16
PATCH_W, PATCH_H = 48, 52
RANK_AT = (PATCH_W / 2, 16.0)
SUIT_AT = (PATCH_W / 2, 16.0 + PX)
JUNK = "x"
RANK_LABELS = RANK_CLASSES + JUNK
SUIT_LABELS = SUIT_CLASSES + JUNK
INDEX_VERSION = "i4"


@dataclass(frozen=True)
class IndexParams:
    """Knobs of the index finder (pixel sizes of the working image)."""

    work_width: int = 1280  # wider frames are searched at reduced size
    block: int = 31  # neighbourhood of the local-contrast threshold (odd)
    contrast: int = 18  # ink is at least this much darker than its neighbourhood mean
    min_glyph: int = 7  # rank glyph height in pixels, at least
    max_glyph: int = 90
    max_marks: int = 1500  # a cluttered frame: keep the best-shaped marks only


@dataclass
class Marks:
    """Ink marks of a frame: connected components and the images they came from."""

    bgr: np.ndarray
    labels: np.ndarray
    stats: np.ndarray  # x, y, w, h, area per component (cv2 layout)
    cents: np.ndarray
    keep: np.ndarray  # indices of glyph-sized marks


def find_marks(bgr: np.ndarray, p: IndexParams = IndexParams()) -> Marks:
    """Glyph-sized dark marks on bright paper (local contrast, no global threshold)."""
    b, g, r = cv2.split(bgr)
    v = cv2.min(cv2.min(b, g), r)
    # exposure: paper is among the brightest things in view; a dim photo has dim paper and weak ink
    small = v[::4, ::4]
    top = float(np.partition(small.ravel(), int(small.size * 0.99))[int(small.size * 0.99)])
    contrast = int(np.clip(round(p.contrast * top / 200), 8, p.contrast))
    paper_min = max(50.0, 0.55 * top)
    ink = cv2.adaptiveThreshold(v, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, p.block, contrast)
    # paper: the neighbourhood's brightest pixels are bright and unsaturated
    n, labels, stats, cents = cv2.connectedComponentsWithStats(ink, connectivity=8)
    if n <= 1:
        return Marks(bgr, labels, stats, cents, np.zeros(0, np.int64))
    x, y, w, h, a = (stats[:, i] for i in range(5))
    size = np.maximum(w, h)
    ok = (size >= p.min_glyph * 0.45) & (size <= p.max_glyph * 1.2) & (a >= 10) & (a >= 0.12 * w * h)
    ok[0] = False
    idx = np.nonzero(ok)[0]
    if len(idx):
        # the paper around a mark: bright (in the min channel) and unsaturated
        mx = cv2.max(cv2.max(b, g), r)
        H, W = v.shape
        pad = np.maximum(2, size[idx] // 6)
        x0 = np.clip(x[idx] - pad, 0, W - 1)
        x1 = np.clip(x[idx] + w[idx] + pad, 0, W - 1)
        y0 = np.clip(y[idx] - pad, 0, H - 1)
        y1 = np.clip(y[idx] + h[idx] + pad, 0, H - 1)
        xm, ym = (x0 + x1) // 2, (y0 + y1) // 2
        xs = np.stack([x0, x1, x0, x1, xm, xm, x0, x1], 1)  # the four sides of the padded box
        ys = np.stack([y0, y0, y1, y1, y0, y1, ym, ym], 1)
        pv = np.sort(v[ys, xs].astype(np.int32), 1)
        pc = np.sort(mx[ys, xs].astype(np.int32) - v[ys, xs].astype(np.int32), 1)
        # at least half of the ring is paper (an index near the card's edge has the table beside it)
        idx = idx[(pv[:, 4] >= paper_min) & (pc[:, 3] <= 80)]
    if len(idx) > p.max_marks:
        idx = idx[np.argsort(-stats[idx, 4])[:p.max_marks]]
    return Marks(bgr, labels, stats, cents, idx)


def pair_marks(m: Marks, p: IndexParams = IndexParams()) -> np.ndarray:
    """Candidate (rank, suit) pairs of marks: the suit near the rank and not bigger."""
    idx = m.keep
    if len(idx) < 2:
        return np.zeros((0, 2), np.int64)
    st = m.stats[idx]
    size = np.maximum(st[:, 2], st[:, 3]).astype(np.float32)
    c = m.cents[idx].astype(np.float32)
    d = np.sqrt(((c[:, None, :] - c[None, :, :]) ** 2).sum(-1))
    si, sj = size[:, None], size[None, :]
    ok = (d >= 0.5 * si) & (d <= 1.6 * si) & (sj <= 1.2 * si) & (sj >= 0.3 * si) & (si >= p.min_glyph)
    ok &= si <= p.max_glyph
    np.fill_diagonal(ok, False)
    a, b = np.nonzero(ok)
    return np.stack([idx[a], idx[b]], 1)


@dataclass
class Hypotheses:
    """Rank-suit pairs cut out upright and described."""

    pairs: np.ndarray  # (n, 2) component labels
    origin: np.ndarray  # (n, 2) rank centroid in frame pixels
    down: np.ndarray  # (n, 2) frame vector of one unit (rank -> suit)
    rank_f: np.ndarray
    suit_f: np.ndarray
    red: np.ndarray  # (n,) ink redness: > red_split red, below black
    patches: list[np.ndarray] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.pairs)


GEO_DIM = 9


def _geometry(rm: np.ndarray, sm: np.ndarray, n_rank: int) -> np.ndarray | None:
    ry, rx = np.nonzero(rm)
    sy, sx = np.nonzero(sm)
    if len(ry) < 4 or len(sy) < 4:
        return None
    rh, rw = (ry.max() - ry.min() + 1) / PX, (rx.max() - rx.min() + 1) / PX
    sh, sw = (sy.max() - sy.min() + 1) / PX, (sx.max() - sx.min() + 1) / PX
    dx = (sx.mean() - rx.mean()) / PX
    gap = (sy.min() - ry.max()) / PX
    return np.array([rh - 1, rw - 0.7, sh - 0.6, sw - 0.6, dx, gap, np.log(len(sy) / len(ry)),
                     n_rank - 1, 0.0], np.float32)


def describe(m: Marks, pairs: np.ndarray, keep_patches: bool = False) -> Hypotheses:
    """Cut each pair out upright and compute its rank and suit feature vectors."""
    bgr, labels = m.bgr, m.labels
    origins, downs, rfs, sfs, kept, patches, reds = [], [], [], [], [], [], []
    for ri, si in pairs:
        ca, cb = m.cents[ri], m.cents[si]
        u = cb - ca
        s = float(np.hypot(*u))
        if s < 3:
            continue
        rt = np.array([u[1], -u[0]])
        src = np.array([ca, cb, ca + rt], np.float32)
        dst = np.array([RANK_AT, SUIT_AT, (RANK_AT[0] + PX, RANK_AT[1])], np.float32)
        M = cv2.getAffineTransform(dst, src)
        lab = cv2.warpAffine(labels, M, (PATCH_W, PATCH_H), flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP,
                             borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        rm = lab == ri
        sm = lab == si
        if not rm.any() or not sm.any():
            continue
        # the rank's row: other marks beside the rank (the 1 of 10) join it
        ry, rx = np.nonzero(rm)
        top, bot = ry.min(), ry.max()
        rh = bot - top + 1
        x0, x1 = rx.min(), rx.max()
        n_rank = 1
        for other in np.unique(lab[max(0, top):bot + 1]):
            if other in (0, ri, si):
                continue
            om = lab == other
            oy, ox = np.nonzero(om)
            if (abs(int(oy.min()) - int(top)) <= 0.25 * rh and 0.7 * rh <= oy.max() - oy.min() + 1 <= 1.3 * rh
                    and ox.min() <= x1 + 0.25 * rh and ox.max() >= x0 - 0.25 * rh):
                rm |= om
                n_rank += 1
        if n_rank > 2:
            continue
        if n_rank == 2:  # the index's origin is the centre of the whole rank (both marks of a 10)
            ry, rx = np.nonzero(rm)
            rt_u = rt / s
            ca = ca + ((rx.mean() - RANK_AT[0]) * rt_u * s + (ry.mean() - RANK_AT[1]) * u) / PX
        geo = _geometry(rm, sm, n_rank)
        if geo is None:
            continue
        img = cv2.warpAffine(bgr, M, (PATCH_W, PATCH_H), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                             borderMode=cv2.BORDER_REPLICATE)
        red = _redness(img, rm | sm)
        geo[-1] = red
        ink = _ink(img, rm | sm)
        rg = _glyph(rm, ink)
        sg = _glyph(sm, ink)
        rfs.append(np.concatenate([glyph_features(rg, RANK_SIZE, rg.shape[1] / rg.shape[0]), 0.3 * geo]))
        sfs.append(np.concatenate([glyph_features(sg, SUIT_SIZE, sg.shape[1] / sg.shape[0]), 0.3 * geo]))
        origins.append(ca)
        downs.append(u)
        reds.append(red)
        kept.append((ri, si))
        if keep_patches:
            patches.append(img)
    if not kept:
        z = np.zeros((0, 2), np.float32)
        return Hypotheses(np.zeros((0, 2), np.int64), z, z, np.zeros((0, 0), np.float32),
                          np.zeros((0, 0), np.float32), np.zeros(0, np.float32))
    return Hypotheses(np.array(kept), np.array(origins, np.float32), np.array(downs, np.float32),
                      np.array(rfs, np.float32), np.array(sfs, np.float32), np.array(reds, np.float32), patches)


def _ink(img: np.ndarray, marks: np.ndarray) -> np.ndarray:
    """How dark each pixel of an upright patch is against its paper (0 paper .. 1 ink): the
    glyphs' grey edges carry their shape at sizes where a binary mask is only a blob."""
    b, g, r = cv2.split(img)
    v = cv2.min(cv2.min(b, g), r).astype(np.float32)
    near = cv2.dilate(marks.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool) & ~marks
    paper = float(np.percentile(v[near], 75)) if near.any() else float(v.max())
    dark = float(np.percentile(v[marks], 10)) if marks.any() else float(v.min())
    return np.clip((paper - v) / max(paper - dark, 8.0), 0, 1)


def _glyph(mask: np.ndarray, ink: np.ndarray | None = None) -> np.ndarray:
    """The glyph's crop: its ink (within a pixel of its own mark: neighbours stay out), or its mask."""
    ys, xs = np.nonzero(mask)
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    if ink is None:
        return np.ascontiguousarray(mask[y0:y1, x0:x1].astype(np.float32))
    own = cv2.dilate(mask.astype(np.uint8), np.ones((3, 3), np.uint8))[y0:y1, x0:x1].astype(np.float32)
    return np.ascontiguousarray(ink[y0:y1, x0:x1] * own)


def _redness(img: np.ndarray, ink: np.ndarray) -> float:
    """> 0 for red ink, < 0 for black, relative to the paper around it."""
    if ink.sum() < 4:
        return 0.0
    near = cv2.dilate(ink.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool) & ~ink
    core = cv2.erode(ink.astype(np.uint8), np.ones((2, 2), np.uint8)).astype(bool)
    if core.sum() < 3:
        core = ink
    if near.sum() < 4:
        return 0.0
    px = img.astype(np.float32)
    ic = px[core].mean(0)
    pc = np.percentile(px[near], 75, axis=0) + 1.0
    d = (pc - ic) / pc
    return float(min(d[0], d[1]) - d[2])


# ----------------------------------------------------------------------------- the model

class MLPHead:
    """A small two-layer perceptron (ReLU hidden layer, softmax out), numpy only.

    Trained with Adam on mini-batches from a fixed seed (deterministic on one machine);
    inference is two matrix products, fast enough for hundreds of candidates per frame.
    """

    def __init__(self, classes: str, hidden: int = 96) -> None:
        self.classes = classes
        self.hidden = hidden
        self.params: dict[str, np.ndarray] = {}

    def logits(self, X: np.ndarray) -> np.ndarray:
        p = self.params
        H = np.maximum(X @ p["W1"] + p["b1"], 0)
        return H @ p["W2"] + p["b2"]

    def fit(self, X: np.ndarray, y: np.ndarray, w: np.ndarray | None = None, epochs: int = 25, batch: int = 256,
            lr: float = 2e-3, l2: float = 1e-4, seed: int = 0) -> MLPHead:
        rng = np.random.default_rng(seed)
        n, d = X.shape
        k = len(self.classes)
        X = X.astype(np.float32)
        w = np.ones(n, np.float32) if w is None else w.astype(np.float32)
        p = {"W1": (rng.normal(0, 1, (d, self.hidden)) * np.sqrt(2 / d)).astype(np.float32),
             "b1": np.zeros(self.hidden, np.float32),
             "W2": (rng.normal(0, 1, (self.hidden, k)) * np.sqrt(1 / self.hidden)).astype(np.float32),
             "b2": np.zeros(k, np.float32)}
        m = {key: np.zeros_like(v) for key, v in p.items()}
        v2 = {key: np.zeros_like(v) for key, v in p.items()}
        t = 0
        for ep in range(epochs):
            order = rng.permutation(n)
            rate = lr * (0.5 * (1 + np.cos(np.pi * ep / epochs)))  # cosine decay
            for i in range(0, n, batch):
                b = order[i:i + batch]
                xb, yb, wb = X[b], y[b], w[b][:, None] / w[b].sum()
                z1 = xb @ p["W1"] + p["b1"]
                h = np.maximum(z1, 0)
                z = h @ p["W2"] + p["b2"]
                z -= z.max(1, keepdims=True)
                P = np.exp(z)
                P /= P.sum(1, keepdims=True)
                P[np.arange(len(b)), yb] -= 1
                G = P * wb
                g = {"W2": h.T @ G + l2 * p["W2"], "b2": G.sum(0)}
                gh = (G @ p["W2"].T) * (z1 > 0)
                g["W1"] = xb.T @ gh + l2 * p["W1"]
                g["b1"] = gh.sum(0)
                t += 1
                for key in p:
                    m[key] = 0.9 * m[key] + 0.1 * g[key]
                    v2[key] = 0.999 * v2[key] + 0.001 * g[key] * g[key]
                    mh = m[key] / (1 - 0.9 ** t)
                    vh = v2[key] / (1 - 0.999 ** t)
                    p[key] -= (rate * mh / (np.sqrt(vh) + 1e-8)).astype(np.float32)
        self.params = p
        return self



@dataclass
class IndexModel:
    """The corner-index classifier and the card geometry, run with OpenCV's ``dnn`` module.

    ``onnx``: one ONNX graph with two small perceptrons, ``rank_x -> rank_logits`` (13 ranks
    and "not an index") and ``suit_x -> suit_logits`` (4 suits and "not an index");
    :meth:`from_heads` builds it from trained :class:`MLPHead` weights (that needs the
    ``onnx`` package: the ``[train]`` extra); running it needs only OpenCV.
    ``card``: where the card lies relative to its index, in units of the rank-to-suit
    distance in the upright index frame: left, top (of the card's corner, from the rank's
    centre), width, height.  ``red_split``: the ink redness between black and red indices.
    """

    onnx: bytes
    card: tuple[float, float, float, float] = (-0.7, -1.15, 6.7, 10.1)
    red_split: float = 0.12
    _local: threading.local = field(default_factory=threading.local, init=False, repr=False, compare=False)

    @classmethod
    def from_heads(cls, rank: MLPHead, suit: MLPHead, card: tuple[float, float, float, float],
                   red_split: float) -> IndexModel:
        import onnx  # training only (the [train] extra)
        from onnx import TensorProto, helper, numpy_helper

        inits, nodes, inputs, outputs = [], [], [], []
        for name, head in (("rank", rank), ("suit", suit)):
            p = head.params
            for key in ("W1", "b1", "W2", "b2"):
                inits.append(numpy_helper.from_array(p[key].astype(np.float16).astype(np.float32), f"{name}_{key}"))
            nodes += [helper.make_node("Gemm", [f"{name}_x", f"{name}_W1", f"{name}_b1"], [f"{name}_h"]),
                      helper.make_node("Relu", [f"{name}_h"], [f"{name}_r"]),
                      helper.make_node("Gemm", [f"{name}_r", f"{name}_W2", f"{name}_b2"], [f"{name}_logits"])]
            inputs.append(helper.make_tensor_value_info(f"{name}_x", TensorProto.FLOAT, ["n", p["W1"].shape[0]]))
            outputs.append(helper.make_tensor_value_info(f"{name}_logits", TensorProto.FLOAT,
                                                         ["n", p["W2"].shape[1]]))
        graph = helper.make_graph(nodes, "corner_index", inputs, outputs, inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="vision.train")
        model.ir_version = 8
        onnx.checker.check_model(model)
        return cls(model.SerializeToString(), card, red_split)

    def save(self, path: Path) -> None:
        """``path`` (the ONNX graph) and ``path`` with ``.json`` (version, card geometry, colour split)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {"version": INDEX_VERSION, "card": list(self.card), "red_split": self.red_split}
        for target, data in ((path, self.onnx), (path.with_suffix(".json"), json.dumps(meta, indent=1).encode())):
            tmp = target.with_name(target.name + ".tmp")
            tmp.write_bytes(data)
            tmp.replace(target)

    @classmethod
    def load(cls, path: Path) -> IndexModel:
        meta = json.loads(path.with_suffix(".json").read_text())
        if meta.get("version") != INDEX_VERSION:
            raise ValueError(f"index model {path}: version {meta.get('version')}, expected {INDEX_VERSION}")
        model = cls(path.read_bytes(), tuple(float(v) for v in meta["card"]), float(meta["red_split"]))  # type: ignore[arg-type]
        model._net()  # fail now, not at the first frame, if OpenCV cannot read it
        return model

    def _net(self) -> Any:
        net = getattr(self._local, "net", None)  # one net per thread: a dnn.Net is not thread-safe
        if net is None:
            net = cv2.dnn.readNetFromONNX(np.frombuffer(self.onnx, np.uint8))
            self._local.net = net
        return net

    def probabilities(self, hyp: Hypotheses) -> tuple[np.ndarray, np.ndarray]:
        net = self._net()
        net.setInput(np.ascontiguousarray(hyp.rank_f, np.float32), "rank_x")
        net.setInput(np.ascontiguousarray(hyp.suit_f, np.float32), "suit_x")
        zr, zs = net.forward(["rank_logits", "suit_logits"])
        return np.exp(log_softmax(zr)), np.exp(log_softmax(zs))

    def card_quad(self, origin: np.ndarray, down: np.ndarray) -> np.ndarray:
        """The card's corners (frame pixels) from its index's rank centre and unit down vector."""
        rt = np.array([down[1], -down[0]], np.float32)
        x0, y0, w, h = self.card
        pts = [(x0, y0), (x0 + w, y0), (x0 + w, y0 + h), (x0, y0 + h)]
        return np.array([origin + x * rt + y * down for x, y in pts], np.float32)

    @property
    def edge_span(self) -> float:
        """How far apart (units) the two indices on one short edge of a four-index card are: the
        card's width less the index's inset from each side."""
        x0, _, w, _ = self.card
        return w + 2 * x0

    def other_side(self, quad: np.ndarray) -> np.ndarray:
        """The card an index places (``quad``: the index at the card's top-left corner) placed with the
        index at its top-right corner instead: a four-index deck has one there too, read the same way
        up.  The card is shifted across by :attr:`edge_span`."""
        across = quad[1] - quad[0]
        return (quad - across * (self.edge_span / self.card[2])).astype(np.float32)


INDEX_FILE = Path(__file__).with_name("data") / "index.onnx"


@dataclass(frozen=True)
class IndexRead:
    """One corner index read in a frame: the card's face, confidence and estimated quadrilateral."""

    face: str  # best guess, e.g. "Td"
    confidence: float
    quad: np.ndarray  # the card's estimated corners (frame pixels)
    origin: np.ndarray  # the rank's centre
    down: np.ndarray  # one unit towards the suit
    p_index: float  # probability that the pair is an index at all
    corners: int = 1  # corner indices of the card read alike (2: both of its corners)
    disputed: bool = False  # another reading of the same index, or of the card's other corner, disagrees
    # the index model's probability of the suit read (not renormalised over the four suits: a suit glyph that
    # looks like no suit keeps it low), the surest of the card's corners read alike
    suit_p: float = 1.0


COLOUR_MARGIN = 0.06
DECK_BLEND = 0.5  # weight of the deck in play's examples in a read's confidence (geometric blend)


class DeckExamples:
    """Labelled index examples of the deck in play (few-shot memory over the glyph features).

    A read's rank and suit are compared with the stored examples (cosine similarity of the
    feature vectors, the best example per class, a softmax over the classes): a read whose
    rank and suit look like the deck's own examples of them gains confidence, one that looks
    like another class loses it.  The read itself stays the trained model's, so a few
    examples cannot pull a read to a wrong class.  Classes with no examples stay neutral.
    """

    def __init__(self, weight: float = 1.0, temperature: float = 0.05) -> None:
        self.weight = weight
        self.temperature = temperature
        self.rank_f: list[np.ndarray] = []
        self.rank_y: list[int] = []
        self.suit_f: list[np.ndarray] = []
        self.suit_y: list[int] = []

    def __len__(self) -> int:
        return len(self.rank_y)

    def add(self, rank_f: np.ndarray, suit_f: np.ndarray, face: str) -> None:
        self.rank_f.append(rank_f / (np.linalg.norm(rank_f) + 1e-6))
        self.rank_y.append(RANK_CLASSES.index(face[0]))
        self.suit_f.append(suit_f / (np.linalg.norm(suit_f) + 1e-6))
        self.suit_y.append(SUIT_CLASSES.index(face[1]))

    def _log_odds(self, F: np.ndarray, ex: list[np.ndarray], ys: list[int], k: int) -> np.ndarray:
        if not ex:
            return np.zeros((len(F), k), np.float32)
        Fn = F / (np.linalg.norm(F, axis=1, keepdims=True) + 1e-6)
        sim = Fn @ np.stack(ex).T
        y = np.array(ys)
        out = np.empty((len(F), k), np.float32)
        present = []
        for c in range(k):
            sel = y == c
            if sel.any():
                out[:, c] = sim[:, sel].max(1)
                present.append(c)
        absent = [c for c in range(k) if c not in present]
        if absent:
            out[:, absent] = out[:, present].mean(1, keepdims=True)
        return self.weight * log_softmax(out / self.temperature)

    def rank_log_odds(self, F: np.ndarray) -> np.ndarray:
        return self._log_odds(F, self.rank_f, self.rank_y, len(RANK_CLASSES))

    def suit_log_odds(self, F: np.ndarray) -> np.ndarray:
        return self._log_odds(F, self.suit_f, self.suit_y, len(SUIT_CLASSES))


def upright_corner_pairs(m: Marks, pairs: np.ndarray, corner: tuple[float, float] = (0.25, 0.32)) -> np.ndarray:
    """The pairs of an upright warped card that can be its indices: the rank in the top-left
    corner with the suit below it, or in the bottom-right corner with the suit above it."""
    if not len(pairs):
        return pairs
    h, w = m.labels.shape
    a, b = m.cents[pairs[:, 0]], m.cents[pairs[:, 1]]
    down = b[:, 1] - a[:, 1]
    side = np.abs(b[:, 0] - a[:, 0])
    tl = (a[:, 0] < corner[0] * w) & (a[:, 1] < corner[1] * h) & (down > side)
    br = (a[:, 0] > (1 - corner[0]) * w) & (a[:, 1] > (1 - corner[1]) * h) & (-down > side)
    # glyph heights an index has on a card of this size (as vision.glyphs.read_corner checks)
    rh, sh = m.stats[pairs[:, 0], 3] / h, m.stats[pairs[:, 1], 3] / h
    return pairs[(tl | br) & (rh >= 0.04) & (rh <= 0.16) & (sh >= 0.02) & (sh <= 0.12)]


CARD_CORNER = (0.3, 0.36)  # the part of an upright card that holds its index (fractions of w, h)


def corner_strip(card: np.ndarray) -> np.ndarray:
    """An upright warped card's two index corners side by side, each turned top-left (the
    bottom-right one by half a turn), with a strip of the card's paper between them: all the
    corner-index reader needs to read a card read whole, at a fraction of the card's pixels."""
    h, w = card.shape[:2]
    cw, ch = int(w * CARD_CORNER[0]), int(h * CARD_CORNER[1])
    gap = max(4, cw // 6)
    paper = np.percentile(card[::7, ::7].reshape(-1, card.shape[2]), 90, axis=0).astype(card.dtype)
    out = np.empty((ch, 2 * cw + gap, card.shape[2]), card.dtype)
    out[:] = paper
    out[:, :cw] = card[:ch, :cw]
    out[:, cw + gap:] = card[h - ch:, w - cw:][::-1, ::-1]
    return out


def strip_corner_pairs(m: Marks, pairs: np.ndarray, card_h: int, card_w: int,
                       corner: tuple[float, float] = (0.25, 0.32)) -> np.ndarray:
    """The pairs of a :func:`corner_strip` that can be an index: the rank near its corner's top-left
    with the suit below it, glyphs of an index's height on a card of this size (as
    :func:`upright_corner_pairs`)."""
    if not len(pairs):
        return pairs
    sw = m.labels.shape[1]
    cw = int(card_w * CARD_CORNER[0])
    a, b = m.cents[pairs[:, 0]], m.cents[pairs[:, 1]]
    x = np.where(a[:, 0] < sw / 2, a[:, 0], a[:, 0] - (sw - cw))
    down = b[:, 1] - a[:, 1]
    side = np.abs(b[:, 0] - a[:, 0])
    tl = (x >= 0) & (x < corner[0] * card_w) & (a[:, 1] < corner[1] * card_h) & (down > side)
    rh, sh = m.stats[pairs[:, 0], 3] / card_h, m.stats[pairs[:, 1], 3] / card_h
    return pairs[tl & (rh >= 0.04) & (rh <= 0.16) & (sh >= 0.02) & (sh <= 0.12)]


def read_indices(frame: np.ndarray, model: IndexModel, p: IndexParams = IndexParams(),
                 min_conf: float = 0.05, deck: DeckExamples | None = None,
                 upright_card: bool = False, corners_of: tuple[int, int] | None = None,
                 four_index: bool = False) -> list[IndexRead]:
    """Every corner index in a BGR frame, merged per card (two corners, or the 1 and 0 of a 10).

    ``four_index``: a four-index card's corners are told apart when merging (:func:`merge_reads`
    with the card's geometry): what the two-reader camera does; the default recogniser merges
    without it (its thresholds and its deck-in-play calibration were measured that way).

    ``upright_card``: the frame is one card warped upright; only its two index corners are read.
    ``corners_of``: the frame is a :func:`corner_strip` of an upright card of this (height, width);
    only its indices are read (their quads and origins are the strip's, not a frame's)."""
    h, w = frame.shape[:2]
    scale = min(1.0, p.work_width / max(w, 1))
    img = cv2.resize(frame, (int(w * scale), int(h * scale)), interpolation=cv2.INTER_AREA) if scale < 1 else frame
    m = find_marks(img, p)
    pairs = pair_marks(m, p)
    if corners_of is not None:
        pairs = strip_corner_pairs(m, pairs, *corners_of)
    elif upright_card:
        pairs = upright_corner_pairs(m, pairs)
    hyp = describe(m, pairs)
    if not len(hyp):
        return []
    pr, ps = model.probabilities(hyp)
    jr, js = RANK_LABELS.index(JUNK), SUIT_LABELS.index(JUNK)
    qr = qs = None
    if deck is not None and len(deck):  # the deck in play's own glyphs: how much they agree with each class
        qr, qs = np.exp(deck.rank_log_odds(hyp.rank_f)), np.exp(deck.suit_log_odds(hyp.suit_f))
    ri = np.argmax(pr[:, :jr], 1)
    red = hyp.red - model.red_split
    out: list[IndexRead] = []
    for k in range(len(hyp)):
        p_index = float((1 - pr[k, jr]) * (1 - ps[k, js]))
        if p_index < min_conf:
            continue
        allowed = "dh" if red[k] > 0 else "cs"
        si = [SUIT_LABELS.index(c) for c in allowed]
        sj = si[int(np.argmax(ps[k, si]))]
        colour = min(1.0, abs(float(red[k])) / COLOUR_MARGIN)
        conf = float(pr[k, ri[k]] * ps[k, sj] / max(float(ps[k, :js].sum()), 1e-6)) * p_index ** 0.5
        conf *= 0.5 + 0.5 * colour
        if qr is not None and qs is not None:
            # the read stays the trained model's; the deck's examples only vouch for it or doubt it
            agree = float(qr[k, ri[k]] * qs[k, sj])
            conf = conf ** (1 - DECK_BLEND) * agree ** DECK_BLEND
        if conf < min_conf:
            continue
        face = RANK_CLASSES[ri[k]] + SUIT_LABELS[sj]
        o, d = hyp.origin[k] / scale, hyp.down[k] / scale
        out.append(IndexRead(face, conf, model.card_quad(o, d), o, d, p_index, suit_p=float(ps[k, sj])))
    return merge_reads(out, hyp.pairs if scale == 1.0 else None, model if four_index else None)


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    inter, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    ua = abs(cv2.contourArea(a)) + abs(cv2.contourArea(b)) - inter
    return float(inter / ua) if ua > 0 else 0.0


def merge_reads(reads: list[IndexRead], pairs: np.ndarray | None = None,
                model: IndexModel | None = None) -> list[IndexRead]:
    """One read per card: reads of the same index (the 1 and 0 of a 10) or of the same card's two
    corners are merged; reads of one index that disagree lower each other's confidence.

    With the card's geometry (``model``) the corners of a four-index card are told apart too: two
    indices that read alike and place one card when each is taken for the card's left or right
    index (:func:`_one_card`: the two on one short edge, or on one long edge) are one card, placed
    where they agree (an index at the card's right corner alone places a card shifted across, a
    thin slice of the real one)."""
    reads = sorted(reads, key=lambda r: -r.confidence)
    kept: list[IndexRead] = []
    for r in reads:
        unit = float(np.hypot(*r.down))
        dup = None
        for i, k in enumerate(kept):
            diagonal = _opposite_corners(k, r)
            quad = _one_card(k, r, model) if model is not None and k.face == r.face else None
            if diagonal and k.face == r.face and k.corners < 2 and (quad is None or quad is k.quad):
                quad = _quad_from_corners(k, r)  # the card's diagonal corners, each the left one: both give its corners
            if quad is not None or (diagonal and k.face == r.face):  # one card's indices agree: one read, its quad
                c = 1 - (1 - k.confidence) * (1 - r.confidence)
                kept[i] = replace(k, confidence=c, quad=_quad_from_corners(k, r) if quad is None else quad,
                                  p_index=max(k.p_index, r.p_index), corners=2, suit_p=max(k.suit_p, r.suit_p))
                dup = i
                break
            if _opposite_corners(k, r) and _iou(r.quad, k.quad) > 0.5:
                # one card's two indices that disagree: both are kept, each marked (the evidence gate names
                # neither); without the gate each stands on its own confidence, as before the gate existed
                # (dropping the weaker read instead measured one more wrong card on the dev scenes)
                kept[i] = replace(k, disputed=True)
                r = replace(r, disputed=True)
            same_index = float(np.hypot(*(r.origin - k.origin))) < 0.8 * unit
            if same_index or _iou(r.quad, k.quad) > 0.6:
                dup = i
                if k.face != r.face and same_index:
                    # one index, two readings: trust neither fully
                    kept[i] = replace(k, confidence=k.confidence * (1 - r.confidence))
                elif k.face == r.face and not same_index:  # the card's other corner agrees
                    c = 1 - (1 - k.confidence) * (1 - r.confidence)
                    kept[i] = replace(k, confidence=c, p_index=max(k.p_index, r.p_index), corners=2,
                                      suit_p=max(k.suit_p, r.suit_p))
                elif k.face != r.face:
                    dup = None  # two cards lying close: keep both
                    continue
                break
        if dup is None:
            kept.append(r)
    return kept


def labelled_examples(image: np.ndarray, face: str, model: IndexModel, deck: DeckExamples,
                      p: IndexParams = IndexParams(), min_iou: float = 0.3) -> int:
    """Add the indices of the one card ``image`` shows (a crop around it: a warped card, or a
    labelled box with a little margin) to ``deck`` as examples of ``face``.  Returns how many.

    The card's own indices are told from a neighbour's by the card each index places: it must
    cover the crop (``min_iou``); and by colour.
    """
    m = find_marks(image, p)
    hyp = describe(m, pair_marks(m, p))
    if not len(hyp):
        return 0
    pr, ps = model.probabilities(hyp)
    h, w = image.shape[:2]
    frame = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    red = face[1] in "dh"
    n = 0
    for k in range(len(hyp)):
        if (1 - pr[k, -1]) * (1 - ps[k, -1]) < 0.5 or (hyp.red[k] > model.red_split) != red:
            continue
        if _iou(model.card_quad(hyp.origin[k], hyp.down[k]), frame) < min_iou:
            continue
        deck.add(hyp.rank_f[k], hyp.suit_f[k], face)
        n += 1
    return n


SAME_CARD_IOU = 0.75  # two indices' placements of a card overlap this much: the same card


def _one_card(a: IndexRead, b: IndexRead, model: IndexModel) -> np.ndarray | None:
    """The card two indices place together, each taken for the card's left index or its right one
    (:meth:`IndexModel.other_side`), when some way round they place the same card; else None.  The
    indices must be a card's apart (not one index read twice) and of one size."""
    ua, ub = float(np.hypot(*a.down)), float(np.hypot(*b.down))
    if not 0.75 < ua / ub < 1.33 or float(np.hypot(*(b.origin - a.origin))) < 0.5 * model.edge_span * ua:
        return None
    cos = float(a.down @ b.down) / (ua * ub)
    side = model.other_side
    if a.corners >= 2:  # ``a``'s quad is its card's already (its indices agreed on it): one way round fits
        ways = [(a.quad, b.quad), (a.quad, side(b.quad))]
    elif cos > 0.7:  # one short edge, read the same way up: one is the left index, the other the right
        ways = [(a.quad, side(b.quad)), (side(a.quad), b.quad)]
    elif cos < -0.7:  # diagonal corners (both left, or both right, each the way it reads); two indices on
        # one long edge are not taken: the card may lie on either side of them
        ways = [(a.quad, b.quad), (side(a.quad), side(b.quad))]
    else:
        return None
    best, quad = SAME_CARD_IOU, None
    for qa, qb in ways:
        iou = _iou(qa, qb)
        if iou > best:
            best, quad = iou, qa
    return quad


def _opposite_corners(a: IndexRead, b: IndexRead) -> bool:
    """Two reads sit at the two index corners of one card: facing opposite ways, a card apart."""
    ua, ub = float(np.hypot(*a.down)), float(np.hypot(*b.down))
    if float(a.down @ b.down) / (ua * ub) > -0.7 or not 0.6 < ua / ub < 1.6:
        return False
    d = float(np.hypot(*(b.origin - a.origin))) / (0.5 * (ua + ub))
    return 4.5 < d < 14.0


def _quad_from_corners(a: IndexRead, b: IndexRead) -> np.ndarray:
    """The card's quadrilateral from its two indices: each index's own corner of the card
    (read from the card geometry, its nearer corner), the other two along the card's sides."""
    qa, qb = a.quad, b.quad
    p0 = qa[0]  # the corner beside ``a``'s index
    p2 = qb[0]  # the corner beside ``b``'s index, diagonally opposite
    rt = np.array([a.down[1], -a.down[0]], np.float32)
    rt /= float(np.hypot(*rt)) + 1e-9
    dn = a.down / (float(np.hypot(*a.down)) + 1e-9)
    diag = p2 - p0
    p1 = p0 + float(diag @ rt) * rt
    p3 = p0 + float(diag @ dn) * dn
    return np.array([p0, p1, p2, p3], np.float32)
