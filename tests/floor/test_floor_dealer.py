"""Dealer sign-in on the real daemon: an NFC badge on the table's NFC reader, or the console's
``request/dealer``; journaled, published on ``event/dealer``, carried by the next hand."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from controller.app.config import validate_config
from controller.app.daemon import Daemon
from controller.journal import Journal
from controller.mqtt.contract import Topics, validate
from controller.rules.events import SeatPlayer, SetButton
from tests.mqtt_util import Client, require_mosquitto, shipped_broker, wait_until

require_mosquitto()
REPO = Path(__file__).resolve().parents[2]
T = Topics("poker", "t1")


class Pad:
    """The table's NFC pad (the daemon's reader factory hands us its callback)."""

    def __init__(self, zone: str, path: str, on_tag: Any) -> None:
        self.on_tag = on_tag

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


def test_badge_and_console_sign_ins_are_journaled_published_and_carried(tmp_path: Path) -> None:
    users = {r: secrets.token_urlsafe(8) for r in ("controller", "console", "floor")}
    pads: list[Pad] = []
    with shipped_broker(users, websockets=False) as broker:
        config = validate_config({
            "table": {"id": "t1", "size": 6, "game": "holdem"},
            "stakes": {"small_blind": 1, "big_blind": 2, "ante": 0},
            "serial": {"enabled": False},
            "mqtt": {"url": f"mqtt://127.0.0.1:{broker.port}"},
            "broadcast": {"delay": 0},
            "journal": {"path": str(tmp_path / "journal.sqlite")},
            "nfc": {"readers": [{"zone": "pad", "path": "usb"}], "badges": {"04A1B2C3": "Dana"}},
        })
        d = Daemon(config, mqtt_username="controller", mqtt_password=users["controller"],
                   backends={"nfc": lambda zone, path, on_tag: pads.append(Pad(zone, path, on_tag)) or pads[-1]})
        floor = Client(broker, "floor", users["floor"], name="floor")
        console = Client(broker, "console", users["console"], name="console")
        d.start()
        try:
            wait_until(lambda: bool(floor.connacks and console.connacks), what="clients connected")
            floor.subscribe(T.events)
            pads[0].on_tag(SimpleNamespace(uid="04a1b2c3"))  # the badge on the pad
            wait_until(lambda: bool(floor.json(T.event("dealer"))), what="event/dealer from the badge")
            first = floor.json(T.event("dealer"))[0]
            validate("event", first)
            assert (first["dealer"], first["badge"], first["source"]) == ("Dana", "04a1b2c3", "nfc")
            pads[0].on_tag(SimpleNamespace(uid="ffff0000"))  # not a badge (nor an enrolled card): nothing
            console.publish(T.request("dealer"), json.dumps({"dealer": "Omar"}))
            wait_until(lambda: len(floor.json(T.event("dealer"))) == 2, what="event/dealer from the console")
            assert floor.json(T.event("dealer"))[1]["source"] == "console"
            for seat in (1, 2, 3):
                d.submit(SeatPlayer(seat, f"p{seat}"))
            d.submit(SetButton(3))
            console.publish(T.request("new_hand"), b"{}")
            wait_until(lambda: bool(floor.json(T.event("hand_start"))), what="hand_start")
            assert floor.json(T.event("hand_start"))[0]["dealer"] == "Omar"
        finally:
            d.stop()
            floor.close()
            console.close()
        # Journaled: a restart rebuilds the dealer with the table.
        with Journal(tmp_path / "journal.sqlite") as j:
            kinds = [e.event.kind for e in j.entries()]
        assert kinds.count("dealer_sign_in") == 2
