"""The ``[camera]`` config section: which camera, how often, and the regions of interest."""

from __future__ import annotations

from pydantic import Field, StrictBool

from controller.sources import Section


class CameraSection(Section):
    enabled: StrictBool = False
    device: str = "0"  # camera index or /dev/videoN
    fps: float = Field(8.0, gt=0, le=60)
    tag_timeout: float = Field(1.5, gt=0, le=30,
                               description="seconds a card may wait for its tag (and a tag for its card)")
    # Both recognisers must name a card (vision.recognizer, "Two readers must agree"): fewer wrong
    # cards on real photos of an unseen deck (dev scenes 8 of 954 against 15).  Unset: on for a real
    # camera, off for a camera the daemon is handed (the demo's synthetic one draws font cards the
    # corner-index reader, trained on deck artwork, does not know).
    two_readers: StrictBool | None = None
    # Regions of interest: slot name ("board/0", "seat:3") -> [x, y, w, h] in the frame; empty:
    # the synthetic camera's layout (board slots, seats 1 and 2).
    rois: dict[str, list[int]] = Field(default_factory=dict)
