"""Run by Home Assistant's own Python (scripts/home-assistant-root): judge MQTT discovery messages
with Home Assistant's MQTT code, as its discovery does on receipt.

Reads ``[[topic, payload], ...]`` on stdin and prints one JSON object per message: the topic, the
component and object id Home Assistant's discovery topic pattern reads, the error its platform's
``DISCOVERY_SCHEMA`` raised (or null), the keys the schema dropped (it removes keys it does not
know, silently) and the entity id Home Assistant would give the entity.  Not a pytest module: it
imports Home Assistant, which only the 3.13 root has.
"""

import asyncio
import json
import sys
from importlib import import_module

import voluptuous as vol
from homeassistant.components.mqtt import discovery
from homeassistant.const import __version__ as ha_version
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity import async_generate_entity_id


def judge(topic: str, payload: dict) -> dict:
    match = discovery.TOPIC_MATCHER.match(topic.split("/", 1)[1])
    out = {"topic": topic, "ha": ha_version, "error": None, "dropped": [], "entity_id": None}
    if match is None:
        out["error"] = "the topic is not a discovery topic"
        return out
    component, node_id, object_id = match.group("component", "node_id", "object_id")
    out.update(component=component, node_id=node_id, object_id=object_id)
    payload = dict(payload)
    discovery._replace_all_abbreviations(payload)
    platform = import_module(f"homeassistant.components.mqtt.{component}")
    try:
        config = platform.DISCOVERY_SCHEMA(payload)
    except vol.Invalid as exc:
        out["error"] = str(exc)
        return out
    out["dropped"] = sorted(set(payload) - set(config))
    default = config.get("default_entity_id")
    if default is not None:  # as MqttEntity._init_entity_id names it (no other entity yet)
        _, _, wanted = default.partition(".")
        out["entity_id"] = async_generate_entity_id(f"{component}.{{}}", wanted, current_ids=[])
    return out


async def main() -> None:
    # Home Assistant validates discovery in its event loop, with its instance at hand (the template
    # validator parses each template with Home Assistant's own template environment).
    hass = HomeAssistant("/tmp/ha-config")
    for topic, payload in json.load(sys.stdin):
        print(json.dumps(judge(topic, payload)))
    await hass.async_stop(force=True)


if __name__ == "__main__":
    asyncio.run(main())
