"""Issue 27 item 7: Home Assistant's MQTT discovery configs and what its templates make of the
payloads the controller really publishes.

* every config names its entity with ``default_entity_id`` (``<domain>.<slug>``), not the
  ``object_id`` Home Assistant stops honouring in 2026.4;
* the *Active alert* sensor has a valid state from the start (``none``, its attributes ``{}``), takes
  an alert's reason and fields when one is up, and goes back to ``none`` and ``{}`` when it is
  acknowledged: never an empty payload for the JSON attributes.

The templates are rendered with Jinja2 (the engine of Home Assistant's templates, ``value`` and
``value_json`` as it binds them) over the state payloads the publisher builds
(``contract.state_payload`` of the service's public state), validated against the state schema.
Home Assistant's own discovery schemas judge the same configs in tests/app/test_home_assistant_schema.py
(Home Assistant needs Python 3.13: it runs in a root of its own, scripts/home-assistant-root).
"""

from __future__ import annotations

import json
import random

import pytest

from controller.app.config import validate_config
from controller.app.daemon import discovery_messages
from controller.mqtt.contract import Topics, state_payload, validate
from controller.rules.events import Acknowledge, SeatPlayer
from controller.rules.scenario import Scenario
from controller.rules.table import Table
from controller.service import TableService
from controller.sim import dealer as dealer_sim
from tests.web_helpers import submit_hand

jinja2 = pytest.importorskip("jinja2")

CONFIG = validate_config({"table": {"id": "t-9", "size": 10, "game": "holdem"},
                          "stakes": {"small_blind": 1, "big_blind": 2}})
TOPICS = Topics("poker", "t-9")


def _configs() -> dict[str, dict]:
    return {topic.split("/")[-2]: payload for topic, payload in discovery_messages(CONFIG, TOPICS)}


def _render(template: str, payload: dict) -> str:
    raw = json.dumps(payload)
    return jinja2.Environment().from_string(template).render(value=raw, value_json=json.loads(raw)).strip()


def _state(svc: TableService) -> dict:
    view = svc.public_state()
    payload = state_payload(seq=svc.seq, ts=1.0, table_id="t-9", table=view["table"], hand_id=view["hand_id"],
                            hand=view["hand"], alert=view["alert"])
    validate("state", payload)
    return payload


def test_each_entity_is_named_by_default_entity_id() -> None:
    for topic, payload in discovery_messages(CONFIG, TOPICS):
        component = topic.split("/")[1]
        assert "object_id" not in payload, topic
        assert payload["default_entity_id"] == f"{component}.{payload['unique_id']}", topic
        assert payload["default_entity_id"] == f"{component}.poker_table_t_9_{topic.split('/')[-2]}"


def test_the_active_alert_sensor_from_start_to_acknowledgement() -> None:
    alert = _configs()["alert"]
    assert alert["state_topic"] == TOPICS.state and alert["json_attributes_topic"] == TOPICS.state

    def sensor(payload: dict) -> tuple[str, dict]:
        attrs = json.loads(_render(alert["json_attributes_template"], payload))
        assert isinstance(attrs, dict)  # Home Assistant takes a JSON object as the attributes
        return _render(alert["value_template"], payload), attrs

    svc = TableService(Table(size=10))
    assert sensor(_state(svc)) == ("none", {})  # the retained state at start: a valid state, not "unknown"
    for seed in range(1, 100):
        hand = dealer_sim.legal_hand(random.Random(seed), game="holdem", rules="robert", event="cash")
        bad = dealer_sim.corrupt(random.Random(seed), hand, kind="extra_card")
        if bad is not None:
            break
    scenario = Scenario.from_dict(bad)
    for s in scenario.setup.seats:
        svc.submit(SeatPlayer(s, f"P{s}"))
    submit_hand(svc, scenario, skip_rejected=True, until=lambda: bool(svc.alerts))
    state, attrs = sensor(_state(svc))
    assert state == svc.alerts[0].payload()["reason"] == "extra_card"
    assert attrs["reason"] == "extra_card" and attrs["citations"]
    svc.submit(Acknowledge())
    assert not svc.alerts
    assert sensor(_state(svc)) == ("none", {})  # cleared: the attributes are emptied, not left stale


def test_hand_number_and_game_read_the_state() -> None:
    configs = _configs()
    payload = _state(TableService(Table(size=10, game="omaha")))
    assert _render(configs["game"]["value_template"], payload) == "omaha"
    assert _render(configs["hand_number"]["value_template"], payload) == "0"
    assert {c.get("state_topic") for c in configs.values()} == {TOPICS.availability, TOPICS.state}
