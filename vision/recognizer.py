"""The card recogniser: frame -> cards with confidence and box, ``unknown`` below a threshold.

Usage::

    rec = Recognizer.stock()                 # trained on synthetic indices, cached on disk
    for det in rec.recognize(frame_bgr):     # every card in the frame
        print(det.card, det.confidence, det.box, det.face)
    rec.scan(frame_bgr, layout)              # {Zone: [Detection]} by regions of interest

Each card is warped upright and both corner indices are read (see :mod:`vision.glyphs`);
the evidence of the two corners is pooled, so one covered or glared corner still reads,
and two corners that disagree lower the confidence instead of producing a guess.
Colour (red/black) is decided first and leaves two suits for the shape to choose from;
on number cards the centre pips back the suit and their count the rank.  The stock
weights ship in ``vision/data/stock.npz`` (trained on synthetic cards in the training
fonts only: ``python -m vision.train``); :meth:`Recognizer.refine` fine-tunes them on
labelled crops of the deck in play.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from controller.geometry import Zone
from controller.rules.cards import Card, standard_deck

from .detect import WARP_H, WARP_W, DetectParams, box_of, find_quads, max_channel, min_channel, warp
from .glyphs import (
    RANK_CLASSES,
    RED_SPLIT,
    SUIT_CLASSES,
    SUITS_BLACK,
    SUITS_RED,
    CornerGlyphs,
    LinearHead,
    Pips,
    corner_regions,
    log_softmax,
    read_corner,
    read_pips,
)

log = logging.getLogger(__name__)

MODEL_VERSION = "v1"  # bump when features change (the shipped weights must be rebuilt)
DEFAULT_THRESHOLD = 0.6
COLOUR_MARGIN = 0.12  # redness beyond the split that counts as a sure colour
ONE_CORNER = 0.9  # a card read from one corner only is trusted a little less
ONE_CORNER_COURT = 0.9  # (kept equal: making it stricter cost 2 % unknowns on the dev set for no gain)
PIP_EXCESS = 0.3  # more pips than the rank read has: covers hide pips, nothing adds them
PIP_WEIGHT = 4.0  # the pips (bigger than the index suit) count as much as four index corners
PIP_COUNT_LOGIT = 2.0  # log-odds a pip count adds to the number rank it matches
SUIT_MASS = 0.05  # below this probability mass on the colour's two suits, confidence fades
ACE_PIP_WIDTH = 0.16  # a lone centre pip at least this wide (of the card) makes an ace


def cache_dir() -> Path:
    """``$TABLECTL_VISION_CACHE``, else ``$XDG_CACHE_HOME/poker-table-controller/vision``."""
    env = os.environ.get("TABLECTL_VISION_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "poker-table-controller" / "vision"


@dataclass(frozen=True)
class Detection:
    """One card seen in a frame.  ``card`` is None when unknown (or face down)."""

    card: Card | None
    confidence: float
    quad: np.ndarray = field(repr=False, compare=False)
    face: str = "up"
    crop: np.ndarray | None = field(default=None, repr=False, compare=False)  # the warped card (BGR)
    zone: Zone | None = None
    slot: int | None = None

    @property
    def box(self) -> tuple[int, int, int, int]:
        return box_of(self.quad)

    @property
    def center(self) -> tuple[float, float]:
        c = self.quad.mean(0)
        return float(c[0]), float(c[1])

    def to_dict(self) -> dict[str, Any]:
        return {
            "card": None if self.card is None else self.card.face,
            "confidence": round(float(self.confidence), 4),
            "box": list(self.box),
            "face": self.face,
        }


@dataclass(frozen=True)
class ZoneROI:
    """A region of interest of one camera: where a zone's cards lie in the frame.

    ``expect_face``: ``"down"`` where cards belong face down (a face-up card there is
    exposed), ``"up"`` for the board, None where the camera sees faces by design (a rail
    camera on hole cards).
    """

    zone: Zone
    rect: tuple[int, int, int, int]  # x, y, w, h in frame pixels
    slot: int | None = None
    expect_face: str | None = None

    def contains(self, x: float, y: float) -> bool:
        rx, ry, rw, rh = self.rect
        return rx <= x < rx + rw and ry <= y < ry + rh


@dataclass(frozen=True)
class CameraLayout:
    """The regions of interest of one camera (board slots, seat rails ...)."""

    rois: tuple[ZoneROI, ...]

    def locate(self, x: float, y: float) -> ZoneROI | None:
        return next((r for r in self.rois if r.contains(x, y)), None)

    @property
    def zones(self) -> set[Zone]:
        return {r.zone for r in self.rois}

    def expect_face(self, zone: Zone) -> str | None:
        return next((r.expect_face for r in self.rois if r.zone == zone), None)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CameraLayout:
        """``{"board/0": [x, y, w, h], "seat:3": {"rect": [x, y, w, h], "expect_face": "down"}}``."""
        rois = []
        for key, val in data.items():
            zone_txt, _, slot = key.partition("/")
            spec = val if isinstance(val, Mapping) else {"rect": val}
            rect = tuple(int(v) for v in spec["rect"])
            if len(rect) != 4:
                raise ValueError(f"{key}: rect needs x, y, w, h")
            rois.append(ZoneROI(Zone.parse(zone_txt), rect, int(slot) if slot else None,  # type: ignore[arg-type]
                                spec.get("expect_face")))
        return cls(tuple(rois))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for r in self.rois:
            key = r.zone.name + ("" if r.slot is None else f"/{r.slot}")
            out[key] = {"rect": list(r.rect), **({"expect_face": r.expect_face} if r.expect_face else {})}
        return out


# ----------------------------------------------------------------------------- model

@dataclass
class CardModel:
    """Two linear heads over glyph features: rank (13 classes) and suit (4 classes).

    A stock model holds weights only.  :meth:`Recognizer.refine` stores the deck's
    examples in the heads and fine-tunes from the stock weights (kept as the anchor).
    """

    rank: LinearHead
    suit: LinearHead
    extra: int = 0  # labelled examples of the deck in play added by refine()

    def save(self, path: Path, with_examples: bool = True) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        arrays: dict[str, np.ndarray] = {"version": np.array(MODEL_VERSION)}
        for name, head in (("r", self.rank), ("s", self.suit)):
            assert head.W is not None and head.b is not None
            arrays |= {f"{name}W": head.W.astype(np.float32), f"{name}b": head.b.astype(np.float32)}
            if head.anchor is not None:
                arrays |= {f"{name}W0": head.anchor[0], f"{name}b0": head.anchor[1]}
            if with_examples and len(head.y):
                arrays |= {f"{name}X": head.X.astype(np.float16), f"{name}y": head.y.astype(np.int8),
                           f"{name}w": head.w.astype(np.float16)}
        np.savez_compressed(tmp, extra=np.array(self.extra), **arrays)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path | Any) -> CardModel:
        heads = []
        with np.load(path) as z:
            if str(z["version"]) != MODEL_VERSION:
                raise ValueError(f"card model {path}: version {z['version']}, expected {MODEL_VERSION}")
            for name, classes in (("r", RANK_CLASSES), ("s", SUIT_CLASSES)):
                h = LinearHead(classes, *(z[f"{name}{a}"] for a in "Xyw")) if f"{name}X" in z else LinearHead(classes)
                h.W, h.b = z[f"{name}W"], z[f"{name}b"]
                if f"{name}W0" in z:
                    h.anchor = (z[f"{name}W0"], z[f"{name}b0"])
                heads.append(h)
            return cls(heads[0], heads[1], int(z["extra"]))

    def prepare_refine(self) -> None:
        """Anchor both heads at their current weights (once) before the deck's examples go in."""
        for head in (self.rank, self.suit):
            if head.anchor is None:
                assert head.W is not None and head.b is not None
                head.anchor = (head.W.copy(), head.b.copy())
                head.X, head.y, head.w = np.zeros((0, head.W.shape[0]), np.float32), np.zeros(0, np.int32), \
                    np.zeros(0, np.float32)

    def add(self, glyphs: Iterable[tuple[CornerGlyphs, Card]], weight: float = 1.0) -> int:
        rX, ry, sX, sy = [], [], [], []
        for g, card in glyphs:
            if card.rank is None or card.suit is None:
                continue
            rX.append(g.rank)
            ry.append(RANK_CLASSES.index(card.rank))
            sX.append(g.suit)
            sy.append(SUIT_CLASSES.index(card.suit))
        if rX:
            self.rank.add(np.array(rX), np.array(ry), weight)
            self.suit.add(np.array(sX), np.array(sy), weight)
        return len(rX)

    def add_suits(self, pips: Iterable[tuple[np.ndarray, Card]], weight: float = 1.0) -> int:
        """Suit-only examples (pips)."""
        pairs = [(f, SUIT_CLASSES.index(c.suit)) for f, c in pips if c.suit is not None]
        if pairs:
            self.suit.add(np.array([f for f, _ in pairs]), np.array([y for _, y in pairs]), weight)
        return len(pairs)

    def fit(self) -> CardModel:
        self.rank.fit()
        self.suit.fit()
        return self


def _card_glyphs(card_img: np.ndarray) -> list[CornerGlyphs]:
    out = []
    for region in corner_regions(card_img):
        g = read_corner(region)
        if g is not None:
            out.append(g)
    return out


NUMBER_RANKS = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "T": 10}


def _training_glyphs(cards: Sequence[Card], seeds: Iterable[int]) -> tuple[list[tuple[CornerGlyphs, Card]],
                                                                            list[tuple[np.ndarray, Card]]]:
    from .synth import augment_card

    corners, pips = [], []
    for seed in seeds:
        for i, card in enumerate(cards):
            img = augment_card(card, seed * 1000 + i, split="train")
            img = cv2.resize(cv2.cvtColor(img, cv2.COLOR_RGB2BGR), (WARP_W, WARP_H), interpolation=cv2.INTER_AREA)
            corners += [(g, card) for g in _card_glyphs(img)]
            if card.rank in NUMBER_RANKS:
                pips += [(f[0], card) for f in read_pips(img, max_feats=2).suits if len(f) == 1]
    return corners, pips


STOCK_ROUNDS = 96  # passes over the 52 cards


def build_stock_model(rounds: int = STOCK_ROUNDS, workers: int = 2) -> CardModel:
    """Train the stock model on synthetic cards in the training fonts (deterministic)."""
    deck = standard_deck()
    seeds = list(range(rounds))
    if workers > 1 and rounds > 1:
        from concurrent.futures import ProcessPoolExecutor

        chunks = [seeds[i::workers] for i in range(workers)]
        with ProcessPoolExecutor(workers) as ex:
            parts = list(ex.map(_training_glyphs, [deck] * workers, chunks))
    else:
        parts = [_training_glyphs(deck, seeds)]
    model = CardModel(LinearHead(RANK_CLASSES), LinearHead(SUIT_CLASSES))
    for corners, pips in parts:
        model.add(corners)
        model.add_suits(pips)
    model.fit()
    for head in (model.rank, model.suit):  # the weights are the model; drop the training set
        head.X = np.zeros((0, head.X.shape[1]), np.float32)
        head.y, head.w = np.zeros(0, np.int32), np.zeros(0, np.float32)
    return model


def _stock_key(rounds: int) -> str:
    from . import synth

    fonts = "|".join(synth.available_fonts("train") + synth.available_suit_fonts("train"))
    h = hashlib.sha1(f"{MODEL_VERSION}|{rounds}|{fonts}".encode()).hexdigest()[:12]
    return f"stock-{h}.npz"


STOCK_FILE = Path(__file__).with_name("data") / "stock.npz"  # shipped weights (about 40 kB)


def stock_model(rounds: int = STOCK_ROUNDS, shipped: bool = True) -> CardModel:
    """The stock model: the shipped weights; else the cache folder's; else built now and cached.

    Rebuild the shipped file with ``python -m vision.train`` (deterministic).
    """
    if shipped and STOCK_FILE.exists():
        try:
            return CardModel.load(STOCK_FILE)
        except (OSError, ValueError, KeyError):
            log.warning("shipped card model unreadable", extra={"event": "vision_model_bad"})
    path = cache_dir() / _stock_key(rounds)
    if path.exists():
        try:
            return CardModel.load(path)
        except (OSError, ValueError, KeyError):
            log.warning("stock model cache unreadable, rebuilding", extra={"event": "vision_cache_bad"})
    t = time.perf_counter()
    model = build_stock_model(rounds)
    log.info("built stock card model", extra={"event": "vision_model_built", "seconds": time.perf_counter() - t})
    try:
        model.save(path, with_examples=False)
    except OSError:
        log.warning("cannot cache the card model", extra={"event": "vision_cache_write", "path": str(path)})
    return model


# ----------------------------------------------------------------------------- recogniser

@dataclass(frozen=True)
class Reading:
    card: Card | None
    confidence: float
    face: str
    best: Card | None = None  # the best guess even when below the threshold


class Recognizer:
    """Cards in frames.  ``threshold``: below it a card is reported unknown (``card`` None)."""

    def __init__(self, model: CardModel | None = None, threshold: float = DEFAULT_THRESHOLD,
                 detect: DetectParams | None = None, deck: str = "A") -> None:
        self.model = model if model is not None else stock_model()
        self.threshold = threshold
        self.detect_params = detect or DetectParams()
        self.deck = deck

    @classmethod
    def stock(cls, **kw: Any) -> Recognizer:
        return cls(stock_model(), **kw)

    # -- single card
    def face_of(self, card_img: np.ndarray) -> tuple[str, float]:
        """``("up" | "down", paper fraction)`` of an upright warped card: faces are mostly white."""
        mn_all = min_channel(card_img)
        mx_all = max_channel(card_img)
        ref = float(np.partition(mn_all.ravel(), int(mn_all.size * 0.95))[int(mn_all.size * 0.95)])
        fracs = []
        for mn, mx in zip(corner_regions(mn_all), corner_regions(mx_all), strict=True):
            paper = (mn > 0.72 * ref) & (cv2.absdiff(mx, mn) < 60)
            fracs.append(float(paper.mean()))
        f = max(fracs)
        return ("up" if f > 0.5 else "down"), f

    def read(self, card_img: np.ndarray) -> Reading:
        """Read an upright warped card (``WARP_H`` x ``WARP_W`` BGR)."""
        if card_img.shape[:2] != (WARP_H, WARP_W):
            card_img = cv2.resize(card_img, (WARP_W, WARP_H), interpolation=cv2.INTER_AREA)
        face, frac = self.face_of(card_img)
        if face == "down":
            return Reading(None, float(min(1.0, (0.5 - frac) * 4)), "down")
        glyphs = _card_glyphs(card_img)
        card, conf = self.decide(glyphs, read_pips(card_img) if glyphs else None)
        return Reading(card if conf >= self.threshold else None, conf, "up", card)

    def decide(self, glyphs: Sequence[CornerGlyphs], pips: Pips | None = None) -> tuple[Card | None, float]:
        """Pool the corners' evidence: the best card and its confidence (0..1).

        On a number card the centre cross-checks the index: the pip count backs one rank,
        the pips' shape backs the suit.
        """
        if not glyphs:
            return None, 0.0
        Lr = log_softmax(self.model.rank.logits(np.stack([g.rank for g in glyphs]))).sum(0)
        Ls4 = log_softmax(self.model.suit.logits(np.stack([g.suit for g in glyphs]))).sum(0)
        red = np.array([g.redness for g in glyphs]) - RED_SPLIT
        is_red = float(red.mean()) > 0
        colour_conf = min(1.0, abs(float(red.mean())) / COLOUR_MARGIN)
        if len(glyphs) > 1 and (red > 0).any() != (red > 0).all():
            colour_conf *= 0.5  # the corners disagree on colour
        allowed = SUITS_RED if is_red else SUITS_BLACK
        si = [SUIT_CLASSES.index(c) for c in allowed]
        if pips is not None:
            n = pips.count
            if 2 <= n <= 10 or (n == 1 and pips.width >= ACE_PIP_WIDTH):
                Lr[RANK_CLASSES.index(next(r for r, v in NUMBER_RANKS.items() if v == n))] += PIP_COUNT_LOGIT
            if pips.suits and RANK_CLASSES[int(np.argmax(Lr))] in NUMBER_RANKS:
                Lp = [log_softmax(self.model.suit.logits(f)).max(0) for f in pips.suits]
                Ls4 = Ls4 + PIP_WEIGHT * np.mean(Lp, axis=0)
        pr = np.exp(log_softmax(Lr))
        p4 = np.exp(log_softmax(Ls4))
        ps = p4[si] / max(float(p4[si].sum()), 1e-12)
        # shapes that look like neither suit of the colour (a blur, a smudge) are not trusted
        mass = min(1.0, float(p4[si].sum()) / SUIT_MASS)
        ri, sj = int(np.argmax(pr)), int(np.argmax(ps))
        conf = float(pr[ri] * ps[sj]) * mass * min(1.0, colour_conf * 2)
        rank = RANK_CLASSES[ri]
        if len(glyphs) == 1:  # one corner only; a court card has no pips to back it up either
            conf *= ONE_CORNER if rank in NUMBER_RANKS else ONE_CORNER_COURT
        if pips is not None and pips.count >= 2 and rank in NUMBER_RANKS and pips.count > NUMBER_RANKS[rank]:
            conf *= PIP_EXCESS  # more pips than the rank has: covers hide pips, nothing adds them
        return Card(rank, allowed[sj], self.deck), conf

    # -- frames
    def recognize(self, frame: np.ndarray, roi: tuple[int, int, int, int] | None = None,
                  keep_crops: bool = False) -> list[Detection]:
        """Every card found in a BGR frame (or in the ``roi`` rectangle of it)."""
        ox = oy = 0
        img = frame
        if roi is not None:
            ox, oy, w, h = roi
            img = frame[oy:oy + h, ox:ox + w]
        out = []
        for quad in find_quads(img, self.detect_params):
            crop = warp(img, quad)
            rd = self.read(crop)
            out.append(Detection(rd.card, rd.confidence, quad + np.array([ox, oy], np.float32), rd.face,
                                 crop if keep_crops else None))
        return out

    def recognize_crop(self, image: np.ndarray) -> Detection | None:
        """The most central card of an image that shows one card (a crop or a photo of it)."""
        dets = self.recognize(image, keep_crops=True)
        if not dets:
            return None
        h, w = image.shape[:2]
        return min(dets, key=lambda d: (d.center[0] - w / 2) ** 2 + (d.center[1] - h / 2) ** 2)

    def scan(self, frame: np.ndarray, layout: CameraLayout, keep_crops: bool = True) -> dict[Zone, list[Detection]]:
        """Cards per zone of ``layout`` (a card belongs to the region holding its centre)."""
        out: dict[Zone, list[Detection]] = {z: [] for z in layout.zones}
        for d in self.recognize(frame, keep_crops=keep_crops):
            roi = layout.locate(*d.center)
            if roi is not None:
                out[roi.zone].append(Detection(d.card, d.confidence, d.quad, d.face, d.crop, roi.zone, roi.slot))
        return out

    # -- the deck in play
    def refine(self, examples: Iterable[tuple[np.ndarray, Card]]) -> int:
        """Add labelled warped crops of the deck in play to the model; returns glyphs added."""
        pairs = []
        for img, card in examples:
            if img.shape[:2] != (WARP_H, WARP_W):
                img = cv2.resize(img, (WARP_W, WARP_H), interpolation=cv2.INTER_AREA)
            pairs += [(g, card) for g in _card_glyphs(img)]
        self.model.prepare_refine()
        n = self.model.add(pairs)
        self.model.extra += n
        if n:
            self.model.fit()
        return n
