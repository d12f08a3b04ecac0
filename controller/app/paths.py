"""Where the controller keeps its state (deck registry, journal).

Under systemd ``StateDirectory=`` sets ``$STATE_DIRECTORY``; ``$TABLECTL_STATE_DIR``
overrides it for tests and demos; otherwise the user's XDG state folder.
"""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    for var in ("TABLECTL_STATE_DIR", "STATE_DIRECTORY"):
        value = os.environ.get(var)
        if value:
            return Path(value.split(":")[0])
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "poker-table-controller"


def registry_path() -> Path:
    return state_dir() / "decks.json"
