"""Cameras: frames for the camera fallback, behind one narrow interface.

``FrameSource.grab()`` returns a BGR frame (a NumPy array) or None.  Two sources:

* :class:`OpenCVCamera` -- a V4L2 camera through OpenCV (``/dev/video0`` or an index);
* :class:`SyntheticTableCamera` -- renders 1280x720 frames of what a callable says lies on
  the table (:class:`vision.synth.SyntheticCamera`), for the demo and the tests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class FrameSource(Protocol):
    def grab(self) -> Any: ...

    def close(self) -> None: ...


class OpenCVCamera:
    """A real camera; reopened on the next grab after a failure."""

    def __init__(self, device: str | int = 0, width: int = 1280, height: int = 720) -> None:
        self.device = int(device) if str(device).isdigit() else device
        self.size = (width, height)
        self._cap: Any = None
        self.failures = 0

    def _open(self) -> Any:
        import cv2

        cap = cv2.VideoCapture(self.device)
        cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.size[0])
        cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.size[1])
        return cap if cap.isOpened() else None

    def grab(self) -> Any:
        if self._cap is None:
            self._cap = self._open()
            if self._cap is None:
                self.failures += 1
                return None
        ok, frame = self._cap.read()
        if not ok:
            self.failures += 1
            self.close()
            return None
        return frame

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


class SyntheticTableCamera:
    """Frames of the cards ``view()`` reports: ``{"board/0": Card, "seat:1/0": (Card, "down")}``."""

    def __init__(self, view: Callable[[], dict[str, Any]], seed: int = 0) -> None:
        from vision.synth import SyntheticCamera

        self.view = view
        self.camera = SyntheticCamera(seed=seed)

    def grab(self) -> Any:
        return self.camera.frame(self.view()).bgr

    def close(self) -> None:
        pass
