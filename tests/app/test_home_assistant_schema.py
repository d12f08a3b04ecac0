"""Issue 27 item 7, with Home Assistant itself: its MQTT discovery accepts every config the
controller publishes.

Home Assistant 2026.2 (the last release for Python 3.13; the ones that know ``default_entity_id``
need 3.13) runs in the root ``scripts/home-assistant-root`` builds from Debian 13 and PyPI
(scripts/bootstrap runs it).  ``tests/app/ha_discovery_check.py`` runs there on the configs
:func:`discovery_messages` makes: Home Assistant's discovery topic pattern reads each topic, its
abbreviations are expanded, and the platform's own ``DISCOVERY_SCHEMA`` (sensor, binary_sensor)
validates the payload.  The schema drops keys it does not know without a word, so the test also
asserts that nothing was dropped, and that the entity id Home Assistant gives each entity is the
one ``default_entity_id`` asks for; each template is parsed by Home Assistant's own template
environment.  A config Home Assistant rejects is shown to be rejected (the
check is not a rubber stamp).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from controller.app.config import validate_config
from controller.app.daemon import discovery_messages
from controller.mqtt.contract import Topics

REPO = Path(__file__).resolve().parents[2]
ROOT = REPO / ".venv" / "ha" / "root"
CHECK = Path(__file__).with_name("ha_discovery_check.py")


def _judge(messages: list[tuple[str, dict]]) -> list[dict]:
    if not (ROOT / "ha" / "pyvenv.cfg").is_file():
        why = "Home Assistant's root is missing: run scripts/home-assistant-root (scripts/bootstrap does)"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    if os.geteuid() != 0:
        why = "chroot into Home Assistant's root needs root (CI and the bootstrap run as root)"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    run = subprocess.run(["chroot", str(ROOT), "/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "/ha/bin/python", "-c",
                          CHECK.read_text()], input=json.dumps(messages), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    return [json.loads(line) for line in run.stdout.splitlines()]


def _messages(table: str = "t-9") -> list[tuple[str, dict]]:
    config = validate_config({"table": {"id": table, "size": 10, "game": "holdem"},
                              "stakes": {"small_blind": 1, "big_blind": 2}})
    return discovery_messages(config, Topics("poker", table))


def _bad() -> list[tuple[str, dict]]:
    """Three configs Home Assistant must not take as they are."""
    (topic, good), = [(t, p) for t, p in _messages() if t.endswith("/hand_number/config")]
    return [(topic, dict(good, state_class="sometimes")), (topic, dict(good, colour="green")),
            (topic, dict(good, value_template="{{ value_json.table.hand_number "))]


@pytest.fixture(scope="module")
def verdicts() -> list[dict]:
    """One run of Home Assistant for the module (its import costs seconds)."""
    return _judge(_messages() + _bad())


def test_home_assistant_accepts_every_discovery_config(verdicts) -> None:
    messages = _messages()
    assert len(verdicts) == len(messages) + 3 and len(messages) == 4
    for (topic, payload), v in zip(messages, verdicts[:4], strict=True):
        assert v["topic"] == topic
        assert v["ha"].startswith("2026."), v
        assert v["error"] is None, v
        assert v["dropped"] == [], v  # every key we send is one Home Assistant knows
        assert v["component"] == topic.split("/")[1] and v["object_id"] == topic.split("/")[-2]
        assert v["entity_id"] == payload["default_entity_id"], v


def test_a_config_home_assistant_rejects_is_reported(verdicts) -> None:
    v1, v2, v3 = verdicts[4:]
    assert v1["error"] and "state_class" in v1["error"], v1
    assert v2["error"] is None and v2["dropped"] == ["colour"], v2
    assert v3["error"] and "value_template" in v3["error"], v3  # Home Assistant's Jinja parses each template
