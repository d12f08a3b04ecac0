"""Issue 26 item 4 in a room: each table's readers reach the room's floor over NATS. A real
nats-server (JetStream, TLS, the shipped node config and per-table users, one node), a real
PostgreSQL, table t1's own Mosquitto (the shipped config and ACL) bridged by the shipped
``mosquitto-bridge.conf``, and table t2 straight on the room's MQTT listener with its own login
(what its bridge would forward). The floor's ``/api/tables`` carries each table's latest
``diagnostics``; the room keeps only the latest per table, so a floor started again shows every
table's readers at once, without a table publishing again; the floor page's tile says which reader
is not answering (Chromium)."""

from __future__ import annotations

import asyncio
import json
import secrets
import ssl
import urllib.request
from typing import Any

import paho.mqtt.client as mqtt

from controller.floor.rig import ACL, CONF
from controller.floor.room import table_broker
from controller.floor.service import FloorService
from controller.floor.sources import DIAGNOSTICS_STREAM, NatsSettings, connect_nats, wait_for
from controller.mqtt.contract import Topics
from controller.mqtt.link import MqttLink, MqttSettings
from tests.floor.room_util import room
from tests.floor.test_floor_page import TIMEOUT_MS
from tests.floor.test_room_nats import _needs_room
from tests.web.test_display_service import _payload
from tests.web_helpers import launch_browser, needs_browser, watch_console


def _readers(floor: FloorService) -> dict[str, Any]:
    assert floor.server is not None
    with urllib.request.urlopen(floor.server.url + "/api/tables", timeout=5) as r:
        return {t["table_id"]: t["readers"] for t in json.loads(r.read())}


def _kept(settings: NatsSettings) -> dict[str, int]:
    """Messages the room's diagnostics stream holds, per subject."""
    async def ask() -> dict[str, int]:
        nc = await connect_nats(settings, name="test-readers")
        try:
            info = await nc.jetstream(timeout=5).stream_info(DIAGNOSTICS_STREAM, subjects_filter=">")
            return dict(info.state.subjects or {})
        finally:
            await nc.close()

    return asyncio.run(ask())


def test_the_rooms_floor_shows_each_tables_latest_readers_and_keeps_them_over_a_restart(tmp_path) -> None:
    needs_browser()
    _needs_room()
    passwords = {"t1": secrets.token_urlsafe(9), "t2": secrets.token_urlsafe(9)}
    users = {"controller": secrets.token_urlsafe(8)}
    with room(passwords) as (pg, cluster, stack):
        assert cluster.pki is not None
        settings = NatsSettings(servers=cluster.servers, user="floor", password=cluster.floor_password,
                                ca=str(cluster.pki.ca), replicas=1)
        floor = FloorService(db=pg.url, nats=settings).start()  # the floor makes the streams first
        stack.callback(lambda: floor.stop())  # the one running at the end (it is started again below)
        wait_for(floor.source.connected.is_set, 20, "the floor on the room")

        # t1: its own Mosquitto and the shipped bridge; the daemon's link publishes its diagnostics
        broker = table_broker("t1", users, ACL, cluster, room_password=passwords["t1"], config_template=CONF)
        stack.callback(broker.stop)
        topics = Topics("poker", "t1")
        link = MqttLink(MqttSettings(url=broker.url, username="controller", password=users["controller"],
                                     client_id="ctl-t1"), availability_topic=topics.availability)
        link.start()
        stack.callback(link.stop)
        assert link.connected_event.wait(5)
        dead = _payload("t1")  # antenna 5 not answering, a miss, a collision, a 12.5 ms scan cycle
        link.publish(topics.diagnostics, dead, retain=True)

        # t2: straight on the room's MQTT listener as its own login
        t2 = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="table-t2-x", protocol=mqtt.MQTTv311)
        t2.username_pw_set("table-t2", passwords["t2"])
        t2.tls_set(ca_certs=str(cluster.pki.ca), cert_reqs=ssl.CERT_REQUIRED)
        t2.connect(*cluster.mqtt_addresses[0], keepalive=10)
        stack.callback(t2.disconnect)
        stack.callback(t2.loop_stop)
        t2.loop_start()
        healthy = _payload("t2")
        healthy["rfid"]["not_answering"] = []
        t2.publish("poker/t2/availability", "online", qos=1, retain=True)
        t2.publish("poker/t2/diagnostics", json.dumps(healthy), qos=1, retain=True).wait_for_publish(10)

        wait_for(lambda: {t: (r or {}).get("not_answering") for t, r in _readers(floor).items()}
                 == {"t1": [5], "t2": []}, 20, "both tables' readers on the room's /api/tables")
        got = _readers(floor)["t1"]
        assert got["misses"] == 1 and got["collisions"] == 1 and got["cycle_ms"] == 12.5 and got["synced"], got

        # t1's reader answers again: the floor shows the new reading; the room keeps one per table
        mended = json.loads(json.dumps(dead))
        mended["rfid"]["not_answering"] = []
        mended["ts"] += 1
        link.publish(topics.diagnostics, mended, retain=True)
        wait_for(lambda: _readers(floor)["t1"]["not_answering"] == [], 20, "t1's mended reader on the floor")
        assert _kept(settings) == {"poker.t1.diagnostics": 1, "poker.t2.diagnostics": 1}

        # The floor started again: each table's latest at once, though no table publishes again.
        floor.stop()
        floor = FloorService(db=pg.url, nats=settings).start()
        wait_for(lambda: {t: (r or {}).get("ts") for t, r in _readers(floor).items()}
                 == {"t1": mended["ts"], "t2": healthy["ts"]}, 20, "the latest readers after the floor's restart")
        assert floor.source.diagnostics == 2  # the latest of each table, not their history

        # ... and the room's floor page says it on t1's tile.
        link.publish(topics.diagnostics, dead, retain=True)
        wait_for(lambda: _readers(floor)["t1"]["not_answering"] == [5], 20, "t1's dead reader again")
        with launch_browser({"width": 1100, "height": 800}) as ctx:
            page = ctx.new_page()
            errors = watch_console(page)
            page.goto(floor.url)
            line = page.wait_for_selector('.tile[data-table="t1"] .readers.trouble', timeout=TIMEOUT_MS)
            assert "antenna 5 not answering" in line.inner_text(), line.inner_text()
            assert not errors, errors
