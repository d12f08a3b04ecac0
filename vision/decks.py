"""Real deck artwork for training and checking the index reader, rendered on this machine.

Debian's ``gnome-cards-data`` ships about thirty card decks as SVG sheets (13 columns: ace
to king; rows: clubs, diamonds, hearts, spades, then jokers and the back).  Only decks
with English indices (A K Q J 10..2, rank above suit, two colours) are used; they are
split into training decks and held-back decks (never trained on) for measuring.

The decks are GPL/LGPL artwork: they are rendered here, at build or test time, into the
cache folder (``rsvg-convert`` from ``librsvg2-bin``), and none of their images is
committed or shipped.  The model trained on them holds only classifier weights.
This module is for training, tests and benchmarks: the product never imports it.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import cv2
import numpy as np

from controller.errors import PokerTableError
from controller.rules.cards import RANKS, Card

from .cache import cache_dir

DECK_DIR = Path("/usr/share/aisleriot/cards")  # Debian's gnome-cards-data: 13-column sheets
KDE_DIR = Path("/usr/share/carddecks")  # Debian's kdegames-card-data-kf5: one SVG element per card
# the npm package @younestouati/playing-cards-standard-deck (LGPL-3.0): one SVG file per card, installed by
# scripts/bootstrap under the checkout's .venv (never committed)
NPM_DECKS_DIR = Path(__file__).resolve().parents[1] / ".venv" / "decks" / "node_modules"
# decks of kdegames-card-data-kf5 with English indices, rank above suit, red and black suits: name -> file
KDE_DECKS = {
    "kde_standard": "svg-standard/standard.svgz",
    "kde_nicu_white": "svg-nicu-white/white.svgz",
    "kde_ancient_egyptians": "svg-ancient-egyptians/Ancient_Egyptians.svgz",
}
NPM_DECKS = {"npm_younestouati": "@younestouati/playing-cards-standard-deck/cards"}
# decks with English indices, rank above suit, red and black suits
TRAIN_DECKS = ("anglo", "anglo_bitmap", "anglo_modern", "anglo_poker", "bellot", "dondorf", "gnomangelo",
               "neoclassical", "paris", "simplistic", "tango") + tuple(KDE_DECKS) + tuple(NPM_DECKS)
HELD_BACK_DECKS = ("plastic", "orell", "gnomangelo_bitmap")
SHEET_WIDTH = 2600  # rendering width of a 13-column sheet: cards about 200 x 280 px
CARD_WIDTH = SHEET_WIDTH // 13  # rendering width of a deck drawn card by card
_SHEET_RANKS = "A23456789TJQK"
_SHEET_SUITS = "cdhs"
_KDE_RANKS = {"A": "1", "T": "10", "J": "jack", "Q": "queen", "K": "king"}
_SUIT_NAMES = {"c": "club", "d": "diamond", "h": "heart", "s": "spade"}
_NPM_RANKS = {"A": "1", "T": "10", "J": "11", "Q": "12", "K": "13"}


class DeckArtworkMissing(PokerTableError, RuntimeError):
    """The deck SVGs or ``rsvg-convert`` are not installed (``scripts/bootstrap`` installs them)."""


def _source(name: str) -> Path:
    if name in KDE_DECKS:
        return KDE_DIR / KDE_DECKS[name]
    if name in NPM_DECKS:
        return NPM_DECKS_DIR / NPM_DECKS[name]
    return DECK_DIR / f"{name}.svgz"


def available(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(n for n in names if _source(n).exists())


def _rsvg(args: list[str], out: Path) -> None:
    """Render with ``rsvg-convert`` into ``out`` (written whole or not at all)."""
    exe = shutil.which("rsvg-convert")
    if exe is None:
        raise DeckArtworkMissing("rsvg-convert missing: install librsvg2-bin (scripts/bootstrap)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp.png")
    subprocess.run([exe, *args, "-b", "white", "-o", str(tmp)], check=True)
    tmp.replace(out)


def _read(path: Path) -> np.ndarray:
    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if img is None:
        raise DeckArtworkMissing(f"cannot read {path}")
    return img


def _render_sheet(name: str) -> np.ndarray:
    out = cache_dir() / "decks" / f"{name}-{SHEET_WIDTH}.png"
    if not out.is_file():
        src = _source(name)
        if not src.is_file():
            raise DeckArtworkMissing(f"{src} missing: install gnome-cards-data (scripts/bootstrap)")
        _rsvg(["-w", str(SHEET_WIDTH), str(src)], out)
    return _read(out)


def _render_card(name: str, face: str) -> np.ndarray:
    """One card of a deck drawn card by card: an element of one SVG (KDE) or a file of its own (npm)."""
    out = cache_dir() / "decks" / f"{name}-{CARD_WIDTH}" / f"{face}.png"
    if not out.is_file():
        src = _source(name)
        if not src.exists():
            raise DeckArtworkMissing(f"{src} missing: scripts/bootstrap installs it")
        r, s = face[0], face[1]
        if name in KDE_DECKS:
            args = ["-i", f"{_KDE_RANKS.get(r, r)}_{_SUIT_NAMES[s]}", str(src)]
        else:
            args = [str(src / f"{_NPM_RANKS.get(r, r)}{s}.svg")]
        _rsvg(["-w", str(CARD_WIDTH), *args], out)
    return _read(out)


@cache
def deck_cards(name: str) -> dict[str, np.ndarray]:
    """The faces of one deck (all 52 but the few a renderer cannot draw), upright BGR images keyed
    by face (``"Ah"``, ``"Td"`` ...)."""
    out = {}
    if name in KDE_DECKS or name in NPM_DECKS:
        for s in _SHEET_SUITS:
            for r in _SHEET_RANKS:
                img = _render_card(name, Card(r, s).face)  # the npm deck's cards have no border: keep the paper
                img = _trim(img) if name in KDE_DECKS else img
                if img.shape[1] >= CARD_WIDTH // 2:  # a few elements render as a thumbnail: left out
                    out[Card(r, s).face] = img
        return out
    sheet = _render_sheet(name)
    H, W = sheet.shape[:2]
    cw, ch = W / 13, H / 5
    for si, s in enumerate(_SHEET_SUITS):
        for ri, r in enumerate(_SHEET_RANKS):
            x0, y0 = int(round(ri * cw)), int(round(si * ch))
            img = sheet[y0:int(round(y0 + ch)), x0:int(round(x0 + cw))]
            out[Card(r, s).face] = _trim(img)
    return out


def _trim(img: np.ndarray) -> np.ndarray:
    """Cut a sheet cell to the card (cells can carry a margin of background)."""
    g = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    m = (g < 250).astype(np.uint8)
    ys, xs = np.nonzero(m)
    if len(xs) < 100:
        return img
    return img[ys.min():ys.max() + 1, xs.min():xs.max() + 1]


assert set(RANKS) == set(_SHEET_RANKS)


# ----------------------------------------------------------------------------- ground truth

@dataclass(frozen=True)
class IndexTruth:
    """Where a card's top-left index lies on the upright card image (pixels of that image)."""

    rank: tuple[float, float]  # centre of the rank's ink (both marks of a 10)
    suit: tuple[float, float]
    size: tuple[int, int]  # card image width, height


def index_truth(card_img: np.ndarray) -> IndexTruth | None:
    """Find the top-left index of a clean upright card: the top mark row of the corner is the
    rank, the next mark below it the suit."""
    from .corners import find_marks

    h, w = card_img.shape[:2]
    m = find_marks(card_img)
    st, ce = m.stats, m.cents
    cand = [i for i in m.keep if ce[i][0] < 0.3 * w and ce[i][1] < 0.36 * h and st[i, 3] >= 0.04 * h]
    if len(cand) < 2:
        return None
    cand.sort(key=lambda i: st[i, 1])
    top = cand[0]
    t0, t1 = st[top, 1], st[top, 1] + st[top, 3]
    same = [i for i in cand if abs(st[i, 1] - t0) < 0.25 * (t1 - t0) and 0.7 <= st[i, 3] / (t1 - t0) <= 1.3]
    row = [top]
    grown = True
    while grown:  # the marks of the rank's row that touch it side by side (the 1 and 0 of 10)
        grown = False
        x0, x1 = min(st[i, 0] for i in row), max(st[i, 0] + st[i, 2] for i in row)
        for i in same:
            if i not in row and st[i, 0] <= x1 + 0.25 * (t1 - t0) and st[i, 0] + st[i, 2] >= x0 - 0.25 * (t1 - t0):
                row.append(i)
                grown = True
    rest = [i for i in cand if i not in row and st[i, 1] >= t1 - 2]
    if not rest:
        return None
    rx0 = min(st[i, 0] for i in row)
    rx1 = max(st[i, 0] + st[i, 2] for i in row)
    rest = [i for i in rest if rx0 - 0.5 * (rx1 - rx0) <= ce[i][0] <= rx1 + 0.5 * (rx1 - rx0)]
    if not rest:
        return None
    suit = min(rest, key=lambda i: st[i, 1])
    area = sum(float(st[i, 4]) for i in row)
    rc = sum(ce[i] * st[i, 4] for i in row) / area
    if st[suit, 3] > 1.3 * (t1 - t0) or st[suit, 1] - t1 > 1.0 * (t1 - t0):
        return None
    return IndexTruth((float(rc[0]), float(rc[1])), (float(ce[suit][0]), float(ce[suit][1])), (w, h))


# ----------------------------------------------------------------------------- scenes

def background(h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    """A table surface (BGR): light paper or wood, felt, dark cloth, or clutter with print."""
    from .synth import felt, noise

    kind = rng.integers(5)
    if kind == 0:  # light: white or grey table, paper
        base = np.full((h, w, 3), rng.uniform(170, 250), np.float32) * rng.uniform(0.92, 1.05, 3)
        img = base + noise((h, w), rng.uniform(1, 6), rng)[..., None]
    elif kind == 1:
        img = felt(h, w, rng).astype(np.float32)
    elif kind == 2:  # dark cloth / carpet
        base = np.array(rng.uniform(20, 90, 3), np.float32)
        img = base[None, None] + noise((h, w), rng.uniform(4, 18), rng)[..., None]
    elif kind == 3:  # wood-like stripes
        yy = np.linspace(0, rng.uniform(8, 30), h, dtype=np.float32)[:, None]
        stripes = np.sin(yy + noise((h, w), 0.6, rng)) * rng.uniform(10, 30)
        base = np.array([rng.uniform(40, 110), rng.uniform(70, 150), rng.uniform(110, 200)], np.float32)
        img = base[None, None] + stripes[..., None]
    else:  # clutter: shapes and print of every colour (the things a camera also sees)
        img = np.full((h, w, 3), rng.uniform(60, 240), np.uint8)
        for _ in range(int(rng.integers(5, 25))):
            col = tuple(float(v) for v in rng.uniform(0, 255, 3))
            p = (int(rng.integers(w)), int(rng.integers(h)))
            r = int(rng.integers(3, max(4, w // 6)))
            if rng.random() < 0.5:
                cv2.rectangle(img, p, (p[0] + r, p[1] + int(rng.integers(3, r + 4))), col, -1)
            else:
                cv2.circle(img, p, r, col, int(rng.choice([-1, 1, 2, 3])))
        for _ in range(int(rng.integers(0, 10))):
            txt = "".join(rng.choice(list("AKQJ1023456789abcdefXYZ#%&@")) for _ in range(int(rng.integers(1, 6))))
            col = (20, 20, 20) if rng.random() < 0.6 else (40, 40, 200)
            cv2.putText(img, txt, (int(rng.integers(w)), int(rng.integers(h))), int(rng.integers(0, 8)),
                        float(rng.uniform(0.4, 1.6)), col, int(rng.integers(1, 3)), cv2.LINE_AA)
    return np.clip(img, 0, 255).astype(np.uint8)


def _alpha(w: int, h: int) -> np.ndarray:
    a = np.zeros((h, w), np.float32)
    r = max(2, int(0.05 * w))
    cv2.rectangle(a, (r, 0), (w - 1 - r, h - 1), 1.0, -1)
    cv2.rectangle(a, (0, r), (w - 1, h - 1 - r), 1.0, -1)
    for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(a, (cx, cy), r, 1.0, -1, cv2.LINE_AA)
    return a


def place_card(scene: np.ndarray, card_img: np.ndarray, M: np.ndarray) -> None:
    """Warp ``card_img`` (BGR) into ``scene`` (in place) with the 3x3 perspective ``M``."""
    h, w = card_img.shape[:2]
    H, W = scene.shape[:2]
    warped = cv2.warpPerspective(card_img, M, (W, H), flags=cv2.INTER_AREA)
    a = cv2.warpPerspective(_alpha(w, h), M, (W, H), flags=cv2.INTER_LINEAR)[..., None]
    sh = cv2.GaussianBlur(np.roll(a[..., 0], (3, 3), (0, 1)), (0, 0), 3)[..., None]
    out = scene.astype(np.float32) * (1 - 0.3 * sh)
    scene[:] = np.clip(out * (1 - a) + warped.astype(np.float32) * a, 0, 255).astype(np.uint8)


def random_pose(w: int, h: int, height_px: float, center: tuple[float, float], rng: np.random.Generator,
                tilt: float = 0.12) -> np.ndarray:
    """A perspective transform placing a ``w`` x ``h`` card image at ``center``, ``height_px`` tall."""
    k = height_px / h
    hw, hh = w * k / 2, h * k / 2
    pts = np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]], np.float64)
    t = rng.uniform(-tilt, tilt)
    pts[:2, 0] *= 1 + t
    pts[2:, 0] *= 1 - t
    pts += rng.uniform(-tilt, tilt, (4, 2)) * height_px * 0.15
    ang = rng.uniform(0, 2 * np.pi)
    c, s = np.cos(ang), np.sin(ang)
    pts = pts @ np.array([[c, -s], [s, c]]).T
    if rng.random() < 0.6:  # a camera looking at the table at a slant: one direction foreshortened
        phi = rng.uniform(0, np.pi)
        d = np.array([np.cos(phi), np.sin(phi)])
        pts = pts - (1 - rng.uniform(0.5, 1.0)) * np.outer(pts @ d, d)
    pts = pts + np.array(center)
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    return cv2.getPerspectiveTransform(src, pts.astype(np.float32))


def finish(scene: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Light, glare, blur, noise and JPEG, like a phone or a webcam; and, for a table camera, a
    warm or cold cast, motion or focus blur and a low resolution scaled back up."""
    from .synth import lighting

    img = lighting(scene, rng, strength=float(rng.uniform(0.3, 1.0)))
    if rng.random() < 0.3:  # a dim room
        img = np.clip(img.astype(np.float32) * rng.uniform(0.35, 0.8), 0, 255).astype(np.uint8)
    if rng.random() < 0.25:  # a coloured light (tungsten, LED strips)
        img = np.clip(img.astype(np.float32) * rng.uniform(0.75, 1.15, 3).astype(np.float32), 0, 255).astype(np.uint8)
    blur = rng.random()
    if blur < 0.15:  # a hand or the camera moving: a line kernel
        n = int(rng.integers(3, 8))
        k = np.zeros((n, n), np.float32)
        k[n // 2, :] = 1.0 / n
        R = cv2.getRotationMatrix2D(((n - 1) / 2, (n - 1) / 2), float(rng.uniform(0, 180)), 1.0)
        turned = cv2.warpAffine(k, R, (n, n))
        img = cv2.filter2D(img, -1, (turned / max(float(turned.sum()), 1e-6)).astype(np.float32))
    elif blur < 0.3:  # out of focus: a disc
        r = int(rng.integers(1, 4))
        k = np.zeros((2 * r + 1, 2 * r + 1), np.float32)
        cv2.circle(k, (r, r), r, 1.0, -1)
        img = cv2.filter2D(img, -1, k / float(k.sum()))
    if rng.random() < 0.25:  # a camera of lower resolution, or a card far away, scaled back up
        h, w = img.shape[:2]
        f = float(rng.uniform(0.4, 0.75))
        small = cv2.resize(img, (max(8, int(w * f)), max(8, int(h * f))), interpolation=cv2.INTER_AREA)
        img = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    q = int(rng.integers(40, 95))
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, q])
    decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
    return decoded if decoded is not None else img


def hand(scene: np.ndarray, center: tuple[float, float], size: float, rng: np.random.Generator) -> None:
    """A hand reaching over the table (in place): a skin-coloured palm and fingers, with a shadow."""
    H, W = scene.shape[:2]
    mask = np.zeros((H, W), np.float32)
    ang = float(rng.uniform(0, 360))
    cx, cy = int(center[0]), int(center[1])
    cv2.ellipse(mask, (cx, cy), (int(size * 0.45), int(size * 0.35)), ang, 0, 360, 1.0, -1, cv2.LINE_AA)
    t = np.deg2rad(ang)
    for _ in range(int(rng.integers(1, 5))):  # fingers out of the palm's far side
        a = t + rng.uniform(-0.6, 0.6)
        x0, y0 = cx + np.cos(a) * size * 0.35, cy + np.sin(a) * size * 0.3
        x1, y1 = x0 + np.cos(a) * size * rng.uniform(0.3, 0.6), y0 + np.sin(a) * size * rng.uniform(0.3, 0.6)
        cv2.line(mask, (int(x0), int(y0)), (int(x1), int(y1)), 1.0, max(2, int(size * 0.12)), cv2.LINE_AA)
    r = rng.uniform(110, 235)  # skin: red above green above blue, light to dark
    g = r * rng.uniform(0.62, 0.85)
    skin = np.array([g * rng.uniform(0.7, 0.92), g, r], np.float32)  # BGR
    shade = cv2.GaussianBlur(mask, (0, 0), max(1.0, size * 0.08))
    shadow = cv2.GaussianBlur(np.roll(mask, (int(size * 0.08), int(size * 0.08)), (0, 1)), (0, 0), size * 0.1)
    out = scene.astype(np.float32) * (1 - 0.4 * shadow[..., None])
    col = skin[None, None] * (0.75 + 0.25 * shade[..., None])
    m = mask[..., None]
    scene[:] = np.clip(out * (1 - m) + col * m, 0, 255).astype(np.uint8)


@dataclass
class DeckScene:
    image: np.ndarray
    face: str
    M: np.ndarray  # card image -> scene
    truth: IndexTruth


def deck_scene(deck: str, face: str, rng: np.random.Generator, height: tuple[float, float] = (100, 330),
               overlap: float = 0.5) -> DeckScene | None:
    """One card of ``deck`` on a random surface, maybe under or beside other cards of the deck."""
    cards = deck_cards(deck)
    if face not in cards:
        return None
    img = cards[face]
    truth = index_truth(img)
    if truth is None:
        return None
    h, w = img.shape[:2]
    hp = float(rng.uniform(*height))
    size = int(hp * 1.6)
    scene = background(size, size, rng)
    faces = list(cards)
    on_top = rng.random() < overlap
    if rng.random() < overlap:  # a card underneath
        other = cards[faces[int(rng.integers(len(faces)))]]
        off = rng.uniform(-0.5, 0.5, 2) * hp
        place_card(scene, other, random_pose(other.shape[1], other.shape[0], hp, (size / 2 + off[0],
                                                                                   size / 2 + off[1]), rng))
    M = random_pose(w, h, hp, (size / 2, size / 2), rng)
    place_card(scene, img, M)
    if on_top:  # a card on top, covering part of this one (one index stays visible, or not)
        other = cards[faces[int(rng.integers(len(faces)))]]
        ang = rng.uniform(0, 2 * np.pi)
        off = np.array([np.cos(ang), np.sin(ang)]) * hp * rng.uniform(0.45, 0.8)
        place_card(scene, other, random_pose(other.shape[1], other.shape[0], hp, (size / 2 + off[0],
                                                                                   size / 2 + off[1]), rng))
    if rng.random() < 0.15:  # a hand over the card's edge (one index may be hidden, as a dealer's hand does)
        ang = rng.uniform(0, 2 * np.pi)
        off = np.array([np.cos(ang), np.sin(ang)]) * hp * rng.uniform(0.5, 0.9)
        hand(scene, (size / 2 + off[0], size / 2 + off[1]), hp * rng.uniform(0.5, 0.9), rng)
    return DeckScene(finish(scene, rng), face, M, truth)
