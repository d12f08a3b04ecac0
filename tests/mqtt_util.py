"""Real paho-mqtt v2 clients for tests that talk to a real Mosquitto."""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.client import CallbackAPIVersion, MQTTMessage
from paho.mqtt.reasoncodes import ReasonCode

from controller.mqtt.broker import Broker, mosquitto_available

TIMEOUT = 5.0


# ---------------------------------------------------------------------- the shipped broker and a daemon
def _shipped(name: str) -> str:
    from tests.conftest import REPO

    return (REPO / "systemd" / "mosquitto" / name).read_text()


#: The shipped Mosquitto config and ACL (systemd/mosquitto/).
CONF = _shipped("poker-table.conf")
ACL = _shipped("acl")
#: The table's logins in the shipped ACL.
ROLES = ("controller", "display", "console", "overlay", "homeassistant", "admin")


def new_passwords(roles: tuple[str, ...] = ROLES) -> dict[str, str]:
    return {role: secrets.token_urlsafe(12) for role in roles}


def shipped_broker(passwords: dict[str, str], *, websockets: bool = True, acl: str = ACL) -> Broker:
    """A real Mosquitto on a free loopback port with the shipped config, ACL and these logins (and a
    websockets listener for the pages); use it as a context manager."""
    require_mosquitto()
    return Broker.start(users=passwords, acl_text=acl, websockets_port=0 if websockets else None,
                        config_template=CONF)


def start_daemon(journal: Any, broker: Broker, passwords: dict[str, str], *, table: str = "t1", size: int = 6,
                 delay: int | str = 0, **demo: Any) -> Any:
    """The demo's table config on ``broker``, as its controller login; started and connected."""
    from controller.app.daemon import Daemon
    from controller.demo.config import demo_config

    cfg = demo_config(table, size=size, journal=journal, mqtt_url=f"mqtt://127.0.0.1:{broker.port}",
                      broadcast_delay=delay, **demo)
    d = Daemon(cfg, mqtt_username="controller", mqtt_password=passwords["controller"]).start()
    if d.link is None or not d.link.connected_event.wait(10):
        d.stop()  # (the failure says why: the broker's state and log, its exit code if it died)
        raise AssertionError(f"the daemon did not connect within 10 s; {broker.describe()}")
    return d


def write_table_config(directory: Path, broker: Broker, controller_password: str, *, table: str,
                       stakes: str = "", board_antennas: str = "", serial: str = "enabled = false") -> Path:
    """``directory/table.toml`` for a ``tablectl run`` process on ``broker``: a 4-seat hold'em table, two
    antennas a seat (and ``board_antennas``), no broadcast delay, the journal and the controller's
    password file (written here) beside it, no web pages."""
    (directory / "mqtt.pass").write_text(controller_password)
    antennas = "\n".join(f'{i} = "seat:{i // 2 + 1}:{i % 2}"' for i in range(8))
    cfg = directory / "table.toml"
    cfg.write_text(f"""
[table]
id = "{table}"
size = 4
game = "holdem"
rules = "robert"
{stakes}
[antennas]
{antennas}
{board_antennas}
[serial]
{serial}

[mqtt]
url = "mqtt://127.0.0.1:{broker.port}"
username = "controller"
password_file = "mqtt.pass"

[broadcast]
delay = 0

[journal]
path = "journal.sqlite"

[web]
enabled = false
""")
    return cfg


def seat_four(request: Callable[[str, dict[str, Any]], None]) -> None:
    """p1 to p4 in seats 1 to 4 and the button on seat 4, by the console's requests (``request(name, body)``)."""
    for seat in (1, 2, 3, 4):
        request("seat", {"seat": seat, "name": f"p{seat}"})
    request("set_button", {"seat": 4})


def require_mosquitto() -> None:
    """At a test module's top: skip without Mosquitto, but fail under CI (the secrecy and
    durability tests must never be skipped silently)."""
    import os

    import pytest

    if mosquitto_available():
        return
    if os.environ.get("CI"):
        pytest.fail("mosquitto is required in CI: apt-get install -y mosquitto", pytrace=False)
    pytest.skip("mosquitto not installed (apt-get install -y mosquitto)", allow_module_level=True)


def wait_until(cond: Callable[[], bool], timeout: float = TIMEOUT, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.01)


class Client:
    """A paho v2 MQTTv5 client that records what it receives."""

    def __init__(self, broker: Broker, user: str | None, password: str | None, *, name: str = "",
                 transport: str = "tcp", port: int | None = None, will: tuple[str, str] | None = None) -> None:
        self.name = name or user or "anonymous"
        self.c = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5,
                             client_id=f"{self.name}-{secrets.token_hex(3)}", transport=transport)
        if user is not None:
            self.c.username_pw_set(user, password)
        if will:
            self.c.will_set(will[0], will[1], qos=1, retain=True)
        self.c.reconnect_delay_set(min_delay=0.1, max_delay=0.5)  # type: ignore[arg-type]  # fast tests
        self.lock = threading.Lock()
        self.messages: list[MQTTMessage] = []
        self.connacks: list[ReasonCode] = []
        self.subacks: dict[int, list[ReasonCode]] = {}
        self.pubacks: dict[int, ReasonCode] = {}
        self.c.on_connect = lambda c, u, f, rc, p: self._add(self.connacks, rc)
        self.c.on_message = lambda c, u, m: self._add(self.messages, m)
        self.c.on_subscribe = lambda c, u, mid, rcs, p: self._set(self.subacks, mid, rcs)
        self.c.on_publish = lambda c, u, mid, rc, p: self._set(self.pubacks, mid, rc)
        self.c.connect_async(broker.host, port or broker.port, keepalive=5)
        self.c.loop_start()

    def _add(self, seq: list, item) -> None:
        with self.lock:
            seq.append(item)

    def _set(self, d: dict, key, value) -> None:
        with self.lock:
            d[key] = value

    # ------------------------------------------------------------------ helpers
    def wait_connack(self, n: int = 1) -> ReasonCode:
        wait_until(lambda: len(self.connacks) >= n, what=f"{self.name} CONNACK")
        return self.connacks[n - 1]

    def connected(self) -> Client:
        rc = self.wait_connack()
        assert not rc.is_failure, f"{self.name} refused: {rc}"
        return self

    def subscribe(self, topic: str) -> list[ReasonCode]:
        _, mid = self.c.subscribe(topic, qos=1)
        wait_until(lambda: mid in self.subacks, what=f"{self.name} SUBACK for {topic}")
        return self.subacks[mid]

    def publish(self, topic: str, payload: str | bytes, retain: bool = False) -> ReasonCode:
        info = self.c.publish(topic, payload, qos=1, retain=retain)
        wait_until(lambda: info.mid in self.pubacks, what=f"{self.name} PUBACK for {topic}")
        return self.pubacks[info.mid]

    def topics(self) -> set[str]:
        with self.lock:
            return {m.topic for m in self.messages}

    def got(self, topic: str, payload: bytes | None = None) -> bool:
        with self.lock:
            return any(m.topic == topic and (payload is None or m.payload == payload) for m in self.messages)

    def wait_for(self, topic: str, payload: bytes | None = None) -> None:
        wait_until(lambda: self.got(topic, payload), what=f"{self.name} to receive {topic} {payload!r}")

    def close(self) -> None:
        self.c.disconnect()
        self.c.loop_stop()

    def payloads(self, topic: str) -> list[bytes]:
        with self.lock:
            return [m.payload for m in self.messages if m.topic == topic]

    def json(self, topic: str) -> list[dict]:
        return [json.loads(p) for p in self.payloads(topic) if p]
