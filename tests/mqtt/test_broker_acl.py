"""The shipped broker config and ACL, on a REAL Mosquitto with real paho-mqtt v2 clients.

The broker runs ``systemd/mosquitto/poker-table.conf`` and ``systemd/mosquitto/acl`` from
this repository (ports and file paths substituted by ``controller.broker.render_config``),
so what is tested is what gets installed.  Secrecy is the point: hole cards must never
reach the display, the console, the overlay (before the broadcast delay) or an anonymous
client.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator

import pytest

try:
    import paho.mqtt.client  # noqa: F401  (fail early with a clear message)
except ImportError:  # pragma: no cover - CI must have it
    if os.environ.get("CI"):
        pytest.fail("paho-mqtt>=2 is required: pip install 'paho-mqtt>=2'", pytrace=False)
    pytest.skip("paho-mqtt not installed", allow_module_level=True)

from paho.mqtt.packettypes import PacketTypes  # noqa: E402
from paho.mqtt.reasoncodes import ReasonCode  # noqa: E402

from controller.mqtt.broker import Broker  # noqa: E402
from controller.mqtt.contract import Topics  # noqa: E402
from tests.mqtt_util import ACL, CONF, Client, require_mosquitto, shipped_broker, wait_until  # noqa: E402

require_mosquitto()

ROLES = ("controller", "display", "console", "overlay")
T = Topics("poker", "t1")
TIMEOUT = 5.0


EVERY_TOPIC = [
    T.availability, T.state, *(T.event(k) for k in ("hand_start", "card", "hand_end")), T.alert, T.alert_active,
    T.private_holecards, T.broadcast("holecards"), T.broadcast("state"), T.broadcast("equity"),
    T.request("new_hand"), T.response, "poker/t1/debug/anything",
]
PUBLIC = {T.availability, T.state, T.event("hand_start"), T.event("card"), T.event("hand_end"), T.alert,
          T.alert_active}
OVERLAY = {T.availability, T.broadcast("holecards"), T.broadcast("state"), T.broadcast("equity")}


@pytest.fixture(scope="module")
def passwords() -> dict[str, str]:
    return {role: secrets.token_urlsafe(12) for role in ROLES}


@pytest.fixture(scope="module")
def broker(passwords) -> Iterator[Broker]:
    with shipped_broker(passwords) as b:
        yield b


@pytest.fixture
def clients(broker, passwords) -> Iterator[Callable[..., Client]]:
    made: list[Client] = []

    def make(role: str | None, *, password: str | None = None, **kw) -> Client:
        pw = password if password is not None else passwords.get(role or "", None)
        c = Client(broker, role, pw, **kw)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


def test_shipped_config_is_locked_down() -> None:
    words = [ln.split() for ln in CONF.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert ["allow_anonymous", "false"] in words
    assert ["listener", "1883", "127.0.0.1"] in words
    assert ["listener", "9001"] in words and ["protocol", "websockets"] in words
    assert ["persistence", "true"] in words
    assert any(w[0] == "password_file" for w in words) and any(w[0] == "acl_file" for w in words)
    assert "%" not in ACL


def test_each_role_reads_only_its_topics(clients) -> None:
    ctl = clients("controller").connected()
    watchers = {role: clients(role).connected() for role in ("display", "console", "overlay")}
    for w in watchers.values():
        w.subscribe("#")
        w.subscribe(T.private_holecards)  # asking by name does not help either
    for i, topic in enumerate(EVERY_TOPIC):
        assert not ctl.publish(topic, f"secret-{i}", retain=topic in (T.state, T.private_holecards)).is_failure
    # Markers published last: once a watcher has its marker, everything before it was delivered.
    ctl.publish(T.event("street"), "END")
    ctl.publish(T.broadcast("state"), "END")
    for role in ("display", "console"):
        watchers[role].wait_for(T.event("street"), b"END")
    watchers["overlay"].wait_for(T.broadcast("state"), b"END")
    assert watchers["display"].topics() == PUBLIC | {T.event("street")}
    assert watchers["console"].topics() == PUBLIC | {T.event("street"), T.response}
    assert watchers["overlay"].topics() == OVERLAY
    for w in watchers.values():
        assert not w.got(T.private_holecards)


def test_retained_secrets_do_not_reach_a_late_subscriber(clients) -> None:
    ctl = clients("controller").connected()
    ctl.publish(T.private_holecards, '{"seats": {"3": ["Ah", "Kd"]}}', retain=True)
    ctl.publish(T.broadcast("holecards"), '{"seats": {"3": ["Ah", "Kd"]}}', retain=True)
    ctl.publish(T.state, "retained-state", retain=True)
    late = clients("display").connected()
    late.subscribe("#")
    late.wait_for(T.state, b"retained-state")
    ctl.publish(T.event("street"), "END2")
    late.wait_for(T.event("street"), b"END2")
    assert not late.got(T.private_holecards) and not late.got(T.broadcast("holecards"))
    overlay = clients("overlay").connected()
    overlay.subscribe("#")
    overlay.wait_for(T.broadcast("holecards"))
    assert not overlay.got(T.private_holecards) and not overlay.got(T.state)


def test_only_the_console_may_send_requests(clients) -> None:
    ctl = clients("controller").connected()
    ctl.subscribe(T.requests)
    ctl.subscribe(T.all)
    display = clients("display").connected()
    overlay = clients("overlay").connected()
    console = clients("console").connected()
    for spoofer in (display, overlay):
        rc = spoofer.publish(T.request("new_hand"), f"from-{spoofer.name}")
        assert rc.is_failure, f"{spoofer.name} request was accepted: {rc}"  # MQTT v5: PUBACK 'Not authorized'
        spoofer.publish(T.state, "spoofed-state")
        spoofer.publish(T.broadcast("holecards"), "spoofed-cards")
    console.subscribe(T.response)
    assert not console.publish(T.request("new_hand"), '{"transaction": "t1"}').is_failure
    assert console.publish(T.state, "spoofed-by-console").is_failure
    ctl.wait_for(T.request("new_hand"), b'{"transaction": "t1"}')
    ctl.publish(T.response, '{"transaction": "t1", "ok": true}')
    console.wait_for(T.response)
    assert {m.payload for m in ctl.messages if m.topic == T.request("new_hand")} == {b'{"transaction": "t1"}'}
    assert not any(m.payload.startswith(b"spoofed") for m in ctl.messages)


@pytest.mark.parametrize("user,password", [(None, None), ("display", "wrong"), ("nobody", "x")])
def test_unknown_or_anonymous_clients_are_refused(clients, user, password) -> None:
    c = clients(user, password=password, name=f"intruder-{user}")
    rc = c.wait_connack()
    assert rc.is_failure, rc
    assert rc.value in (134, 135), rc  # bad user name or password / not authorized


def test_the_will_announces_offline(clients) -> None:
    display = clients("display").connected()
    display.subscribe(T.availability)
    ctl = clients("controller", will=(T.availability, "offline")).connected()
    ctl.publish(T.availability, "online", retain=True)
    display.wait_for(T.availability, b"online")
    ctl.c.disconnect(reasoncode=ReasonCode(PacketTypes.DISCONNECT, "Disconnect with will message"))
    display.wait_for(T.availability, b"offline")


def test_display_over_websockets_sees_only_public_topics(broker, clients) -> None:
    display = clients("display", transport="websockets", port=broker.websockets_port, name="ws-display").connected()
    display.subscribe("#")
    ctl = clients("controller").connected()
    ctl.publish(T.private_holecards, "ws-secret")
    ctl.publish(T.broadcast("holecards"), "ws-secret")
    ctl.publish(T.event("board"), "ws-public")
    display.wait_for(T.event("board"), b"ws-public")
    assert not display.got(T.private_holecards) and not display.got(T.broadcast("holecards"))


def test_broker_restart_on_the_same_port(passwords) -> None:
    with shipped_broker(passwords, websockets=False) as b:
        port = b.port
        ctl = Client(b, "controller", passwords["controller"]).connected()
        display = Client(b, "display", passwords["display"]).connected()
        try:
            ctl.publish(T.state, "before-restart", retain=True)
            display.subscribe(T.state)
            display.wait_for(T.state, b"before-restart")
            b.restart()
            assert b.port == port and b.running
            wait_until(lambda: len(ctl.connacks) >= 2 and ctl.c.is_connected(), what="controller to reconnect")
            assert not ctl.connacks[1].is_failure
            # Retained state survived the outage (persistence true in the shipped config).
            late = Client(b, "display", passwords["display"], name="late-display").connected()
            late.subscribe(T.state)
            late.wait_for(T.state, b"before-restart")
            late.close()
            ctl.publish(T.state, "after-restart", retain=True)
            wait_until(lambda: len(display.connacks) >= 2, what="display to reconnect")
            display.subscribe(T.state)  # a clean session: subscribe again after reconnecting
            display.wait_for(T.state, b"after-restart")
        finally:
            ctl.close()
            display.close()


def test_broker_reports_a_missing_binary(monkeypatch) -> None:
    from controller.mqtt import broker as broker_mod

    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(broker_mod, "_SBIN", ())
    with pytest.raises(broker_mod.BrokerError, match="apt-get install"):
        Broker.start()


def test_no_local_login_may_write_the_room_floors_report(clients) -> None:
    """``floor/<table>/stored`` comes only over the room's bridge (what the floor stored: a table
    resends the rest); a local login that could write it could make the daemon skip a resend."""
    ctl = clients("controller").connected()
    ctl.subscribe("floor/t1/stored")
    ctl.subscribe(T.event("street"))
    for role in ROLES:
        rc = clients(role).connected().publish("floor/t1/stored", f'{{"table_id": "t1", "by": "{role}"}}')
        assert rc.is_failure, f"{role} wrote the floor's report: {rc}"
    ctl.publish(T.event("street"), "END3")
    ctl.wait_for(T.event("street"), b"END3")
    assert not ctl.got("floor/t1/stored")
