"""A table's messages (docs/mqtt.md) as the floor's rows.

The floor reads the same contract the displays read, from one Mosquitto (topics
``poker/<table>/event/card``) or from NATS (subjects ``poker.<table>.event.card``, which is
how NATS's MQTT listener names a bridged topic).  :func:`rows_for` turns one message into
:class:`~controller.floor.store.Row` records; it never raises on bad input (a table's
malformed message is counted and skipped, it cannot stop the floor).

What the floor takes, and why:

* ``event/<kind>``: every event, kept whole (the replay steps through them);
  ``hand_start``/``hand_end`` also make the hand's row; ``ruling`` its ruling row;
  ``dealer`` a sign-in; ``street`` the at-a-glance street;
* ``availability``: online/offline;
* ``diagnostics``: the table's readers (misses, collisions, readers not answering, the scan
  cycle), latest only, in memory (:func:`readers_summary`); no row;
* ``broadcast/holecards``: the delayed copy of the hole cards (the only one that ever leaves
  a table), so a replay can show them.  ``private/holecards`` never reaches the floor: the
  bridge does not carry it, and :func:`rows_for` drops it if it ever came.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from controller.floor.store import Row

#: MQTT topic filters the floor subscribes to on one Mosquitto (and the bridge forwards).
FLOOR_TOPICS = ("{base}/+/availability", "{base}/+/event/#", "{base}/+/broadcast/holecards", "{base}/+/diagnostics")


@dataclass
class Parsed:
    table_id: str
    path: str  # the topic below the table: "event/card", "availability", ...
    payload: Any


@dataclass
class Counters:
    messages: int = 0
    #: messages fully handled: stored and acted on (the director's requests included); ``messages``
    #: counts them as they come in, before either
    handled: int = 0
    rows_new: int = 0
    rejected: int = 0
    kinds: dict[str, int] = field(default_factory=dict)


def parse(name: str, data: bytes, base: str = "poker") -> Parsed | None:
    """``name`` is an MQTT topic (``/``) or a NATS subject (``.``)."""
    sep = "/" if "/" in name else "."
    levels = name.split(sep)
    base_levels = base.split("/")
    if levels[: len(base_levels)] != base_levels or len(levels) < len(base_levels) + 2:
        return None
    table_id = levels[len(base_levels)]
    path = "/".join(levels[len(base_levels) + 1:])
    if path == "availability":
        return Parsed(table_id, path, data.decode("utf-8", "replace").strip())
    if not data:
        return Parsed(table_id, path, None)  # a retained copy being cleared
    try:
        payload = json.loads(data)
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(payload, dict):
        return None
    return Parsed(table_id, path, payload)


def event_sub(kind: str, payload: dict[str, Any]) -> str:
    """What tells apart two events of one kind under one ``seq``: a ruling's alert id (one input can
    raise two rulings), an action's seat (an out-of-turn action that binds on the next seat's event
    is published after that seat's own, under the same seq: RRoP s3 Betting and Raising 10)."""
    if kind == "ruling":
        alert = payload.get("alert")
        return str(alert.get("id")) if isinstance(alert, dict) else ""
    if kind == "action" and payload.get("seat") is not None:
        return str(payload["seat"])
    return ""


def rows_for(msg: Parsed) -> list[Row]:
    """The rows one message makes (none for what the floor does not keep)."""
    t, p = msg.table_id, msg.payload
    if msg.path == "availability":
        return [Row("availability", {"table_id": t, "online": p == "online"})]
    if p is None:
        return []
    try:
        if msg.path == "broadcast/holecards":
            return [Row("holecards", {"table_id": t, "hand_id": int(p["hand_id"]), "seq": int(p["seq"]),
                                      "seats": p["seats"]})]
        if not msg.path.startswith("event/"):
            return []
        kind = msg.path.split("/", 1)[1]
        seq, ts = int(p["seq"]), float(p["ts"])
        hand_id = int(p["hand_id"]) if p.get("hand_id") is not None else 0
    except (KeyError, TypeError, ValueError):
        return []
    alert = p.get("alert") if kind == "ruling" else None
    rows = [Row("event", {"table_id": t, "hand_id": hand_id, "seq": seq, "kind": kind, "sub": event_sub(kind, p),
                          "ts": ts,
                          "payload": p})]
    if kind == "hand_start":
        rows.append(Row("hand_start", {"table_id": t, "hand_id": hand_id, "seq": seq, "ts": ts, "payload": p,
                                       "dealer": p.get("dealer")}))
    elif kind == "hand_end":
        rows.append(Row("hand_end", {"table_id": t, "hand_id": hand_id, "seq": seq, "ts": ts, "payload": p}))
    elif kind == "street" and isinstance(p.get("name"), str):
        rows.append(Row("street", {"table_id": t, "seq": seq, "ts": ts, "name": p["name"]}))
    elif kind == "dealer":
        rows.append(Row("signin", {"table_id": t, "seq": seq, "ts": ts, "dealer": p.get("dealer"),
                                   "badge": p.get("badge"), "source": p.get("source")}))
    elif isinstance(alert, dict):
        rows.append(Row("ruling", {"table_id": t, "seq": seq, "ts": ts, "alert": alert,
                                   "dealer": alert.get("dealer") or p.get("dealer")}))
    return rows


def readers_summary(payload: Any) -> dict[str, Any] | None:
    """What the floor's tile shows of a table's ``diagnostics`` (diagnostics.schema.json): the readers
    not answering, misses, collisions, the scan cycle and its stalls; None if it is not one."""
    try:
        rfid = payload["rfid"]
        if rfid is None:
            return None
        return {"not_answering": [int(a) for a in rfid["not_answering"]], "reads": int(rfid["totals"]["reads"]),
                "misses": int(rfid["totals"]["misses"]), "collisions": int(rfid["totals"]["collisions"]),
                "cycle_ms": rfid["scan"]["cycle_ms"], "stalls": int(rfid["scan"]["stalls"]),
                "synced": bool(rfid["link"]["synced"]), "ts": float(payload["ts"])}
    except (KeyError, TypeError, ValueError):
        return None


def live_notes(msg: Parsed) -> list[dict[str, Any]]:
    """What the floor page hears at once (server-sent events): alerts, hand ends, sign-ins."""
    p = msg.payload
    if not isinstance(p, dict) or not msg.path.startswith("event/"):
        return [{"type": "table", "table_id": msg.table_id}] if msg.path == "availability" else []
    kind = msg.path.split("/", 1)[1]
    if kind == "ruling" and isinstance(p.get("alert"), dict):
        return [{"type": "alert", "table_id": msg.table_id, "alert": p["alert"]}]
    if kind in ("hand_start", "hand_end", "street", "dealer"):
        return [{"type": "table", "table_id": msg.table_id}]
    return []
