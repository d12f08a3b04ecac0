"""Evidence that agrees, or an abstention: an experimental gate, off by default
(``Recognizer(agree=True)`` turns it on; its measured cost is in :mod:`vision.recognizer`).

A corner index alone can be misread (a nine's index taken for a queen's on a deck never
trained on); the card carries other, independent evidence of its rank and colour, and with the
gate a card is named only when none of it disagrees:

* **Both corner indices**, where both are read: the same rank and the same colour, or the
  card is unknown.
* **The centre** (:func:`centre_of`, on the card warped upright): a number card shows pips
  of its suit's colour, never more than its rank has (covers hide pips, nothing adds them),
  and no picture; a court card shows a picture and no rows of pips.
* **Support**: one more piece of evidence that names the card besides the index it was read
  from: its other corner index, the other reader, or a centre that matches the rank (the
  full pip count of a number card, a lone large pip of an ace, a picture for a court card).
  A card without it is named only at the recogniser's ``lone_threshold``.

What counts as a picture, and how many pips, is measured on the card's centre only
(``PIP_BOX``); the thresholds below were read off training scenes of real photos (never the
dev scenes, see :mod:`vision.scenes`).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .glyphs import PIP_BOX, Pips, read_pips

NUMBER_RANKS = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "T": 10}
# read off the train scenes of real photos (cards read whole, so the centre is the card's own):
# number cards' largest ink component is at most 0.08 of the centre in nine of ten, court
# pictures' at least 0.3 in nine of ten; court centres are at least 0.47 inked in nine of ten
PICTURE_BLOB = 0.2  # an ink component this big (fraction of the centre's area) is a picture, not a pip
PICTURE_INK = 0.3  # or this much of the centre inked
# the pips' ink colour on number cards read whole: black cards' redness is below 0.36 in 99 of
# 100, red cards' above 0.16 in 99 of 100
PIPS_BLACK_BELOW = 0.4
PIPS_RED_ABOVE = 0.12
COURT_MAX_PIPS = 4  # this many pips of one size in a card's centre: not a court picture
ACE_PIP_WIDTH = 0.16  # a lone centre pip at least this wide (of the card) makes an ace


@dataclass(frozen=True)
class Centre:
    """What the centre of a card shows."""

    pips: Pips
    ink: float  # fraction of the centre that is ink
    blob: float  # the largest ink component, fraction of the centre's area
    red: float  # mean redness of the ink (> 0 red, < 0 black; 0 when there is no ink)
    own: bool = True  # the card's outline was found (the centre is its own, not a neighbour's on top)

    @property
    def picture(self) -> bool:
        return self.blob >= PICTURE_BLOB or self.ink >= PICTURE_INK


def centre_of(card: np.ndarray, own: bool = True) -> Centre:
    """The centre of an upright warped card (BGR); ``own``: the card's outline was found."""
    h, w = card.shape[:2]
    x0, x1, y0, y1 = (int(PIP_BOX[0] * w), int(PIP_BOX[1] * w), int(PIP_BOX[2] * h), int(PIP_BOX[3] * h))
    mn = card.min(axis=2) if card.ndim == 3 else card
    # the paper's level from the whole card (a court picture can fill most of the centre)
    paper = float(np.percentile(mn, 90))
    region = mn[y0:y1, x0:x1].astype(np.float32)
    ink = np.clip((paper - region) / max(paper * 0.6, 30.0), 0, 1)
    binary = (ink > 0.45).astype(np.uint8)
    frac = float(binary.mean())
    blob = 0.0
    if frac > 0:
        n, _, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
        if n > 1:
            blob = float(stats[1:, 4].max()) / binary.size
    red = 0.0
    if card.ndim == 3 and frac > 0.005:
        px = card[y0:y1, x0:x1].astype(np.float32)[binary.astype(bool)]
        b, g, r = px[:, 0].mean(), px[:, 1].mean(), px[:, 2].mean()
        red = float((r - max(b, g)) / max(r, 1.0))
    return Centre(read_pips(card), frac, blob, red, own)


def centre_verdict(rank: str, c: Centre, red: bool | None = None) -> tuple[bool, bool]:
    """``(contradicts, supports)`` the rank (and colour, ``red``) read from an index.

    Pips never outnumber a number card's rank, nor form rows on a court card.  Where the
    card's outline was found (``own``), its centre is its own: a number card (not an ace, whose
    pip can be large and ornate) has no picture there and pips of its colour, and a court
    card has a picture."""
    n = c.pips.count
    if rank in NUMBER_RANKS:
        want = NUMBER_RANKS[rank]
        if n >= 2 and n > want:
            return True, False
        if want == 1:
            return False, n == 1 and c.pips.width >= ACE_PIP_WIDTH
        if c.own and c.picture:
            return True, False
        if c.own and red is not None and c.ink > 0.02 and (c.red < PIPS_RED_ABOVE if red else c.red > PIPS_BLACK_BELOW):
            return True, False
        return False, n == want
    if n >= COURT_MAX_PIPS:
        return True, False
    if c.own:
        return not c.picture, c.picture
    return False, False
