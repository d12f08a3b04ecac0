"""The one-machine room: ``tablectl floor`` reading the table's Mosquitto directly into SQLite.

Real Mosquitto with the shipped config and ACL (the ``floor`` user reads what a bridge would
forward, nothing secret); the table is the daemon's own service, publisher and MQTT link; the
floor is stopped mid-session and started again: its persistent session hands it what it
missed, and every hand is stored exactly once.
"""

from __future__ import annotations

import secrets
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from controller.floor.service import FloorService
from controller.floor.sim import TableScript
from controller.floor.sources import wait_for
from controller.mqtt.broker import Broker
from controller.mqtt.contract import Topics
from controller.mqtt.link import MqttLink, MqttSettings
from tests.mqtt_util import require_mosquitto, shipped_broker

require_mosquitto()

REPO = Path(__file__).resolve().parents[2]


def start(users: dict[str, str]) -> Broker:
    return shipped_broker(users, websockets=False)


def table(broker: Broker, password: str, table_id: str, seed: int) -> tuple[TableScript, MqttLink]:
    link = MqttLink(MqttSettings(url=broker.url, username="controller", password=password,
                                 client_id=f"controller-{table_id}"),
                    availability_topic=Topics("poker", table_id).availability)
    link.start()
    assert link.connected_event.wait(5)
    return TableScript(table_id, link, seed=seed, mistakes=0.3), link


@contextmanager
def local_floor(tmp_path: Path) -> Iterator[tuple[Broker, dict[str, str], FloorService]]:
    """The shipped Mosquitto with fresh ``controller`` and ``floor`` passwords, and the one-machine
    floor (SQLite in ``tmp_path``) reading it with the ``floor`` login; the floor stops, then the broker."""
    users = {"controller": secrets.token_urlsafe(8), "floor": secrets.token_urlsafe(8)}
    with start(users) as broker:
        floor = FloorService(db=f"sqlite:///{tmp_path / 'floor.db'}", mqtt=(broker.host, broker.port),
                             mqtt_user="floor", mqtt_password=users["floor"]).start()
        try:
            yield broker, users, floor
        finally:
            floor.stop()


def deal(script: TableScript, hands: int) -> None:
    for _ in range(hands):
        for ev in script.steps():
            script.submit(ev)


def test_floor_restart_on_one_machine_loses_and_doubles_nothing(tmp_path: Path) -> None:
    users = {"controller": secrets.token_urlsafe(8), "floor": secrets.token_urlsafe(8)}
    with start(users) as broker:
        db = f"sqlite:///{tmp_path / 'floor.db'}"
        floor = FloorService(db=db, mqtt=(broker.host, broker.port), mqtt_user="floor",
                             mqtt_password=users["floor"]).start()
        assert floor.source.connected.wait(5)
        tables = [table(broker, users["controller"], f"t{i}", seed=i) for i in (1, 2)]
        for script, _ in tables:
            deal(script, 4)
        for _, link in tables:
            assert link.wait_idle(10)
        floor.stop()  # mid-session: the broker keeps its QoS 1 messages for the floor's session
        for script, _ in tables:
            deal(script, 5)
        for _, link in tables:
            assert link.wait_idle(10)
        floor = FloorService(db=db, mqtt=(broker.host, broker.port), mqtt_user="floor",
                             mqtt_password=users["floor"]).start()
        try:
            store = floor.read_store
            assert store is not None
            wait_for(lambda: store.counts()["hands"] == 18 and all(
                r["ended"] is not None for r in store.query("SELECT ended FROM hands")), 20, "every hand")
            for script, _ in tables:
                rows = store.query("SELECT COUNT(*) AS n FROM hands WHERE table_id = ?", (script.table_id,))
                assert rows[0]["n"] == script.hand_starts == 9
                rulings = store.query("SELECT COUNT(*) AS n FROM rulings WHERE table_id = ?", (script.table_id,))
                assert rulings[0]["n"] == script.rulings
            # Nothing secret reached the floor's credential: no hole card but the delayed broadcast.
            assert not store.query("SELECT 1 FROM events WHERE kind NOT IN ('hand_start', 'card', 'burn', 'board', "
                                   "'street', 'action', 'draw', 'ruling', 'hand_end', 'dealer')")
            tiles = {t["table_id"]: t for t in floor.api.tables()}
            assert set(tiles) == {"t1", "t2"} and all(t["online"] for t in tiles.values())
        finally:
            floor.stop()
            for _, link in tables:
                link.stop()


def test_tablectl_floor_serves_the_page(tmp_path: Path) -> None:
    users = {"controller": secrets.token_urlsafe(8), "floor": secrets.token_urlsafe(8)}
    with start(users) as broker:
        (tmp_path / "floor.pass").write_text(users["floor"])
        from controller.mqtt.broker import free_port

        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "floor", "--db", str(tmp_path / "f.db"),
                                 "--mqtt", f"{broker.host}:{broker.port}", "--mqtt-user", "floor",
                                 "--mqtt-password-file", str(tmp_path / "floor.pass"), "--http-port", str(port)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            line = proc.stdout.readline() if proc.stdout else ""
            assert f"127.0.0.1:{port}/floor/" in line, line

            def connected() -> bool:  # the floor's session is subscribed before the table deals
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2) as r:
                    import json

                    return bool(json.load(r)["connected"])

            wait_for(connected, 15, "the floor connected to the table's broker")
            script, link = table(broker, users["controller"], "t7", seed=7)
            deal(script, 2)
            assert link.wait_idle(10)

            def hands() -> int:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/hands?table=t7", timeout=2) as r:
                    import json

                    return len(json.load(r))

            wait_for(lambda: hands() == 2, 15, "two hands on the floor")
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/floor/", timeout=2) as r:
                assert b"floor.js" in r.read()
            link.stop()
        finally:
            proc.terminate()
            proc.wait(10)
            time.sleep(0)
