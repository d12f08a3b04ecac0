"""``tablectl bench table --host``: the host's part of a dealt hand, stage by stage, accounts for
every card (numbers belong to the benchmark; this checks behaviour only)."""

from __future__ import annotations

import json

from controller.bench.table_host import CPU, STAGES, host_session
from controller.mqtt.broker import Broker
from tests.mqtt_util import require_mosquitto


def test_a_dealt_hand_is_timed_card_by_card_at_every_stage() -> None:
    require_mosquitto()
    with Broker.start() as broker:
        r = host_session(broker, hands=1, pace=0.25)
    json.dumps(r)
    # Every card timed, or counted missing: only when the link found arrivals whose order it could
    # not vouch for (a stall of the emulator on a loaded machine), which the dealer is asked about.
    unordered = r["link_counters"].get("unordered_arrivals", 0)
    assert r["hole"]["end_to_end_ms"]["n"] + r["hole"]["missing"] == 20
    assert r["flop"]["end_to_end_ms"]["n"] + r["flop"]["missing"] == 1
    assert r["hole"]["missing"] + r["flop"]["missing"] == 0 or unordered > 0
    assert r["hole"]["end_to_end_ms"]["n"] > 0
    for name in ("hole", "flop"):
        stages, total = r[name]["stages_ms"], r[name]["end_to_end_ms"]
        if not total["n"]:
            continue
        assert set(stages) == {*STAGES, CPU}
        for stage in STAGES:  # each a part of the whole, none negative
            assert 0 <= stages[stage]["p50"] <= stages[stage]["max"] <= total["max"] + 0.01
        assert 0 < stages[CPU]["p50"]


def test_the_dealer_waits_for_the_table_before_ending_the_hand(monkeypatch) -> None:
    """The host stalls on the flop's third card longer than the dealer's settle (a loaded machine:
    the long chip run's one flop of 74 that never reached the subscriber).  The dealer ends the
    hand once the table shows the flop, as a dealer watching the display does: the flop is shown,
    late, and its lateness is in its latency, not a flop lost to an EndHand that overtook it."""
    import time

    import controller.bench.table_host as table_host
    from controller.bench.latency import rfid_source

    require_mosquitto()
    stall = 1.5  # the session's settle after the flop is 1.5 s x pace 0.25

    class StalledOnTheFlop(table_host._Probe):
        def __init__(self, daemon) -> None:
            super().__init__(daemon)
            pipeline = rfid_source(daemon).pipeline
            third = sorted(a for a, s in pipeline.zones.zone_map.antennas.items() if s.zone.kind == "board")[2]
            feed = pipeline.feed

            def stalled(change) -> None:
                if change.arrived and change.antenna == third:
                    time.sleep(stall)
                feed(change)

            pipeline.feed = stalled

    monkeypatch.setattr(table_host, "_Probe", StalledOnTheFlop)
    with Broker.start() as broker:
        r = host_session(broker, hands=1, pace=0.25)
    assert r["flop"]["missing"] == 0 and r["flop"]["end_to_end_ms"]["n"] == 1
    assert r["flop"]["end_to_end_ms"]["max"] >= stall * 1000
    assert r["hole"]["missing"] == 0
