"""Issue 26, F4 through the whole daemon: two cards land while the antenna board is stalled.
The board reports them in antenna order (seat 1's second card before seat 4's first); before,
the engine took that order and ruled a false misdeal.  Now the table raises an alert asking the
dealer to identify them (the journaled report says "order unknown ... confirm"), and deals
neither in a guessed order."""

from __future__ import annotations

from controller.mqtt.broker import Broker
from tests.app.rfid_rig import rfid_table
from tests.mqtt_util import require_mosquitto, wait_until


def test_cards_landing_during_a_board_stall_raise_a_confirm_alert_not_a_misdeal(tmp_path) -> None:
    require_mosquitto()
    with Broker.start() as broker, rfid_table(broker, tmp_path / "journal.sqlite", tmp_path / "tty") as rig:
        d, emu = rig.daemon, rig.emulator
        for n in range(3):
            rig.deal(n)
        emu.silence(0.5)  # type: ignore[attr-defined]
        wait_until(lambda: emu.counters["silences"] == 1, what="the board stalled")  # type: ignore[attr-defined]
        rig.place(3)  # seat 4, antenna 6
        rig.place(4)  # seat 1's second card, antenna 1: the board will report it first
        wait_until(lambda: bool(d.service.alerts), timeout=10, what="an alert")
        [alert] = d.service.alerts
        # An irregularity the dealer resolves by identifying the cards; the journaled report says why.
        assert alert.data["ruling"] == "irregularity" and alert.data["remedy"] == "identify_card", alert.data
        assert not d.service.engine.over
        [report] = [e.event for e in d.journal.entries() if e.event.kind == "camera_report"]
        assert "order unknown" in report.detail and "confirm" in report.detail, report
        assert rig.dealt() == 3, "neither card was dealt in a guessed order"
