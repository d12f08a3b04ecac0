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
from controller.rules.engine import HandEngine, SetupError
from controller.rules.events import (
    Act,
    Aside,
    BoardCards,
    Boxed,
    Burn,
    Deal,
    Discard,
    Event,
    EventError,
    Expose,
    HandSetup,
    Muck,
    Report,
    Stub,
    validate_event,
)
from controller.rules.games import GameError, get_game
from controller.rules.profiles import ProfileError
from controller.rules.rulings import Ruling

HEADER_KEYS = {
    "name", "source", "game", "structure", "rules", "event", "table_size", "seats", "button",
    "small_blind", "big_blind", "deck", "steps", "expect",
}


class ScenarioError(PokerTableError, ValueError):
    """A scenario file that does not follow FORMAT.md."""


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

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: str | None = None) -> Scenario:
        where = path or data.get("name", "scenario") if isinstance(data, dict) else path
        try:
            return _parse(data, path)
        except (CardError, EventError, GameError, ProfileError, SetupError, TypeError, KeyError) as exc:
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
    unknown = set(data) - HEADER_KEYS
    if unknown:
        raise ScenarioError(f"unknown header keys {sorted(unknown)}")
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
    )
    if game.button and setup.button is None:
        raise ScenarioError(f"{game.name} is a button game: 'button' is required")
    if setup.event not in ("cash", "tournament"):
        raise ScenarioError(f"event must be cash or tournament, got {setup.event!r}")
    HandEngine(setup)  # validates seats, button, blinds and profile
    events = tuple(step_event(step, i, deck) for i, step in enumerate(data["steps"] or [], 1))
    expect = data.get("expect") or {}
    rulings = tuple(_expected_ruling(r) for r in expect.get("rulings") or [])
    state = tuple((int(s["after"]), {k: v for k, v in s.items() if k != "after"}) for s in expect.get("state") or [])
    return Scenario(str(data["name"]), setup, events, rulings, state, str(data.get("source", "")), path)


def _as_tuple(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else (str(value),)


def _expected_ruling(r: dict[str, Any]) -> ExpectedRuling:
    return ExpectedRuling(
        after=int(r["after"]),
        ruling=str(r["ruling"]),
        reasons=_as_tuple(r["reason"]),
        remedies=_as_tuple(r["remedy"]) if r.get("remedy") is not None else None,
    )


def _cards(value: Any, deck: str) -> tuple[Card, ...]:
    if not isinstance(value, list):
        value = [value]
    return tuple(Card.parse(str(v), deck) for v in value)


def step_event(step: Any, index: int, deck: str = DEFAULT_DECK) -> Event:
    """One FORMAT step (a one-key mapping) as an engine event."""
    if not isinstance(step, dict) or len(step) != 1:
        raise ScenarioError(f"step {index}: expected a one-key mapping, got {step!r}")
    (key, val), = step.items()
    try:
        if key == "deal":
            ev: Event = Deal(int(val["to"]), Card.parse(str(val["card"]), deck), val.get("face"))
        elif key == "burn":
            ev = Burn(Card.parse(str(val), deck))
        elif key == "board":
            ev = BoardCards(_cards(val, deck))
        elif key == "stub":
            ev = Stub(_cards(val, deck))
        elif key == "muck":
            ev = Muck(Card.parse(str(val), deck))
        elif key == "aside":
            ev = Aside(Card.parse(str(val), deck))
        elif key == "boxed":
            ev = Boxed(Card.parse(str(val), deck))
        elif key == "expose":
            ev = Expose(int(val["seat"]), Card.parse(str(val["card"]), deck))
        elif key == "act":
            ev = Act(int(val["seat"]), str(val["action"]), bool(val.get("all_in", False)))
        elif key == "discard":
            ev = Discard(int(val["seat"]), int(val["count"]))
        elif key == "report":
            ev = Report(str(val))
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
    checks = {}
    for after, expected in scenario.state:
        checks.setdefault(after, []).append(expected)
    for i, event in enumerate(scenario.events, 1):
        for r in engine.apply(event):
            result.rulings.append(RaisedRuling(i, r.ruling, r.reason, r.remedy, r.citations, r.message))
        for expected in checks.get(i, []):
            snap = engine.snapshot()
            for key, want in expected.items():
                got = snap.get(key, "<unknown key>")
                if got != want:
                    result.failures.append(f"after step {i}: expected {key} {want}, got {got}")
    _compare_rulings(scenario.rulings, result)
    return result


def _compare_rulings(expected: tuple[ExpectedRuling, ...], result: ScenarioResult) -> None:
    got = result.rulings
    for k in range(max(len(expected), len(got))):
        e = expected[k] if k < len(expected) else None
        g = got[k] if k < len(got) else None
        if e is not None and g is not None and e.matches(g.after, g):
            continue
        want = e.describe() if e else "no more rulings"
        have = g.describe() if g else "none"
        result.failures.append(f"ruling {k + 1}: expected {want}; got {have}")



def find_scenarios(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Files and folders (recursively) of ``*.yaml``/``*.yml`` scenarios, sorted."""
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            yield from sorted(q for q in p.rglob("*") if q.suffix in (".yaml", ".yml") and q.is_file())
        else:
            yield p


def check_file(path: Path) -> ScenarioResult:
    try:
        scenario = Scenario.load(path)
    except (ScenarioError, OSError) as exc:
        return ScenarioResult(path.stem, str(path), error=str(exc))
    return run_scenario(scenario)
