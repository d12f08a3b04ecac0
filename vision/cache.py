"""Where the camera keeps what it renders or learns on this machine (deck artwork, labels).

A module of its own so the deck renderer (:mod:`vision.decks`) and the recogniser, which the
pip-shape model's training imports the renderer from, do not import each other."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$TABLECTL_VISION_CACHE``, else ``$XDG_CACHE_HOME/poker-table-controller/vision``."""
    env = os.environ.get("TABLECTL_VISION_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "poker-table-controller" / "vision"
