"""``tablectl bench latency`` runs end to end (small), returns JSON, and times every card."""

from __future__ import annotations

import json

from controller.bench.latency import run_bench
from tests.mqtt_util import require_mosquitto


def test_run_bench_small() -> None:
    require_mosquitto()
    steps: list[str] = []
    result = run_bench(cards=24, settle=0.05, progress=steps.append)
    json.dumps(result)
    assert steps[0] == "floor: pty hop" and len(steps) == 6
    for run in (result["daemon"], result["daemon_journal_sync_normal"], result["daemon_with_slide_window"]):
        assert run["cards"] == run["events"] == run["n"] == 24  # every card's event arrived and was timed
        assert 0 < run["p50"] <= run["p99"] <= run["max"]
    assert result["daemon"]["journal_sync"] == "full"
    assert result["daemon_journal_sync_normal"]["journal_sync"] == "normal"
    assert result["floor"]["p50"] == round(result["floor"]["pty"]["p50"] + result["floor"]["mqtt"]["p50"], 3)
    assert result["ratio_p50"] == round(result["daemon"]["p50"] / result["floor"]["p50"], 2)
    assert result["journal_commit"]["full"]["n"] == result["journal_commit"]["normal"]["n"] == 24
