"""The MQTT contract of the table (docs/mqtt.md): topics, payload schemas, request parsing.

Everything a publisher or a subscriber needs to agree on lives here and in
``controller/mqtt/schemas/*.schema.json`` (JSON Schema draft 2020-12, one per payload):

* :class:`Topics` builds every topic of one table (``<base>/<table_id>/...``);
* :func:`validate` checks a payload against its schema and raises :class:`ContractError`
  naming the field and the problem;
* :func:`parse_request` turns the raw bytes of a console request into a checked dict, or
  raises :class:`RequestError` -- and nothing else, whatever the bytes;
* a few builders (:func:`state_payload`, :func:`card_event`, :func:`alert_from_ruling`,
  :func:`response_payload`) keep hole-card identities out of public payloads by
  construction.

Secrecy rule: a hole-card identity is published only on ``private/holecards`` (and, delayed,
on ``broadcast/holecards``).  The ``state`` schema has no place for one: a seat carries a
card *count* and its face-up cards, and nothing else is allowed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from controller.errors import PokerTableError

SCHEMA_VERSION = 1
DEFAULT_BASE = "poker"
SCHEMA_BASE_URI = "https://poker-table-controller.local/schemas/"
MAX_REQUEST_BYTES = 16 * 1024

EVENT_KINDS = ("hand_start", "card", "burn", "board", "street", "action", "draw", "ruling", "hand_end", "dealer",
               "seating", "clock", "button_draw")
REQUEST_NAMES = ("new_hand", "set_button", "seat", "unseat", "action", "acknowledge", "misdeal", "change_game",
                 "put", "stack", "level", "dealer", "clock",
                 "sit_out", "sit_in", "draw_button", "rotation", "looked",  # issue 22: the table side
                 "confirm")
BROADCAST_NAMES = ("holecards", "state", "hand_end", "equity", "stats", "graphics", "sealed", "key", "reveal",
                   "delay")
#: The producer's requests (``<root>/producer/<name>``; only the ``producer`` login may publish them).
PRODUCER_REQUESTS = ("broadcast_delay",)
CARD_SOURCES = ("rfid", "camera", "dealer", "script")

#: Payload schemas by name (``load_schema``/``validate``).
SCHEMA_NAMES = (
    "availability", "state", "event", "alert", "alert_active", "private_holecards", "broadcast_holecards",
    "broadcast_state", "broadcast_hand_end", "broadcast_equity", "response", *(f"request_{n}" for n in REQUEST_NAMES),
    "broadcast_stats", "broadcast_graphics",
    "commitment", "broadcast_sealed", "broadcast_key", "broadcast_reveal",
    "broadcast_delay", *(f"producer_{n}" for n in PRODUCER_REQUESTS),
    "diagnostics",
)

#: Topic suffixes a ``display`` may read (the broker ACL enforces it; see systemd/mosquitto/acl).
PUBLIC_SUFFIXES = ("availability", "state", "event/", "alert", "alert/active", "commitment")


class ContractError(PokerTableError, ValueError):
    """A payload does not match its schema (the message names the field and the problem)."""


class RequestError(PokerTableError, ValueError):
    """A console request is not valid; ``transaction`` is its id when one could be read."""

    def __init__(self, message: str, transaction: str | None = None) -> None:
        super().__init__(message)
        self.transaction = transaction


# ---------------------------------------------------------------------- topics


def _check_level(what: str, value: str, *, multi: bool = False) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty string, got {value!r}")
    bad = [c for c in ("+", "#", "\0") if c in value]
    if bad:
        raise ValueError(f"{what} {value!r} contains MQTT wildcard or NUL characters {bad}")
    levels = value.split("/")
    if not multi and len(levels) > 1:
        raise ValueError(f"{what} {value!r} must be one topic level (no '/')")
    if any(not lv for lv in levels):
        raise ValueError(f"{what} {value!r} has an empty topic level")
    return value


@dataclass(frozen=True, slots=True)
class Topics:
    """Every topic of one table.  ``base`` may have several levels (``casino/poker``); the
    shipped broker ACL assumes the default ``poker``."""

    base: str = DEFAULT_BASE
    table_id: str = "table1"

    def __post_init__(self) -> None:
        _check_level("base topic", self.base, multi=True)
        _check_level("table id", self.table_id)

    @property
    def root(self) -> str:
        return f"{self.base}/{self.table_id}"

    def _t(self, suffix: str) -> str:
        return f"{self.root}/{suffix}"

    def _named(self, level: str, name: str, names: tuple[str, ...], what: str) -> str:
        """The topic ``<level>/<name>``, for a ``name`` the contract lists in ``names`` only."""
        if name not in names:
            raise ValueError(f"unknown {what} {name!r}; expected one of {names}")
        return self._t(f"{level}/{name}")

    # public
    @property
    def availability(self) -> str:
        return self._t("availability")

    @property
    def state(self) -> str:
        return self._t("state")

    def event(self, kind: str) -> str:
        return self._named("event", kind, EVENT_KINDS, "event kind")

    @property
    def alert(self) -> str:
        return self._t("alert")

    @property
    def alert_active(self) -> str:
        return self._t("alert/active")

    @property
    def commitment(self) -> str:
        """Public: the salted hashes of each seat's hole cards, at the deal (controller/mqtt/sealed.py)."""
        return self._t("commitment")

    @property
    def diagnostics(self) -> str:
        """Retained: the readers' diagnostics (firmware_bridge/diagnostics.py); counts only, no tag, no card."""
        return self._t("diagnostics")

    # secret
    @property
    def private_holecards(self) -> str:
        return self._t("private/holecards")

    def broadcast(self, name: str) -> str:
        return self._named("broadcast", name, BROADCAST_NAMES, "broadcast topic")

    # console
    def request(self, name: str) -> str:
        return self._named("request", name, REQUEST_NAMES, "request")

    def producer(self, name: str) -> str:
        """The producer's request ``name`` (web/producer/): a topic the console's login cannot write."""
        return self._named("producer", name, PRODUCER_REQUESTS, "producer request")

    @property
    def response(self) -> str:
        return self._t("response")

    # subscriptions
    @property
    def all(self) -> str:
        """Everything of this table (controller or admin only: includes the secrets)."""
        return self._t("#")

    @property
    def events(self) -> str:
        return self._t("event/+")

    @property
    def requests(self) -> str:
        """What the controller subscribes to for the console."""
        return self._t("request/+")

    @property
    def producer_requests(self) -> str:
        """What the controller subscribes to for the producer."""
        return self._t("producer/+")

    @property
    def broadcasts(self) -> str:
        return self._t("broadcast/+")

    @property
    def public(self) -> tuple[str, ...]:
        """The subscriptions of a display: every public topic, no secret one."""
        return (self.availability, self.state, self._t("event/#"), self.alert, self.alert_active)

    def request_name(self, topic: str) -> str | None:
        """``'seat'`` for ``<root>/request/seat``; None for any other topic (or an unknown name)."""
        prefix = self._t("request/")
        if not topic.startswith(prefix):
            return None
        name = topic[len(prefix):]
        return name if name in REQUEST_NAMES else None

    def is_public(self, topic: str) -> bool:
        """True for a topic a display may see (availability, state, event/*, alert, alert/active)."""
        if not topic.startswith(self.root + "/"):
            return False
        rest = topic[len(self.root) + 1:]
        return any(rest.startswith(s) if s.endswith("/") else rest == s for s in PUBLIC_SUFFIXES)


# ---------------------------------------------------------------------- schemas


def _schema_file(name: str):
    return resources.files("controller.mqtt").joinpath("schemas", f"{name}.schema.json")


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of payload ``name`` (see :data:`SCHEMA_NAMES`; ``common`` holds shared definitions)."""
    if name not in SCHEMA_NAMES and name != "common":
        raise KeyError(f"no schema {name!r}; expected one of {SCHEMA_NAMES}")
    return json.loads(_schema_file(name).read_text(encoding="utf-8"))


@cache
def _registry():
    from referencing import Registry, Resource

    def retrieve(uri: str):
        raise LookupError(f"schema {uri!r} is not part of the contract (no network lookups)")

    pairs = []
    for name in (*SCHEMA_NAMES, "common"):
        schema = load_schema(name)
        pairs.append((schema["$id"], Resource.from_contents(schema)))
    return Registry(retrieve=retrieve).with_resources(pairs)


@cache
def _validator(name: str):
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load_schema(name), registry=_registry())


def _where(error) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    return path or "(payload)"


def _describe(error) -> str:
    from jsonschema.exceptions import best_match

    # Descend into anyOf/oneOf/if-then to the most specific problem.
    best = best_match([error]) if error.context else error
    message = best.message
    if len(message) > 300:
        message = message[:297] + "..."
    return f"{_where(best)}: {message}"


def errors(name: str, payload: Any) -> list[str]:
    """Every problem of ``payload`` against schema ``name`` (empty when valid)."""
    return [_describe(e) for e in sorted(_validator(name).iter_errors(payload), key=lambda e: [str(p) for p in e.path])]


def validate(name: str, payload: Any) -> None:
    """Raise :class:`ContractError` (``'<schema>: <field>: <problem>'``) unless ``payload`` is valid."""
    from jsonschema.exceptions import best_match

    found = list(_validator(name).iter_errors(payload))
    # A failed if/then also leaves its properties "unevaluated": report the real problem first.
    specific = [e for e in found if e.validator != "unevaluatedProperties"]
    error = best_match(specific or found)
    if error is not None:
        raise ContractError(f"{name}: {_describe(error)}")


# ---------------------------------------------------------------------- requests


def _reject_constant(text: str) -> Any:
    raise ValueError(f"{text} is not allowed in JSON")


def _integral(value: Any) -> Any:
    """JSON Schema counts 3.0 as an integer: hand the daemon a real int."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def parse_request(name: str, payload: bytes | bytearray | memoryview | str | None) -> dict[str, Any]:
    """Check one console request (topic ``request/<name>``), or a producer's (``name`` is then
    ``producer/<name>``, its topic's), and return its fields.

    An empty payload counts as ``{}``.  Raises :class:`RequestError` naming the problem (not
    JSON, not an object, unknown request, unknown or missing field, wrong type or value) and
    never any other exception, whatever the bytes.
    """
    try:
        return _parse_request(name, payload)
    except RequestError:
        raise
    except Exception as exc:  # noqa: BLE001 - the daemon's contract: only RequestError escapes
        raise RequestError(f"request/{name}: cannot read the request ({type(exc).__name__})") from None


def _parse_request(name: str, payload: Any) -> dict[str, Any]:
    producer = isinstance(name, str) and name.startswith("producer/") and name[9:] in PRODUCER_REQUESTS
    if not producer and (not isinstance(name, str) or name not in REQUEST_NAMES):
        raise RequestError(f"unknown request {name!r}; expected one of {', '.join(REQUEST_NAMES)}")
    where = name if producer else f"request/{name}"
    schema = name.replace("/", "_") if producer else f"request_{name}"
    if payload is None:
        payload = b""
    if isinstance(payload, memoryview | bytearray):
        payload = bytes(payload)
    if isinstance(payload, bytes):
        if len(payload) > MAX_REQUEST_BYTES:
            raise RequestError(f"{where}: payload too large ({len(payload)} bytes, at most {MAX_REQUEST_BYTES})")
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RequestError(f"{where}: payload is not UTF-8 text (byte {exc.start})") from None
    elif isinstance(payload, str):
        text = payload
        if len(text) > MAX_REQUEST_BYTES:
            raise RequestError(f"{where}: payload too large ({len(text)} characters, at most {MAX_REQUEST_BYTES})")
    else:
        raise RequestError(f"{where}: payload must be bytes, got {type(payload).__name__}")
    if not text.strip():
        data: Any = {}
    else:
        try:
            data = json.loads(text, parse_constant=_reject_constant)
        except RecursionError:
            raise RequestError(f"{where}: payload is not valid JSON (nested too deeply)") from None
        except ValueError as exc:
            raise RequestError(f"{where}: payload is not valid JSON ({str(exc)[:200]})") from None
    if not isinstance(data, dict):
        raise RequestError(f"{where}: payload must be a JSON object, got {_json_type(data)}")
    transaction = data.get("transaction")
    if not (isinstance(transaction, str) and 0 < len(transaction) <= 128):
        transaction = None
    try:
        validate(schema, data)
    except ContractError as exc:
        raise RequestError(str(exc).replace(f"{schema}:", f"{where}:", 1), transaction) from None
    return {k: _integral(v) for k, v in data.items()}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def request_transaction(payload: bytes | str | None) -> str | None:
    """Best effort: the ``transaction`` of a request payload, even an invalid one (never raises)."""
    try:
        data = json.loads(payload or b"", parse_constant=_reject_constant)
        tx = data.get("transaction") if isinstance(data, dict) else None
        return tx if isinstance(tx, str) and 0 < len(tx) <= 128 else None
    except Exception:  # noqa: BLE001
        return None


# ---------------------------------------------------------------------- builders


def response_payload(transaction: str | None, ok: bool, error: str | None = None,
                     result: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The answer to a request; an error always has a message."""
    if not ok and not error:
        error = "request failed"
    return {"schema": SCHEMA_VERSION, "transaction": transaction, "ok": bool(ok), "error": None if ok else error,
            "result": dict(result) if result is not None else None}


def state_payload(*, seq: int, ts: float, table_id: str, table: Mapping[str, Any], hand_id: int | None,
                  hand: Mapping[str, Any] | None, alert: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``state`` payload: ``table`` is ``Table.describe()``, ``hand`` is ``HandEngine.snapshot()``
    (its ``rulings`` are dropped: they go out one by one on ``alert``)."""
    public_hand = None
    if hand is not None:
        public_hand = {k: v for k, v in hand.items() if k != "rulings"}
    return {"schema": SCHEMA_VERSION, "seq": seq, "ts": ts, "table_id": table_id, "table": dict(table),
            "hand_id": hand_id, "hand": public_hand, "alert": dict(alert) if alert is not None else None}


def public_cards(hand: Mapping[str, Any] | None) -> set[str]:
    """The card identities a snapshot shows to everyone: the board and face-up cards."""
    if not hand:
        return set()
    cards = set(hand.get("board") or ())
    for seat in (hand.get("seats") or {}).values():
        cards.update(seat.get("up") or ())
    return cards


def card_event(*, seq: int, ts: float, hand_id: int, seat: int, face: str, card: str | None, source: str,
               exposed: bool = False) -> dict[str, Any]:
    """An ``event/card`` payload: the identity is dropped unless the card is face up."""
    if face not in ("up", "down"):
        raise ValueError(f"face must be 'up' or 'down', got {face!r}")
    out = {"schema": SCHEMA_VERSION, "seq": seq, "ts": ts, "hand_id": hand_id, "kind": "card", "seat": seat,
           "face": face, "card": card if face == "up" else None, "source": source}
    if exposed:
        out["exposed"] = True
    return out


def event_payload(kind: str, *, seq: int, ts: float, hand_id: int, **fields: Any) -> dict[str, Any]:
    """Any ``event/<kind>`` payload (use :func:`card_event` for cards)."""
    if kind not in EVENT_KINDS:
        raise ValueError(f"unknown event kind {kind!r}; expected one of {EVENT_KINDS}")
    return {"schema": SCHEMA_VERSION, "seq": seq, "ts": ts, "hand_id": hand_id, "kind": kind, **fields}


def alert_from_ruling(ruling: Any, *, id: str, seq: int, ts: float, hand_id: int | None,
                      public: Iterable[str] = (), requires_ack: bool = True) -> dict[str, Any]:
    """The ``alert`` payload of a :class:`controller.rules.rulings.Ruling`.

    ``public`` is the set of public card identities (:func:`public_cards` of the snapshot):
    a ruling's card outside it (e.g. a duplicate found in a player's hand) is withheld, and
    the message and steps are re-worded without it.
    """
    from controller.rules import catalog as catalog

    data = ruling.to_dict() if hasattr(ruling, "to_dict") else dict(ruling)
    card = data.get("card")
    message, steps = data.get("message", ""), list(data.get("steps") or ())
    public = set(public)
    if card is not None and card not in public:
        context = {k: v for k, v in (data.get("context") or {}).items() if k != "card"}
        kind, remedy = data["ruling"], data.get("remedy")
        remedy_words = "redeal" if kind == "misdeal" else "void_hand" if kind == "void" else remedy
        try:
            message = catalog.message(data["reason"], **context)
            steps = catalog.remedy_steps(remedy_words, **context) if remedy_words else []
        except Exception:  # noqa: BLE001 - an unknown reason must not leak the card through its words
            message, steps = f"Ruling: {data['reason']}.", []
        card = None
    return {
        "schema": SCHEMA_VERSION, "id": id, "seq": seq, "ts": ts, "hand_id": hand_id, "ruling": data["ruling"],
        "reason": data["reason"], "remedy": data.get("remedy"), "message": message, "steps": steps,
        "citations": list(data.get("citations") or ()), "seat": data.get("seat"), "card": card,
        "severity": data["ruling"], "requires_ack": requires_ack,
    }


__all__ = [
    "BROADCAST_NAMES", "CARD_SOURCES", "ContractError", "DEFAULT_BASE", "EVENT_KINDS", "REQUEST_NAMES",
    "RequestError", "SCHEMA_NAMES", "SCHEMA_VERSION", "Topics", "alert_from_ruling", "card_event", "errors",
    "event_payload", "load_schema", "parse_request", "public_cards", "request_transaction", "response_payload",
    "state_payload", "validate",
]
