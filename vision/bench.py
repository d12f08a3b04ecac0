"""CLI helpers (the lead wires them into ``tablectl``): recognise image files; benchmark.

``recognize_files(paths)`` yields one JSON-able dict per card found::

    {"file": "board.jpg", "card": "Ah" | None, "confidence": 0.97, "box": [x, y, w, h], "face": "up"}

``run_bench()`` measures the stock recogniser on the held-back synthetic set (fonts and
seeds never used to train it) and on synthetic 1280x720 table frames, on this machine.
"""

from __future__ import annotations

import logging
import os
import platform
import statistics
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from .recognizer import Recognizer

log = logging.getLogger(__name__)

BENCH_CARDS = 5200  # 100 decks: 0.1 % wrong is five cards (>= 2,000 asked; more for a tighter estimate)
BENCH_FRAMES = 60
BENCH_SEED = 3_000_017  # never used while developing (dev seeds: 50,000.., tests: 7,000,000..)


def recognize_files(paths: Iterable[str | Path], recognizer: Recognizer | None = None) -> Iterator[dict[str, Any]]:
    """One dict per card found in each image file (``card`` None when unknown or face down).

    An unreadable file yields ``{"file", "card": None, "confidence": 0.0, "box": None,
    "error": "..."}`` so a batch goes on.
    """
    rec = recognizer or Recognizer.stock()
    for p in paths:
        img = cv2.imread(str(p), cv2.IMREAD_COLOR)
        if img is None:
            yield {"file": str(p), "card": None, "confidence": 0.0, "box": None, "error": "cannot read image"}
            continue
        for det in rec.recognize(img):
            yield {"file": str(p), **det.to_dict()}


def _frames(n: int, seed: int) -> list[tuple[np.ndarray, list[str]]]:
    from .synth import SyntheticCamera

    cam = SyntheticCamera(seed=seed, split="test")
    out = []
    rng = np.random.default_rng(seed)
    for _ in range(n):
        s = cam.random_frame(int(rng.integers(1, 8)), rng)
        out.append((s.bgr, [c.face for c in s.cards]))
    return out


def _parallel(fn, items: list, workers: int) -> list:
    if workers <= 1 or len(items) < 8:
        return fn(items)
    from concurrent.futures import ProcessPoolExecutor

    chunks = [items[i::workers] for i in range(workers)]
    with ProcessPoolExecutor(workers) as ex:
        parts = list(ex.map(fn, chunks))
    return [x for part in parts for x in part]


def _gen_cards(seeds: list[int]) -> list[tuple[np.ndarray, str]]:
    from controller.rules.cards import standard_deck

    from .synth import card_scene

    deck = standard_deck()
    return [(s.bgr, s.cards[0].face) for s in (card_scene(deck[i % 52], BENCH_SEED + i, "test") for i in seeds)]


def run_bench(n_cards: int = BENCH_CARDS, n_frames: int = BENCH_FRAMES, recognizer: Recognizer | None = None,
              workers: int = 2) -> dict[str, Any]:
    """Accuracy, unknown rate and confusions on the held-back set; time per card crop;
    frames per second on 1280x720 frames with up to seven cards."""
    rec = recognizer or Recognizer.stock()
    t0 = time.perf_counter()
    # the set is generated in worker processes (generation is not what is measured)
    cards = _parallel(_gen_cards, list(range(n_cards)), workers)
    gen_s = time.perf_counter() - t0

    results = []
    times = []
    for img, truth in cards:
        t = time.perf_counter()
        det = rec.recognize_crop(img)
        times.append(time.perf_counter() - t)
        results.append((truth, None if det is None or det.card is None else det.card.face,
                        0.0 if det is None else det.confidence))
    n = len(results)
    correct = sum(1 for t, r, _ in results if r == t)
    wrong = [(t, r) for t, r, _ in results if r is not None and r != t]
    unknown = sum(1 for _, r, _ in results if r is None)
    kinds: Counter[str] = Counter()
    for t, r in wrong:
        kinds["rank" if t[0] != r[0] and t[1] == r[1] else "suit" if t[0] == r[0] else "rank+suit"] += 1
    unknown_by_rank = Counter(t[0] for t, r, _ in results if r is None)

    frames = _frames(n_frames, BENCH_SEED)
    frame_cards = frame_ok = frame_wrong = 0
    ft = []
    for img, truth in frames:
        t = time.perf_counter()
        dets = rec.recognize(img)
        ft.append(time.perf_counter() - t)
        read = Counter(d.card.face for d in dets if d.card is not None)
        frame_cards += len(truth)
        for face in truth:
            if read[face] > 0:
                read[face] -= 1
                frame_ok += 1
        frame_wrong += sum(read.values())
    # two cores: two frames in flight at once (OpenCV and numpy release the GIL)
    t = time.perf_counter()
    with ThreadPoolExecutor(2) as ex:
        list(ex.map(lambda f: rec.recognize(f[0]), frames))
    two_core_fps = len(frames) / (time.perf_counter() - t)

    return {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "opencv": cv2.__version__,
                    "numpy": np.__version__},
        "threshold": rec.threshold,
        "held_back": {
            "cards": n,
            "fonts": "vision.synth.TEST_FONTS (never used for training)",
            "seeds": f"{BENCH_SEED}..{BENCH_SEED + n - 1}",
            "accuracy": round(correct / n, 5),
            "wrong_rate": round(len(wrong) / n, 5),
            "unknown_rate": round(unknown / n, 5),
            "correct": correct, "wrong": len(wrong), "unknown": unknown,
            "confusions": [{"true": t, "read": r, "count": c} for (t, r), c in Counter(wrong).most_common(20)],
            "wrong_kinds": dict(kinds),
            "unknown_by_rank": dict(sorted(unknown_by_rank.items())),
            "generation_s": round(gen_s, 2),
        },
        "per_card_crop_ms": {
            "mean": round(1000 * statistics.fmean(times), 3),
            "median": round(1000 * statistics.median(times), 3),
            "p95": round(1000 * float(np.percentile(times, 95)), 3),
            "max": round(1000 * max(times), 3),
            "note": "detect + warp + read one card from a single-card image (170..320 px card)",
        },
        "frames_1280x720": {
            "frames": len(frames),
            "cards": frame_cards,
            "accuracy": round(frame_ok / max(frame_cards, 1), 5),
            "wrong": frame_wrong,
            "ms_per_frame_mean": round(1000 * statistics.fmean(ft), 2),
            "ms_per_frame_p95": round(1000 * float(np.percentile(ft, 95)), 2),
            "fps_one_thread": round(len(ft) / sum(ft), 1),
            "fps_two_threads": round(two_core_fps, 1),
        },
    }


if __name__ == "__main__":  # pragma: no cover
    import json

    print(json.dumps(run_bench(), indent=2))
