"""A real camera through OpenCV (V4L2 ``/dev/video0`` or an index), behind :class:`FrameSource`.

``FrameSource.grab()`` returns a BGR frame (a NumPy array) or None; the camera fallback
(:mod:`vision.fallback`) reads every frame through it.
"""

from __future__ import annotations

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
