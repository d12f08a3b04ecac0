"""The bench runs, returns JSON, and measures every change it delivers."""

from __future__ import annotations

import json

from firmware_bridge.bench import run_bench


def test_run_bench_small() -> None:
    result = run_bench(cards=300)
    json.dumps(result)
    assert result["decode"]["frames"] >= 600 and result["decode"]["frames_per_s"] > 0
    lat = result["latency_ms"]
    assert lat["changes"] == 600 and lat["measured"] == 600
    assert 0 < lat["p50"] <= lat["p99"] <= lat["max"]
