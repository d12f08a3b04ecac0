"""Issue 26, kill -9 in the fault bench (hands 14 and 40 of a 200-hand run): while the daemon was
down the dealer went on pitching; the restarted daemon's board re-reported every card on the table,
and its ring no longer held the new cards' arrivals, so none had a known order.  In antenna order a
card the table already had came between two new ones, and the first new one went out alone, dealt
as "no question" ahead of a seat's earlier card: a false ``seat_dealt_out`` (and the dealer's
answer to the alert that followed left that card out: the table had it already).  Now the table
asks the dealer about both, and deals neither in a guessed order."""

from __future__ import annotations

import time

from controller.mqtt.broker import Broker
from tests.app.rfid_rig import rfid_table
from tests.mqtt_util import require_mosquitto, wait_until


def test_cards_pitched_while_the_daemon_was_down_are_put_to_the_dealer_not_dealt_alone(tmp_path) -> None:
    require_mosquitto()
    # A 10 ms heartbeat: the board's ring (128 frames) forgets an arrival 1.3 s later.
    with Broker.start() as broker, \
            rfid_table(broker, tmp_path / "journal.sqlite", tmp_path / "tty", heartbeat_ms=10) as rig:
        for n in range(3):  # seats 1-3's first cards, journaled
            rig.deal(n)

        def pitched_while_down() -> None:
            rig.place(3)  # seat 4's first card (antenna 6)
            rig.place(4)  # seat 1's second card (antenna 1: in antenna order, before seat 2's first)
            time.sleep(2.0)  # the ring rolls past both arrivals

        rig.restart(pitched_while_down)
        d = rig.daemon
        wait_until(lambda: bool(d.service.alerts), timeout=10, what="an alert")
        time.sleep(0.3)
        reasons = [a.data["reason"] for a in d.service.alerts]
        assert reasons == ["order_unknown"], reasons  # "order unknown: confirm", no misdeal
        assert not d.service.engine.over
        assert rig.dealt() == 3, "neither card was dealt in a guessed order"
        [report] = [e.event for e in d.journal.entries() if e.event.kind == "camera_report"]
        assert "order unknown" in report.detail and "seat:4" in report.detail and "seat:1" in report.detail, report
