"""Rebuild the shipped stock model: ``python -m vision.train [rounds]`` (deterministic, ~1 min on 2 cores).

The model is trained on synthetic cards in the *training* fonts only (``vision.synth``);
the held-back fonts and seeds stay unseen for :func:`vision.bench.run_bench`.
"""

from __future__ import annotations

import sys
import time

from .recognizer import STOCK_FILE, STOCK_ROUNDS, build_stock_model


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    rounds = int(argv[0]) if argv else STOCK_ROUNDS
    t = time.perf_counter()
    model = build_stock_model(rounds)
    model.save(STOCK_FILE, with_examples=False)
    print(f"{STOCK_FILE}: {rounds} rounds, {time.perf_counter() - t:.1f} s, {STOCK_FILE.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
