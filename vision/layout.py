"""The reference camera layout: where the cards of the reference table lie in a 1280x720 frame.

A camera with no regions configured (``[camera] rois``) uses it: five board slots in a row
at the top, two seats with two hole cards each below.  The demo's synthetic camera
(:mod:`vision.synth`) renders its tables with the same geometry, so the two agree.
"""

from __future__ import annotations

from controller.geometry import Zone

from .recognizer import CameraLayout, ZoneROI

FRAME_W, FRAME_H = 1280, 720
CARD_H_PX = 190  # a card's height in the frame
CARD_ASPECT = 250 / 350  # width / height


def reference_positions() -> dict[str, tuple[float, float]]:
    """Card centres: ``board/0..4`` and ``seat:1/0..1``, ``seat:2/0..1``."""
    pos: dict[str, tuple[float, float]] = {}
    w = CARD_H_PX * CARD_ASPECT
    for i in range(5):
        pos[f"board/{i}"] = (FRAME_W / 2 + (i - 2) * (w + 50), 190)
    for seat, cx in ((1, 330), (2, 950)):
        for i in range(2):
            pos[f"seat:{seat}/{i}"] = (cx + (i - 0.5) * (w + 50), 520)
    return pos


def reference_layout(seat_face: str | None = None, margin: float = 0.62) -> CameraLayout:
    """One region per board slot (face up) and one per seat (``seat_face``: None for a rail
    camera that sees hole cards by design, ``"down"`` where a face-up card is an exposed one)."""
    pos = reference_positions()
    half_w, half_h = CARD_H_PX * CARD_ASPECT * margin, CARD_H_PX * margin
    rois = []
    for i in range(5):
        cx, cy = pos[f"board/{i}"]
        rois.append(ZoneROI(Zone("board"), (int(cx - half_w), int(cy - half_h), int(2 * half_w), int(2 * half_h)),
                            i, "up"))
    for seat in (1, 2):
        xs = [pos[f"seat:{seat}/{i}"][0] for i in range(2)]
        cy = pos[f"seat:{seat}/0"][1]
        x0, x1 = min(xs) - half_w, max(xs) + half_w
        rois.append(ZoneROI(Zone("seat", seat), (int(x0), int(cy - half_h), int(x1 - x0), int(2 * half_h)),
                            None, seat_face))
    return CameraLayout(tuple(rois))
