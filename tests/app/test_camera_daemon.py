"""The camera path in the daemon: a dead tag on the flop is filled in by the camera.

Emulator (pty) -> link -> zones -> fusion -> engine for the tags that read; a synthetic
camera over the board renders what really lies there; the fallback identifies the card whose
tag never reported and the fusion turns it into the flop's third card (source ``camera``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("cv2")

from tests.camera_rig import camera_table  # noqa: E402
from tests.mqtt_util import require_mosquitto, wait_until  # noqa: E402

require_mosquitto()


def test_dead_tag_on_the_flop_is_filled_in_by_the_camera(tmp_path: Path) -> None:
    with camera_table(tmp_path, tag_timeout=1.0) as table:
        order = table.deal_to_the_flop()
        table.flop(("Ah", "Td", "7c"), dead="7c")
        wait_until(table.flop_complete(), timeout=15, what="the flop complete")
        engine = table.engine
        assert [c.face for c in engine.board] == ["Ah", "Td", "7c"]
        assert not engine.rulings
        assert engine.to_act == order[0]
        sources = [e.event.source for e in table.daemon.journal.entries() if e.event.kind == "board"]
        assert "camera" in sources, sources
