"""Issue 26 item 4, table diagnostics through the whole daemon: the emulated antenna board on a pty,
a real Mosquitto.  Cards dealt (reads on their antennas), a reader that stops answering (FAULT 1),
nine tags on one antenna (a collision, FAULT 3), a card the camera saw with no tag read (a miss) and
the scan cycle from the board's heartbeats, all on the retained ``diagnostics`` topic, valid by its
schema, with no tag UID in it."""

from __future__ import annotations

import json

from controller.mqtt.broker import Broker
from controller.mqtt.contract import validate
from tests.app.rfid_rig import rfid_table
from tests.mqtt_util import Client, require_mosquitto, wait_until


def _latest(client: Client, topic: str) -> dict | None:
    with client.lock:
        got = [m for m in client.messages if m.topic == topic and m.payload]
    return json.loads(got[-1].payload) if got else None


def test_reads_misses_collisions_dead_readers_and_the_scan_cycle_on_the_diagnostics_topic(tmp_path) -> None:
    require_mosquitto()
    with Broker.start() as broker, rfid_table(broker, tmp_path / "journal.sqlite", tmp_path / "tty") as rig:
        d, emu = rig.daemon, rig.emulator
        zones = d.config.zone_map()
        shoe = next(a for a, slot in zones.antennas.items() if slot.zone.name == "shoe")
        for n in range(3):
            rig.deal(n)
        emu.reader(20, False)  # type: ignore[attr-defined]
        for i in range(9):  # more than the board reads on one antenna (MAX_TAGS_PER_ANTENNA 8)
            emu.place(shoe, f"0C{i:02X}77DD")  # type: ignore[attr-defined]
        serial = d.sources["serial"]
        wait_until(lambda: serial.diagnostics.collisions[shoe] == 1 and 20 in serial.diagnostics.not_answering,
                   timeout=10, what="the collision and the dead reader")
        # The camera saw a card on the seat dealt first, whose other antenna holds no tag: a miss
        # there; and one on a seat with no card yet (two empty antennas): the seat's, not an antenna's.
        first = rig.slots[0][0]
        serial.camera_missed(f"seat:{first}")
        serial.camera_missed("seat:4")
        sub = Client(broker, None, None, name="service").connected()
        sub.subscribe(d.topics.diagnostics)

        def ready() -> bool:
            got = _latest(sub, d.topics.diagnostics)
            return bool(got and got["rfid"]["totals"]["misses"] == 2 and got["rfid"]["not_answering"] == [20]
                        and got["rfid"]["scan"]["cycle_ms"])

        wait_until(ready, timeout=10, what="the diagnostics published")
        got = _latest(sub, d.topics.diagnostics)
        assert got is not None
        validate("diagnostics", got)
        rfid = got["rfid"]
        rows = {row["antenna"]: row for row in rfid["antennas"]}
        dealt = [(seat - 1) * 2 + rnd for seat, rnd in rig.slots[:3]]
        assert all(rows[a]["reads"] == 1 and rows[a]["zone"].startswith("seat:") for a in dealt), rows
        assert rows[shoe]["collisions"] == 1 and rows[shoe]["reads"] == 8, rows[shoe]
        assert rows[20]["answering"] is False and rows[20]["reader_faults"] == 1
        assert [a for a, row in rows.items() if row["misses"]] == [(first - 1) * 2 + 1], rows
        assert rfid["zone_misses"] == {"seat:4": 1}
        # The emulator scans every 10 ms: the cycle from its heartbeats is that or longer (a loaded machine).
        assert 9 <= rfid["scan"]["cycle_ms"] < 1000 and rfid["scan"]["cycles"] > 0, rfid["scan"]
        assert rfid["link"]["synced"] is True
        assert got["camera"] is None
        text = json.dumps(got)
        assert not any(uid in text for uid in rig.uids.values()), "no tag UID on the topic"
        # The reader answers again: the next publish says so.
        emu.reader(20, True)  # type: ignore[attr-defined]
        wait_until(lambda: (_latest(sub, d.topics.diagnostics) or {}).get("rfid", {}).get("not_answering") == [],
                   timeout=10, what="the reader answering again")
        sub.close()
