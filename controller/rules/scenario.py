"""Conformance scenarios: load ``../shared/conformance`` (FORMAT.md is the contract) and check
the engine against them.

A scenario is a hand setup, a list of steps (each one table event) and expectations:
the exact rulings in order, each raised *after* a given step, and optional state
checks (``to_act``).  ``run_scenario`` replays it through :class:`HandEngine` and
reports every difference as an expected-versus-got line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from controller.errors import PokerTableError
from controller.rules.cards import DEFAULT_DECK, Card, CardError
from controller.rules.chips import ChipsError
from controller.rules.engine import HandEngine, SetupError
from controller.rules.events import (
    Act,
    Deal,
    Discard,
    Event,
    EventError,
    Expose,
    HandSetup,
    event_from_dict,
    validate_event,
)
from controller.rules.games import GameError, get_game
from controller.rules.profiles import ProfileError
from controller.rules.rulings import MISDEAL, Ruling
from controller.rules.scenario_chips import (
    CHIPS_KEYS,
    STATE_KEYS,
    check_chips_state,
    check_final_stacks,
    final_stacks_expected,
    put_event,
    stakes_from_header,
)
from controller.rules.table import Table, TableError

HEADER_KEYS = {
    "name", "source", "game", "structure", "rules", "event", "table_size", "seats", "button",
    "small_blind", "big_blind", "deck", "steps", "expect",
} | set(CHIPS_KEYS)


class ScenarioError(PokerTableError, ValueError):
    """A scenario file that does not follow FORMAT.md."""


# FORMAT.md "Strict files": every key of every level is one of these; any other fails the file.
STEP_FIELDS: dict[str, frozenset[str]] = {
    "deal": frozenset({"to", "card", "face"}),
    "expose": frozenset({"seat", "card"}),
    "act": frozenset({"seat", "action", "all_in", "amount"}),
    "put": frozenset({"seat", "chips", "declare"}),
    "discard": frozenset({"seat", "count"}),
}
#: FORMAT's steps written as one value: each is the event of the same kind, that value its one field
#: (a card; the board's or the stub's cards, one or a list; a report's reason).
SCALAR_STEPS: dict[str, str] = {"burn": "card", "muck": "card", "aside": "card", "boxed": "card",
                                "board": "cards", "stub": "cards", "report": "reason"}
EXPECT_KEYS = frozenset({"rulings", "state", "final_stacks"})
RULING_KEYS = frozenset({"after", "ruling", "reason", "remedy"})
STATE_CHECK_KEYS = frozenset({"after", "to_act", "to_show", *STATE_KEYS})


def only_keys(value: Any, allowed: Iterable[str], where: str) -> dict:
    """``value`` as a mapping whose every key is ``allowed``; else a ScenarioError naming the key."""
    if not isinstance(value, dict):
        raise ScenarioError(f"{where}: expected a mapping, got {value!r}")
    allowed = frozenset(allowed)
    for key in value:
        if key not in allowed:
            raise ScenarioError(f"{where}: unknown key {key!r} (FORMAT.md defines {', '.join(sorted(allowed))})")
    return value


def _list(value: Any, where: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ScenarioError(f"{where}: expected a list, got {value!r}")
    return value


def parse_expect(expect: Any, steps: int, allowed: Iterable[str], where: str = "expect") -> tuple[
        tuple[ExpectedRuling, ...], tuple[tuple[int, dict[str, Any]], ...]]:
    """The rulings and state checks of one deal's ``expect``, every key checked; a state check must
    name a step of the deal (FORMAT.md "Strict files")."""
    expect = only_keys(expect or {}, allowed, where)
    rulings = []
    for k, r in enumerate(_list(expect.get("rulings"), f"{where}.rulings"), 1):
        only_keys(r, RULING_KEYS, f"{where}.rulings[{k}]")
        for need in ("after", "ruling", "reason"):
            if need not in r:
                raise ScenarioError(f"{where}.rulings[{k}]: missing {need!r}")
        rulings.append(_expected_ruling(r))
    state = []
    for k, check in enumerate(_list(expect.get("state"), f"{where}.state"), 1):
        only_keys(check, STATE_CHECK_KEYS, f"{where}.state[{k}]")
        after = check.get("after")
        if isinstance(after, bool) or not isinstance(after, int) or not 1 <= after <= steps:
            raise ScenarioError(f"{where}.state[{k}]: 'after: {after}' names no step of the deal "
                                f"(it has {steps} step{'s' if steps != 1 else ''})")
        if len(check) < 2:
            raise ScenarioError(f"{where}.state[{k}]: a state check after step {after} checks nothing")
        state.append((after, {key: v for key, v in check.items() if key != "after"}))
    return tuple(rulings), tuple(state)


@dataclass(frozen=True, slots=True)
class ExpectedRuling:
    after: int
    ruling: str
    reasons: tuple[str, ...]
    remedies: tuple[str, ...] | None

    def matches(self, after: int, r: RaisedRuling | Ruling) -> bool:
        return (
            after == self.after
            and r.ruling == self.ruling
            and r.reason in self.reasons
            and (self.remedies is None or r.remedy in self.remedies)
        )

    def describe(self) -> str:
        reason = "|".join(self.reasons)
        remedy = f" remedy {'|'.join(self.remedies)}" if self.remedies else ""
        return f"after step {self.after}: {self.ruling} {reason}{remedy}"


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    setup: HandSetup
    events: tuple[Event, ...]
    rulings: tuple[ExpectedRuling, ...]
    state: tuple[tuple[int, dict[str, Any]], ...]
    source: str = ""
    path: str | None = None
    final_stacks: dict[int, int] | None = None  # chips: what every dealt-in seat holds at the end

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: str | None = None) -> Scenario:
        where = path or data.get("name", "scenario") if isinstance(data, dict) else path
        try:
            return _parse(data, path)
        except (CardError, EventError, GameError, ProfileError, SetupError, ChipsError, TypeError, KeyError) as exc:
            raise ScenarioError(f"{where}: {exc}") from exc

    @classmethod
    def load(cls, path: str | Path) -> Scenario:
        p = Path(path)
        try:
            data = yaml.safe_load(p.read_text())
        except yaml.YAMLError as exc:
            raise ScenarioError(f"{p}: not valid YAML: {exc}") from exc
        return cls.from_dict(data, str(p))


def _parse(data: dict[str, Any], path: str | None) -> Scenario:
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a scenario is a mapping")
    only_keys(data, HEADER_KEYS, "header")
    for key in ("name", "game", "rules", "seats", "steps"):
        if key not in data:
            raise ScenarioError(f"missing required key {key!r}")
    game = get_game(data["game"])
    deck = str(data.get("deck", DEFAULT_DECK))
    blinds_given = "small_blind" in data or "big_blind" in data
    setup = HandSetup(
        game=game.name,
        rules=str(data["rules"]),
        seats=tuple(int(s) for s in data["seats"]),
        button=data.get("button"),
        structure=data.get("structure") or game.default_structure,
        event=str(data.get("event", "cash")),
        table_size=int(data.get("table_size", 9)),
        small_blind=data.get("small_blind"),
        big_blind=data.get("big_blind"),
        blinds_given=blinds_given,
        deck=deck,
        chips=stakes_from_header(data),
    )
    if game.button and setup.button is None:
        raise ScenarioError(f"{game.name} is a button game: 'button' is required")
    if setup.event not in ("cash", "tournament"):
        raise ScenarioError(f"event must be cash or tournament, got {setup.event!r}")
    HandEngine(setup)  # validates seats, button, blinds and profile
    steps = _list(data["steps"], "steps")
    events = tuple(step_event(step, i, deck) for i, step in enumerate(steps, 1))
    expect = data.get("expect") or {}
    rulings, state = parse_expect(expect, len(steps), EXPECT_KEYS)
    return Scenario(str(data["name"]), setup, events, rulings, state, str(data.get("source", "")), path,
                    final_stacks_expected(expect))


def _as_tuple(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else (str(value),)


def _expected_ruling(r: dict[str, Any]) -> ExpectedRuling:
    return ExpectedRuling(
        after=int(r["after"]),
        ruling=str(r["ruling"]),
        reasons=_as_tuple(r["reason"]),
        remedies=_as_tuple(r["remedy"]) if r.get("remedy") is not None else None,
    )


def step_event(step: Any, index: int, deck: str = DEFAULT_DECK) -> Event:
    """One FORMAT step (a one-key mapping) as an engine event."""
    if not isinstance(step, dict) or len(step) != 1:
        raise ScenarioError(f"step {index}: expected a one-key mapping, got {step!r}")
    (key, val), = step.items()
    if key in STEP_FIELDS:
        only_keys(val, STEP_FIELDS[key], f"step {index} ({key})")
    elif key not in SCALAR_STEPS:
        raise ScenarioError(f"step {index}: unknown step {key!r} (FORMAT.md defines "
                            f"{', '.join(sorted({*SCALAR_STEPS, *STEP_FIELDS}))})")
    try:
        if key in SCALAR_STEPS:
            field = SCALAR_STEPS[key]  # the event of the same kind, the value its one field
            cards = [str(v) for v in (val if isinstance(val, list) else [val])]
            ev: Event = event_from_dict({"kind": key, field: cards if field == "cards" else str(val)}, deck)
        elif key == "deal":
            ev = Deal(int(val["to"]), Card.parse(str(val["card"]), deck), val.get("face"))
        elif key == "expose":
            ev = Expose(int(val["seat"]), Card.parse(str(val["card"]), deck))
        elif key == "act":
            amount = val.get("amount")
            ev = Act(int(val["seat"]), str(val["action"]), bool(val.get("all_in", False)),
                     int(amount) if amount is not None else None)
        elif key == "put":
            ev = put_event(val)
        elif key == "discard":
            ev = Discard(int(val["seat"]), int(val["count"]))
        else:
            raise ScenarioError(f"step {index}: unknown step {key!r}")
        validate_event(ev)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, ScenarioError):
            raise
        raise ScenarioError(f"step {index} ({key}): {exc}") from exc
    return ev


def scenario_events(scenario: Scenario) -> tuple[HandSetup, list[Event]]:
    return scenario.setup, list(scenario.events)


@dataclass(slots=True)
class RaisedRuling:
    after: int
    ruling: str
    reason: str
    remedy: str | None
    citations: tuple[str, ...]
    message: str

    def describe(self) -> str:
        remedy = f" remedy {self.remedy}" if self.remedy else ""
        return f"after step {self.after}: {self.ruling} {self.reason}{remedy}"

    def to_dict(self) -> dict[str, Any]:
        return {"after": self.after, "ruling": self.ruling, "reason": self.reason, "remedy": self.remedy,
                "citations": list(self.citations), "message": self.message}


@dataclass(slots=True)
class ScenarioResult:
    name: str
    path: str | None
    rulings: list[RaisedRuling] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def passed(self) -> bool:
        return not self.failures and self.error is None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "file": self.path, "passed": self.passed, "failures": self.failures,
                "error": self.error, "rulings": [r.to_dict() for r in self.rulings]}


def run_scenario(scenario: Scenario) -> ScenarioResult:
    """Replay a scenario and compare everything it expects."""
    result = ScenarioResult(scenario.name, scenario.path)
    engine = HandEngine(scenario.setup)
    _play(engine, scenario.events, scenario.rulings, scenario.state, result)
    if scenario.final_stacks is not None:
        check_final_stacks(engine, scenario.final_stacks, result.failures)
    return result


def _play(engine: HandEngine, events: Iterable[Event], rulings: tuple[ExpectedRuling, ...],
          state: tuple[tuple[int, dict[str, Any]], ...], result: ScenarioResult, prefix: str = "") -> None:
    """Apply one deal's events to ``engine``; record its rulings and every difference."""
    checks: dict[int, list[dict[str, Any]]] = {}
    for after, expected in state:
        checks.setdefault(after, []).append(expected)
    raised: list[RaisedRuling] = []
    for i, event in enumerate(events, 1):
        try:
            found = engine.apply(event)
        except ChipsError as exc:
            result.failures.append(f"{prefix}step {i}: {exc}")
            break
        for r in found:
            raised.append(RaisedRuling(i, r.ruling, r.reason, r.remedy, r.citations, r.message))
        for expected in checks.get(i, []):
            snap = engine.snapshot()
            for key, want in expected.items():
                if check_chips_state(key, want, snap, i, result.failures):
                    continue
                got = snap.get(key, "<unknown key>")
                if got != want:
                    result.failures.append(f"{prefix}after step {i}: expected {key} {want}, got {got}")
    result.rulings.extend(raised)
    _compare_rulings(rulings, raised, result, prefix)


def _compare_rulings(expected: tuple[ExpectedRuling, ...], got: list[RaisedRuling], result: ScenarioResult,
                     prefix: str = "") -> None:
    for k in range(max(len(expected), len(got))):
        e = expected[k] if k < len(expected) else None
        g = got[k] if k < len(got) else None
        if e is not None and g is not None and e.matches(g.after, g):
            continue
        want = e.describe() if e else "no more rulings"
        have = g.describe() if g else "none"
        result.failures.append(f"{prefix}ruling {k + 1}: expected {want}; got {have}")



def find_scenarios(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Files and folders (recursively) of ``*.yaml``/``*.yml`` scenarios, sorted."""
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            yield from sorted(q for q in p.rglob("*") if q.suffix in (".yaml", ".yml") and q.is_file())
        else:
            yield p


def check_file(path: Path) -> ScenarioResult:
    """Load and run one file: a one-deal scenario, or a session (``hands:``)."""
    try:
        data = yaml.safe_load(Path(path).read_text())
        if isinstance(data, dict) and "hands" in data:
            return run_session(Session.from_dict(data, str(path)))
        scenario = Scenario.from_dict(data, str(path))
    except yaml.YAMLError as exc:
        return ScenarioResult(Path(path).stem, str(path), error=f"{path}: not valid YAML: {exc}")
    except (ScenarioError, OSError) as exc:
        return ScenarioResult(Path(path).stem, str(path), error=str(exc))
    return run_scenario(scenario)


# ---------------------------------------------------------------------------------------------
# Sessions: several hands at one table (FORMAT.md "Sessions")
# ---------------------------------------------------------------------------------------------

SESSION_KEYS = {"name", "source", "game", "structure", "rules", "event", "table_size", "seats", "button", "deck",
                "hands"}
# Chip amounts a session may state for its hands (FORMAT.md "Header"); read by the chips layer.
SESSION_CHIP_KEYS = {"blinds", "straddle", "ante", "bb_ante", "bring_in", "limits", "raise_cap"}
HAND_KEYS = {"before", "steps", "expect"}
HAND_EXPECT_KEYS = {"button", "small_blind", "big_blind", "dealt_in", "waiting", "posting", "rulings", "state",
                    "final_stacks"}
CHANGES = {"seat", "unseat", "sit_out", "sit_in", "game", "draw"}
CHANGE_FIELDS = {"seat": {"seat", "post"}, "sit_in": {"seat", "post"},
                 "game": {"game", "rules", "structure", "event"}}
BLIND_POSTS = ("small", "big")


@dataclass(frozen=True, slots=True)
class SessionHand:
    """One deal of a session: the table changes before it, its events and what is expected."""

    before: tuple[tuple[str, Any], ...]
    events: tuple[Event, ...]
    expect: dict[str, Any]
    rulings: tuple[ExpectedRuling, ...]
    state: tuple[tuple[int, dict[str, Any]], ...]
    final_stacks: dict[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Session:
    name: str
    header: dict[str, Any]
    hands: tuple[SessionHand, ...]
    source: str = ""
    path: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: str | None = None) -> Session:
        where = path or (data.get("name", "session") if isinstance(data, dict) else "session")
        try:
            return _parse_session(data)
        except (CardError, EventError, GameError, ProfileError, SetupError, TableError, TypeError, KeyError,
                ValueError) as exc:
            if isinstance(exc, ScenarioError):
                raise
            raise ScenarioError(f"{where}: {exc}") from exc

    def table(self) -> Table:
        """The table as the session starts: every listed seat active, the first button placed."""
        h = self.header
        game = get_game(h["game"])
        table = Table(size=int(h.get("table_size", 9)), game=game.name, rules=str(h["rules"]),
                      event=str(h.get("event", "cash")), structure=h.get("structure") or game.default_structure,
                      deck=str(h.get("deck", DEFAULT_DECK)))
        # FORMAT.md header: with an ante and no blinds the game has antes only, a button and no
        # blinds (RRoP s12 Draw High; the first round starts left of the button).
        table.blinds = not (h.get("ante") is not None and h.get("blinds") is None)
        for seat in h["seats"]:
            table.seat(int(seat), f"seat {seat}")
        if h.get("button") is not None:
            table.set_button(int(h["button"]))
        return table


def _parse_session(data: Any) -> Session:
    if not isinstance(data, dict):
        raise ScenarioError("a session is a mapping")
    only_keys(data, SESSION_KEYS | SESSION_CHIP_KEYS, "session header")
    for key in ("name", "game", "rules", "seats", "hands"):
        if key not in data:
            raise ScenarioError(f"missing required key {key!r}")
    game = get_game(data["game"])
    if str(data.get("event", "cash")) not in ("cash", "tournament"):
        raise ScenarioError(f"event must be cash or tournament, got {data.get('event')!r}")
    deck = str(data.get("deck", DEFAULT_DECK))
    if not isinstance(data["hands"], list) or not data["hands"]:
        raise ScenarioError("'hands' must be a non-empty list of deals")
    hands = tuple(_parse_hand(h, n, deck) for n, h in enumerate(data["hands"], 1))
    drawn = any(key == "draw" for key, _ in hands[0].before)
    if game.button and data.get("button") is None and not drawn:
        raise ScenarioError(f"{game.name} is a button game: 'button' is required (or a draw before the first deal)")
    if drawn and data.get("button") is not None:
        raise ScenarioError("a session whose first deal has a draw for the button has no 'button' in its header")
    session = Session(str(data["name"]), dict(data), hands, str(data.get("source", "")))
    session.table()  # validates the seats, the button and the profile now, not mid-run
    return session


def _parse_change(change: Any, n: int, deck: str) -> tuple[str, Any]:
    where = f"hand {n}: before"
    if not isinstance(change, dict) or len(change) != 1:
        raise ScenarioError(f"{where}: a change is a one-key mapping, got {change!r}")
    ((key, value),) = change.items()
    if key not in CHANGES:
        raise ScenarioError(f"{where}: unknown change {key!r} (known: {', '.join(sorted(CHANGES))})")
    if key in CHANGE_FIELDS and isinstance(value, dict):
        only_keys(value, CHANGE_FIELDS[key], f"{where} ({key})")
    if key == "game":
        only_keys(value, CHANGE_FIELDS["game"], f"{where} (game)")
        if "game" not in value:
            raise ScenarioError(f"{where} (game): missing 'game'")
    if key == "draw":
        if not isinstance(value, dict) or not value:
            raise ScenarioError(f"{where} (draw): expected {{seat: card}} for each player, got {value!r}")
        value = {int(seat): Card.parse(str(card), deck) for seat, card in value.items()}
    return key, value


def _parse_hand(raw: Any, n: int, deck: str) -> SessionHand:
    only_keys(raw, HAND_KEYS, f"hand {n}")
    before = [_parse_change(change, n, deck) for change in _list(raw.get("before"), f"hand {n}: before")]
    steps = _list(raw.get("steps"), f"hand {n}: steps")
    try:
        events = tuple(step_event(step, i, deck) for i, step in enumerate(steps, 1))
    except ScenarioError as exc:
        raise ScenarioError(f"hand {n}: {exc}") from exc
    expect = dict(raw.get("expect") or {})
    rulings, state = parse_expect(expect, len(steps), HAND_EXPECT_KEYS, f"hand {n}: expect")
    return SessionHand(tuple(before), events, expect, rulings, state, final_stacks_expected(expect))


def apply_change(table: Table, key: str, value: Any) -> None:
    """One ``before`` change (FORMAT.md "Sessions")."""
    if key == "seat":
        seat = int(value["seat"]) if isinstance(value, dict) else int(value)
        post = bool(value.get("post", False)) if isinstance(value, dict) else False
        table.seat(seat, f"seat {seat}", post=post)
    elif key == "unseat":
        table.unseat(int(value))
    elif key == "sit_out":
        table.sit_out(int(value))
    elif key == "sit_in":
        seat = int(value["seat"]) if isinstance(value, dict) else int(value)
        table.sit_in(seat, post=bool(value.get("post", False)) if isinstance(value, dict) else False)
    elif key == "draw":
        table.draw_for_button(value)
    elif key == "game":
        game = get_game(value["game"])
        table.change_game(game.name, value.get("rules"), value.get("structure") or game.default_structure,
                          value.get("event"))


def _normal_posts(value: Any) -> dict[int, list[str]]:
    out = {}
    for seat, posts in (value or {}).items():
        items = [posts] if isinstance(posts, str) else list(posts)
        names: set[str] = set()
        for p in items:
            names.update(BLIND_POSTS if p == "both" else (str(p),))
        out[int(seat)] = [b for b in BLIND_POSTS if b in names] + sorted(names - set(BLIND_POSTS))
    return out


def run_session(session: Session) -> ScenarioResult:
    """Play a session hand by hand: the table decides each deal; compare what it expects."""
    result = ScenarioResult(session.name, session.path)
    table = session.table()
    redeal = False
    for n, hand in enumerate(session.hands, 1):
        prefix = f"hand {n}: "
        try:
            for key, value in hand.before:
                apply_change(table, key, value)
            engine = table.start_hand(redeal=redeal)
        except (TableError, GameError, ProfileError, SetupError) as exc:
            result.failures.append(f"{prefix}{exc}")
            return result
        setup = engine.setup
        got = {
            "button": setup.button if engine.game.button else None,
            "small_blind": engine.small_blind,
            "big_blind": engine.big_blind,
            "dealt_in": sorted(setup.seats),
            "waiting": table.waiting(),
            "posting": _normal_posts(table.posts),
        }
        for key in ("button", "small_blind", "big_blind", "dealt_in", "waiting", "posting"):
            if key not in hand.expect:
                continue
            want = hand.expect[key]
            if key in ("dealt_in", "waiting"):
                want = sorted(int(s) for s in want or [])
            elif key == "posting":
                want = _normal_posts(want)
            if got[key] != want:
                result.failures.append(f"{prefix}expected {key} {want}, got {got[key]}")
        _play(engine, hand.events, hand.rulings, hand.state, result, prefix)
        if hand.final_stacks is not None:
            failures: list[str] = []
            check_final_stacks(engine, hand.final_stacks, failures)
            result.failures.extend(prefix + f for f in failures)
        redeal = any(r.ruling == MISDEAL for r in engine.rulings)
    return result
