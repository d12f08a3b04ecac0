"""The demo's camera over the table: synthetic frames of the cards the simulated dealer placed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hw.camera.fake import FakeCamera
from vision.synth import SyntheticCamera


class SyntheticTableCamera(FakeCamera):
    """Frames of the cards ``view()`` reports: ``{"board/0": Card, "seat:1/0": (Card, "down")}``."""

    def __init__(self, view: Callable[[], dict[str, Any]], seed: int = 0) -> None:
        self.view = view
        self.camera = SyntheticCamera(seed=seed)
        super().__init__(lambda: self.camera.frame(self.view()).bgr)
