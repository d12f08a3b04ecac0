"""Camera card recognition: the fallback for dead tags and the cross-check of RFID.

* :class:`Recognizer` -- frame -> cards (card or unknown, confidence, box, face up/down);
  ``Recognizer.stock()`` works out of the box on standard indices; ``scan(frame, layout)``
  sorts cards into zones by regions of interest (:class:`CameraLayout`, :class:`ZoneROI`).
* :class:`CameraFallback` -- pure logic: dead tag -> :class:`CameraCard` (feed
  ``Fusion.camera_identified``), RFID/camera disagreement -> :class:`CameraMismatch`,
  face-up hole card -> :class:`ExposedCard` (``to_event()``), unreadable -> :class:`UnreadCard`.
* :class:`LabelStore` / :func:`capture_reference` -- the deck in play: calibration and
  tag-labelled crops; ``LabelStore.refine()`` teaches the recogniser and measures it.
* :mod:`vision.corners` -- corner indices found and read anywhere in a frame (overlaps, light tables).
* :mod:`vision.yolo` -- real photos labelled in YOLO format, scored card by card.
* :mod:`vision.synth` -- synthetic cards, scenes and :class:`SyntheticCamera`; :mod:`vision.decks` --
  real deck artwork rendered for training and tests (neither is imported by the product).
* :func:`recognize_files`, :func:`run_bench` -- for ``tablectl``
  (``vision.bench.run_real_bench`` for ``--real``).

Needs ``opencv-python-headless`` and ``numpy`` (Pillow only for the synthetic generator).
"""

from __future__ import annotations

from .bench import recognize_files, run_bench
from .fallback import CameraCard, CameraFallback, CameraMismatch, ExposedCard, FallbackOutput, UnreadCard
from .labels import LabelStore, capture_reference
from .recognizer import CameraLayout, Detection, Reading, Recognizer, ZoneROI, stock_model

__all__ = [
    "CameraCard", "CameraFallback", "CameraLayout", "CameraMismatch", "Detection", "ExposedCard",
    "FallbackOutput", "LabelStore", "Reading", "Recognizer", "UnreadCard", "ZoneROI", "capture_reference",
    "recognize_files", "run_bench", "stock_model",
]
