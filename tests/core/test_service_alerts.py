"""Alerts the service raises for places that are not seats validate against the alert schema."""

from __future__ import annotations

import pytest

from controller.mqtt import contract as mc
from controller.rules.cards import Card
from controller.rules.events import CameraReport, Deal, NewHand, SeatPlayer, SetButton, UnknownTagRead
from controller.rules.table import Table
from controller.service import TableService


def heads_up_hand() -> TableService:
    """A six-seat table with p1 and p2 seated, the button on 2, a hand begun."""
    svc = TableService(Table(size=6))
    for seat in (1, 2):
        svc.submit(SeatPlayer(seat, f"p{seat}"))
    svc.submit(SetButton(2))
    svc.submit(NewHand())
    return svc


def _hand_in_progress() -> TableService:
    svc = heads_up_hand()
    svc.submit(Deal(1, Card.parse("Ah")))
    return svc


def _published_alerts(svc: TableService, event) -> list[dict]:
    """The alert payloads as the publisher sends them: on ``alert`` and inside ``event/ruling``."""
    alerts = [o.payload for o in svc.submit(event, source="camera") if o.kind == "alert"]
    for payload in alerts:
        mc.validate("alert", payload)
        mc.validate("event", mc.event_payload("ruling", seq=payload["seq"], ts=payload["ts"],
                                              hand_id=payload["hand_id"] or 1, alert=payload))
    return alerts


@pytest.mark.parametrize("zone", ["board", "burn", "muck"])
def test_a_camera_report_on_a_place_that_is_no_seat_publishes_a_valid_alert(zone: str) -> None:
    svc = _hand_in_progress()
    (alert,) = _published_alerts(svc, CameraReport("card_unread", zone))
    assert alert["seat"] is None and alert["reason"] == "card_unread"
    assert {"board": "the board", "burn": "the burn pile", "muck": "the muck"}[zone] in alert["message"]


def test_a_camera_report_on_a_seat_names_the_seat() -> None:
    svc = _hand_in_progress()
    (alert,) = _published_alerts(svc, CameraReport("camera_mismatch", "seat:1", None, "tag read Kd"))
    assert alert["seat"] == 1 and "seat 1" in alert["message"]


def test_an_unknown_tag_on_a_reader_zone_publishes_a_valid_alert() -> None:
    svc = _hand_in_progress()
    (alert,) = _published_alerts(svc, UnknownTagRead("enroll", "04A1B2C3D4E5F6"))
    assert alert["seat"] is None and alert["reason"] == "unknown_tag"
