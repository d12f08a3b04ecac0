"""The systemd side: the unit's directives, and ``tablectl run`` speaking sd_notify for real."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.mqtt.broker import Broker, mosquitto_available
from tests.conftest import REPO

UNIT = (REPO / "systemd" / "poker-table-controller.service").read_text()


def _directives(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", ";", "[")) and "=" in line:
            key, _, value = line.partition("=")
            out.setdefault(key.strip(), []).append(value.strip())
    return out


def test_unit_is_a_hardened_notify_service_with_a_watchdog() -> None:
    d = _directives(UNIT)
    assert d["Type"] == ["notify"] and d["WatchdogSec"] and d["Restart"] == ["on-failure"]
    assert d["ProtectSystem"] == ["strict"] and d["NoNewPrivileges"] == ["yes"]
    assert d["DevicePolicy"] == ["closed"] and d["StateDirectory"] == ["poker-table-controller"]
    allowed = " ".join(d["DeviceAllow"])
    for device in ("char-ttyACM", "/dev/gpiochip0", "char-video4linux"):
        assert device in allowed
    assert set(d["SupplementaryGroups"][0].split()) >= {"dialout", "gpio", "video"}
    assert "tablectl run --config" in d["ExecStart"][0]


@pytest.mark.skipif(not mosquitto_available() and not os.environ.get("CI"), reason="needs mosquitto")
def test_run_notifies_ready_feeds_the_watchdog_and_stops_on_sigterm(tmp_path: Path) -> None:
    notify = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(notify))
    sock.settimeout(20)
    with Broker.start() as broker:
        cfg = tmp_path / "table.toml"
        cfg.write_text(f'[table]\nid = "sd"\n\n[mqtt]\nurl = "mqtt://127.0.0.1:{broker.port}"\n\n'
                       f'[journal]\npath = "{tmp_path / "journal.sqlite"}"\n')
        env = dict(os.environ, NOTIFY_SOCKET=str(notify), WATCHDOG_USEC="400000", TABLECTL_STATE_DIR=str(tmp_path))
        env.pop("WATCHDOG_PID", None)
        proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "run", "--config", str(cfg),
                                 "--log", "json"],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            got: list[bytes] = []
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not any(m == b"WATCHDOG=1" for m in got):
                got.append(sock.recv(256))
            assert any(m.startswith(b"READY=1") for m in got), got
            assert b"WATCHDOG=1" in got
            proc.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and b"STOPPING=1" not in got:
                got.append(sock.recv(256))
            assert b"STOPPING=1" in got
            assert proc.wait(15) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
            sock.close()
