"""An honest split of labelled real photos: by scene, so that no scene is on both sides.

A photo set taken by one photographer holds runs of photos of the *same cards*, rearranged
between shots a few seconds apart on the same surface under the same light.  A split that
puts photos of one run on both sides measures near-copies of what it calibrated on.  So:

* **Source photo** (:func:`source_name`): augmented exports hold several copies of one photo
  (Roboflow's ``IMG_..._jpg.rf.<hash>.jpg``); they are one photo.
* **Time** (:func:`photo_time`): the camera's file name (``IMG_YYYYMMDD_HHMMSS``); photos
  without one keep their name order.
* **Scene** (:func:`group_scenes`): photos in time order; a photo joins the scene of the
  photo before it when their labelled card sets mostly agree (Jaccard index at least
  ``SAME_CARDS``: one card in or out of four or five), and photos with exactly the same
  card set are one scene wherever they fall in time.
* **Sides** (:func:`assign_sides`): scenes in time order alternate, the first to ``train``
  (where thresholds are calibrated), the second to ``dev`` (where they are only measured),
  and so on.  The rule reads no recognition result, so it cannot favour the recogniser.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from .yolo import IMAGE_SUFFIXES, find_names, parse_class_name

SAME_CARDS = 0.5
_RF = re.compile(r"_(jpe?g|png)\.rf\.[0-9a-f]+$", re.IGNORECASE)
_STAMP = re.compile(r"(\d{8})[_-](\d{6})")


def source_name(path: str | Path) -> str:
    """The source photo a file was exported from: ``IMG_20220316_134551`` for
    ``IMG_20220316_134551_jpg.rf.2934cd10....jpg`` (any other name: its stem)."""
    return _RF.sub("", Path(path).stem)


def photo_time(name: str) -> datetime | None:
    """When a phone camera took the photo, from its file name (``YYYYMMDD_HHMMSS``), or None."""
    m = _STAMP.search(name)
    if not m:
        return None
    try:
        return datetime.strptime(m.group(1) + m.group(2), "%Y%m%d%H%M%S")
    except ValueError:
        return None


@dataclass
class SourcePhoto:
    """One photo and its exported copies (``files``, each with the split folder it is in)."""

    name: str
    cards: frozenset[str]
    files: list[tuple[str, Path]] = field(default_factory=list)  # (split folder name, image path)

    @property
    def time(self) -> datetime | None:
        return photo_time(self.name)

    def best_file(self) -> tuple[str, Path, bool]:
        """The copy to read and whether it may be mirrored: a copy from a split that holds no
        augmented copies (``valid``/``test``) if there is one, else the first by name (a
        ``train/`` copy, flipped at random by the export: the caller turns it back)."""
        plain = sorted((s, p) for s, p in self.files if s != "train")
        if plain:
            return plain[0][0], plain[0][1], False
        s, p = sorted(self.files)[0]
        return s, p, True


MIRRORED_FILE = Path(__file__).with_name("data") / "mirrored.json"


def recorded_mirrors(folder: str | Path, path: Path | None = None) -> dict[str, bool]:
    """Which exported copies of a photo set are mirrored, as recorded once
    (``python -m vision.bench mirrored DIR --write``: the corner-index reader reads each copy
    both ways round, labels unseen), by image file name; empty for a set never recorded.

    Deciding it costs two reads of the whole frame per copy, more than recognising the photo:
    the record keeps the benchmark and its tests quick.  Whether an export flipped a copy is a
    property of the photo set, not of the recogniser being measured."""
    try:
        data = json.loads((path or MIRRORED_FILE).read_text())
        return {str(k): bool(v) for k, v in data.get("sets", {}).get(Path(folder).name, {}).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def _card_set(label: Path, names: Sequence[str | None]) -> frozenset[str]:
    faces = set()
    if label.is_file():
        for line in label.read_text().splitlines():
            parts = line.split()
            if parts and parts[0].isdigit() and int(parts[0]) < len(names) and names[int(parts[0])]:
                faces.add(str(names[int(parts[0])]))
    return frozenset(faces)


def source_photos(folder: str | Path) -> list[SourcePhoto]:
    """Every source photo of a YOLO parent folder (``train/``, ``valid/``, ``test/`` ...), by name."""
    folder = Path(folder)
    splits = [folder] if (folder / "images").is_dir() else sorted(
        d for d in folder.iterdir() if (d / "images").is_dir())
    if not splits:
        raise FileNotFoundError(f"{folder}: no images/ folder")
    photos: dict[str, SourcePhoto] = {}
    for split in splits:
        names = [parse_class_name(n) for n in find_names(split)]
        for img in sorted((split / "images").iterdir()):
            if img.suffix.lower() not in IMAGE_SUFFIXES:
                continue
            src = source_name(img)
            cards = _card_set(split / "labels" / (img.stem + ".txt"), names)
            ph = photos.setdefault(src, SourcePhoto(src, cards))
            ph.files.append((split.name, img))
    return sorted(photos.values(), key=_order)


def _order(p: SourcePhoto) -> tuple[datetime, str]:
    return p.time or datetime.min, p.name


@dataclass
class Scene:
    """Photos of the same cards in sequence."""

    number: int
    photos: list[SourcePhoto]
    side: str = ""

    @property
    def cards(self) -> frozenset[str]:
        return frozenset().union(*(p.cards for p in self.photos))

    def to_dict(self) -> dict[str, object]:
        t = [p.time for p in self.photos if p.time]
        folders: dict[str, int] = {}
        for p in self.photos:
            for s in {s for s, _ in p.files}:
                folders[s] = folders.get(s, 0) + 1
        return {"scene": self.number, "side": self.side, "photos": len(self.photos),
                "cards": sorted(self.cards), "from": min(t).isoformat() if t else None,
                "to": max(t).isoformat() if t else None, "photos_in_folder": folders}


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / max(len(a | b), 1)


def group_scenes(photos: Iterable[SourcePhoto]) -> list[Scene]:
    """Scenes in time order (see the module's docstring for the rule)."""
    ordered = sorted(photos, key=_order)
    parent = list(range(len(ordered)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_of: dict[frozenset[str], int] = {}
    for i, p in enumerate(ordered):
        if i and _jaccard(p.cards, ordered[i - 1].cards) >= SAME_CARDS:
            parent[root(i)] = root(i - 1)
        if p.cards in first_of:
            parent[root(i)] = root(first_of[p.cards])
        first_of.setdefault(p.cards, i)
    groups: dict[int, list[SourcePhoto]] = {}
    for i, p in enumerate(ordered):
        groups.setdefault(root(i), []).append(p)
    scenes = sorted(groups.values(), key=lambda g: _order(g[0]))
    return [Scene(k, g) for k, g in enumerate(scenes)]


def assign_sides(scenes: list[Scene]) -> list[Scene]:
    """Alternate sides in time order: even-numbered scenes ``train``, odd ones ``dev``."""
    for s in scenes:
        s.side = "train" if s.number % 2 == 0 else "dev"
    return scenes


def scene_split(folder: str | Path) -> list[Scene]:
    """The scenes of a YOLO parent folder, each with its side."""
    return assign_sides(group_scenes(source_photos(folder)))
