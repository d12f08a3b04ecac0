"""The MQTT contract: schemas, example payloads, secrecy of the public state, request parsing."""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path

import pytest

try:
    import jsonschema  # noqa: F401
except ImportError:  # pragma: no cover - the contract needs it; CI must have it
    if os.environ.get("CI"):
        pytest.fail("jsonschema is required for the MQTT contract: pip install 'jsonschema>=4.18'", pytrace=False)
    pytest.skip("jsonschema not installed", allow_module_level=True)

import yaml  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from jsonschema import Draft202012Validator  # noqa: E402

from controller.mqtt import contract as mc  # noqa: E402
from controller.rules.cards import Card  # noqa: E402
from controller.rules.engine import HandEngine  # noqa: E402
from controller.rules.events import ACTIONS, Deal, Expose  # noqa: E402
from controller.rules.games import GAMES  # noqa: E402
from controller.rules.profiles import PROFILES  # noqa: E402
from controller.rules.scenario import Scenario, Session, apply_change, scenario_events  # noqa: E402
from controller.rules.table import Table  # noqa: E402
from tests.conftest import REPO, conformance_files, scenario_params  # noqa: E402

SCHEMAS = REPO / "controller" / "mqtt" / "schemas"
CARD_RE = re.compile(r"\b(?:[2-9TJQKA][cdhs]|joker)(?:@[A-Za-z0-9_.-]+)?\b")


# ---------------------------------------------------------------------- schemas themselves


def test_every_schema_file_is_a_valid_draft_2020_12_schema() -> None:
    files = sorted(p.name.removesuffix(".schema.json") for p in SCHEMAS.glob("*.schema.json"))
    assert files == sorted([*mc.SCHEMA_NAMES, "common"])
    for name in files:
        schema = mc.load_schema(name)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema", name
        assert schema["$id"] == f"{mc.SCHEMA_BASE_URI}{name}.schema.json", name
        Draft202012Validator.check_schema(schema)


def test_schema_enums_follow_the_code() -> None:
    common = mc.load_schema("common")["$defs"]
    assert common["game"]["enum"] == list(GAMES)
    assert all(re.fullmatch(common["rules"]["pattern"].strip("^$"), name) for name in PROFILES)
    assert common["action"]["enum"] == list(ACTIONS)
    assert {g.default_structure for g in GAMES.values()} <= set(common["structure"]["enum"])
    assert mc.load_schema("event")["properties"]["kind"]["enum"] == list(mc.EVENT_KINDS)


def test_unknown_schema_is_a_clear_error() -> None:
    with pytest.raises(KeyError, match="no schema 'nope'"):
        mc.load_schema("nope")


# ---------------------------------------------------------------------- topics


def test_topics() -> None:
    t = mc.Topics("poker", "t1")
    assert t.availability == "poker/t1/availability"
    assert t.state == "poker/t1/state"
    assert t.event("card") == "poker/t1/event/card"
    assert t.alert == "poker/t1/alert"
    assert t.alert_active == "poker/t1/alert/active"
    assert t.private_holecards == "poker/t1/private/holecards"
    assert t.broadcast("holecards") == "poker/t1/broadcast/holecards"
    assert t.broadcast("state") == "poker/t1/broadcast/state"
    assert t.request("seat") == "poker/t1/request/seat"
    assert t.response == "poker/t1/response"
    assert (t.all, t.events, t.requests, t.broadcasts) == (
        "poker/t1/#", "poker/t1/event/+", "poker/t1/request/+", "poker/t1/broadcast/+")
    assert t.request_name("poker/t1/request/misdeal") == "misdeal"
    assert t.request_name("poker/t1/request/explode") is None
    assert t.request_name("poker/t2/request/misdeal") is None
    assert mc.Topics().root == "poker/table1"
    assert mc.Topics("casino/poker", "7").state == "casino/poker/7/state"


def test_topics_public_split() -> None:
    t = mc.Topics("poker", "t1")
    public = [t.availability, t.state, t.event("hand_end"), t.alert, t.alert_active]
    secret = [t.private_holecards, t.broadcast("holecards"), t.broadcast("state"), t.request("seat"), t.response,
              "poker/t1/alertx", "poker/t1/statex", "poker/t2/state"]
    assert all(t.is_public(x) for x in public)
    assert not any(t.is_public(x) for x in secret)


@pytest.mark.parametrize("base,table", [("poker", "a/b"), ("po+ker", "t"), ("poker", "#"), ("", "t"), ("p//q", "t"),
                                        ("poker", "")])
def test_topics_reject_bad_levels(base: str, table: str) -> None:
    with pytest.raises(ValueError):
        mc.Topics(base, table)


def test_topics_reject_unknown_names() -> None:
    t = mc.Topics("poker", "t1")
    for call in (lambda: t.event("peek"), lambda: t.broadcast("secrets"), lambda: t.request("rm_rf")):
        with pytest.raises(ValueError, match="unknown"):
            call()


# ---------------------------------------------------------------------- example payloads


def _table_and_hand(game: str = "holdem") -> tuple[Table, HandEngine]:
    table = Table(size=9, game=game)
    for seat, name in [(1, "Ann"), (3, "Bob"), (5, "Cat")]:
        table.seat(seat, name)
    return table, table.start_hand()


def _deal_all(engine: HandEngine, cards: list[str]) -> None:
    for text in cards:
        seat = engine.next_seat
        assert seat is not None
        engine.apply(Deal(seat, Card.parse(text)))


def _state(table: Table, engine: HandEngine | None, alert: dict | None = None) -> dict:
    return mc.state_payload(seq=7, ts=1_700_000_000.25, table_id="t1", table=table.describe(),
                            hand_id=table.hand_number if engine else None,
                            hand=engine.snapshot() if engine else None, alert=alert)


def _alert(**over) -> dict:
    a = {"schema": 1, "id": "h1-1", "seq": 9, "ts": 1.0, "hand_id": 1, "ruling": "irregularity",
         "reason": "exposed_card", "remedy": "replace_after_deal", "message": "The dealer exposed a hole card.",
         "steps": ["Show the card to everyone."], "citations": ["RRoP s3 Irregularities 6"], "seat": 3, "card": "Ah",
         "severity": "irregularity", "requires_ack": True}
    a.update(over)
    return a


EVENTS = {
    "hand_start": {"game": "holdem", "rules": "robert", "event": "cash", "structure": "no_limit", "button": 5,
                   "blinds": {"small": 1, "big": 3}, "seats": [1, 3, 5]},
    "card": {"seat": 3, "face": "down", "card": None, "source": "rfid"},
    "burn": {"count": 1, "source": "rfid"},
    "board": {"cards": ["Ah", "Kd", "2c"], "source": "camera"},
    "street": {"name": "flop"},
    "action": {"seat": 3, "action": "raise", "all_in": False, "amount": 400},
    "draw": {"seat": 3, "count": 2},
    "ruling": {"alert": _alert()},
    "hand_end": {"result": "showdown", "winners": [{"seat": 3, "part": "pot", "hand": "Flush, Ace high", "share": 900}],
                 "shown": {"3": ["Ah", "Kh"], "5": ["Qc", "Qd"]}, "summary": "Seat 3 wins the pot with a Flush"},
    "dealer": {"dealer": "Dana", "badge": "04a1b2c3", "source": "nfc"},
    "seating": {"change": "seat", "seat": 4, "name": "Ann", "stack": 20000},
    "clock": {"seat": 4},
    "button_draw": {"cards": {"1": "Kd", "3": "Ks"}, "waiting": [], "winner": 3, "name": "Ann", "cancelled": False,
                    "game": "holdem", "order": "high", "citations": ["RRoP s2 Seating 6", "RRoP s3 Ties 1-2"]},
}


def _event(kind: str, **over) -> dict:
    body = copy.deepcopy(EVENTS[kind])
    body.update(over)
    return mc.event_payload(kind, seq=3, ts=2.5, hand_id=1, **body)


def test_examples_for_every_topic_validate() -> None:
    table, engine = _table_and_hand()
    _deal_all(engine, ["Ah", "Kd", "Qs", "Jc", "Tc", "9d"])
    mc.validate("availability", "online")
    mc.validate("availability", "offline")
    mc.validate("state", _state(table, engine))
    mc.validate("state", _state(table, None))
    mc.validate("state", _state(table, engine, alert=_alert()))
    for kind in mc.EVENT_KINDS:
        mc.validate("event", _event(kind))
    mc.validate("event", mc.card_event(seq=1, ts=1, hand_id=1, seat=3, face="up", card="7s", source="dealer",
                                       exposed=True))
    mc.validate("event", _event("hand_end", result="uncontested", winners=[{"seat": 3, "share": 150}], shown=None))
    mc.validate("event", _event("hand_end", result="misdeal", winners=[], shown=None))
    mc.validate("alert", _alert())
    mc.validate("alert", _alert(ruling=None, severity="fault", reason="shuffler_fault", remedy=None, seat=None,
                                card=None, hand_id=None))
    mc.validate("alert_active", _alert())
    holecards = {str(s): cards for s, cards in engine.hole_cards().items()}
    mc.validate("private_holecards", {"schema": 1, "seq": 10, "hand_id": 1, "seats": holecards})
    mc.validate("broadcast_holecards", {"schema": 1, "seq": 11, "ts": 3.0, "hand_id": 1, "seats": holecards,
                                        "delay": 30})
    mc.validate("broadcast_holecards", {"schema": 1, "seq": 11, "ts": 3.0, "hand_id": 1, "seats": holecards,
                                        "delay": "hand_end"})
    mc.validate("broadcast_state", _state(table, engine))
    mc.validate("response", mc.response_payload("tx-1", True, result={"hand_id": 2}))
    mc.validate("response", mc.response_payload(None, False, "seat: 11 is greater than the maximum of 10"))


def test_stud_upcards_are_public_in_state() -> None:
    table, engine = _table_and_hand("stud")
    _deal_all(engine, ["2c", "3c", "4c", "5d", "6d", "7d", "8h", "9h", "Th"])  # two down, one up each
    payload = _state(table, engine)
    mc.validate("state", payload)
    assert sorted(c for s in payload["hand"]["seats"].values() for c in s["up"]) == ["8h", "9h", "Th"]


@pytest.mark.parametrize("leak", [
    lambda p: p["hand"]["seats"]["3"].__setitem__("down", ["Kd"]),
    lambda p: p["hand"]["seats"]["3"].__setitem__("cards", ["Kd", "Qs"]),
    lambda p: p["hand"]["seats"]["3"].__setitem__("hole", ["Kd", "Qs"]),
    lambda p: p["hand"]["seats"]["3"].__setitem__("up", [{"card": "Kd", "face": "down"}]),
    lambda p: p["hand"].__setitem__("hole_cards", {"3": ["Kd", "Qs"]}),
    lambda p: p["hand"].__setitem__("rulings", []),
    lambda p: p["hand"].__setitem__("burns", ["4h"]),
    lambda p: p.__setitem__("holecards", {"3": ["Kd", "Qs"]}),
    lambda p: p["table"]["players"]["3"].__setitem__("cards", ["Kd", "Qs"]),
])
def test_state_has_no_place_for_a_hole_card(leak) -> None:
    table, engine = _table_and_hand()
    _deal_all(engine, ["Ah", "Kd", "Qs", "Jc", "Tc", "9d"])
    payload = _state(table, engine)
    mc.validate("state", payload)
    leak(payload)
    with pytest.raises(mc.ContractError, match="^state: "):
        mc.validate("state", payload)


@pytest.mark.parametrize("kind,over,problem", [
    ("card", {"face": "down", "card": "Ah"}, "card"),
    ("card", {"face": "up", "card": None}, "card"),
    ("card", {"face": "sideways"}, "face"),
    ("burn", {"card": "Ah"}, "card"),
    ("hand_end", {"result": "uncontested", "winners": [{"seat": 3, "hand": "Two Pair", "share": 10}],
                  "shown": None}, "winners"),
    ("hand_end", {"result": "uncontested", "winners": [{"seat": 3}], "shown": {"3": ["Ah", "Kd"]}}, "shown"),
    ("action", {"action": "shove"}, "action"),
    ("board", {"cards": ["Zz"]}, "cards"),
])
def test_bad_events_fail(kind: str, over: dict, problem: str) -> None:
    with pytest.raises(mc.ContractError, match=problem):
        mc.validate("event", _event(kind, **over))


def test_alert_severity_matches_the_ruling() -> None:
    with pytest.raises(mc.ContractError):
        mc.validate("alert", _alert(severity="misdeal"))
    with pytest.raises(mc.ContractError):
        mc.validate("alert", _alert(ruling=None))
    with pytest.raises(mc.ContractError, match="card"):
        mc.validate("alert", _alert(card="Xx"))


def test_response_error_needs_a_message() -> None:
    with pytest.raises(mc.ContractError, match="error"):
        mc.validate("response", {"schema": 1, "transaction": None, "ok": False, "error": None, "result": None})
    with pytest.raises(mc.ContractError, match="error"):
        mc.validate("response", {"schema": 1, "transaction": None, "ok": True, "error": "x", "result": None})


def _scenario_snapshots(path: Path):
    data = yaml.safe_load(path.read_text())
    if "hands" in data:  # a session: every deal as the table sets it up
        session = Session.from_dict(data, str(path))
        table = session.table()
        deals = []
        for hand in session.hands:
            for key, value in hand.before:
                apply_change(table, key, value)
            engine = table.start_hand()
            deals.append((engine, hand.events))
    else:
        setup, events = scenario_events(Scenario.load(path))
        deals = [(HandEngine(setup), events)]
    for engine, events in deals:
        yield engine, engine.snapshot()
        for ev in events:
            engine.apply(ev)
            yield engine, engine.snapshot()


@pytest.mark.parametrize("path", scenario_params(conformance_files(), "load"))
def test_every_conformance_snapshot_fits_the_state_schema_and_hides_downcards(path: Path) -> None:
    table = Table(size=9)
    count = 0
    for engine, snap in _scenario_snapshots(path):
        table.size = engine.size
        payload = mc.state_payload(seq=count, ts=0.0, table_id="t1", table=table.describe(), hand_id=1, hand=snap)
        problems = mc.errors("state", payload)
        assert not problems, f"{path.name}: {problems}"
        public = mc.public_cards(snap)
        down = {c for cards in engine.hole_cards().values() for c in cards} - public
        shown = set(CARD_RE.findall(json.dumps(payload)))
        assert not (shown & down), f"{path.name}: downcards {shown & down} in public state"
        count += 1
    assert count > 1


def test_alert_from_ruling_withholds_a_card_that_is_not_public() -> None:
    table, engine = _table_and_hand()
    _deal_all(engine, ["Ah", "Kd", "Qs", "Jc", "Tc", "9d"])
    rulings = engine.apply(Expose(3, Card.parse("Kd")))
    assert rulings and rulings[0].card == "Kd"
    snap = engine.snapshot()
    shown = mc.alert_from_ruling(rulings[0], id="1-1", seq=1, ts=1.0, hand_id=1, public=mc.public_cards(snap))
    assert shown["card"] == "Kd"  # exposed: public now
    mc.validate("alert", shown)
    hidden = mc.alert_from_ruling(rulings[0], id="1-1", seq=1, ts=1.0, hand_id=1, public=())
    mc.validate("alert", hidden)
    assert hidden["card"] is None
    assert "Kd" not in json.dumps(hidden)


def test_card_event_drops_a_downcard_identity() -> None:
    ev = mc.card_event(seq=1, ts=1.0, hand_id=1, seat=3, face="down", card="Ah", source="rfid")
    assert ev["card"] is None
    mc.validate("event", ev)


# ---------------------------------------------------------------------- requests


GOOD_REQUESTS = {
    "new_hand": [b"", b"{}", b'{"transaction": "t-1"}'],
    "set_button": [b'{"seat": 4}'],
    "seat": [b'{"seat": 2, "name": "Dana"}', b'{"seat": 2, "name": "Dana", "post": true, "transaction": "x"}'],
    "unseat": [b'{"seat": 2}'],
    "action": [b'{"seat": 2, "action": "call"}', b'{"seat": 2, "action": "raise", "all_in": true, "amount": 500}',
               b'{"seat": 2, "action": "fold", "amount": null}'],
    "acknowledge": [b"", b'{"alert": "12-3"}', b'{"alert": null}'],
    "misdeal": [b'{"reason": "button_out_of_position"}'],
    "change_game": [b'{"game": "stud"}', b'{"game": "omaha8", "rules": "tda", "structure": "pot_limit", '
                                         b'"event": "tournament"}'],
    "sit_out": [b'{"seat": 3}'],
    "sit_in": [b'{"seat": 3}', b'{"seat": 3, "post": true}'],
    "draw_button": [b"", b'{"cancel": true}'],
    "rotation": [b'{"name": "horse"}', b'{"name": null}'],
    "looked": [b'{"seat": 3}'],
}


@pytest.mark.parametrize("name,payload", [(n, p) for n, ps in GOOD_REQUESTS.items() for p in ps])
def test_good_requests_parse(name: str, payload: bytes) -> None:
    out = mc.parse_request(name, payload)
    assert out == (json.loads(payload) if payload else {})


def test_request_numbers_come_back_as_ints() -> None:
    out = mc.parse_request("action", b'{"seat": 3.0, "action": "bet", "amount": 200.0}')
    assert out == {"seat": 3, "action": "bet", "amount": 200}
    assert type(out["seat"]) is int and type(out["amount"]) is int
    assert mc.parse_request("set_button", bytearray(b'{"seat": 1}')) == {"seat": 1}
    assert mc.parse_request("set_button", '{"seat": 1}') == {"seat": 1}


@pytest.mark.parametrize("name,payload,problem", [
    ("explode", b"{}", "unknown request 'explode'"),
    ("set_button", b"", "'seat' is a required property"),
    ("set_button", b'{"seat": "3"}', "seat: '3' is not of type 'integer'"),
    ("set_button", b'{"seat": true}', "seat: True is not of type 'integer'"),
    ("set_button", b'{"seat": 0}', "seat: 0 is less than the minimum"),
    ("set_button", b'{"seat": 3.5}', "seat"),
    ("set_button", b'{"seat": 3, "sneaky": 1}', "'sneaky' was unexpected"),
    ("seat", b'{"seat": 3}', "'name' is a required property"),
    ("action", b'{"seat": 3, "action": "shove"}', "action: 'shove' is not one of"),
    ("action", b'{"seat": 3, "action": "bet", "amount": -5}', "amount"),
    ("change_game", b'{"game": "chess"}', "game: 'chess' is not one of"),
    ("misdeal", b'{"reason": "Because I Said So"}', "reason"),
    ("new_hand", b"[]", "must be a JSON object, got an array"),
    ("new_hand", b"null", "must be a JSON object, got null"),
    ("new_hand", b"{", "not valid JSON"),
    ("new_hand", b'{"a": NaN}', "NaN is not allowed"),
    ("new_hand", b'{"a": Infinity}', "Infinity is not allowed"),
    ("new_hand", b"\xff\xfe", "not UTF-8"),
    ("new_hand", b"[" * 5000 + b"]" * 5000, "nested too deeply|not valid JSON"),
    ("new_hand", b" " * (mc.MAX_REQUEST_BYTES + 1), "too large"),
    ("new_hand", b'{"transaction": ""}', "transaction"),
])
def test_bad_requests_name_the_problem(name: str, payload: bytes, problem: str) -> None:
    with pytest.raises(mc.RequestError, match=problem):
        mc.parse_request(name, payload)


def test_bad_request_keeps_its_transaction_for_the_response() -> None:
    with pytest.raises(mc.RequestError) as info:
        mc.parse_request("set_button", b'{"seat": 99, "transaction": "tx-9"}')
    assert info.value.transaction == "tx-9"
    assert mc.request_transaction(b'{"seat": 99, "transaction": "tx-9"}') == "tx-9"
    assert mc.request_transaction(b"\xff") is None
    response = mc.response_payload(info.value.transaction, False, str(info.value))
    mc.validate("response", response)
    assert response["error"].startswith("request/set_button: seat: 99")


def test_parse_request_rejects_non_bytes() -> None:
    with pytest.raises(mc.RequestError, match="must be bytes"):
        mc.parse_request("new_hand", 42)  # type: ignore[arg-type]
    with pytest.raises(mc.RequestError, match="unknown request"):
        mc.parse_request(None, b"{}")  # type: ignore[arg-type]


def _check_parse(name: str, payload) -> None:
    try:
        out = mc.parse_request(name, payload)
    except mc.RequestError as exc:
        assert str(exc)
        return
    assert isinstance(out, dict)
    mc.validate(f"request_{name}", out)


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=20,
)
request_like = st.dictionaries(
    st.sampled_from(["seat", "name", "post", "action", "all_in", "amount", "alert", "reason", "game", "rules",
                     "structure", "event", "transaction", "x"]),
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=12)
    | st.sampled_from(["call", "fold", "holdem", "tda", "cash", "limit", "misdeal"]) | st.lists(st.integers()),
    max_size=6,
)
names = st.sampled_from([*mc.REQUEST_NAMES, "nope", ""])


@FUZZ
@given(names, st.binary(max_size=300))
def test_fuzz_random_bytes_only_raise_request_error(name: str, payload: bytes) -> None:
    _check_parse(name, payload)


@FUZZ
@given(names, json_values)
def test_fuzz_random_json_only_raises_request_error(name: str, value) -> None:
    _check_parse(name, json.dumps(value).encode())


@FUZZ
@given(names, request_like)
def test_fuzz_request_like_objects(name: str, value: dict) -> None:
    _check_parse(name, json.dumps(value).encode())


# ---------------------------------------------------------------------- the document


def test_doc_lists_every_topic_request_and_schema() -> None:
    doc = (REPO / "docs" / "mqtt.md").read_text()
    for suffix in ("availability", "state", "alert", "alert/active", "private/holecards", "broadcast/holecards",
                   "broadcast/state", "response"):
        assert f"`{suffix}`" in doc or f"/{suffix}`" in doc, suffix
    for kind in mc.EVENT_KINDS:
        assert f"event/{kind}" in doc, kind
    for name in mc.REQUEST_NAMES:
        assert f"request/{name}" in doc, name
    for path in Path(SCHEMAS).glob("*.schema.json"):
        assert path.name in doc, path.name
