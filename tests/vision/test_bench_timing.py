"""How ``tablectl bench vision`` times a reader (vision.bench._timed): every image read once, in
order, each read's answer kept beside its own wall time, and the CPU time per read."""

from __future__ import annotations

import time

import numpy as np

from vision.bench import _timed


def test_each_image_is_read_once_in_order_and_timed_alone() -> None:
    images = [np.full((2, 2), v, np.uint8) for v in (3, 1, 2)]
    seen: list[int] = []

    def read(img: np.ndarray) -> int:
        seen.append(int(img[0, 0]))
        time.sleep(0.02 * int(img[0, 0]))
        return int(img.sum())

    reads, times, cpu = _timed(read, images)
    assert seen == [3, 1, 2] and reads == [12, 4, 8]
    assert len(times) == 3 and all(t >= 0.02 * v for t, v in zip(times, (3, 1, 2), strict=True))  # each its own read
    assert 0 <= cpu < min(times)  # sleeping costs no CPU: the CPU figure is not the wall clock
