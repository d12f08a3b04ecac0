"""Synthetic cards, scenes and a synthetic table camera, all seeded and deterministic.

Cards are rendered face up (white stock, corner indices in two opposite corners, pips
or a framed court picture) or face down (a patterned back inside a white border), then
placed on felt with rotation, perspective, blur, noise, glare, uneven light and partial
covering.  Index fonts come in two disjoint sets: ``"train"`` fonts build the stock
recogniser; ``"test"`` fonts (and seeds) are held back for measurement.  Whatever font
files the machine lacks are skipped; OpenCV's Hershey fonts are always there.

Only :mod:`numpy`, :mod:`cv2` and Pillow (for TrueType text) are used.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from controller.geometry import Zone
from controller.rules.cards import Card, standard_deck

from . import layout

CARD_W, CARD_H = 250, 350  # rendering size of one card (63 x 88 mm is 1 : 1.397)
RANK_TEXT = {"T": "10"}
# the operating range: card height in the camera image (a 720p camera over ~1 m of table)
MIN_CARD_PX, MAX_CARD_PX = 170, 320

_FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", str(Path.home() / ".local/share/fonts"))

# Index fonts.  File names are searched under the font folders; missing ones are skipped.
TRAIN_FONTS = (
    "DejaVuSans-Bold.ttf", "DejaVuSans.ttf", "DejaVuSerif-Bold.ttf", "DejaVuSansMono-Bold.ttf",
    "LiberationSans-Bold.ttf", "LiberationSerif-Bold.ttf", "FreeSansBold.ttf", "NimbusSans-Bold.otf",
    "C059-Bold.otf", "URWBookman-Demi.otf",
    "hershey:simplex:3", "hershey:complex:3", "hershey:triplex:4",
)
TEST_FONTS = (
    "DejaVuSansCondensed-Bold.ttf", "DejaVuSerifCondensed-Bold.ttf", "LiberationSansNarrow-Bold.ttf",
    "LiberationSans-Regular.ttf", "FreeSerifBold.ttf", "NimbusSansNarrow-Bold.otf", "P052-Bold.otf",
    "URWGothic-Demi.otf", "NimbusRoman-Bold.otf",
    "hershey:duplex:4",
)
TRAIN_SUIT_FONTS = ("DejaVuSans.ttf",)
TEST_SUIT_FONTS = ("FreeSerif.ttf", "FreeSans.ttf", "LiberationSans-Regular.ttf")
SUIT_CHARS = {"s": "\u2660", "c": "\u2663", "h": "\u2665", "d": "\u2666"}

_HERSHEY = {
    "simplex": cv2.FONT_HERSHEY_SIMPLEX, "duplex": cv2.FONT_HERSHEY_DUPLEX,
    "complex": cv2.FONT_HERSHEY_COMPLEX, "triplex": cv2.FONT_HERSHEY_TRIPLEX,
}

RED_INKS = ((200, 20, 30), (170, 10, 20), (220, 40, 40), (190, 30, 60), (210, 60, 30))  # RGB
BLACK_INKS = ((10, 10, 10), (30, 30, 35), (0, 0, 0), (45, 40, 40))
FELTS = ((25, 110, 45), (20, 80, 40), (30, 60, 130), (120, 25, 30), (60, 60, 60), (40, 30, 25), (20, 100, 100))


@cache
def find_font(name: str) -> str | None:
    """Path of a font file by file name (``hershey:*`` names are returned as they are)."""
    if name.startswith("hershey:"):
        return name
    for d in _FONT_DIRS:
        root = Path(d)
        if root.is_dir():
            for p in root.rglob(name):
                return str(p)
    return None


def available_fonts(split: str) -> tuple[str, ...]:
    """Index fonts of a split (``train`` or ``test``) present on this machine."""
    names = TRAIN_FONTS if split == "train" else TEST_FONTS
    return tuple(p for n in names if (p := find_font(n)) is not None)


def available_suit_fonts(split: str) -> tuple[str, ...]:
    names = TRAIN_SUIT_FONTS if split == "train" else TEST_SUIT_FONTS
    return tuple(p for n in names if (p := find_font(n)) is not None)


# ----------------------------------------------------------------------------- glyphs

@lru_cache(maxsize=4096)
def _text_mask(text: str, font: str, size: int = 96) -> np.ndarray:
    """Tight alpha mask (uint8) of ``text`` in ``font`` rendered about ``size`` px high."""
    if font.startswith("hershey:"):
        _, face, thick = font.split(":")
        scale = size / 22.0
        img = np.zeros((size * 2, size * 3), np.uint8)
        cv2.putText(img, text, (size // 4, int(size * 1.5)), _HERSHEY[face], scale, 255,
                    max(1, int(int(thick) * scale / 2.5)), cv2.LINE_AA)
    else:
        from PIL import Image, ImageDraw, ImageFont

        ft = ImageFont.truetype(font, size)
        left, top, right, bottom = ft.getbbox(text)
        im = Image.new("L", (int(right - left) + 8, int(bottom - top) + 8), 0)
        ImageDraw.Draw(im).text((4 - left, 4 - top), text, font=ft, fill=255)
        img = np.asarray(im, dtype=np.uint8)
    ys, xs = np.nonzero(img > 20)
    return np.ascontiguousarray(img[ys.min():ys.max() + 1, xs.min():xs.max() + 1])


@lru_cache(maxsize=512)
def _vector_suit(suit: str, variant: int, size: int = 96) -> np.ndarray:
    """A suit symbol drawn from shapes; ``variant`` changes its proportions."""
    v = np.random.default_rng(variant)
    s = size
    img: np.ndarray = np.zeros((s, s), np.uint8)
    c = s / 2
    if suit == "d":
        w = s * v.uniform(0.30, 0.42)
        bow = v.uniform(0.0, 0.08) * s
        top, bot = (c, 2), (c, s - 3)
        left, right = (c - w, c), (c + w, c)
        pts = [top, (c - w * 0.5 - bow * 0.3, c * 0.5), left, (c - w * 0.5 - bow * 0.3, c * 1.5), bot,
               (c + w * 0.5 + bow * 0.3, c * 1.5), right, (c + w * 0.5 + bow * 0.3, c * 0.5)]
        cv2.fillPoly(img, [np.array(pts, np.int32)], 255, cv2.LINE_AA)
    elif suit in "hs":
        r = s * v.uniform(0.22, 0.27)
        cy = s * v.uniform(0.30, 0.36)
        cv2.circle(img, (int(c - r * 0.95), int(cy)), int(r), 255, -1, cv2.LINE_AA)
        cv2.circle(img, (int(c + r * 0.95), int(cy)), int(r), 255, -1, cv2.LINE_AA)
        tip = s * v.uniform(0.88, 0.97)
        pts = [(c - r * 1.93, cy + r * 0.25), (c + r * 1.93, cy + r * 0.25), (c, tip)]
        cv2.fillPoly(img, [np.array(pts, np.int32)], 255, cv2.LINE_AA)
        if suit == "s":  # the spade is an upside-down heart with a stem
            img = img[::-1].copy()
            img = cv2.resize(img, (s, int(s * 0.8)))
            img = np.vstack([img, np.zeros((s - img.shape[0], s), np.uint8)])
            sw = s * v.uniform(0.05, 0.10)
            pts = [(c - sw, s * 0.62), (c + sw, s * 0.62), (c + sw * 2.6, s - 2), (c - sw * 2.6, s - 2)]
            cv2.fillPoly(img, [np.array(pts, np.int32)], 255, cv2.LINE_AA)
    elif suit == "c":
        r = s * v.uniform(0.19, 0.22)
        top_y = r + 2
        side = top_y + r * v.uniform(1.35, 1.55)
        spread = r * v.uniform(1.12, 1.3)
        cv2.circle(img, (int(c), int(top_y)), int(r), 255, -1, cv2.LINE_AA)
        cv2.circle(img, (int(c - spread), int(side)), int(r), 255, -1, cv2.LINE_AA)
        cv2.circle(img, (int(c + spread), int(side)), int(r), 255, -1, cv2.LINE_AA)
        cv2.circle(img, (int(c), int(top_y + r)), int(r * 0.5), 255, -1, cv2.LINE_AA)
        sw = s * v.uniform(0.025, 0.05)
        pts = [(c - sw, top_y + r), (c + sw, top_y + r), (c + sw * 3.5, s - 2), (c - sw * 3.5, s - 2)]
        cv2.fillPoly(img, [np.array(pts, np.int32)], 255, cv2.LINE_AA)
    ys, xs = np.nonzero(img > 20)
    return np.ascontiguousarray(img[ys.min():ys.max() + 1, xs.min():xs.max() + 1])


def _suit_mask(suit: str, style: CardStyle) -> np.ndarray:
    if style.suit_font:
        return _text_mask(SUIT_CHARS[suit], style.suit_font)
    return _vector_suit(suit, style.suit_variant)


def _paste(canvas: np.ndarray, mask: np.ndarray, x: float, y: float, w: float, h: float,
           colour: Sequence[int], rotate180: bool = False) -> None:
    """Alpha-paste ``mask`` resized to ``w`` x ``h`` at (x, y) in ``colour`` (RGB canvas)."""
    w, h = max(2, int(round(w))), max(2, int(round(h)))
    x, y = int(round(x)), int(round(y))
    m = cv2.resize(mask, (w, h), interpolation=cv2.INTER_AREA)
    if rotate180:
        m = m[::-1, ::-1]
    H, W = canvas.shape[:2]
    x0, y0, x1, y1 = max(0, x), max(0, y), min(W, x + w), min(H, y + h)
    if x1 <= x0 or y1 <= y0:
        return
    a = m[y0 - y:y1 - y, x0 - x:x1 - x].astype(np.float32)[..., None] / 255.0
    region = canvas[y0:y1, x0:x1].astype(np.float32)
    canvas[y0:y1, x0:x1] = (region * (1 - a) + np.array(colour, np.float32) * a).astype(np.uint8)


# ----------------------------------------------------------------------------- cards

@dataclass(frozen=True)
class CardStyle:
    """How one card is printed: index font and layout, suit drawing, inks, paper."""

    rank_font: str
    suit_font: str | None = None  # None: vector suit of ``suit_variant``
    suit_variant: int = 0
    index_x: float = 0.05  # left margin of the index, fraction of the card width
    index_y: float = 0.035  # top margin, fraction of the height
    rank_h: float = 0.095  # rank glyph height, fraction of the height
    suit_h: float = 0.065
    gap: float = 0.012
    condense: float = 1.0  # horizontal scale of the rank glyph
    red: tuple[int, int, int] = RED_INKS[0]
    black: tuple[int, int, int] = BLACK_INKS[0]
    paper: tuple[int, int, int] = (250, 250, 246)
    back: tuple[int, int, int] = (30, 50, 150)


def random_style(rng: np.random.Generator, split: str = "train") -> CardStyle:
    fonts = available_fonts(split)
    suit_fonts = available_suit_fonts(split)
    if split == "train":
        suit_font = str(rng.choice(suit_fonts)) if suit_fonts and rng.random() < 0.35 else None
        variant = int(rng.integers(0, 1000))
    else:
        suit_font = str(rng.choice(suit_fonts)) if suit_fonts and rng.random() < 0.5 else None
        variant = int(rng.integers(100_000, 200_000))
    paper = _rgb(255 - rng.integers(0, 14, 3))
    back = _rgb(rng.choice(((30, 50, 150), (160, 20, 30), (20, 90, 50), (40, 40, 40))))
    return CardStyle(
        rank_font=str(rng.choice(fonts)), suit_font=suit_font, suit_variant=variant,
        index_x=float(rng.uniform(0.035, 0.065)), index_y=float(rng.uniform(0.028, 0.05)),
        rank_h=float(rng.uniform(0.08, 0.105)), suit_h=float(rng.uniform(0.052, 0.07)),
        gap=float(rng.uniform(0.006, 0.02)), condense=float(rng.uniform(0.75, 1.1)),
        red=_rgb(RED_INKS[int(rng.integers(len(RED_INKS)))]),
        black=_rgb(BLACK_INKS[int(rng.integers(len(BLACK_INKS)))]),
        paper=paper, back=back,
    )



def _rgb(values: Any) -> tuple[int, int, int]:
    r, g, b = (int(v) for v in values)
    return (r, g, b)

_PIPS: dict[int, list[tuple[float, float]]] = {  # pip centres in the pip box (0..1, 0..1)
    1: [(0.5, 0.5)],
    2: [(0.5, 0), (0.5, 1)],
    3: [(0.5, 0), (0.5, 0.5), (0.5, 1)],
    4: [(0, 0), (1, 0), (0, 1), (1, 1)],
    5: [(0, 0), (1, 0), (0.5, 0.5), (0, 1), (1, 1)],
    6: [(0, 0), (1, 0), (0, 0.5), (1, 0.5), (0, 1), (1, 1)],
    7: [(0, 0), (1, 0), (0.5, 0.25), (0, 0.5), (1, 0.5), (0, 1), (1, 1)],
    8: [(0, 0), (1, 0), (0.5, 0.25), (0, 0.5), (1, 0.5), (0.5, 0.75), (0, 1), (1, 1)],
    9: [(0, 0), (1, 0), (0, 1 / 3), (1, 1 / 3), (0.5, 0.5), (0, 2 / 3), (1, 2 / 3), (0, 1), (1, 1)],
    10: [(0, 0), (1, 0), (0.5, 1 / 6), (0, 1 / 3), (1, 1 / 3), (0, 2 / 3), (1, 2 / 3), (0.5, 5 / 6), (0, 1), (1, 1)],
}


def render_card(card: Card, style: CardStyle, rng: np.random.Generator | None = None) -> np.ndarray:
    """A face-up card, ``CARD_H`` x ``CARD_W`` RGB, indices in the top-left and bottom-right corners."""
    rng = rng or np.random.default_rng(0)
    W, H = CARD_W, CARD_H
    img = np.empty((H, W, 3), np.uint8)
    img[:] = style.paper
    assert card.rank is not None and card.suit is not None
    ink = style.red if card.suit in "hd" else style.black
    suit = _suit_mask(card.suit, style)
    rank = _text_mask(RANK_TEXT.get(card.rank, card.rank), style.rank_font)
    rh = style.rank_h * H
    rw = rank.shape[1] / rank.shape[0] * rh * style.condense
    rw = min(rw, 0.155 * W)
    sh = style.suit_h * H
    sw = min(suit.shape[1] / suit.shape[0] * sh, 0.14 * W)
    x0, y0 = style.index_x * W, style.index_y * H
    cx = x0 + max(rw, sw) / 2
    for rot in (False, True):
        def put(mask, x, y, w, h, rot=rot):
            if rot:
                x, y = W - x - w, H - y - h
            _paste(img, mask, x, y, w, h, ink, rotate180=rot)
        put(rank, cx - rw / 2, y0, rw, rh)
        put(suit, cx - sw / 2, y0 + rh + style.gap * H, sw, sh)
    n = RANKS_VALUE.get(card.rank)
    if n is not None:  # pips
        pw = (0.2 if n == 1 else 0.12) * W
        ph = pw * suit.shape[0] / suit.shape[1]
        bx0, bx1, by0, by1 = 0.33 * W, 0.67 * W, 0.14 * H + ph / 2, 0.86 * H - ph / 2
        for px, py in _PIPS[n]:
            cxp, cyp = bx0 + px * (bx1 - bx0), by0 + py * (by1 - by0)
            _paste(img, suit, cxp - pw / 2, cyp - ph / 2, pw, ph, ink, rotate180=py > 0.5)
    else:  # a court card: a frame with a "picture"
        x0f, x1f, y0f, y1f = int(0.27 * W), int(0.73 * W), int(0.1 * H), int(0.9 * H)
        cv2.rectangle(img, (x0f, y0f), (x1f, y1f), ink, 2)
        pic = np.random.default_rng(int(rng.integers(1 << 30)))
        inner = img[y0f + 3:y1f - 2, x0f + 3:x1f - 2].copy()  # the picture stays inside its frame
        ih, iw = inner.shape[:2]
        for _ in range(6):
            col = tuple(int(v) for v in pic.choice(((200, 160, 30), (30, 60, 160), ink, (20, 20, 20))))
            cx_, cy_ = int(pic.uniform(10, iw - 10)), int(pic.uniform(15, ih - 15))
            cv2.ellipse(inner, (cx_, cy_), (int(pic.uniform(6, 30)), int(pic.uniform(6, 40))),
                        float(pic.uniform(0, 180)), 0, 360, col, -1, cv2.LINE_AA)
        img[y0f + 3:y1f - 2, x0f + 3:x1f - 2] = inner
        big = _text_mask(card.rank, style.rank_font)
        bh = 0.18 * H
        _paste(img, big, W / 2 - bh * big.shape[1] / big.shape[0] / 2, H / 2 - bh / 2,
               bh * big.shape[1] / big.shape[0], bh, ink)
    return img


RANKS_VALUE = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "T": 10}


def render_back(style: CardStyle) -> np.ndarray:
    """A card back: white border, a lattice pattern in ``style.back``."""
    W, H = CARD_W, CARD_H
    img = np.empty((H, W, 3), np.uint8)
    img[:] = style.paper
    b = int(0.06 * W)
    img[b:H - b, b:W - b] = style.back
    light = tuple(min(255, int(v) + 90) for v in style.back)
    for k in range(-H, W + H, 14):
        cv2.line(img, (k, b), (k + H, H - b), light, 2)
        cv2.line(img, (k, H - b), (k + H, b), light, 2)
    img[:b], img[H - b:], img[:, :b], img[:, W - b:] = style.paper, style.paper, style.paper, style.paper
    return img


def card_alpha() -> np.ndarray:
    """The card's shape (rounded corners) as a float mask ``CARD_H`` x ``CARD_W``."""
    m = np.zeros((CARD_H, CARD_W), np.uint8)
    r = int(0.055 * CARD_W)
    cv2.rectangle(m, (r, 0), (CARD_W - 1 - r, CARD_H - 1), 255, -1)
    cv2.rectangle(m, (0, r), (CARD_W - 1, CARD_H - 1 - r), 255, -1)
    for cx, cy in ((r, r), (CARD_W - 1 - r, r), (r, CARD_H - 1 - r), (CARD_W - 1 - r, CARD_H - 1 - r)):
        cv2.circle(m, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return m.astype(np.float32) / 255.0


_ALPHA = card_alpha()


# ----------------------------------------------------------------------------- scenes

def felt(h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    """A felt background (RGB) with texture."""
    base = np.array(FELTS[int(rng.integers(len(FELTS)))], np.float32) * rng.uniform(0.8, 1.15)
    small = rng.normal(0, 1, (h // 8 + 1, w // 8 + 1)).astype(np.float32)
    tex = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR) * 6
    fine = noise((h, w), 4.0, rng)
    img = base[None, None, :] + (tex + fine)[..., None]
    return np.clip(img, 0, 255).astype(np.uint8)


def card_quad(center: tuple[float, float], height: float, angle: float, tilt: float,
              rng: np.random.Generator) -> np.ndarray:
    """Corners (TL, TR, BR, BL of the card) in the scene, rotated and with perspective."""
    w = height * CARD_W / CARD_H
    pts = np.array([[-w / 2, -height / 2], [w / 2, -height / 2], [w / 2, height / 2], [-w / 2, height / 2]])
    # perspective: shrink one side (a trapezoid) then jitter
    k = rng.uniform(-tilt, tilt)
    pts[:2, 0] *= 1 + k
    pts[2:, 0] *= 1 - k
    pts += rng.uniform(-tilt, tilt, (4, 2)) * height * 0.25
    c, s = math.cos(angle), math.sin(angle)
    rot = np.array([[c, -s], [s, c]])
    return (pts @ rot.T + np.array(center)).astype(np.float32)


def place(scene: np.ndarray, card_img: np.ndarray, quad: np.ndarray, shadow: bool = True) -> None:
    """Warp ``card_img`` onto ``scene`` (in place) at ``quad``."""
    H, W = scene.shape[:2]
    x0, y0 = np.floor(quad.min(0)).astype(int) - 4
    x1, y1 = np.ceil(quad.max(0)).astype(int) + 6
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(W, x1), min(H, y1)
    if x1 <= x0 or y1 <= y0:
        return
    src = np.array([[0, 0], [CARD_W, 0], [CARD_W, CARD_H], [0, CARD_H]], np.float32)
    M = cv2.getPerspectiveTransform(src, quad - np.array([x0, y0], np.float32))
    size = (x1 - x0, y1 - y0)
    warped = cv2.warpPerspective(card_img, M, size, flags=cv2.INTER_LINEAR)
    a = cv2.warpPerspective(_ALPHA, M, size, flags=cv2.INTER_LINEAR)[..., None]
    region = scene[y0:y1, x0:x1].astype(np.float32)
    if shadow:
        sh = cv2.GaussianBlur(np.roll(a[..., 0], (3, 3), (0, 1)), (0, 0), 3)[..., None]
        region *= 1 - 0.35 * sh
    scene[y0:y1, x0:x1] = (region * (1 - a) + warped.astype(np.float32) * a).astype(np.uint8)


def occlude(scene: np.ndarray, quad: np.ndarray, rng: np.random.Generator, corner: int | None = None) -> None:
    """Cover part of the card near one corner (a finger or a chip), leaving the opposite index."""
    corner = int(rng.integers(4)) if corner is None else corner
    p = quad[corner]
    centre = quad.mean(0)
    size = np.linalg.norm(quad[1] - quad[0])
    t = rng.uniform(0.05, 0.3)
    c = p + (centre - p) * t
    if rng.random() < 0.5:  # a chip
        col = tuple(int(v) for v in rng.choice(((200, 30, 30), (20, 20, 20), (30, 60, 180), (230, 230, 60))))
        cv2.circle(scene, (int(c[0]), int(c[1])), int(size * rng.uniform(0.18, 0.3)), col, -1, cv2.LINE_AA)
    else:  # a finger
        col = tuple(int(v) for v in (rng.uniform(170, 230), rng.uniform(120, 170), rng.uniform(90, 140)))
        ang = float(rng.uniform(0, 180))
        cv2.ellipse(scene, (int(c[0]), int(c[1])), (int(size * 0.45), int(size * rng.uniform(0.1, 0.16))),
                    ang, 0, 360, col, -1, cv2.LINE_AA)


def lighting(scene: np.ndarray, rng: np.random.Generator, strength: float = 1.0) -> np.ndarray:
    """Uneven light, glare, blur, noise (returns a new RGB image)."""
    h, w = scene.shape[:2]
    sh, sw = max(2, h // 8), max(2, w // 8)  # light fields are smooth: compute them small
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    yy, xx = yy / sh, xx / sw
    gx, gy = rng.uniform(-1, 1, 2) * 0.35 * strength
    field_ = (1 + gx * (xx - 0.5) + gy * (yy - 0.5)) * rng.uniform(0.75, 1.1)
    glare = np.zeros_like(field_)
    if rng.random() < 0.4 * strength:  # glare
        cx, cy = rng.uniform(0, 1, 2)
        rx, ry = rng.uniform(0.05, 0.2, 2)
        glare = np.exp(-(((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2)) * rng.uniform(40, 110)
    field_ = cv2.resize(field_.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    glare = cv2.resize(glare.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    img = scene.astype(np.float32) * field_[..., None]
    img *= np.array(rng.uniform(0.92, 1.06, 3), np.float32)  # white balance
    img += glare[..., None]
    sigma = rng.uniform(0, 1.3) * strength
    if sigma > 0.3:
        img = cv2.GaussianBlur(img, (0, 0), sigma)
    return np.clip(img + noise(img.shape, rng.uniform(1, 7) * strength, rng), 0, 255).astype(np.uint8)


def noise(shape: tuple[int, ...], sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Gaussian noise (float32), seeded from ``rng`` (OpenCV's generator is much faster than numpy's)."""
    out = np.empty(shape, np.float32)
    cv2.setRNGSeed(int(rng.integers(1 << 31)))
    cv2.randn(out, 0.0, float(sigma))  # type: ignore[call-overload]  # scalars: the stubs know only arrays
    return out


@dataclass
class Sample:
    """One synthetic image with the cards in it (RGB image; convert for OpenCV with ``bgr``)."""

    image: np.ndarray
    cards: list[Card]
    quads: list[np.ndarray]
    faces: list[str] = field(default_factory=list)

    @property
    def bgr(self) -> np.ndarray:
        return cv2.cvtColor(self.image, cv2.COLOR_RGB2BGR)


def card_scene(card: Card, seed: int, split: str = "test", cover: float = 0.15,
               face: str = "up") -> Sample:
    """One card on felt, as a camera would see it: the unit of the held-back set."""
    rng = np.random.default_rng([seed, 0 if split == "train" else 1])
    style = random_style(rng, split)
    img = render_card(card, style, rng) if face == "up" else render_back(style)
    height = rng.uniform(MIN_CARD_PX, MAX_CARD_PX)
    side = int(height * 1.45)
    scene = felt(side, side, rng)
    quad = card_quad((side / 2 + rng.uniform(-8, 8), side / 2 + rng.uniform(-8, 8)), height,
                     rng.uniform(0, 2 * math.pi), rng.uniform(0, 0.12), rng)
    place(scene, img, quad)
    if rng.random() < cover:
        occlude(scene, quad, rng)
    return Sample(lighting(scene, rng), [card], [quad], [face])


def augment_card(card: Card, seed: int, split: str = "train") -> np.ndarray:
    """A canonical (unwarped) face-up card with print/camera variations, RGB ``CARD_H`` x ``CARD_W``.

    Used to build the stock model quickly: it mimics what a warp of a camera image
    gives (resolution loss, small misregistration, blur, light, noise, glare).
    """
    rng = np.random.default_rng([seed, 7 if split == "train" else 8])
    style = random_style(rng, split)
    img = render_card(card, style, rng)
    # misregistration: a small random perspective (the warp's corner error)
    src = np.array([[0, 0], [CARD_W, 0], [CARD_W, CARD_H], [0, CARD_H]], np.float32)
    dst = src + rng.uniform(-5, 5, (4, 2)).astype(np.float32)
    M = cv2.getPerspectiveTransform(src, dst)
    img = cv2.warpPerspective(img, M, (CARD_W, CARD_H), borderMode=cv2.BORDER_REPLICATE)
    # resolution loss: the card was 120..300 px high in the camera
    # the camera's blur and noise act at the camera's resolution, before the warp enlarges them
    f = rng.uniform(0.45, 0.95)
    small = cv2.resize(img, (int(CARD_W * f), int(CARD_H * f)), interpolation=cv2.INTER_AREA)
    small = lighting(small, rng, strength=1.0)
    return cv2.resize(small, (CARD_W, CARD_H), interpolation=cv2.INTER_LINEAR)


# ----------------------------------------------------------------------------- synthetic camera

FRAME_W, FRAME_H = layout.FRAME_W, layout.FRAME_H
CAMERA_CARD_H = layout.CARD_H_PX


def default_positions() -> dict[str, tuple[float, float]]:
    """Card centres in a 1280x720 frame: the reference layout's (:mod:`vision.layout`)."""
    return layout.reference_positions()


class SyntheticCamera:
    """1280x720 frames of a felt table with cards at board/seat positions (for demos and tests).

    ``frame(layout)`` takes ``{"board/0": Card | (Card, "down"), "seat:1/0": ...}`` and
    returns a :class:`Sample` (RGB; ``.bgr`` for OpenCV).  Each call uses the next seed.
    """

    def __init__(self, seed: int = 0, split: str = "test", jitter: float = 8.0, effects: float = 0.7) -> None:
        self.seed = seed
        self.split = split
        self.jitter = jitter
        self.effects = effects
        self.positions = default_positions()
        self._n = 0
        rng = np.random.default_rng([seed, 99])
        self.style = random_style(rng, split)  # one deck per camera
        self._felt = felt(FRAME_H, FRAME_W, rng)

    def frame(self, layout: dict[str, Card | tuple[Card, str]]) -> Sample:
        rng = np.random.default_rng([self.seed, 100, self._n])
        self._n += 1
        scene = self._felt.copy()
        cards, quads, faces = [], [], []
        for slot, what in layout.items():
            card, face = what if isinstance(what, tuple) else (what, "up")
            cx, cy = self.positions[slot]
            quad = card_quad((cx + rng.uniform(-1, 1) * self.jitter, cy + rng.uniform(-1, 1) * self.jitter),
                             CAMERA_CARD_H * rng.uniform(0.95, 1.05), rng.uniform(-0.15, 0.15), 0.05, rng)
            img = render_card(card, self.style, rng) if face == "up" else render_back(self.style)
            place(scene, img, quad)
            cards.append(card)
            quads.append(quad)
            faces.append(face)
        return Sample(lighting(scene, rng, self.effects), cards, quads, faces)

    def random_frame(self, n: int = 7, rng: np.random.Generator | None = None) -> Sample:
        """Up to ``n`` distinct random face-up cards at random positions."""
        rng = rng or np.random.default_rng([self.seed, 200, self._n])
        deck = standard_deck()
        slots = list(self.positions)
        chosen = rng.choice(len(slots), size=min(n, len(slots)), replace=False)
        picks = rng.choice(len(deck), size=len(chosen), replace=False)
        return self.frame({slots[int(i)]: deck[int(j)] for i, j in zip(chosen, picks, strict=True)})


def synthetic_layout(seat_face: str | None = None, margin: float = 0.62):
    """The :class:`vision.recognizer.CameraLayout` of :class:`SyntheticCamera`: the reference
    layout (:func:`vision.layout.reference_layout`)."""
    return layout.reference_layout(seat_face, margin)


def slot_zone(slot: str) -> Zone:
    """``"seat:1/0"`` -> ``Zone("seat", 1)``."""
    return Zone.parse(slot.partition("/")[0])


def held_back_set(n: int = 2080, seed: int = 3_000_017) -> Iterator[Sample]:
    """The held-back set of :func:`vision.bench.run_bench`: test fonts and unseen seeds,
    ``n`` single-card scenes cycling the deck."""
    deck = standard_deck()
    for i in range(n):
        yield card_scene(deck[i % 52], seed + i, split="test")
