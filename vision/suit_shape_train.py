"""Training of the pip-shape suit model (:mod:`vision.suit_shape`): the number cards of the real
deck artwork of :data:`vision.decks.TRAIN_DECKS`, rendered as a table camera sees them.

Apart from the model so the product never imports :mod:`vision.decks`, and the deck renderer,
which reaches the recogniser, is not imported back by it.  ``python -m vision.suit_shape_train``
rebuilds ``vision/data/suit_shape.npz`` (about 30 s)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import cv2
import numpy as np

from .decks import TRAIN_DECKS, available, deck_cards
from .evidence import read_centre
from .glyphs import SUIT_CLASSES, LinearHead
from .suit_shape import MIN_SIDE, SHAPE_FILE, SuitShape, pip_features

# the sizes a card is seen at, as a fraction of the 200 x 280 card it is read at (a card 280 to 80 px
# high in a photo), and the blur of a phone's or a table camera's lens
TRAIN_SCALES = (1.0, 0.6, 0.4, 0.28)
TRAIN_SEED = 11


def _seen(card: np.ndarray, scale: float, rng: np.random.Generator) -> np.ndarray:
    """A rendered card (200 x 280) as a camera sees it: smaller (then brought back to 200 x 280,
    as the recogniser warps it), blurred, slightly turned."""
    img = card
    if scale < 1.0:
        small = cv2.resize(img, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        small = cv2.GaussianBlur(small, (0, 0), float(rng.uniform(0.3, 0.9)))
        img = cv2.resize(small, (200, 280), interpolation=cv2.INTER_LINEAR)
    angle = float(rng.uniform(-4, 4))
    M = cv2.getRotationMatrix2D((100, 140), angle, 1.0)
    return cv2.warpAffine(img, M, (200, 280), borderMode=cv2.BORDER_REPLICATE)


def seen_pips(decks: Iterable[str], rng: np.random.Generator) -> Iterator[tuple[str, str, tuple[np.ndarray, ...]]]:
    """``(deck, card, pip masks)`` for the number cards (two to ten) of ``decks``, each seen at every
    ``TRAIN_SCALES`` (:func:`_seen`) and cut by :func:`vision.evidence.read_centre` as the camera
    cuts them: what the model trains on, and what the held-back decks' test measures it on."""
    for name in decks:
        for face, img in sorted(deck_cards(name).items()):
            if face[0] not in "23456789T":
                continue
            card = cv2.resize(img, (200, 280), interpolation=cv2.INTER_AREA)
            for scale in TRAIN_SCALES:
                yield name, face, read_centre(_seen(card, scale, rng)).masks


def deck_pips(decks: Iterable[str], seed: int = TRAIN_SEED) -> tuple[np.ndarray, np.ndarray]:
    """Features and suits of the pips of :func:`seen_pips`, each pip both ways up."""
    X, y = [], []
    for _, face, masks in seen_pips(decks, np.random.default_rng(seed)):
        for m in masks:
            if min(m.shape) < MIN_SIDE:
                continue
            for g in (m, m[::-1, ::-1], m[:, ::-1]):
                X.append(pip_features(g))
                y.append(SUIT_CLASSES.index(face[1]))
    return np.array(X, np.float32), np.array(y, np.int32)


def train(decks: Iterable[str] | None = None) -> SuitShape:
    """The classifier, trained on the pips of ``decks`` (default: every training deck installed)."""
    X, y = deck_pips(decks if decks is not None else available(TRAIN_DECKS))
    head = LinearHead(SUIT_CLASSES, X, y, l2=1e-3)
    head.fit(epochs=400)
    return SuitShape(head)


if __name__ == "__main__":  # pragma: no cover
    model = train()
    model.save()
    print(f"wrote {SHAPE_FILE}")
