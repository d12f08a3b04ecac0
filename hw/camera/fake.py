"""The camera's fake: a :class:`~hw.camera.opencv.FrameSource` whose frames come from a callable.

The demo and the tests hand it a renderer of what lies on the table (``controller.demo.camera``
draws synthetic cards); a test can hand it a list of recorded frames as well.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


class FakeCamera:
    """Frames from ``frames()`` (a callable) or from an iterable, then None once it runs out."""

    def __init__(self, frames: Callable[[], Any] | Iterable[Any]) -> None:
        self._next = frames if callable(frames) else iter(frames).__next__
        self.grabs = 0
        self.closed = False

    def grab(self) -> Any:
        self.grabs += 1
        try:
            return self._next()
        except StopIteration:
            return None

    def close(self) -> None:
        self.closed = True
