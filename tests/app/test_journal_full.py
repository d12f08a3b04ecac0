"""Issue 26, F6: the journal's disk fills up mid-deal.

Before: two cards dealt while the disk was full were dropped with one log line, no alert, and
when space came back the next card raised a false ``seat_dealt_out``.  Now the table says
"journal full" at once (``alert/active``, which the display shows), holds the cards in their
order, refuses console requests (nothing changes), and journals and applies the held cards once
space returns: nothing lost, no false ruling.

The disk is a real one: a 2 MiB tmpfs holding the journal, filled with a ballast file (the
append fails with SQLite's "database or disk is full"), then emptied.  The cards come from the
emulated antenna board on a pty, through the daemon's real RFID pipeline.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.bench.faults import _root_prefix
from controller.mqtt.broker import Broker
from controller.mqtt.contract import Topics, validate
from controller.rules.events import SeatPlayer
from controller.service import Rejected
from tests.app.rfid_rig import FACES, rfid_table
from tests.mqtt_util import Client, require_mosquitto, wait_until

T = Topics("poker", "t1")


@contextlib.contextmanager
def small_disk(size: str = "2m") -> Iterator[Path]:
    """A real, small file system (tmpfs) of its own: it can be filled without touching anything else."""
    prefix = _root_prefix()  # the fault bench's own: as root, or through passwordless sudo
    if prefix is None:
        if os.environ.get("CI"):
            pytest.fail("mounting a small tmpfs needs root or passwordless sudo in CI", pytrace=False)
        pytest.skip("mounting a small tmpfs needs root or passwordless sudo")
    where = Path(tempfile.mkdtemp(prefix="tablectl-smalldisk-"))
    subprocess.run([*prefix, "mount", "-t", "tmpfs", "-o", f"size={size},mode=1777", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run([*prefix, "umount", "-l", str(where)], check=False)
        shutil.rmtree(where, ignore_errors=True)


def fill(disk: Path) -> None:
    """Write a ballast file until the disk has no block left."""
    fd = os.open(disk / "ballast", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)


def test_a_full_disk_mid_deal_holds_the_cards_says_so_and_loses_nothing() -> None:
    require_mosquitto()
    with small_disk() as disk, Broker.start() as broker, \
            rfid_table(broker, disk / "journal.sqlite", disk.parent / f"{disk.name}-tty") as rig:
        d = rig.daemon
        display = Client(broker, None, None, name="display").connected()
        display.subscribe(T.alert_active)
        try:
            for n in range(3):
                rig.deal(n)
            fill(disk)
            for n in (3, 4):
                rig.place(n)
                wait_until(lambda n=n: d.health()["journal"]["held"] == n - 2, timeout=10, what=f"card {n + 1} held")
            # The table says so, on the topic the display shows.
            wait_until(lambda: any(m.payload for m in display.messages if m.topic == T.alert_active),
                       timeout=5, what="the journal alert")
            alert = display.json(T.alert_active)[-1]
            validate("alert_active", alert)
            assert alert["reason"] == "journal_full" and alert["severity"] == "fault", alert
            assert rig.dealt() == 3
            with pytest.raises(Rejected, match="journal full"):
                d.submit(SeatPlayer(4, "nobody"))
            # Space returns: the held cards are journaled and applied in their order, the alert clears.
            os.remove(disk / "ballast")
            wait_until(lambda: rig.dealt() == 5, timeout=10, what="the held cards journaled")
            wait_until(lambda: display.messages[-1].payload == b"", timeout=5, what="the alert cleared")
            for n in range(5, 8):
                rig.deal(n)
            deals = [e.event for e in d.journal.entries() if e.event.kind == "deal"]
            assert [(e.seat, e.card.face) for e in deals] == [(rig.slots[n][0], FACES[n]) for n in range(8)]
            assert not d.service.alerts, [a.data["reason"] for a in d.service.alerts]
            assert not any(e.event.kind in ("report", "call_misdeal") for e in d.journal.entries())
            assert d.health()["journal"] == {"fault": None, "held": 0}
        finally:
            display.close()
