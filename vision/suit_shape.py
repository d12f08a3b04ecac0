"""Which suit a card's pips are, by their shape: a third, independent reader of the suit.

Both readers of the corner index name the suit from the index's small symbol; the colour check
(:func:`vision.evidence.centre_contradicts`) only tells red from black.  A club and a spade, a
heart and a diamond, differ in shape, and the centre of a number card shows the same symbol
several times, larger than the index's: each pip's mask (:attr:`vision.evidence.CentreRead.masks`,
cut by :func:`vision.evidence.read_centre`) is described like an index glyph
(:func:`vision.glyphs.glyph_features`) and classified by a linear head (:class:`vision.glyphs.LinearHead`)
trained on the pips of the real deck artwork of :data:`vision.decks.TRAIN_DECKS` (fifteen decks:
Debian's GNOME and KDE sheets, an npm deck), rendered at the sizes and blurs a table camera sees
and cut by the same :func:`~vision.evidence.read_centre` the camera runs, both ways up (a pip in a
card's lower half is printed upside down).  No real photo is trained on.

:meth:`SuitShape.mate_odds` says how strongly the pips name the other suit of the colour read: the
log-odds of that suit against the named one, summed over the pips.  The two-reader camera with the
check on (``Recognizer.two_reader(shape_check=True)``: opt-in, :mod:`vision.recognizer` says why)
rules a number card out when this reaches
``VETO_OWN`` (the pips of the card's own outline) or ``VETO_PLACED`` (the pips of the card its
corner index places, both ways round: see there), bounds chosen on the train scenes of real photos
by the rule of :func:`veto_bound`.

Weights: ``vision/data/suit_shape.npz`` (``python -m vision.suit_shape_train`` rebuilds them; about
30 s).  The training lives in :mod:`vision.suit_shape_train`: the product never imports
:mod:`vision.decks` (which renders decks through the recogniser's layout: a cycle from here).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .glyphs import SUIT_CLASSES, SUIT_SIZE, LinearHead, glyph_features, log_softmax

SHAPE_FILE = Path(__file__).with_name("data") / "suit_shape.npz"
SHAPE_VERSION = "s1"
MAX_PIPS = 4  # the pips nearest the card's centre line are read (the least likely to be cut or covered)
MIN_SIDE = 6  # a pip mask narrower or lower than this (pixels of the 200 x 280 card) has no shape to read
MATE = {"c": "s", "s": "c", "d": "h", "h": "d"}  # the other suit of each suit's colour
SHAPE_RANKS = "23456789T"  # number cards: an ace's lone pip is often ornate (the ace of spades'), a court has none


def pip_features(mask: np.ndarray) -> np.ndarray:
    """The shape features of one pip's mask (0/1, its bounding box)."""
    g = np.ascontiguousarray(mask, np.float32)
    return glyph_features(g, SUIT_SIZE, g.shape[1] / max(g.shape[0], 1))


@dataclass
class SuitShape:
    """The pip-shape suit classifier (four suits)."""

    head: LinearHead

    def log_probs(self, masks: Sequence[np.ndarray]) -> np.ndarray:
        """Log-probabilities of the four suits (``SUIT_CLASSES`` order), one row per readable pip."""
        feats = [pip_features(m) for m in masks[:MAX_PIPS] if min(m.shape) >= MIN_SIDE]
        if not feats:
            return np.zeros((0, len(SUIT_CLASSES)), np.float32)
        return log_softmax(self.head.logits(np.stack(feats)))

    def mate_odds(self, suit: str, masks: Sequence[np.ndarray]) -> float | None:
        """How strongly the pips name the other suit of ``suit``'s colour (a club for a spade, a heart
        for a diamond): the log-odds of that suit against ``suit``, summed over the readable pips (each
        pip is independent evidence of one symbol); None without a readable pip.  Colour is not asked
        here: the pips' colour (:func:`vision.evidence.centre_contradicts`) tells red from black."""
        lp = self.log_probs(masks)
        if not len(lp):
            return None
        return float(np.sum(lp[:, SUIT_CLASSES.index(MATE[suit])] - lp[:, SUIT_CLASSES.index(suit)]))

    def save(self, path: Path = SHAPE_FILE) -> None:
        assert self.head.W is not None and self.head.b is not None
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez_compressed(tmp, version=np.array(SHAPE_VERSION), W=self.head.W.astype(np.float32),
                            b=self.head.b.astype(np.float32))
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path = SHAPE_FILE) -> SuitShape:
        with np.load(path) as z:
            if str(z["version"]) != SHAPE_VERSION:
                raise ValueError(f"suit shape model {path}: version {z['version']}, expected {SHAPE_VERSION}")
            head = LinearHead(SUIT_CLASSES)
            head.W, head.b = z["W"], z["b"]
        return cls(head)


# the veto's bounds, by the rule of :func:`veto_bound` on the train scenes of real photos
# (``python -m vision.bench shape DIR``): the pips of a card's own outline (the largest of 240 right
# reads there: -1.70, so the floor), of a card its index places (the largest of 1050: 8.44, a ten of
# diamonds whose one placement with whole pips showed diamonds the classifier took for hearts)
VETO_OWN = 1.0
VETO_PLACED = 9.5
VETO_MARGIN = 1.0  # log-odds beyond the strongest right read's (e: 2.7 times the odds)
VETO_FLOOR = 1.0  # and never below this: the pips must name the other suit, not merely fail to back the read


VETO_RULE = ("a bound rules out no card read right on the train scenes (the two-reader camera at its thresholds "
             "and with them at zero), with a margin: the largest mate_odds of a right read there plus VETO_MARGIN, "
             "at least VETO_FLOOR, rounded up to a half")


def veto_bound(right_odds: Iterable[float]) -> float:
    """The rule (``VETO_RULE``): a veto bound rules out no card read right on the train scenes, with a
    margin: the largest ``mate_odds`` of a right read there plus ``VETO_MARGIN``, at least
    ``VETO_FLOOR``, rounded up to a half."""
    top = max(right_odds, default=0.0)
    return float(np.ceil(2 * max(VETO_FLOOR, top + VETO_MARGIN)) / 2)
