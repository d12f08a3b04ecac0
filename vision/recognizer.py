"""The card recogniser: frame -> cards with confidence and box, ``unknown`` below a threshold.

Usage::

    rec = Recognizer.stock()                 # the shipped weights (vision/data/*.npz)
    for det in rec.recognize(frame_bgr):     # every card in the frame
        print(det.card, det.confidence, det.box, det.face)
    rec.scan(frame_bgr, layout)              # {Zone: [Detection]} by regions of interest

Two readers work together:

* **Whole cards** (:mod:`vision.detect`, :mod:`vision.glyphs`): a card whose outline is found is
  warped upright and both corner indices are read; the evidence of the two corners is pooled,
  so one covered or glared corner still reads, and two corners that disagree lower the
  confidence instead of producing a guess.  Colour (red/black) is decided first and leaves
  two suits for the shape to choose from; on number cards the centre pips back the suit and
  their count the rank.  Weights: ``vision/data/stock.npz`` (synthetic cards in the training
  fonts: ``python -m vision.train stock``).
* **Corner indices** (:mod:`vision.corners`): wherever the outline is lost (overlapping cards,
  a light table, a covered corner), indices are found by local contrast anywhere in the
  frame and each is read on its own.  Weights: ``vision/data/index.onnx`` (real deck
  artwork: ``python -m vision.train index``).

**Two readers must agree** (``two_readers``, opt-in: :meth:`Recognizer.two_reader`): the two
readers are trained independently (the glyph reader on fonts, the index reader on deck artwork),
so a card is named only when both name it.  A card read whole is named only when the index
reader, run on a strip of the card's two index corners (:func:`vision.corners.corner_strip`,
cheap), reads one of them as the same card at ``AGREE`` and none as another card at
``DISPUTE``; a corner index read in the frame is named only when the card's other corner reads
alike or the glyph reader, on the card the index places (warped upright), names the same card;
an index inside an outline whose whole read names another card is not named.  A card read whole
that the index reader neither confirms nor disputes is named only at ``lone_threshold``.  Without
the centre (below), on the dev scenes it reads 77.5 % right and 5 of 954 wrong (the default:
81.3 % and 15).  With the corner-index reader trained on the 11 GNOME decks alone it read there
77.9 % right and 8 wrong (the default: 81.0 % and 15), and on the 208
synthetic held-back cards of ``tests/vision/test_vision.py`` (fonts the index reader was not
trained on) 96.2 % right, below that test's 97 % pin, and the demo's synthetic camera relies on
such cards, so it is off by default; on the train scenes of real photos, at the calibration
sweep's lowest thresholds (0.5 whole, 0.2 index, 0.8 unconfirmed), it read 1 card of 998
wrong, against 8 without it.  What it still named wrong on the dev scenes then, both readers read
alike (a seven and a five, a two and an ace): the centre tells many of them apart.

**The centre** (``centre_check``, on in :meth:`Recognizer.two_reader` as calibrated): the card's
centre is read (:func:`vision.evidence.read_centre`: pips and pictures by blob size against the
card's own paper, measured on the train scenes of real photos) and is a third, independent piece
of evidence.  On a card warped from its own outline it rules a card out
(:func:`vision.evidence.centre_contradicts`: more pips than the rank, a picture on a number card,
rows of pips or no picture on a court card, a row of pips on an ace, pips of the other colour,
diamonds on a heart) whatever the readers say; an exact pip count (a number card with exactly its
pips, nothing bigger) stands in for the second reader, and where the two readers name different
cards the one the pips back is named.  On a card its corner index places (no outline: the quad
may be shifted or take in a neighbour), only the pips' colour counts, and the court-card and ace
rules when the card placed both ways round (index at its left corner, at its right) contradicts
(``centre_placed``, off: with it the train scenes read 812 right and none wrong, without it 815
and none, at the same thresholds; with the reader trained on the GNOME decks alone 805 and 1
against 811 and none).  Thresholds by the same rule on the train scenes: 0.5 / 0.55 / 0.8,
81.7 % right (815 of 998) and none wrong there (without the centre 80.8 %).  On the dev scenes
(``vision.bench.run_real_bench``, dev side, ``Recognizer.two_reader()``) it read 76.8 % right
and 4 of 954 wrong; since the cards read whole are blanked at the photo's own paper level
(:func:`vision.detect.blank_cards`; white made a dim photo's paper look too dark to the index
finder), 83.8 % right (799 of 954) with the same 4 wrong (an eight of spades read as the eight of
clubs, a five of clubs as the jack of hearts, a ten of diamonds as the ten of hearts, an ace of
clubs as the four).

**Four-index decks** (the two-reader camera only: ``read_indices(four_index=True)``,
:func:`vision.corners.merge_reads` with the card's geometry): a deck with an index in each corner
shows two on each short edge, read the same way up; the right one, taken for the card's left
index, places a card shifted across (a thin slice of the real card: its centre and glyphs are a
neighbour's).  Two indices that read alike and place one card when one is taken for the left
index and the other for the right (or, diagonal, both for right ones) are one card read at two
corners, placed where they agree; a lone index is checked by the glyph reader on the card placed
either way round and takes the placement it confirms; unconfirmed, it is named only at
``lone_threshold``, as a card read whole; an outline that did not read whole is named by an index
inside it only when the card the index places is that outline.  The default recogniser merges and
names indices as before (a branch that gave it the same handling and the paper-level blank, with
its thresholds re-chosen, read 9 fewer cards right after the deck-in-play calibration on the dev
photos of ``valid/`` and ``test/``, 142 to 133).
Thresholds by the same rule on the train scenes: 0.5 / 0.5 / never alone (1.01), 87.3 % right
(871 of 998) and none wrong in the sweep there; on the dev scenes, measured after that choice,
85.3 % right (814 of 954) and 6 wrong (0.63 %: an eight of spades read as the eight of clubs, a
seven of spades as the six, a five of clubs as the jack of hearts, a ten of diamonds as the ten of
hearts, an ace of clubs as the four, a king of clubs as the ten).  With one read named per card
in a frame (:func:`_one_of_each`), at the same thresholds, 85.0 % right (811) and 3 wrong (the
seven, the ace and the king gone); the rule, rerun with it on the train scenes, picks 0.5 / 0.25
/ 0.5 (90.8 % right, 906 of 998, none wrong there).  On the dev scenes, measured after that choice:
88.8 % right (847 of 954) and 4 wrong (0.42 %: the eight of spades as the eight of clubs, the five
of clubs as the jack of hearts and the ten of diamonds as the ten of hearts as before, and a king
of hearts as the four of clubs).  Read at those thresholds the train scenes give 938 of 998 right
and none wrong (``tablectl bench vision --real``); their 60 unknowns (``python -m vision.bench
diagnose``): 10 read but not named, 18 inside one outline around several cards, 18 with no
outline, 8 in an outline rejected for its aspect, 1 for its fill, 5 found with no index read.
Where two reads name one card and only the surer index's card lies wrong (:func:`_one_card`), the
card named lies where both reads put it: train 942 -> 943 right, dev 847 -> 849 right and 4 -> 3
wrong (the king of hearts' own read now lies on it; its weak four-of-clubs read is still named).
Where neither read's card holds the other's index, two reads whose places fit two corners of one
card at the frame's card size place it by those corners (:func:`_pair_quad`): train 949 -> 950 right
(a six of clubs read at its opposite corners), dev 854 -> 855 right, the same 3 wrong.
Two corners read alike by the index reader are not two readers of the suit: a card seen at a slant
has its indices squeezed across, and both then read a spade as a club alike (the dev scenes' eight of
spades read as the eight of clubs at both corners, neither surely: the index model's probability of
clubs 0.29 and 0.54, the suit glyphs 0.56 and 0.63 as wide as tall).  So a card read at two corners by
the index reader alone is named only when one of them reads its suit at ``SUIT_SURE``
(:attr:`vision.corners.IndexRead.suit_p`: not renormalised over the four suits, so a glyph like no
suit keeps it low); below it the glyph reader must name the card it places, as for a one-corner read,
and ``lone_threshold`` does not name it.  ``SUIT_SURE`` 0.7 by the rule: the strictest bound on a 0.05
grid that costs no right read on the train scenes (950 right at 0.6, 0.65 and 0.7, 948 at 0.75; none
wrong at any).  On the dev scenes, measured after that choice: 855 right as before and 2 wrong (the
two label errors; label-corrected 857 right and none wrong); its cost is within the noise of a paired
timing (``taskset -c 0``, load 5.8-6.8: 10.2 and 10.6 ms of CPU a crop, 38.9 and 39.3 ms a frame
without it; 10.8 and 10.5, 37.6 and 38.1 with it).
A card read whole that the index reader confirms (two readers) is named at ``CONFIRMED_WHOLE`` (0.35)
instead of the whole threshold (0.5), by the rule most right on the train scenes with no wrong read
added, ties to the higher threshold (train 950 at 0.5, 0.45 and 0.4; 951 at 0.35, 0.3, 0.25, 0.2 and
0.1; none wrong at any: a nine of diamonds read whole at 0.353); on the dev scenes, measured after:
855 right and 2 wrong, as without it.

**The pips' shape** (``shape_check``, opt-in: ``Recognizer.two_reader(shape_check=True)``;
``two_readers_mode`` of ``thresholds.json`` says whether the daemon's camera uses it): a number card
(two to ten) whose whole pips name the other suit of its colour (a club for a spade, a heart for a
diamond: :mod:`vision.suit_shape`, a classifier trained on the pips of the 15 training decks'
artwork, never on photos) is ruled out: the log-odds summed over up to four pips of the card's own
outline at ``VETO_OWN`` (1.0), or of the card its index places, placed both ways round (the lesser
where both show pips), at ``VETO_PLACED`` (9.5); bounds by the rule of
:func:`vision.suit_shape.veto_bound` on the train scenes.  With it the rule picks the same thresholds
(0.5 / 0.25 / 0.5, 906 of 998 right in its sweep, none wrong) and the train scenes read 938 of 998
right as without it.  On the dev scenes, measured after that choice, it read 843 right against 847
without it and the same 4 wrong: it ruled out none of them (the eight of spades read as the eight of
clubs from its index: of its two placements only one shows whole pips, and their odds for spades stay
below the placed bound; the ten of diamonds read as the ten of hearts is the ten of hearts, its label
wrong, as ``tests/vision/test_real_cards.py`` says).  The right reads it ruled out there were spades
read whole in one run of photos (seven reads, log-odds 2.27 to 9.45 for clubs), among them cards whose
outlines were warped a quarter turn off, pips lying sideways, which the classifier, trained on pips
upright and upside down, takes for clubs (trained on the four quarter turns it ruled out 8 % of the
held-back decks' true cards at the own bound, against 3 %), and a seven of diamonds placed from its
index (9.54).  So it is off by default.  Later, a card named from its index inside its own outline has
that outline's centre warped the way its index reads (:func:`_warp_down`, not the outline's way, which
can be a quarter turn off): the rule re-run gives the same bounds, and with the check on the dev scenes
read 848 right against 846 with the outline's warp, and 849 with the check off (train 943, none wrong,
in all three; the same 3 wrong as labelled): still off.  On the held-back decks
(never trained on) it rules out 92 % of number cards named with their colour's other suit at the own
bound, 60 % at the placed one.  Its cost, by the bench's loop shortened as below, pinned to one core
(``taskset -c 0``, load 1.7), twice: 8.5 and 8.8 ms a crop, 33.2 and 33.6 ms a 1280x720 frame, against
8.8 and 8.8 ms, 32.8 and 33.5 ms without it in the same runs.

Its speed is the bench's ``two_readers_mode`` (``tablectl bench vision``): measured with the
bench's own loop (:func:`vision.bench._mode_speed`) shortened to 400 of its held-back crops and
30 of its frames, twice, CPU time, at the shipped thresholds, on this two-core machine (shared
with others' work): at load average 3.6-4.3, 8.9 and 8.6 ms of CPU per card crop (wall-clock
median 10.6 and 15.8 ms, the other core busy with the real-photo bench) and 34.6 and 33.5 ms per
1280x720 frame (29-30 frames/s on one core), against 5.2 and 5.4 ms and 21.0 and 21.4 ms for the
default recogniser in the same runs; at load 13-19, 11.3 ms per crop and 42-43 ms per frame
(default 6.6-6.7 and 25-26).  By the sysbench ratio the README uses (this machine 4121.8 events
per CPU second, a Pi 4 1477.83, a Pi 5 2737.49) the quieter run's frame would take about 95 ms
on one Pi 4 core (10 frames/s) and 51 ms on a Pi 5 core (19 frames/s), a crop 24 and 13 ms:
estimates, not measurements.

The thresholds (whole cards, corner indices) live in ``vision/data/thresholds.json``, chosen
by the rule of ``vision.bench.calibrate_real`` on the train scenes of real photos only
(:mod:`vision.scenes`).

An outline the card finder draws around overlapping cards is not named by one index found
inside it when it is much bigger than the card that index places (``SPANS_CARDS``): the index
names its own card instead.  On the train scenes five of the six wrong reads came from such
outlines, named by an index inside them.

**Experimental, off by default** (``agree=True``): evidence that agrees, or unknown
(:class:`Evidence`, :mod:`vision.evidence`).  Measured on the dev scenes of ``poker-cards-4``
with its own thresholds (0.5 whole, 0.65 index, 0.6 lone, by the same rule), before the
outline check above, it read 74.1 % right and 1.57 % wrong at 12 ms per card crop, against
75.6 % and 1.36 % at about 7 ms without it then, so it is not the default.  A
cheaper part alone (``corners_agree=True``: two corners of a card that read differently make
it unknown; no second model run) measured 73.4 % right and 1.57 % wrong: off too.  With the
gate a card is named only when nothing contradicts it (the two corners, or the two readers, name different
cards; the card's own centre shows a picture on a number card, none on a court card, more pips
than the rank has, or pips of the other colour) and either a second piece of evidence supports
it (its other corner, the other reader, or a centre that matches) or its confidence reaches
``lone_threshold``.

:meth:`Recognizer.refine` teaches both readers the deck in play from labelled crops.
The recogniser never imports the synthetic generator (:mod:`vision.synth`) or the deck
renderer (:mod:`vision.decks`): those are for training, tests, the demo and benchmarks.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import cv2
import numpy as np

from controller.errors import PokerTableError
from controller.geometry import Zone
from controller.rules.cards import Card

from . import overlap
from .corners import (
    INDEX_FILE,
    DeckExamples,
    IndexModel,
    IndexParams,
    IndexRead,
    corner_strip,
    labelled_examples,
    read_indices,
)
from .detect import (
    WARP_H,
    WARP_W,
    DetectParams,
    blank_cards,
    box_of,
    find_more_quads,
    find_quads,
    max_channel,
    min_channel,
    order_quad,
    quad_iou,
    warp,
)
from .evidence import (
    ACE_PIP_WIDTH,
    COURT_MAX_PIPS,
    NUMBER_RANKS,
    Centre,
    centre_contradicts,
    centre_of,
    centre_supports,
    centre_verdict,
    placed_contradicts,
    read_centre,
)
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
from .suit_shape import SHAPE_FILE, SHAPE_RANKS, VETO_OWN, VETO_PLACED, SuitShape

log = logging.getLogger(__name__)

MODEL_VERSION = "v1"  # bump when features change (the shipped weights must be rebuilt)
DEFAULT_THRESHOLD = 0.7  # whole cards, when vision/data/thresholds.json is missing (see shipped_thresholds)
COLOUR_MARGIN = 0.12  # redness beyond the split that counts as a sure colour
ONE_CORNER = 0.9  # a card read from one corner only is trusted a little less
ONE_CORNER_COURT = 0.9  # (kept equal: making it stricter cost 2 % unknowns on the dev set for no gain)
PIP_EXCESS = 0.3  # more pips than the rank read has: covers hide pips, nothing adds them
PIP_WEIGHT = 4.0  # the pips (bigger than the index suit) count as much as four index corners
PIP_COUNT_LOGIT = 2.0  # log-odds a pip count adds to the number rank it matches
SUIT_MASS = 0.05  # below this probability mass on the colour's two suits, confidence fades
CONFIRMED_WHOLE = 0.35  # (two_readers) a card read whole that the index reader confirms (see the module doc)
SUIT_SURE = 0.7  # (two_readers) an index read's suit this sure at one corner, or a second reader (see the module doc)


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
    index: tuple[float, float] | None = None  # where the corner index it was read from lies (index reads)
    evidence: Evidence | None = field(default=None, repr=False, compare=False)  # why it is named, or not
    best: Card | None = field(default=None, compare=False)  # (read whole) the best guess, named or not

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
            **({"index": [round(self.index[0], 1), round(self.index[1], 1)]} if self.index else {}),
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
            rois.append(ZoneROI(Zone.parse(zone_txt), rect, int(slot) if slot else None,
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
        np.savez_compressed(tmp, extra=np.array(self.extra), **arrays)  # type: ignore[arg-type]  # stubs: **kwds
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


STOCK_FILE = Path(__file__).with_name("data") / "stock.npz"  # shipped weights (about 40 kB)


THRESHOLDS_FILE = Path(__file__).with_name("data") / "thresholds.json"
NEVER = 1.01  # a threshold no confidence reaches
DISPUTE = 0.5  # the other reader names another card this confidently: the readings disagree
AGREE = 0.5  # the other reader names the same rank and colour this confidently: it supports the read


def shipped_thresholds(path: Path | None = None) -> dict[str, Any]:
    """The confidence thresholds as calibrated (``vision.bench.calibrate_real`` on the train side
    of the scene split of real photos only, by the rule it states; ``python -m vision.bench
    calibrate DIR --write`` rewrites the file), or the defaults when the file is missing."""
    try:
        data = json.loads((path or THRESHOLDS_FILE).read_text())
        return {"threshold": float(data["threshold"]), "index_threshold": float(data["index_threshold"]),
                **{k: v for k, v in data.items() if k not in ("threshold", "index_threshold")}}
    except (OSError, ValueError, KeyError, TypeError):
        return {"threshold": DEFAULT_THRESHOLD, "index_threshold": 0.6, "lone_threshold": NEVER}


INDEX_THRESHOLD = float(shipped_thresholds()["index_threshold"])
LONE_THRESHOLD = float(shipped_thresholds().get("lone_threshold", NEVER))
AGREE_GATE = bool(shipped_thresholds().get("agree", False))  # the evidence gate (experimental), as calibrated
CORNERS_AGREE = bool(shipped_thresholds().get("corners_agree", False))
TWO_READERS = bool(shipped_thresholds().get("two_readers", False))  # both readers must name the card, as calibrated
WHOLE_THRESHOLD = float(shipped_thresholds()["threshold"])


class VisionModelError(PokerTableError, RuntimeError):
    """A shipped model file is missing or unreadable (rebuild it: ``python -m vision.train``)."""


_Model = TypeVar("_Model", CardModel, IndexModel)


def _shipped(model: type[_Model], path: Path, what: str, target: str) -> _Model:
    """Load a shipped model file; a missing or broken one says which ``vision.train`` target rebuilds it."""
    try:
        return model.load(path)
    except (OSError, ValueError, KeyError) as exc:
        raise VisionModelError(f"{what} {path} unreadable ({exc}): run python -m vision.train {target}") from exc


def suit_shape_model(path: Path | None = None) -> SuitShape:
    """The shipped pip-shape suit classifier (``python -m vision.suit_shape_train`` rebuilds it)."""
    try:
        return SuitShape.load(path or SHAPE_FILE)
    except (OSError, ValueError, KeyError) as exc:
        raise VisionModelError(f"suit shape model {path or SHAPE_FILE} unreadable ({exc}): run python -m "
                               "vision.suit_shape") from exc


def stock_model(path: Path | None = None) -> CardModel:
    """The stock whole-card model: the shipped weights (``python -m vision.train stock`` rebuilds them)."""
    return _shipped(CardModel, path or STOCK_FILE, "card model", "stock")


def index_model(path: Path | None = None) -> IndexModel:
    """The shipped corner-index model (``python -m vision.train index`` rebuilds it)."""
    return _shipped(IndexModel, path or INDEX_FILE, "index model", "index")


def _corners_disagree(model: CardModel, glyphs: Sequence[CornerGlyphs]) -> bool:
    """Both corners of a card read whole, each read alone, name different ranks or colours."""
    if len(glyphs) != 2:
        return False
    alone = [(int(np.argmax(model.rank.logits(g.rank[None])[0])), g.redness > RED_SPLIT) for g in glyphs]
    return alone[0] != alone[1]


SPANS_CARDS = 1.6  # an outline this many times the area of the card an index inside it places holds more than one


def _spans_cards(outline: np.ndarray, card: np.ndarray) -> bool:
    """The card finder drew one outline around overlapping cards: it is much bigger than the card
    that an index inside it places (the index's size gives the card's size on this table)."""
    area = abs(cv2.contourArea(card.astype(np.float32)))
    return abs(cv2.contourArea(outline.astype(np.float32))) > SPANS_CARDS * area


def _centre_evidence(ev: Evidence, face: str, centre: Any, own: bool) -> Evidence:
    """``ev`` with what a card's centre (:func:`vision.evidence.read_centre`) says of ``face``: a
    contradiction disputes it (``veto`` says why); a centre that names the rank on its own (exact pip
    count, ``own`` centres only) is a second reader, and where the other reader named another card
    (``disputed``) it outvotes it: two pieces of evidence against one."""
    why = centre_contradicts(face, centre, count=own)
    if why:
        return replace(ev, disputed=True, veto=why)
    if own and centre_supports(face, centre):
        return replace(ev, readers=2, disputed=False)
    return ev


WARP_DST = np.array([[0, 0], [WARP_W, 0], [WARP_W, WARP_H], [0, WARP_H]], np.float32)  # as vision.detect.warp's


def _warp_down(img: np.ndarray, quad: np.ndarray, down: np.ndarray) -> np.ndarray:
    """The card at ``quad`` warped upright the way its corner index reads (``down``: towards the index's
    suit, down the card), not the way the outline's sides say: an outline seen at a slant can make a
    card's long side look the shorter, and :func:`vision.detect.warp` then turns the card a quarter turn
    (its pips lie on their side, its index corners fall in the centre)."""
    q = order_quad(quad)
    d = np.asarray(down, np.float32)

    def along(k: int) -> float:  # how well the quad's top-to-bottom runs with the index's down (either way up)
        r = np.roll(q, -k, axis=0)
        v = (r[2] + r[3] - r[0] - r[1]) / 2
        return abs(float(v @ d)) / max(float(np.linalg.norm(v) * np.linalg.norm(d)), 1e-6)

    k = 1 if along(1) > along(0) else 0
    M = cv2.getPerspectiveTransform(np.roll(q, -k, axis=0), WARP_DST)
    return cv2.warpPerspective(img, M, (WARP_W, WARP_H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def _one_of_each(dets: list[Detection], card: tuple[float, float, float, float] | None = None) -> list[Detection]:
    """One deck holds one of each card: where reads of one frame name the same card, only the surest
    is named; the others are left unknown (their guess kept as ``best``).  On the dev scenes the
    two-reader camera named three cards wrong this way (a seven of spades as the six, an ace of
    clubs as the four, a king of clubs as the ten), each a second, single-index read (confirmed by
    the glyph reader) of a card whose two corner indices had named it, surer, elsewhere in the frame
    (found by looking at the dev confusions: the dev figures after it are not a blind measure of it).
    Where the read named and one left unknown are of one card (:func:`_one_card`), the card named lies
    where both reads place it.  The two-reader camera only."""
    surest: dict[Card, int] = {}
    units = [float(np.linalg.norm(d.quad[3] - d.quad[0])) / card[3] for d in dets
             if card is not None and d.index is not None]  # index reads: their placed card's height over its units
    unit = float(np.median(units)) if units else 0.0
    for i, d in enumerate(dets):
        if d.card is not None and d.card.rank is not None and (d.card not in surest
                                                              or d.confidence > dets[surest[d.card]].confidence):
            surest[d.card] = i
    out = [d if d.card is None or surest.get(d.card, i) == i else replace(d, card=None, best=d.card)
           for i, d in enumerate(dets)]
    for i, d in enumerate(dets):
        s = surest.get(d.card) if d.card is not None else None
        if s is not None and s != i:
            out[s] = _one_card(out[s], d, card, unit)
    return out


def _holds(quad: np.ndarray, p: tuple[float, float]) -> bool:
    return cv2.pointPolygonTest(quad.astype(np.float32), (float(p[0]), float(p[1])), False) >= 0


# two corners' reads fit one card: their distance within this share of the frame's card size (train: the six of
# clubs of IMG_20220316_171946, its opposite corners, 12 % over; the six of hearts of IMG_20220316_144541, the
# two top corners of a four-index card, 1 % under) ...
PAIR_SCALE = 0.2
# ... and each read's own down within this many radians of the card's as the pair places it (train: at most
# 0.37, 21 degrees; the nearest wrong pairing of those reads, 0.82, 47 degrees)
PAIR_TURN = 0.5


def _pair_quad(a: tuple[float, float], b: tuple[float, float], da: np.ndarray, db: np.ndarray,
               card: tuple[float, float, float, float], unit: float) -> np.ndarray | None:
    """The card whose corner indices (of a four-index deck, or a two-index deck's opposite corners) are
    read at ``a`` and ``b`` (rank centres; ``da``, ``db``: each read's down), placed by those two corners:
    the fit of the pair to two of the card's four index places (``card``: the card's outline in index
    units, :attr:`vision.corners.IndexModel.card`) whose size matches the frame's cards (``unit``: the
    median index unit in pixels of the frame's reads; ``PAIR_SCALE``) and that turns both reads' down the
    card's way (``PAIR_TURN``; the least turned where two fit), or None.  A read's own unit is not used:
    an index read at a slant or half covered places a card too small (train: the six of hearts of
    IMG_20220316_144541 read at 0.79 and 0.77 of its frame's median unit, the six of clubs of
    IMG_20220316_171946 at 0.61 and 1.03)."""
    x0, y0, w, h = card
    e, ln = w + 2 * x0, h + 2 * y0  # the index places: top left at 0, top right, bottom right, bottom left
    places = np.array([[0, 0], [e, 0], [e, ln], [0, ln]], np.float32)
    ups = (1, 1, -1, -1)  # the bottom corners' indices read upside down
    outline = np.array([[x0, y0], [x0 + w, y0], [x0 + w, y0 + h], [x0, y0 + h]], np.float32)
    pa, pb = np.asarray(a, np.float32), np.asarray(b, np.float32)
    fits: list[tuple[float, np.ndarray]] = []
    for i in range(2):  # ``a`` at a top corner: at a bottom one it is the same card turned half round
        for j in range(4):
            v = places[j] - places[i]
            if i == j or unit <= 0 or abs(float(np.linalg.norm(pb - pa) / np.linalg.norm(v)) / unit - 1) > PAIR_SCALE:
                continue
            t = np.arctan2(*(pb - pa)[::-1]) - np.arctan2(*v[::-1])
            rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]], np.float32)
            down = rot @ np.array([0, 1], np.float32)
            turn = max(float(np.arccos(np.clip(ups[k] * (down @ d) / max(float(np.linalg.norm(d)), 1e-6), -1, 1)))
                       for k, d in ((i, da), (j, db)))
            if turn <= PAIR_TURN:
                k = float(np.linalg.norm(pb - pa)) / float(np.linalg.norm(v))
                fits.append((turn, (pa + k * (outline - places[i]) @ rot.T).astype(np.float32)))
    return min(fits, key=lambda f: f[0])[1] if fits else None


def _one_card(surest: Detection, other: Detection,
              card: tuple[float, float, float, float] | None = None, unit: float = 0.0) -> Detection:
    """``surest`` (an index read) and ``other`` name the same card: where ``other``'s card holds where both were read
    (their index, or the outline's centre) and ``surest``'s does not, they are one card read at two
    of its corners (or whole and at an index), and ``surest``'s card lies where ``other`` places it.
    An index places its card from its own orientation, which a card seen at a slant or under a
    neighbour's edge can turn (the card then reaches onto its neighbours); two reads of the card
    bound where it is.  The name is unchanged: only where the card lies, and its two corners read alike.
    A card read whole stays where its outline is (an outline is seen, not placed).  Where neither card holds
    the other read's index, two index reads whose places fit two corners of one card at the frame's card
    size (:func:`_pair_quad`; ``card``: the index model's card outline, ``unit``: the frame's index unit)
    place it by those two corners."""
    if surest.index is None:
        return surest
    other_at = other.index or other.center
    if _holds(other.quad, surest.index) and _holds(other.quad, other_at) and not _holds(surest.quad, other_at):
        return _placed(surest, other.quad)
    if (card is not None and other.index is not None and not _holds(surest.quad, other.index)
            and not _holds(other.quad, surest.index)):
        # neither placement holds both reads: the card placed by its two corners, where they fit one card
        h = card[3]
        quad = _pair_quad(surest.index, other.index, (surest.quad[3] - surest.quad[0]) / h,
                          (other.quad[3] - other.quad[0]) / h, card, unit)
        if quad is not None:
            return _placed(surest, quad)
    return surest


def _placed(read: Detection, quad: np.ndarray) -> Detection:
    """``read``'s card placed at ``quad`` by two of its reads: its two corners read alike."""
    ev = read.evidence
    return replace(read, quad=quad, evidence=None if ev is None else replace(ev, corners=max(ev.corners, 2)))


# ----------------------------------------------------------------------------- recogniser

@dataclass(frozen=True)
class Evidence:
    """The independent evidence behind a card's best guess (:mod:`vision.evidence`)."""

    corners: int  # corner indices that read this rank and colour
    disputed: bool  # a reading of the card's indices (another corner, the other reader) names another card
    centre: Centre | None  # what the card's centre shows (None: not looked at)
    readers: int = 1  # independent readers that name this rank and colour (whole card: glyphs, index model)
    pooled: bool = False  # the read pooled its corners already (a card read whole): their agreement is no support
    veto: str | None = None  # (centre_check) why the card's centre rules the card out
    shape: float | None = None  # (shape_check) the pips' log-odds for the other suit of the colour read
    shape_placed: bool = False  # (shape_check) those pips were of a card an index places, not of its own outline

    def verdict(self, face: str) -> tuple[bool, bool, str]:
        """``(allowed, supported, reason)``: nothing contradicts the card's rank or colour; a second
        piece of evidence (the other corner, the other reader, or a centre that matches) supports it."""
        if self.disputed:
            return False, False, "readings disagree"
        contradicts, supports = (centre_verdict(face[0], self.centre, face[1:2] in ("d", "h"))
                                 if self.centre is not None else (False, False))
        if contradicts:
            return False, False, "centre contradicts"
        if self.corners >= 2 and not self.pooled:
            return True, True, "both corners"
        if self.readers >= 2:
            return True, True, "both readers"
        # a picture inside an outline that may span overlapping cards is no proof of a court card
        if supports and not (self.pooled and face[0] not in NUMBER_RANKS):
            return True, True, "corner and centre"
        return True, False, "one piece of evidence"


@dataclass(frozen=True)
class Reading:
    card: Card | None
    confidence: float
    face: str
    best: Card | None = None  # the best guess even when below the threshold
    evidence: Evidence | None = None


class Recognizer:
    """Cards in frames.  ``threshold``: below it a card is reported unknown (``card`` None)."""

    def __init__(self, model: CardModel | None = None, threshold: float = WHOLE_THRESHOLD,
                 detect: DetectParams | None = None, deck: str = "A", index: IndexModel | bool | None = True,
                 index_threshold: float = INDEX_THRESHOLD, index_params: IndexParams | None = None,
                 agree: bool = AGREE_GATE, lone_threshold: float = LONE_THRESHOLD,
                 corners_agree: bool = CORNERS_AGREE, two_readers: bool = TWO_READERS,
                 centre_check: bool = False, centre_placed: bool = False, shape_check: bool = False) -> None:
        self.model = model if model is not None else stock_model()
        self.threshold = threshold
        self.detect_params = detect or DetectParams()
        self.deck = deck
        self.index: IndexModel | None = index_model() if index is True else (index or None)
        self.index_threshold = index_threshold
        self.index_params = index_params or IndexParams()
        self.deck_examples = DeckExamples()  # the deck in play's indices (refine)
        self.agree = agree  # experimental: name a card only when independent evidence agrees (vision.evidence)
        self.lone_threshold = lone_threshold  # (gate on) a card with one piece of evidence only needs this much
        self.corners_agree = corners_agree  # a card whose two corner indices read differently is unknown
        self.two_readers = two_readers  # a card is named only when both readers name it (see _second_reader)
        # (with two_readers) the card's centre can rule a card out, or stand in for the second reader
        self.centre_check = centre_check
        # (centre_check) also the court-card and ace rules on cards their index places, both ways round
        # (placed_contradicts): off, as the calibration rule decides on the train scenes (812 right and
        # none wrong there with it, 815 and none without, at the same thresholds)
        self.centre_placed = centre_placed
        # (centre_check) the shape of a number card's pips can rule out its suit (vision.suit_shape): at
        # these bounds, for pips of the card's own outline and of a card its index places
        self.shape_check = shape_check
        self.shape_veto_own, self.shape_veto_placed = VETO_OWN, VETO_PLACED
        # (two_readers) a card read from its index is named only when one of its corners reads its suit this surely
        self.suit_sure = SUIT_SURE if two_readers else 0.0
        # (two_readers, centre_check) a card read whole that the index reader confirms needs only this much
        self.confirmed_threshold = min(threshold, CONFIRMED_WHOLE) if two_readers else threshold
        self.suit_shape: SuitShape | None = None  # loaded at the first card that needs it

    @classmethod
    def stock(cls, **kw: Any) -> Recognizer:
        return cls(stock_model(), **kw)

    @classmethod
    def two_reader(cls, **kw: Any) -> Recognizer:
        """The stock recogniser with the two-reader check on, at the thresholds calibrated for it
        (``two_readers_mode`` of ``vision/data/thresholds.json``, by the same rule on the train scenes)."""
        mode = shipped_thresholds().get("two_readers_mode") or {}
        args: dict[str, Any] = {k: float(mode[k]) for k in ("threshold", "index_threshold", "lone_threshold")
                                if k in mode}
        args["centre_check"] = bool(mode.get("centre_check", False))
        args["shape_check"] = bool(mode.get("shape_check", False))
        return cls.stock(**{**args, "two_readers": True, **kw})

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
        if not glyphs and self.two_readers and self.centre_check and not self.agree:
            return self._whole_with_centre(card_img, None, 0.0)  # the glyph reader finds no index: the others may
        if not glyphs:
            return Reading(None, 0.0, "up")
        if not self.agree:  # the single-reader path: the centre's pips back the index (decide), no second model
            pips = read_pips(card_img)
            card, conf = self.decide(glyphs, pips)
            ev = Evidence(0, self.corners_agree and _corners_disagree(self.model, glyphs), None, pooled=True)
            named = card is not None and self._named(conf, self.threshold, ev, card.face)
            if self.two_readers and self.centre_check and card is not None:
                return self._whole_with_centre(card_img, card, conf)
            if named and self.two_readers and card is not None:
                # the index reader must not read the card otherwise; unconfirmed (it reads no index there,
                # or not surely), the card is named only at lone_threshold
                ev = self._second_reader(card_img, card)
                named = not ev.disputed and (ev.readers >= 2 or conf >= self.lone_threshold)
            return Reading(card if named else None, conf, "up", card, ev)
        centre = centre_of(card_img)
        card, conf = self.decide(glyphs, centre.pips)
        ev = self._whole_evidence(card_img, glyphs, card, centre)
        named = card is not None and self._named(conf, self.threshold, ev, card.face)
        return Reading(card if named else None, conf, "up", card, ev)

    def _named(self, conf: float, threshold: float, ev: Evidence, face: str) -> bool:
        """Confident enough; with the gate (``agree``) also nothing contradicts, and supported (or,
        alone, above ``lone_threshold``); without it, with ``corners_agree``, the corners do not disagree."""
        if conf < threshold:
            return False
        if not self.agree:
            return not (self.corners_agree and ev.disputed)
        allowed, supported, _ = ev.verdict(face)
        return allowed and (supported or conf >= self.lone_threshold)

    def _second_reader(self, card_img: np.ndarray, card: Card) -> Evidence:
        """A card read whole by the glyph reader, checked by the corner-index reader (an independently
        trained model) on the card's two index corners: does it read one of them as the same card
        (``AGREE``), does it read one as another card (``DISPUTE``)?"""
        return self._second_reads(card_img, card)[0]

    def _second_reads(self, card_img: np.ndarray, card: Card | None) -> tuple[Evidence, IndexRead | None]:
        """:meth:`_second_reader`'s evidence, and the index reader's surest read of another card there."""
        agree = disputed = False
        rival: IndexRead | None = None
        if self.index is not None:
            strip = corner_strip(card_img)
            for r in read_indices(strip, self.index, self.index_params, corners_of=card_img.shape[:2],
                                  four_index=self.two_readers):
                if card is not None and r.face == card.face:
                    agree = agree or r.confidence >= AGREE
                elif r.confidence >= DISPUTE and r.p_index >= 0.5:
                    disputed = True
                    if rival is None or r.confidence > rival.confidence:
                        rival = r
        return Evidence(0, disputed, None, 2 if agree else 1, pooled=True), rival

    def _whole_with_centre(self, card_img: np.ndarray, card: Card | None, conf: float) -> Reading:
        """Two readers and the card's own centre (``centre_check``): a card read whole is named when
        the index reader confirms it, or the centre names its rank (exact pips), or alone at
        ``lone_threshold``; never when either the index reader or the centre rules it out.  Where the
        index reader names another card and the centre names that card's rank, that card is named:
        two pieces of evidence (the index, the pips) against the glyph reader's one."""
        centre = read_centre(card_img)
        ev, rival = self._second_reads(card_img, card)
        named = False
        if card is not None:
            ev = _centre_evidence(ev, card.face, centre, own=True)
            if ev.veto is None:
                ev = self._shape_evidence(ev, card.face, [centre], placed=False)
            sure = conf >= self.threshold or (ev.readers >= 2 and conf >= self.confirmed_threshold)
            named = sure and not ev.disputed and (ev.readers >= 2 or conf >= self.lone_threshold)
        if (not named and rival is not None and rival.confidence >= self.threshold
                and centre_supports(rival.face, centre) and centre_contradicts(rival.face, centre) is None):
            return Reading(Card.parse(rival.face, self.deck), rival.confidence, "up", Card.parse(rival.face, self.deck),
                           Evidence(0, False, None, 2, pooled=True))
        return Reading(card if named else None, conf, "up", card, ev)

    def _shape_evidence(self, ev: Evidence, face: str, centres: Sequence[Any], placed: bool) -> Evidence:
        """``ev`` with what the shape of a number card's pips (:mod:`vision.suit_shape`) says of its suit
        (``shape_check``): the log-odds for the other suit of the colour read, from each centre that
        shows a readable pip (the least of them: a card is ruled out only when every place it may lie
        says so), recorded in ``ev.shape``; at its bound or more (``shape_veto_placed`` for the centres
        of cards an index places, else ``shape_veto_own``) the card is ruled out."""
        if not self.shape_check or face[0] not in SHAPE_RANKS:
            return ev
        if self.suit_shape is None:
            self.suit_shape = suit_shape_model()
        odds = [o for c in centres if (o := self.suit_shape.mate_odds(face[1], c.masks)) is not None]
        if not odds:
            return ev
        ev = replace(ev, shape=min(odds), shape_placed=placed)
        bound = self.shape_veto_placed if placed else self.shape_veto_own
        return replace(ev, disputed=True, veto="pips of the other suit's shape") if min(odds) >= bound else ev

    def _whole_evidence(self, card_img: np.ndarray, glyphs: Sequence[CornerGlyphs], card: Card | None,
                        centre: Centre) -> Evidence:
        """Each corner read on its own by the glyph model, and the card's indices read by the other,
        independently trained reader (the corner-index model): do they name the same rank and
        colour, does any reading name another?"""
        if card is None:
            return Evidence(0, False, centre, pooled=True)
        mine = (card.face[0], card.face[1] in SUITS_RED)
        alone = []
        for g in glyphs:
            rank = RANK_CLASSES[int(np.argmax(self.model.rank.logits(g.rank[None])[0]))]
            alone.append((rank, g.redness > RED_SPLIT))
        disputed = len(alone) == 2 and alone[0] != alone[1]
        readers = 1
        if self.index is not None:
            strip = corner_strip(card_img)
            for r in read_indices(strip, self.index, self.index_params, corners_of=card_img.shape[:2],
                                  four_index=self.two_readers):
                if (r.face[0], r.face[1] in SUITS_RED) == mine and r.confidence >= AGREE:
                    readers = 2
                elif r.confidence >= DISPUTE and r.p_index >= 0.5:
                    disputed = True
        return Evidence(sum(a == mine for a in alone), disputed, centre, readers, pooled=True)

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
        if pips is not None and rank not in NUMBER_RANKS and pips.count >= COURT_MAX_PIPS:
            conf *= PIP_EXCESS  # rows of pips where a court picture should be
        return Card(rank, allowed[sj], self.deck), conf

    # -- frames
    def recognize(self, frame: np.ndarray, roi: tuple[int, int, int, int] | None = None,
                  keep_crops: bool = False) -> list[Detection]:
        """Every card found in a BGR frame (or in the ``roi`` rectangle of it).

        Cards found by their outline are read whole (both corners, pips); then the corner
        indices found anywhere in the frame (:mod:`vision.corners`) read the cards whose
        outline is lost: overlapping, partly covered, on a light table; then (two readers) the
        cards inside one outline around several are read whole from the rectangles its corners
        imply (:mod:`vision.overlap`).
        """
        ox = oy = 0
        img = frame
        if roi is not None:
            ox, oy, w, h = roi
            img = frame[oy:oy + h, ox:ox + w]
        off = np.array([ox, oy], np.float32)
        out = []
        rejected: list[np.ndarray] = []  # (two readers) outlines of no card's shape, looked at again below
        for quad in find_quads(img, self.detect_params, rejected=rejected if self.two_readers else None):
            crop = warp(img, quad)
            rd = self.read(crop)
            out.append(Detection(rd.card, rd.confidence, quad + off, rd.face, crop if keep_crops else None,
                                 evidence=rd.evidence, best=rd.best))
        if self.index is not None:
            out += self._index_detections(img, out, off)
        if self.two_readers and overlap.HIDDEN_CARDS:  # cards inside one outline around several
            out += [Detection(rd.card, rd.confidence, q + off, "up", evidence=rd.evidence, best=rd.best)
                    for rd, q in overlap.hidden_cards(self.read, self.detect_params, img, out, off)]
        # (two readers) where no card was found: outlines of no card's shape, cards outlined by their edges
        # (``detect.edge_canny``), kept when both readers name the card read whole (find_more_quads says why)
        for quad in (find_more_quads(img, [d.quad - off for d in out], rejected, self.detect_params)
                     if self.two_readers else []):
            crop = warp(img, quad)
            rd = self.read(crop)
            if rd.card is not None and rd.evidence is not None and rd.evidence.readers >= 2:
                out.append(Detection(rd.card, rd.confidence, quad + off, rd.face, crop if keep_crops else None,
                                     evidence=rd.evidence, best=rd.best))
        return _one_of_each(out, None if self.index is None else self.index.card) if self.two_readers else out

    def _index_detections(self, img: np.ndarray, found: list[Detection], off: np.ndarray) -> list[Detection]:
        """Cards read from a corner index, merged with the cards read whole (``found``, updated)."""
        assert self.index is not None
        extra: list[Detection] = []
        named_by_index: set[int] = set()  # (two_readers) outlines not read whole, named by an index inside them
        # a card read whole confidently that the second reader did not confirm (two_readers) is not read again:
        # its index, read by the same reader in the frame, could only name the card the whole read names
        sure = [d for d in found if d.card is not None
                or (self.two_readers and d.best is not None and d.confidence >= self.threshold)]
        if sure:  # cards read whole need no second look: blank them out (a frame of neat cards costs little)
            img = blank_cards(img, [d.quad - off for d in sure], paper=self.two_readers)
        for r in read_indices(img, self.index, self.index_params, deck=self.deck_examples, four_index=self.two_readers):
            card_img = warp(img, r.quad)
            ev = Evidence(r.corners, r.disputed, centre_of(card_img, own=False))
            if not self.agree and ev.centre is not None and centre_verdict(r.face[0], ev.centre)[0]:
                # more pips than a number card has, or rows of pips on a court card: trusted less
                r = replace(r, confidence=r.confidence * PIP_EXCESS)
            named = self._named(r.confidence, self.index_threshold, ev, r.face)
            origin = (float(r.origin[0] + off[0]), float(r.origin[1] + off[1]))
            host = next((i for i, d in enumerate(found)
                         if cv2.pointPolygonTest(d.quad.astype(np.float32), origin, False) >= 0), None)
            if self.two_readers and named and self.centre_check:
                # the centre of the outline that holds the index, when it is this card's own, else of the
                # card the index places (there only the pips' colour counts: it may take in a neighbour's)
                own = host is not None and found[host].face == "up" and not _spans_cards(found[host].quad,
                                                                                       r.quad + off)
                centre = read_centre(_warp_down(img, found[host].quad - off, r.down) if own and host is not None
                                     else card_img)
                ev = _centre_evidence(ev, r.face, centre, own)
                if ev.veto is None and not own and self.centre_placed:
                    # the index may sit at the card's left corner or its right one (four-index decks): the
                    # card is ruled out only when its centre contradicts it both ways
                    why = placed_contradicts(r.face, centre)
                    if why and placed_contradicts(r.face, read_centre(warp(img, self.index.other_side(r.quad)))):
                        ev = replace(ev, disputed=True, veto=why)
                if ev.veto is None:
                    # the pips' shape: of the card's own outline, or of the card this index places (with the
                    # index at the card's left corner, and at its right one), where the index was read
                    placed = [self.index.card_quad(r.origin, r.down)]
                    placed.append(self.index.other_side(placed[0]))
                    ev = self._shape_evidence(ev, r.face, [centre] if own else
                                              [read_centre(warp(img, q)) for q in placed], placed=not own)
                named = ev.veto is None
            # two corners read alike by one reader are not two readers of the suit where neither read it surely
            unsure = r.corners >= 2 and r.suit_p < self.suit_sure
            if self.two_readers and named and (r.corners < 2 or unsure) and ev.readers < 2:
                # one index read by one reader: the card's other corner, or the other reader on the card
                # the index places (warped upright), must name the same card (or its own centre, above);
                # the card placed with the index at its left corner or, on a four-index deck, at its right
                # one: the card is where the other reader agrees
                for quad in (r.quad, self.index.other_side(r.quad)):
                    glyphs = _card_glyphs(warp(img, quad))
                    named = bool(glyphs) and self.decide(glyphs)[0] == Card.parse(r.face, self.deck)
                    if named:
                        r = replace(r, quad=quad)
                        break
                ev = replace(ev, readers=2 if named else 1)
                # unconfirmed, as a card read whole that the index reader does not confirm: named only at
                # lone_threshold (one piece of evidence; calibrated with the others on the train scenes)
                named = named or (r.confidence >= self.lone_threshold and not unsure)
            card = Card.parse(r.face, self.deck) if named else None
            if card is None and r.p_index < 0.5:
                continue  # probably no index at all
            if host is not None:
                d = found[host]
                if (self.two_readers and d.card is None and card is not None and d.best is not None
                        and not _spans_cards(d.quad, r.quad + off) and d.best != card):
                    continue  # the glyph reader read this card whole as another card: the readers disagree
                iou = quad_iou(d.quad, r.quad + off)
                # (two_readers) only when the card the index places is that outline
                if (d.face == "up" and d.card is None and card is not None and not _spans_cards(d.quad, r.quad + off)
                        and (not self.two_readers or iou >= 0.5)):
                    # the outline's card did not read whole: its index names it
                    found[host] = Detection(card, r.confidence, d.quad, "up", d.crop, evidence=ev)
                    if self.two_readers:
                        named_by_index.add(host)
                    continue
                if d.card is None and card is not None:
                    pass  # an outline around overlapping cards: the index names its own card, not the outline
                elif d.card is None or card is None or d.card == card:
                    continue
                # (two_readers: the rule is for outlines read whole; the default recogniser applies it to all)
                whole = d.card is not None or not self.two_readers
                if whole and host not in named_by_index and iou > 0.3:
                    continue  # the index of the card read whole, read less well alone: the whole read wins
            extra.append(Detection(card, r.confidence, r.quad + off, "up", index=origin, evidence=ev))
        return extra

    def recognize_crop(self, image: np.ndarray) -> Detection | None:
        """The most central card of an image that shows one card (a crop or a photo of it)."""
        dets = self.recognize(image, keep_crops=True)
        if not dets:
            return None
        h, w = image.shape[:2]
        return min(dets, key=lambda d: (d.center[0] - w / 2) ** 2 + (d.center[1] - h / 2) ** 2)

    def read_crop(self, image: np.ndarray) -> Detection | None:
        """The card an image was cut around: a warped card (read whole), or a crop of a photo
        around one card (the read whose card best fills the crop; neighbours' cards that
        reach into it are not taken for it)."""
        if image.shape[:2] == (WARP_H, WARP_W):
            rd = self.read(image)
            return Detection(rd.card, rd.confidence, np.array([[0, 0], [WARP_W, 0], [WARP_W, WARP_H], [0, WARP_H]],
                                                                np.float32), rd.face, image)
        h, w = image.shape[:2]
        frame = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
        best, best_iou = None, 0.2
        for d in self.recognize(image):
            iou = quad_iou(d.quad, frame)
            if d.card is not None and iou > best_iou:
                best, best_iou = d, iou
        return best

    def scan(self, frame: np.ndarray, layout: CameraLayout, keep_crops: bool = True) -> dict[Zone, list[Detection]]:
        """Cards per zone of ``layout`` (a card belongs to the region holding its centre)."""
        out: dict[Zone, list[Detection]] = {z: [] for z in layout.zones}
        for d in self.recognize(frame, keep_crops=keep_crops):
            roi = layout.locate(*(d.index or d.center))  # a card read from its index lies where the index is
            if roi is not None:
                out[roi.zone].append(Detection(d.card, d.confidence, d.quad, d.face, d.crop, roi.zone, roi.slot,
                                               d.index, d.evidence, d.best))
        return out

    # -- the deck in play
    def refine(self, examples: Iterable[tuple[np.ndarray, Card]]) -> int:
        """Teach the recogniser the deck in play from labelled images of its cards.

        Each image shows one card: an upright warped crop (the label store's), or a crop
        around the card in a photo.  Warped crops refine the whole-card reader's glyph
        heads; every image gives the corner-index reader its indices as examples
        (:class:`vision.corners.DeckExamples`).  Returns the examples added.
        """
        pairs = []
        n_index = 0
        for img, card in examples:
            if self.index is not None and card.rank is not None and card.suit is not None:
                n_index += labelled_examples(img, card.face, self.index, self.deck_examples, self.index_params)
            if img.shape[:2] == (WARP_H, WARP_W):
                pairs += [(g, card) for g in _card_glyphs(img)]
        n = 0
        if pairs:
            self.model.prepare_refine()
            n = self.model.add(pairs)
            self.model.extra += n
            if n:
                self.model.fit()
        return n + n_index
