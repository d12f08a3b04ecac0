"""Labelled images of the deck in play: calibration captures and tag-labelled frames.

:class:`LabelStore` keeps upright card crops (``WARP_H`` x ``WARP_W``) with the card each
shows, in memory or as PNG files under a folder (``<root>/<face>/<n>.png``; ``Ah``,
``Td`` ...).  Sources:

* :func:`capture_reference` -- calibration: the operator shows each card of the deck
  under the camera (``tablectl calibrate-camera``);
* the daemon, through :class:`vision.fallback.CameraFallback`: whenever a tag is read in
  a zone the camera sees, the card's crop is stored with the tag's card as its label.

:meth:`LabelStore.refine` teaches a recogniser the deck (and reports its accuracy on the
real deck before and after, measured on labels held back from the refinement).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from controller.rules.cards import Card, CardError, standard_deck

from .cache import cache_dir
from .detect import WARP_H, WARP_W, find_quads, warp
from .recognizer import Recognizer

log = logging.getLogger(__name__)


def default_label_dir() -> Path:
    return cache_dir() / "labels"


def card_crop(frame_or_crop: np.ndarray, recognizer: Recognizer | None = None) -> np.ndarray | None:
    """An upright crop of the one card in ``frame_or_crop`` (a warped crop passes through).

    None when the image shows no card or several (a label must be unambiguous).
    """
    img = frame_or_crop
    if img.ndim == 2:
        img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    if img.shape[:2] == (WARP_H, WARP_W):
        return img
    params = recognizer.detect_params if recognizer is not None else None
    quads = find_quads(img, params) if params is not None else find_quads(img)
    if len(quads) != 1:
        return None
    return warp(img, quads[0])


class LabelStore:
    """Card crops with their labels; ``root=None`` keeps them in memory only."""

    def __init__(self, root: Path | str | None = None, max_per_card: int = 40) -> None:
        self.root = Path(root) if root is not None else None
        self.max_per_card = max_per_card
        self._mem: list[tuple[np.ndarray, Card]] = []
        self._counts: dict[str, int] = {}
        if self.root is not None and self.root.is_dir():
            for d in self.root.iterdir():
                if d.is_dir():
                    self._counts[d.name] = len(list(d.glob("*.png")))

    def add_labeled(self, frame_or_crop: np.ndarray, card: Card, raw: bool = False) -> bool:
        """Store the card shown in ``frame_or_crop`` (a frame with exactly one card, or a crop)
        as an example of ``card``.  ``raw``: store the image as it is (a crop of a photo around
        the card, whose outline may be hidden by its neighbours).  Returns False when there is
        no single card to store or the card already has ``max_per_card`` examples."""
        if card.rank is None:
            return False
        face = card.face
        if self._counts.get(face, 0) >= self.max_per_card:
            return False
        crop = frame_or_crop if raw else card_crop(frame_or_crop)
        if crop is None:
            return False
        n = self._counts.get(face, 0)
        if self.root is None:
            self._mem.append((crop.copy(), Card(card.rank, card.suit)))
        else:
            folder = self.root / face
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{n:04d}.png"
            tmp = folder / f".{n:04d}.tmp.png"
            cv2.imwrite(str(tmp), crop)
            os.replace(tmp, path)
        self._counts[face] = n + 1
        return True

    def __len__(self) -> int:
        return sum(self._counts.values())

    def counts(self) -> dict[str, int]:
        return dict(sorted(self._counts.items()))

    def items(self) -> Iterator[tuple[np.ndarray, Card]]:
        """Every stored (crop, card), in a stable order."""
        if self.root is None:
            yield from self._mem
            return
        if not self.root.is_dir():
            return
        for d in sorted(self.root.iterdir()):
            try:
                card = Card.parse(d.name)
            except CardError:
                continue
            for p in sorted(d.glob("[0-9]*.png")):
                img = cv2.imread(str(p), cv2.IMREAD_COLOR)
                if img is not None:
                    yield img, card

    def measure(self, recognizer: Recognizer, items: Sequence[tuple[np.ndarray, Card]] | None = None) -> dict[str, Any]:
        """Accuracy of ``recognizer`` on stored labels: correct, wrong and unknown rates."""
        items = list(self.items()) if items is None else items
        ok = wrong = unknown = 0
        confusions: dict[str, int] = {}
        for img, card in items:
            r = recognizer.read_crop(img)
            if r is None or r.card is None:
                unknown += 1
            elif r.card.face == card.face:
                ok += 1
            else:
                wrong += 1
                key = f"{card.face}->{r.card.face}"
                confusions[key] = confusions.get(key, 0) + 1
        n = max(len(items), 1)
        return {"n": len(items), "correct": ok / n, "wrong": wrong / n, "unknown": unknown / n,
                "confusions": dict(sorted(confusions.items(), key=lambda kv: -kv[1]))}

    def refine(self, recognizer: Recognizer | None = None, holdout: float = 0.25, seed: int = 0) -> dict[str, Any]:
        """Teach ``recognizer`` (the stock one by default) the deck in play.

        A ``holdout`` share of the labels is measured before and after refining with the
        rest (the honest accuracy on the real deck); then all labels are added.  Returns the
        report with the refined recogniser under ``"recognizer"``.
        """
        rec = recognizer if recognizer is not None else Recognizer.stock()
        items = list(self.items())
        rng = np.random.default_rng(seed)
        order = rng.permutation(len(items))
        k = int(round(len(items) * holdout)) if len(items) >= 8 else 0
        held = [items[i] for i in order[:k]]
        train = [items[i] for i in order[k:]]
        report: dict[str, Any] = {"labels": len(items), "held_out": k}
        if held:
            report["before"] = self.measure(rec, held)
        rec.refine(train)
        if held:
            report["after"] = self.measure(rec, held)
            rec.refine(held)
        report["glyphs_added"] = rec.model.extra
        report["index_examples"] = len(rec.deck_examples)
        report["recognizer"] = rec
        return report


def capture_reference(
    grab: Callable[[], np.ndarray | None],
    store: LabelStore,
    cards: Sequence[Card] | None = None,
    prompt: Callable[[Card], None] | None = None,
    shots: int = 3,
    max_frames: int = 100,
    roi: tuple[int, int, int, int] | None = None,
) -> dict[str, Any]:
    """Calibration: capture reference images of every card of the deck in play.

    For each card (the 52 by default) ``prompt(card)`` asks the operator to lay it face up
    under the camera; frames are taken from ``grab`` (BGR frames, None when no frame) until
    ``shots`` of them show exactly one card (inside ``roi`` if given), and those crops are
    stored in ``store`` with the card as label.  Returns ``{"captured": {face: n},
    "missing": [faces]}``; refine a recogniser afterwards with ``store.refine()``.
    """
    cards = list(cards) if cards is not None else standard_deck()
    captured: dict[str, int] = {}
    missing: list[str] = []
    for card in cards:
        if prompt is not None:
            prompt(card)
        got = 0
        for _ in range(max_frames):
            frame = grab()
            if frame is None:
                continue
            if roi is not None:
                x, y, w, h = roi
                frame = frame[y:y + h, x:x + w]
            quads = find_quads(frame)
            if len(quads) != 1:
                continue
            if store.add_labeled(warp(frame, quads[0]), card):
                got += 1
            if got >= shots:
                break
        captured[card.face] = got
        if got < shots:
            missing.append(card.face)
            log.warning("calibration: card not captured", extra={"event": "vision_calibrate_missing",
                                                                   "card": card.face, "shots": got})
    return {"captured": captured, "missing": missing}


def import_yolo(folder: Path | str, store: LabelStore, per_rank: int = 5, seed: int = 0,
                recognizer: Recognizer | None = None, unstretch: float | None = 4 / 3,
                margin: float = 0.08, only: Collection[str] | None = None) -> dict[str, Any]:
    """Labelled crops of a deck from photos labelled in YOLO format (a ``train/`` split, say;
    ``only``: these image file names of it):
    up to ``per_rank`` cards of each rank, photos taken in a seeded order, each crop the
    card's box grown by ``margin``.  Mirrored copies are turned back first (by which way
    the recogniser reads better, labels unseen).  Returns what was stored."""
    from .corners import read_indices
    from .yolo import iter_folder

    rec = recognizer or Recognizer.stock()

    def score(img: np.ndarray) -> float:
        if rec.index is None:
            return 0.0
        return sum(r.confidence for r in read_indices(img, rec.index, rec.index_params))

    photos = sorted(p for p in Path(folder).rglob("*")
                    if p.parent.name == "images" and (only is None or p.name in only))
    order = np.random.default_rng(seed).permutation(len(photos))
    wanted: dict[Path, list[str]] = {p.parent.parent: [] for p in photos}
    for i in order:
        wanted[photos[i].parent.parent].append(photos[i].name)
    got: dict[str, int] = {}
    used = 0
    for split, names in wanted.items():
        for name in names:
            if all(got.get(r, 0) >= per_rank for r in "A23456789TJQK"):
                break
            ph = next(iter_folder(split, unstretch, unmirror=score, only=[name]), None)
            if ph is None:
                continue
            used += 1
            H, W = ph.image.shape[:2]
            for c in ph.cards:
                if got.get(c.face[0], 0) >= per_rank:
                    continue
                x, y, w, h = c.box
                x0, y0 = int(max(0, x - margin * w)), int(max(0, y - margin * h))
                x1, y1 = int(min(W, x + w * (1 + margin))), int(min(H, y + h * (1 + margin)))
                if x1 - x0 < 20 or y1 - y0 < 20:
                    continue
                if store.add_labeled(ph.image[y0:y1, x0:x1].copy(), Card.parse(c.face), raw=True):
                    got[c.face[0]] = got.get(c.face[0], 0) + 1
    return {"photos": used, "crops": sum(got.values()), "per_rank": dict(sorted(got.items()))}
