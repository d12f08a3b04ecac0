"""``tablectl demo`` as a new user runs it: the whole table on simulated hardware."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from controller.demo.table import run_console_demo, run_table_demo
from controller.mqtt.broker import mosquitto_available


def test_console_demo_catches_every_mistake() -> None:
    stats = run_console_demo(hands=30, seed=4, delay=0, mistake_rate=0.5, console=Console(file=open(os.devnull, "w")))
    assert stats.hands == 30 and stats.mistakes > 5
    assert stats.caught == stats.mistakes


@pytest.mark.skipif(not mosquitto_available() and not os.environ.get("CI"), reason="needs mosquitto")
def test_table_demo_deals_through_the_daemon_and_catches_mistakes(capfd) -> None:
    out = Console(record=True, width=200, file=open(os.devnull, "w"))
    stats = run_table_demo(hands=2, seed=11, pace=0, mistake_rate=1.0, ws_port=0, http_port=0, dead_tags=0.5,
                           console=out, games=["holdem", "stud"], rules="robert")
    text = out.export_text()
    # Issue 27: each ruling printed once (the daemon's log goes to demo.log), each hand's result printed,
    # --game and --rules honoured.
    assert "ruling " not in capfd.readouterr().err
    printed = [ln for ln in text.splitlines() if ln.strip().startswith(("misdeal:", "void:", "irregularity:"))]
    assert len(printed) == sum(stats.rulings.values()) > 0
    assert len([ln for ln in text.splitlines() if ln.strip().startswith("result: ")]) == 2
    assert "Texas hold'em, robert" in text and "Seven-card stud, robert" in text
    assert "dealer display" in text and "/display/" in text and "/overlay/" in text
    assert stats.hands == 2 and stats.mistakes == 2 and stats.caught == 2
    # Issue 27: the demo leaves its config beside its journal, so the hands can be replayed and exported.
    from controller.app.config import load_config
    from controller.cli import main

    journal = Path(next(w for w in text.split() if w.endswith("journal.sqlite")))
    config = journal.with_name("config.toml")
    assert load_config(config).journal.path == journal
    assert main(["replay", "--config", str(config)]) == 0
    assert main(["export", "--phh", "--config", str(config), str(journal.with_name("hands"))]) == 0
    assert "ruling" in journal.with_name("demo.log").read_text()


# ---------------------------------------------------------------------- issue 27 item 5: an unclean stop
TABLECTL = [sys.executable, "-m", "controller.cli", "demo", "--pace", "0.2", "--mistakes", "0"]


def _needs_mosquitto() -> None:
    if not mosquitto_available():
        if os.environ.get("CI"):
            pytest.fail("the demo tests need mosquitto in CI", pytrace=False)
        pytest.skip("needs mosquitto")


def _start(tmp_path: Path, *args: str) -> tuple[subprocess.Popen, Path]:
    log = tmp_path / f"demo-{time.monotonic_ns()}.log"
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path), COLUMNS="200")
    proc = subprocess.Popen([*TABLECTL, *args], stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env,
                            cwd=Path(__file__).resolve().parents[2])
    return proc, log


def _wait_for(log: Path, text: str, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while text not in log.read_text(errors="replace"):
        if proc.poll() is not None:
            raise AssertionError(f"the demo exited ({proc.returncode}) before {text!r}:\n{log.read_text()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no {text!r} within {timeout}s:\n{log.read_text()}")
        time.sleep(0.05)


def _broker_pid(tmp_path: Path, demo: subprocess.Popen) -> int:
    return int(json.loads((tmp_path / f"tablectl-demo-{os.getuid()}-{demo.pid}.json").read_text())["broker"])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM])
def test_a_signal_stops_the_demo_and_its_broker(tmp_path: Path, sig: int) -> None:
    _needs_mosquitto()
    proc, log = _start(tmp_path, "--ws-port", "0", "--http-port", "0")
    try:
        _wait_for(log, "Ctrl-C stops.", proc)
        broker = _broker_pid(tmp_path, proc)
        assert _alive(broker)
        proc.send_signal(sig)
        assert proc.wait(timeout=20) in (0, 1, 130), log.read_text()
        deadline = time.monotonic() + 5
        while _alive(broker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(broker), f"{signal.Signals(sig).name} left the demo's Mosquitto (pid {broker}) running"
        assert "demo over" in log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_next_demo_cleans_up_a_broker_left_behind(tmp_path: Path) -> None:
    _needs_mosquitto()
    first, log1 = _start(tmp_path, "--ws-port", "0", "--http-port", "0")
    second = None
    try:
        _wait_for(log1, "Ctrl-C stops.", first)
        orphan = _broker_pid(tmp_path, first)
        first.kill()  # SIGKILL: no clean-up at all; its Mosquitto is orphaned
        first.wait()
        assert _alive(orphan)
        second, log2 = _start(tmp_path, "--ws-port", "0", "--http-port", "0")
        _wait_for(log2, "Ctrl-C stops.", second)
        assert f"stopped the Mosquitto (pid {orphan})" in log2.read_text()
        assert not _alive(orphan)
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=20)
    finally:
        for p in (first, second):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


def test_a_held_port_is_a_clear_error_before_anything_starts(tmp_path: Path) -> None:
    _needs_mosquitto()
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        proc, log = _start(tmp_path, "--ws-port", str(port), "--http-port", "0")
        assert proc.wait(timeout=20) == 2
    text = log.read_text()
    assert f"port {port} (the pages' websockets) is already in use" in " ".join(text.split())
    assert "dealer display" not in text and "hand 1" not in text


def _listening_addresses(port: int) -> set[str]:
    """The local addresses of the sockets listening on ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            addr, hexport = local.split(":")
            if state == "0A" and int(hexport, 16) == port:
                raw = bytes.fromhex(addr)
                # /proc prints each 32-bit word in host (little-endian) order
                words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
                found.add(socket.inet_ntop(socket.AF_INET if len(words) == 4 else socket.AF_INET6, words))
    return found


def test_the_demo_brokers_websockets_listen_on_loopback_only() -> None:
    """Issue 27: the demo's websockets listener bound every interface although its config says
    127.0.0.1 (Mosquitto 2.0.11 ignores an address on a websockets listener)."""
    _needs_mosquitto()
    from controller.mqtt.broker import Broker

    repo = Path(__file__).resolve().parents[2]
    conf = (repo / "systemd" / "mosquitto" / "poker-table.conf").read_text()
    with Broker.start(users={"display": "x"}, acl_text="", websockets_port=0, config_template=conf) as broker:
        for port in (broker.port, broker.websockets_port):
            addresses = _listening_addresses(port)
            assert addresses, port
            assert addresses <= {"127.0.0.1", "::ffff:127.0.0.1", "::1"}, (port, addresses)


def test_replay_lists_each_hands_amounts(tmp_path: Path, capsys) -> None:
    """Issue 27: `tablectl replay` says who won what, the pots, and an uncalled bet returned."""
    import random

    from controller.cli import main
    from controller.journal import Journal
    from controller.rules.events import StartHand
    from controller.rules.scenario import Scenario
    from controller.rules.table import Table
    from controller.service import Rejected, TableService
    from controller.sim import dealer as dealer_sim

    journal = tmp_path / "journal.sqlite"
    with Journal(journal, sync="normal") as j:
        svc = TableService(Table(size=10), journal=j)
        for seed in range(1, 200):
            hand = dealer_sim.legal_hand(random.Random(seed), game="holdem", rules="robert", event="cash", chips=True)
            svc.submit(StartHand(Scenario.from_dict(hand).setup))
            for ev in Scenario.from_dict(hand).events:
                try:
                    outs = svc.submit(ev)
                except Rejected:
                    continue
                end = next((o.payload for o in outs if o.kind == "hand_end"), None)
                if end is not None:
                    break
            if end and end.get("returned"):
                break
    config = tmp_path / "t.toml"
    config.write_text(f'[table]\nid = "t1"\nsize = 10\n[journal]\npath = "{journal}"\n')
    capsys.readouterr()
    assert main(["replay", "--config", str(config)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    winner = end["winners"][0]
    assert f"seat {winner['seat']} wins {winner['share']:,}" in out
    assert f"(pots: {end['pots'][0]['amount']:,})" in out
    assert f"{end['returned']['amount']:,} returned to seat {end['returned']['seat']} (not called)" in out
