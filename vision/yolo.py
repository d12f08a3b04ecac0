"""Real photos labelled in YOLO format: load them, and score a recogniser card by card.

A YOLO folder holds ``images/`` and ``labels/`` (one ``class cx cy w h`` line per card,
normalised), and a ``data.yaml`` with the class ``names`` beside or above it (``"10 of
clubs"``, ``"ace of spades"`` ...).  :func:`score_folder` reads every photo and sorts each
labelled card into **right** (the recogniser reports that card overlapping the box),
**wrong** (it reports only other cards there) or **unknown** (it reports nothing there), with
the confusions.  A detection belongs to the labelled box it overlaps most (intersection over
union), so on overlapping cards each read counts for one card only.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import yaml

from controller.rules.cards import Card, CardError

_RANK_WORDS = {"ace": "A", "king": "K", "queen": "Q", "jack": "J", "10": "T", "ten": "T"}
_SUIT_WORDS = {"clubs": "c", "diamonds": "d", "hearts": "h", "spades": "s"}
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp")


def parse_class_name(name: str) -> str | None:
    """``"10 of clubs"`` -> ``"Tc"``, ``"jack  of hearts"`` -> ``"Jh"``, ``"Ah"`` -> ``"Ah"``; None if not a card."""
    txt = re.sub(r"\s+", " ", name.strip().lower())
    m = re.fullmatch(r"(\w+) of (\w+)", txt)
    if m:
        rank = _RANK_WORDS.get(m.group(1), m.group(1).upper())
        suit = _SUIT_WORDS.get(m.group(2))
        face = f"{rank}{suit}" if suit else ""
    else:
        face = name.strip().replace("10", "T")
        face = face[:-1].upper() + face[-1:].lower()
    if not re.fullmatch(r"[2-9TJQKA][cdhs]", face):
        return None
    try:
        return Card.parse(face).face
    except (CardError, ValueError, IndexError):
        return None


def find_names(folder: Path) -> list[str]:
    """The class names of the ``data.yaml`` in ``folder`` or one of its two parents."""
    for d in (folder, folder.parent, folder.parent.parent):
        f = d / "data.yaml"
        if f.is_file():
            data = yaml.safe_load(f.read_text())
            names = data.get("names")
            if isinstance(names, dict):
                names = [names[k] for k in sorted(names)]
            if names:
                return [str(n) for n in names]
    raise FileNotFoundError(f"no data.yaml with class names in or above {folder}")


@dataclass(frozen=True)
class LabelledCard:
    face: str
    box: tuple[float, float, float, float]  # x, y, w, h in pixels of the (undistorted) image


@dataclass(frozen=True)
class LabelledPhoto:
    path: Path
    image: np.ndarray  # BGR
    cards: tuple[LabelledCard, ...]


def iter_folder(folder: Path | str, unstretch: float | None = None,
                unmirror: Callable[[np.ndarray], float] | None = None,
                only: Sequence[str] | None = None) -> Iterator[LabelledPhoto]:
    """The labelled photos of a YOLO folder (``folder/images`` + ``folder/labels``, or a parent of
    several such split folders).  ``unstretch``: width/height to restore when the export
    squashed photos to a square (``4/3`` for 640x640 exports of 4:3 photos; the width is
    scaled, so no pixel row is lost).  ``unmirror``: a score of how well a photo reads
    (labels unseen); a photo whose mirror image scores higher is mirrored back, boxes
    with it (augmented exports hold mirrored copies, whose indices read backwards).
    ``only``: these image file names only."""
    folder = Path(folder)
    splits = [folder] if (folder / "images").is_dir() else sorted(
        d for d in folder.iterdir() if (d / "images").is_dir())
    if not splits:
        raise FileNotFoundError(f"{folder}: no images/ folder")
    for split in splits:
        names = [parse_class_name(n) for n in find_names(split)]
        for img_path in sorted((split / "images").iterdir()):
            if img_path.suffix.lower() not in IMAGE_SUFFIXES or (only is not None and img_path.name not in only):
                continue
            photo = load_photo(img_path, names, unstretch, unmirror)
            if photo is not None:
                yield photo


def load_photo(img_path: Path, names: Sequence[str | None], unstretch: float | None = None,
               unmirror: Callable[[np.ndarray], float] | None = None,
               mirrored: bool | None = None) -> LabelledPhoto | None:
    """One labelled photo (its labels in ``../labels/<stem>.txt``; see :func:`iter_folder`), None
    if the image does not read.  ``mirrored``: whether the copy is mirrored, when already known
    (else ``unmirror`` decides)."""
    img = cv2.imread(str(img_path), cv2.IMREAD_COLOR)
    if img is None:
        return None
    h, w = img.shape[:2]
    if unstretch and abs(w / h - unstretch) > 0.02:
        w = int(round(h * unstretch))
        img = cv2.resize(img, (w, h), interpolation=cv2.INTER_CUBIC)
    cards = []
    lab = img_path.parent.parent / "labels" / (img_path.stem + ".txt")
    if lab.is_file():
        for line in lab.read_text().splitlines():
            parts = line.split()
            if len(parts) < 5:
                continue
            face = names[int(parts[0])] if int(parts[0]) < len(names) else None
            if face is None:
                continue
            cx, cy, bw, bh = (float(v) for v in parts[1:5])
            cards.append(LabelledCard(face, ((cx - bw / 2) * w, (cy - bh / 2) * h, bw * w, bh * h)))
    if mirrored is None and unmirror is not None:
        flipped = cv2.flip(img, 1)
        mirrored = unmirror(flipped) > unmirror(img)
    if mirrored:
        img = cv2.flip(img, 1)
        cards = [LabelledCard(c.face, (w - c.box[0] - c.box[2], *c.box[1:])) for c in cards]
    return LabelledPhoto(img_path, img, tuple(cards))


def _iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two ``x, y, w, h`` boxes."""
    x0, y0 = max(a[0], b[0]), max(a[1], b[1])
    x1, y1 = min(a[0] + a[2], b[0] + b[2]), min(a[1] + a[3], b[1] + b[3])
    inter = max(0.0, x1 - x0) * max(0.0, y1 - y0)
    return inter / max(a[2] * a[3] + b[2] * b[3] - inter, 1e-6)


MIN_IOU = 0.1


def score_photo(cards: Sequence[LabelledCard], found: Sequence[tuple[Any, ...]]
                ) -> tuple[list[tuple[str, str | None]], int]:
    """``[(true face, verdict)]`` per labelled card and the number of stray reads.

    ``found``: (face or None, box[, anchor]) per detection.  Each read belongs to the labelled
    card its box overlaps most (intersection over union, at least ``MIN_IOU``); a read with an
    ``anchor`` (the corner index it was read from) to the card, among those whose box holds
    the anchor, that its box overlaps most.  Verdict: the true
    face when a read of it belongs to the card (right), the most frequent other face when only
    other reads do (wrong), None when no read does (unknown).  Reads that belong to no card
    are strays (cards the labels leave out, or misplaced boxes).
    """
    assigned: dict[int, list[str]] = {}
    stray = 0
    for face, box, *rest in found:
        if face is None:
            continue
        ious = [_iou(box, c.box) for c in cards]
        anchor = rest[0] if rest else None
        if anchor is not None:  # read at a corner index: the card is one whose box holds that index
            holds = [i for i, c in enumerate(cards) if c.box[0] <= anchor[0] <= c.box[0] + c.box[2]
                     and c.box[1] <= anchor[1] <= c.box[1] + c.box[3]]
            if holds:
                assigned.setdefault(max(holds, key=lambda i: ious[i]), []).append(face)
                continue
        if not ious or max(ious) < MIN_IOU:
            stray += 1
            continue
        assigned.setdefault(int(np.argmax(ious)), []).append(face)
    out: list[tuple[str, str | None]] = []
    for i, c in enumerate(cards):
        reads = assigned.get(i, [])
        if c.face in reads:
            out.append((c.face, c.face))
        elif reads:
            out.append((c.face, Counter(reads).most_common(1)[0][0]))
        else:
            out.append((c.face, None))
    return out, stray


def score_folder(folder: Path | str, read: Callable[[np.ndarray], Sequence[tuple[Any, ...]]],
                 unstretch: float | None = None, progress: Callable[[int], None] | None = None,
                 unmirror: Callable[[np.ndarray], float] | None = None) -> dict[str, Any]:
    """Right / unknown / wrong per labelled card of a YOLO folder, with the confusions."""
    verdicts: list[tuple[str, str | None]] = []
    photos = stray = 0
    for photo in iter_folder(folder, unstretch, unmirror):
        found = read(photo.image)
        v, s = score_photo(photo.cards, found)
        verdicts += v
        stray += s
        photos += 1
        if progress:
            progress(photos)
    n = len(verdicts)
    right = sum(1 for t, r in verdicts if r == t)
    wrong = [(t, r) for t, r in verdicts if r is not None and r != t]
    unknown = sum(1 for _, r in verdicts if r is None)
    kinds: Counter[str] = Counter()
    for t, r in wrong:
        kinds["rank" if t[0] != r[0] and t[1] == r[1] else "suit" if t[0] == r[0] else "rank+suit"] += 1
    return {
        "folder": str(folder),
        "photos": photos,
        "cards": n,
        "right": right, "unknown": unknown, "wrong": len(wrong),
        "right_rate": round(right / max(n, 1), 4),
        "unknown_rate": round(unknown / max(n, 1), 4),
        "wrong_rate": round(len(wrong) / max(n, 1), 4),
        "stray_reads": stray,
        "confusions": [{"true": t, "read": r, "count": c} for (t, r), c in Counter(wrong).most_common()],
        "wrong_kinds": dict(kinds),
        "unknown_by_rank": dict(sorted(Counter(t[0] for t, r in verdicts if r is None).items())),
    }
