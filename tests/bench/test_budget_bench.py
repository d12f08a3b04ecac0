"""``tablectl bench budget``: the daemon's own CPU and memory, its journal per hand and the card
latency, measured on a hand dealt through the real daemon (in its own process) and Mosquitto."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from controller.app.config import validate_config
from controller.bench import budget
from controller.mqtt.broker import Broker
from tests.mqtt_util import require_mosquitto


def test_proc_figures_are_this_process() -> None:
    cpu = budget.proc_cpu_seconds(os.getpid())
    sum(i * i for i in range(300_000))  # some CPU of our own
    assert budget.proc_cpu_seconds(os.getpid()) > cpu
    mem = budget.proc_memory_mb(os.getpid())
    assert 10 < mem["rss_mb"] <= mem["peak_rss_mb"]


def test_the_packaged_config_on_the_bench() -> None:
    """The .deb's default config, on the bench's link and broker: the antennas are the dealer's."""
    table = budget._Table(hands=1, seed=3)
    settings = budget.packaged_config(Path("/tmp/j.sqlite"), "/tmp/link", "mqtt://127.0.0.1:1", True, 10.0)
    config = validate_config(settings)
    assert settings["antennas"] == {str(a): z for a, z in table.layout.zone_map.to_dict().items()}
    assert config.broadcast.delay == "end_of_hand" and settings["camera"] == {"enabled": True, "fps": 10.0}
    assert "" in table.views() and len(table.views()) > 3  # the empty table, then cards coming down


def test_latency_matches_each_card_event_to_its_seat_s_last_arrival() -> None:
    table = budget._Table(hands=1, seed=3)
    seat1 = table.layout.seat_antenna(1, 0)
    seat2 = table.layout.seat_antenna(2, 0)
    # Frame 1 again after the reader was rebooted: the second card's frame is the one before it was taken.
    arrivals = [(1, seat1, 10.001), (2, seat2, 11.001), (1, seat1 + 1, 12.001), (None, seat2 + 1, 13.0)]
    written = [(1, 10.0), (2, 11.0), (0, 11.5), (1, 12.0), (2, 12.5)]
    received = [(1, 10.010), (2, 11.020), (1, 12.030), (2, 13.010)]
    got = budget._latency(table, arrivals, written, received)
    assert got["n"] == 3 and got["max"] == 30.0 and got["p50"] == 20.0  # the inventory's card: not timed


def test_one_hand_camera_off_is_measured_end_to_end(monkeypatch) -> None:
    require_mosquitto()
    monkeypatch.setitem(budget.PACES, "shuffler", 0.1)
    table = budget._Table(hands=1, seed=5)
    tmp = Path(tempfile.mkdtemp(prefix="budget-test-"))
    with Broker.start() as broker:
        run = budget._one_run(table, broker, False, "shuffler", table.plans, {}, 10.0, tmp)
    seats = len(table.plans[0].setup.seats)
    assert run["hands"] == 1 and run["cards"] >= 2 * seats  # the hole cards at least (a fold may end it)
    assert run["alerts"] == {}  # a legal hand with every tag read raises nothing
    assert run["card_latency_ms"]["n"] == 2 * seats  # every hole card's event arrived and was timed
    assert 0 < run["card_latency_ms"]["p50"] < 1000
    assert 0 < run["cpu_s"] < run["seconds"] and run["host_core_share"] > 0
    assert 20 < run["rss_mb"] <= run["peak_rss_mb"]
    assert run["journal_bytes_per_hand"] > 0


def test_sysbench_gives_this_machine_s_ratio_to_the_pis() -> None:
    """scripts/bootstrap installs sysbench, so the bench's Pi estimates exist on a fresh machine (in CI
    a missing sysbench fails here rather than leaving the bench without its Pi figures)."""
    if os.environ.get("CI") is None and budget.shutil.which("sysbench") is None:
        import pytest

        pytest.skip("sysbench is not installed (scripts/bootstrap installs it)")
    got = budget.host_sysbench(seconds=1)
    assert "error" not in got, got
    assert got["events"] > 0 and 0 < got["cpu_s"] <= 1.5  # one thread for one second of wall time, at most
    assert got["events_per_cpu_s"] == round(got["events"] / got["cpu_s"], 1)


def test_the_process_tree_counts_a_child_s_cpu_and_memory() -> None:
    """The camera's recogniser is a child of the daemon: the bench's figures must include it."""
    import subprocess
    import sys
    import time

    child = subprocess.Popen([sys.executable, "-c", "import time\nt = time.process_time()\n"
                              "while time.process_time() - t < 0.3: pass\ntime.sleep(30)"])
    try:
        deadline = time.monotonic() + 20
        while budget.proc_cpu_seconds(child.pid) < 0.25 and time.monotonic() < deadline:
            time.sleep(0.05)
        pids = budget.process_tree(os.getpid())
        assert pids[0] == os.getpid() and child.pid in pids
        assert budget.tree_cpu_seconds(pids) >= budget.proc_cpu_seconds(os.getpid()) + 0.25
        mine, both = budget.proc_memory_mb(os.getpid()), budget.tree_memory_mb(pids)
        assert both["rss_mb"] > mine["rss_mb"] and both["peak_rss_mb"] >= both["rss_mb"]
        assert budget.proc_pss_mb(os.getpid()) < both["pss_mb"] <= both["rss_mb"]  # shared pages divided
    finally:
        child.kill()
        child.wait()
