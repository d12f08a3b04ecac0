"""Rebuild the shipped models (deterministic): ``python -m vision.train [index|stock|all] [rounds]``.

* ``stock`` (``vision/data/stock.npz``): the whole-card reader's glyph heads, trained on
  synthetic cards in the *training* fonts only (``vision.synth``); the held-back fonts and
  seeds stay unseen for :func:`vision.bench.run_bench`.
* ``index`` (``vision/data/index.onnx``): the corner-index reader of :mod:`vision.corners`,
  trained on real deck artwork (:mod:`vision.decks`: decks of Debian's ``gnome-cards-data``
  and ``kdegames-card-data-kf5`` and one from npm, the training decks only) rendered on varied
  surfaces with overlaps, perspective, a hand, light, glare, motion and focus blur, low
  resolution and JPEG.  Every rank-suit pair the finder proposes is labelled by where the
  card was put: pairs at a real index get its rank and suit, all others are "not an index".

Training needs ``gnome-cards-data``, ``kdegames-card-data-kf5``, ``librsvg2-bin`` and the npm
deck (``scripts/bootstrap`` installs them all); the product only loads the weights.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import cast

import numpy as np

from .corners import (
    INDEX_FILE,
    JUNK,
    RANK_LABELS,
    SUIT_LABELS,
    IndexModel,
    MLPHead,
    describe,
    find_marks,
    pair_marks,
)
from .glyphs import LinearHead
from .recognizer import NUMBER_RANKS, STOCK_FILE, CardModel, _card_glyphs

STOCK_ROUNDS = 96  # passes over the 52 cards


def _training_glyphs(cards, seeds):
    """Corner glyphs and pip features of synthetic cards in the training fonts."""
    import cv2

    from .detect import WARP_H, WARP_W
    from .glyphs import read_pips
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


def build_stock_model(rounds: int = STOCK_ROUNDS, workers: int = 2) -> CardModel:
    """Train the whole-card model on synthetic cards in the training fonts (deterministic)."""
    from controller.rules.cards import standard_deck

    from .glyphs import RANK_CLASSES, SUIT_CLASSES

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


INDEX_ROUNDS = 8  # scenes per card of each training deck
INDEX_SEED = 11_000


def _apply(M: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.c_[pts, np.ones(len(pts))] @ M.T
    return (p[:, :2] / p[:, 2:]).astype(np.float32)


def index_examples(jobs: Sequence[tuple[str, str, int]]) -> tuple[np.ndarray, ...]:
    """Features and labels of every rank-suit pair found in one scene per (deck, face, seed)."""
    from .decks import deck_scene

    RF, SF, yr, ys, geo, pos, red = [], [], [], [], [], [], []
    for deck, face, seed in jobs:
        rng = np.random.default_rng(seed)
        sc = deck_scene(deck, face, rng)
        if sc is None:
            continue
        m = find_marks(sc.image)
        hyp = describe(m, pair_marks(m))
        if not len(hyp):
            continue
        t = sc.truth
        w, h = t.size
        truth = _apply(sc.M, np.array([t.rank, t.suit, (w - t.rank[0], h - t.rank[1]), (w - t.suit[0], h - t.suit[1])]))
        corners = _apply(sc.M, np.array([(0, 0), (w, 0), (w, h), (0, h)], np.float32))
        s_true = float(np.linalg.norm(truth[1] - truth[0]))
        suit_c = m.cents[hyp.pairs[:, 1]].astype(np.float32)
        lab_r = np.full(len(hyp), RANK_LABELS.index(JUNK))
        lab_s = np.full(len(hyp), SUIT_LABELS.index(JUNK))
        for k in range(len(hyp)):
            for R, S in ((truth[0], truth[1]), (truth[2], truth[3])):
                if (np.linalg.norm(hyp.origin[k] - R) < 0.3 * s_true
                        and np.linalg.norm(suit_c[k] - S) < 0.3 * s_true):
                    lab_r[k] = RANK_LABELS.index(face[0])
                    lab_s[k] = SUIT_LABELS.index(face[1])
                    u = hyp.down[k]
                    rt = np.array([u[1], -u[0]])
                    n2 = float(u @ u)
                    xs = (corners - hyp.origin[k]) @ rt / n2
                    ys_ = (corners - hyp.origin[k]) @ u / n2
                    geo.append((xs.min(), ys_.min(), xs.max() - xs.min(), ys_.max() - ys_.min()))
                    pos.append(k)
        red.append(hyp.red)
        RF.append(hyp.rank_f)
        SF.append(hyp.suit_f)
        yr.append(lab_r)
        ys.append(lab_s)
    if not RF:
        z = np.zeros((0,), np.int64)
        return np.zeros((0, 0), np.float32), np.zeros((0, 0), np.float32), z, z, np.zeros((0, 4)), z, z
    return (np.concatenate(RF), np.concatenate(SF), np.concatenate(yr), np.concatenate(ys),
            np.array(geo, np.float32).reshape(-1, 4), np.array(pos), np.concatenate(red))


def _jobs(decks: Sequence[str], rounds: int, seed: int) -> list[tuple[str, str, int]]:
    from controller.rules.cards import standard_deck

    faces = [c.face for c in standard_deck()]
    return [(d, f, seed + 100_000 * r + 1000 * di + fi)
            for r in range(rounds) for di, d in enumerate(decks) for fi, f in enumerate(faces)]


def build_index_model(rounds: int = INDEX_ROUNDS, decks: Sequence[str] | None = None, workers: int = 2,
                      junk_ratio: float = 4.0, progress: bool = False) -> tuple[IndexModel, dict]:
    """Train the index reader on rendered real decks (deterministic for a given machine's decks)."""
    from .decks import TRAIN_DECKS, available

    wanted = tuple(decks or TRAIN_DECKS)
    decks = available(wanted)
    if decks != wanted:  # a missing deck would change every scene's seed after it: no silent other model
        raise RuntimeError(f"deck artwork missing: {sorted(set(wanted) - set(decks))}: run scripts/bootstrap "
                           "(gnome-cards-data, kdegames-card-data-kf5, librsvg2-bin, the npm deck)")
    jobs = _jobs(decks, rounds, INDEX_SEED)
    t = time.perf_counter()
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        chunks = [jobs[i::workers * 4] for i in range(workers * 4)]
        with ProcessPoolExecutor(workers) as ex:
            parts = list(ex.map(index_examples, chunks))
    else:
        parts = [index_examples(jobs)]
    RF = np.concatenate([p[0] for p in parts if len(p[0])])
    SF = np.concatenate([p[1] for p in parts if len(p[1])])
    yr = np.concatenate([p[2] for p in parts])
    ys = np.concatenate([p[3] for p in parts])
    geo = np.concatenate([p[4] for p in parts])
    red = np.concatenate([p[6] for p in parts])
    junk = yr == RANK_LABELS.index(JUNK)
    rng = np.random.default_rng(0)
    neg = np.nonzero(junk)[0]
    keep_neg = rng.choice(neg, min(len(neg), int(junk_ratio * (~junk).sum())), replace=False)
    sel = np.sort(np.concatenate([np.nonzero(~junk)[0], keep_neg]))
    # "not an index" weighs as much as all indices together
    wsel = np.where(junk[sel], (~junk).sum() / max(len(keep_neg), 1), 1.0)
    rank = MLPHead(RANK_LABELS).fit(RF[sel], yr[sel], wsel, seed=1)
    suit = MLPHead(SUIT_LABELS).fit(SF[sel], ys[sel], wsel, seed=2)
    default_card = cast(tuple[float, ...], IndexModel.__dataclass_fields__["card"].default)
    card = tuple(float(v) for v in np.median(geo, 0)) if len(geo) else default_card
    # the colour split: between the redness of red and of black indices
    is_red = np.isin(ys, [SUIT_LABELS.index(c) for c in "dh"])
    is_black = np.isin(ys, [SUIT_LABELS.index(c) for c in "cs"])
    split = 0.5 * (float(np.percentile(red[is_red], 5)) + float(np.percentile(red[is_black], 95)))
    model = IndexModel.from_heads(rank, suit, card, split)  # type: ignore[arg-type]
    info = {"decks": list(decks), "scenes": len(jobs), "pairs": len(yr), "indices": int((~junk).sum()),
            "trained_on": len(sel), "card": [round(v, 3) for v in card], "red_split": round(split, 4),
            "red_p5": round(float(np.percentile(red[is_red], 5)), 4),
            "black_p95": round(float(np.percentile(red[is_black], 95)), 4),
            "seconds": round(time.perf_counter() - t, 1)}
    return model, info


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    what = argv[0] if argv else "index"
    t = time.perf_counter()
    if what in ("stock", "all"):
        rounds = int(argv[1]) if len(argv) > 1 else STOCK_ROUNDS
        model = build_stock_model(rounds)
        model.save(STOCK_FILE, with_examples=False)
        print(f"{STOCK_FILE}: {rounds} rounds, {time.perf_counter() - t:.1f} s, {STOCK_FILE.stat().st_size} bytes")
    if what in ("index", "all"):
        rounds = int(argv[1]) if len(argv) > 1 else INDEX_ROUNDS
        imodel, info = build_index_model(rounds)
        imodel.save(INDEX_FILE)
        print(f"{INDEX_FILE}: {info}, {INDEX_FILE.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
