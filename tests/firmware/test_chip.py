"""The firmware on the chip's own binary, end to end: one card from the felt to the subscriber.

rp2040js (npm) runs the official MicroPython v1.22.0 binary for the RP2040 with the unmodified
``main.py``, ``mfrc522.py`` and ``bridge_proto.py`` on its littlefs; the MFRC522 model answers SPI0,
each reader selected through its own GPIO as wired; the board's USB CDC line is a pty the daemon
opens as it opens /dev/ttyACM0; the daemon publishes to a real Mosquitto.  Followed: the board's
HELLO, a tag laid on the first seat's antenna, its TAG_ARRIVE, the daemon's ``event/card``.
"""

from __future__ import annotations

import json
import os
import threading
import time

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from firmware_bridge.chip.harness import missing
from firmware_bridge.firmware import bridge_proto as fw
from tests.mqtt_util import require_mosquitto

require_mosquitto()

if missing():
    if os.environ.get("CI"):
        pytest.fail(f"the chip emulation is required in CI: {missing()}", pytrace=False)
    pytest.skip(missing() or "", allow_module_level=True)

UID = "04215EED21A080"


def _frames(writes: list[tuple[float, float, bytes]]) -> list[tuple[float, int, bytes]]:
    """(chip us when the frame's last byte left the board, type, body) of every frame."""
    reader = fw.FrameReader()
    out = []
    for t, _wall, data in writes:
        for i in range(len(data)):
            for _v, mtype, _seq, body in reader.feed(data[i:i + 1]):
                out.append((t, mtype, body))
    return out


def test_one_card_from_the_felt_to_the_subscriber(tmp_path) -> None:
    from controller.app.daemon import Daemon
    from controller.demo.config import demo_config
    from controller.mqtt.broker import Broker
    from controller.rules.cards import standard_deck
    from controller.rules.decks import Deck, DeckRegistry
    from controller.rules.events import NewHand, SeatPlayer, SetButton
    from firmware_bridge.chip.realtime import ChipProcess

    deck = Deck("A")
    cards = {}
    for i, card in enumerate(standard_deck()):
        uid = f"04{i:02X}5EED{i:02X}A080"
        deck.add(uid, card)
        cards[uid] = card
    link = str(tmp_path / "ttyACM0")
    with Broker.start() as broker:
        config = demo_config("chip", size=2, journal=tmp_path / "j.sqlite",
                             mqtt_url=f"mqtt://127.0.0.1:{broker.port}", broadcast_delay=0)
        # The emulated chip runs 4-10x slower than real time: its 500 ms heartbeat comes every few seconds.
        config = config.model_copy(update={"serial": config.serial.model_copy(update={"heartbeat_timeout": 120.0})})
        antennas = len(config.zone_map().antennas)
        got: list[tuple[str, dict]] = []
        lock = threading.Lock()
        sub = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2, client_id="chip-test-sub")

        def on_message(_c, _u, m) -> None:
            with lock:
                got.append((m.topic, json.loads(m.payload) if m.payload else {}))

        sub.on_message = on_message
        sub.connect("127.0.0.1", broker.port)
        sub.subscribe(f"{config.topic}/event/#", qos=1)
        sub.loop_start()
        chip = ChipProcess(link, readers=antennas, mux=False)
        d = None
        try:
            d = Daemon(config, registry=DeckRegistry([deck]), backends={"serial": link}).start()
            rfid = d.sources["serial"]
            assert rfid.bridge.wait_synced(90), "the chip's HELLO never synchronised the link"
            d.submit(SeatPlayer(1, "p1"))
            d.submit(SeatPlayer(2, "p2"))
            d.submit(SetButton(2))
            d.submit(NewHand())
            engine = d.service.engine
            first = engine.order[0]
            zone_map = rfid.pipeline.zones.zone_map
            antenna = next(a for a, s in zone_map.antennas.items()
                           if s.zone.kind == "seat" and s.zone.seat == first and s.index == 0)
            chip.place(1, antenna, UID)
            deadline = time.monotonic() + 90
            card_msg = None
            while card_msg is None and time.monotonic() < deadline:
                with lock:
                    card_msg = next((b for t, b in got if t.endswith("/event/card")), None)
                time.sleep(0.05)
            moves, writes, _now, _wall, _scratch = chip.times()
            hole = engine.hole_cards().get(first)
        finally:
            if d is not None:
                d.stop()
            chip.stop()
            sub.loop_stop()
            sub.disconnect()
    frames = _frames(writes)
    hello = next(body for _t, mtype, body in frames if mtype == fw.T_HELLO)
    major, minor, patch, count = hello[:4]
    assert (major, minor, patch) == fw.FIRMWARE_VERSION and count == antennas
    assert hello[8] == fw.RESET_POWER_ON
    arrive = [(t, body) for t, mtype, body in frames if mtype == fw.T_TAG_ARRIVE]
    assert [body for _t, body in arrive] == [fw.encode_uid_entry(antenna, bytes.fromhex(UID))]
    landed_to_usb_ms = (arrive[0][0] - moves[1]) / 1000
    assert 0 < landed_to_usb_ms < 500, landed_to_usb_ms
    assert card_msg is not None, "no event/card reached the subscriber"
    assert (card_msg["seat"], card_msg["kind"], card_msg["face"], card_msg["source"]) == (first, "card", "down", "rfid")
    assert hole == [cards[UID].label()]  # the secret side: the engine holds the very card laid
