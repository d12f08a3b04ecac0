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
