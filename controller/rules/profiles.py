"""Rule profiles as data: where Robert's Rules and the TDA differ, and cash vs tournament.

Every difference the engine honours is a field here, so a house can add a profile without
touching the engine: a TOML file that names a ``base`` profile and overrides it field by field
(``controller/rules/data/profiles/highland.toml`` is one; a cardroom points its config's
``rules = "path/to/house.toml"`` at its own).  :func:`names` is the one list of profiles.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from controller.errors import PokerTableError, reject_unknown_keys


@dataclass(frozen=True, slots=True)
class SubstantialAction:
    """When a misdeal can no longer be called.

    RRoP s3 Misdeals 2: two players (after the blinds/forced bet) have acted.
    TDA 34: any two actions in turn of which one puts chips in, or any three actions.
    """

    players: int | None = None  # distinct seats acting in turn
    actions: int | None = None  # any actions in turn
    chip_actions: tuple[int, int] | None = None  # (actions, of which putting chips in)

    def reached(self, seats: int, actions: int, chips: int) -> bool:
        if self.players is not None and seats >= self.players:
            return True
        if self.actions is not None and actions >= self.actions:
            return True
        if self.chip_actions is not None:
            n, c = self.chip_actions
            return actions >= n and chips >= c
        return False


@dataclass(frozen=True, slots=True)
class BettingRules:
    """Where the rulebooks differ on chips (used by :mod:`controller.rules.chips`)."""

    # Limit raises heads-up: RRoP s3 Betting and Raising 4 allows unlimited raising once the pot is
    # heads-up before the cap; TDA 47 keeps the house limit until the event is down to two players.
    heads_up_unlimited_raises: bool
    # TDA 45: silently pushed chips facing a bet are a call when removing one of the smallest
    # chips leaves less than the call.  RRoP has no such rule (s3 Betting and Raising 14 only).
    multiple_chip_rule: bool
    # The share of the minimum raise that, pushed silently over a call, binds a full raise:
    # TDA 42-A (50%) and RRoP s3 Betting and Raising 14 ("a full bet plus a half-bet or more").
    raise_standard: float = 0.5
    # Limit: the share of a full bet an all-in must reach to reopen the betting (RRoP s3 Betting
    # and Raising 5; TDA 43).
    limit_reopen: float = 0.5
    # Pot-limit: TDA 49-B counts a short all-in blind as whole in the pre-flop maximum; RRoP has no
    # such rule (s14 Pot-Limit 4: the pot as it is).
    short_blind_counts_whole: bool = False


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    title: str
    substantial: SubstantialAction
    four_card_flop: str  # remedy: RRoP s5 Hold'em 2-3 redeal / TDA 35 scramble
    # TDA 33-B: the button may be dealt two consecutive cards (a skipped button is no misdeal).
    button_consecutive_cards: bool
    # RRoP s3 Misdeals 1(c): two boxed cards anywhere in the deal; TDA 33-A-1: on the initial deal.
    two_boxed_initial_deal_only: bool
    # A stud downcard dealt face up: cash RRoP s8 Seven-Card Stud 5 (next card down / dead hand);
    # tournament RRoP s8 rule 5 last sentence and TDA 33-A-5: misdeal.
    stud_exposed_misdeal_events: tuple[str, ...] = ("tournament",)
    # Button movement: RRoP s4 Blinds 1 allows either; RRoP s15 30 and TDA 30 use a dead button in
    # tournaments.
    dead_button_events: tuple[str, ...] = ("tournament",)
    # A premature stud card: RRoP s8 Seven-Card Stud 14 eliminates a round; TDA RP-5 D sets one aside.
    stud_premature_card: str = "eliminate_round"
    # What un-binds an action out of turn: RRoP s3 Betting and Raising 10 "a bet, call, or raise by an
    # intervening player"; TDA 39-A "a check, call or fold by the rightful player does not change action".
    oot_changed_by: tuple[str, ...] = ("bet", "raise", "complete", "call")
    # A live straddle (RRoP s14 No-Limit 12; house rules may allow it at cash games only).
    straddle_events: tuple[str, ...] = ("cash",)
    # New players at a tournament are dealt in at once (RRoP s15 Tournaments 15: "including the
    # small blind or button position"), except, under TDA 7 and 9, between the small blind and the
    # button, where they wait for the button to pass: the events where that gap applies.
    newcomer_gap_events: tuple[str, ...] = ()
    # Going heads-up: TDA 32 adjusts the button so nobody has the big blind twice in a row; RRoP s4
    # Rules for Using Blinds 1(a) and 3 move the button forward to the next player (a moving button).
    heads_up_button_adjust: bool = False
    # The profile this one overrides field by field; its citations stand where this one has none.
    base: str | None = None
    source: str = ""  # the data file, for a profile loaded from one
    betting: BettingRules = BettingRules(heads_up_unlimited_raises=False, multiple_chip_rule=True)


PROFILES: dict[str, Profile] = {
    "robert": Profile(
        "robert",
        "Robert's Rules of Poker v4",
        SubstantialAction(players=2),
        four_card_flop="redeal_flop",
        button_consecutive_cards=False,
        two_boxed_initial_deal_only=False,
        betting=BettingRules(heads_up_unlimited_raises=True, multiple_chip_rule=False),
    ),
    "tda": Profile(
        "tda",
        "TDA tournament rules",
        SubstantialAction(actions=3, chip_actions=(2, 1)),
        four_card_flop="scramble_flop",
        button_consecutive_cards=True,
        two_boxed_initial_deal_only=True,
        dead_button_events=("cash", "tournament"),
        stud_premature_card="set_aside_round",
        oot_changed_by=("bet", "raise", "complete"),
        straddle_events=(),
        newcomer_gap_events=("tournament",),
        heads_up_button_adjust=True,
        betting=BettingRules(heads_up_unlimited_raises=False, multiple_chip_rule=True,
                             short_blind_counts_whole=True),
    ),
}


class ProfileError(PokerTableError, ValueError):
    pass


DATA_DIR = Path(__file__).parent / "data" / "profiles"
EVENTS = ("cash", "tournament")
# Fields whose value is a code from a closed list (FORMAT.md remedies, betting actions).
CHOICES: dict[str, tuple[str, ...]] = {
    "four_card_flop": ("redeal_flop", "scramble_flop"),
    "stud_premature_card": ("eliminate_round", "set_aside_round"),
}
ACTIONS = ("bet", "raise", "complete", "call", "check", "fold", "bring_in")
_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
_FIXED = {"name", "base", "source"}


def _check_list(where: str, value: Any, allowed: tuple[str, ...]) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ProfileError(f"{where}: expected a list of strings, got {value!r}")
    bad = [v for v in value if v not in allowed]
    if bad:
        raise ProfileError(f"{where}: unknown {bad}; expected some of {list(allowed)}")
    return tuple(value)


def _field_value(where: str, key: str, value: Any, current: Any) -> Any:
    """Validate one overridden field against the type of the base profile's value."""
    if key == "substantial":
        if not isinstance(value, dict):
            raise ProfileError(f"{where}: expected a table with players, actions and/or chip_actions")
        reject_unknown_keys(value, ("players", "actions", "chip_actions"), ProfileError, where)
        for k in ("players", "actions"):
            if k in value and (not isinstance(value[k], int) or isinstance(value[k], bool) or value[k] < 1):
                raise ProfileError(f"{where}.{k}: expected a whole number of at least 1, got {value[k]!r}")
        chip = value.get("chip_actions")
        if chip is not None and (not isinstance(chip, list) or len(chip) != 2
                                 or not all(isinstance(x, int) and x >= 0 for x in chip)):
            raise ProfileError(f"{where}.chip_actions: expected [actions, of which putting chips in], got {chip!r}")
        if not value:
            raise ProfileError(f"{where}: give players, actions or chip_actions")
        return SubstantialAction(value.get("players"), value.get("actions"), tuple(chip) if chip else None)
    if isinstance(current, bool):
        if not isinstance(value, bool):
            raise ProfileError(f"{where}: expected true or false, got {value!r}")
        return value
    if isinstance(current, tuple):
        allowed = EVENTS if key.endswith("_events") else ACTIONS
        return _check_list(where, value, allowed)
    if isinstance(current, str):
        if not isinstance(value, str) or not value:
            raise ProfileError(f"{where}: expected a string, got {value!r}")
        if key in CHOICES and value not in CHOICES[key]:
            raise ProfileError(f"{where}: {value!r} is not one of {list(CHOICES[key])}")
        return value
    raise ProfileError(f"{where}: this field cannot be set from a file")  # pragma: no cover


def profile_from_mapping(data: Any, source: str = "<profile>") -> Profile:
    """A profile from data: ``name``, ``base`` and the fields that differ from the base.

    Every error names the file and the field, so a cardroom can fix its own file."""
    if not isinstance(data, dict):
        raise ProfileError(f"{source}: a profile is a table of fields")
    for key in ("name", "base"):
        if not isinstance(data.get(key), str):
            raise ProfileError(f"{source}: field {key!r} is required (a string)")
    name, base_name = data["name"], data["base"]
    if not _NAME_RE.match(name):
        raise ProfileError(f"{source}: field 'name': {name!r} must be lower-case letters, digits and '_'")
    if base_name not in PROFILES:
        raise ProfileError(f"{source}: field 'base': unknown profile {base_name!r}; expected one of {names()}")
    base = PROFILES[base_name]
    settable = {f.name for f in fields(Profile)} - _FIXED
    changes: dict[str, Any] = {}
    for key, value in data.items():
        if key in ("name", "base"):
            continue
        if key not in settable:
            raise ProfileError(f"{source}: unknown field {key!r}; a profile sets {sorted(settable)}")
        changes[key] = _field_value(f"{source}: field {key!r}", key, value, getattr(base, key))
    return replace(base, name=name, base=base_name, source=source, **changes)


def load_profile_file(path: str | Path) -> Profile:
    """Read a profile file (TOML), validate it and register it under its name."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ProfileError(f"{p}: cannot read the profile: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{p}: not valid TOML: {exc}") from None
    profile = profile_from_mapping(data, str(p))
    known = PROFILES.get(profile.name)
    if known is not None and known.source != profile.source:
        raise ProfileError(f"{p}: field 'name': profile {profile.name!r} already exists ({known.source or 'built in'})")
    PROFILES[profile.name] = profile
    return profile


def _load_packaged() -> None:
    for path in sorted(DATA_DIR.glob("*.toml")):
        load_profile_file(path)


def names() -> list[str]:
    """Every known profile: the built-in ones, the packaged data files, then any loaded since."""
    return list(PROFILES)


def chain(name: str) -> list[str]:
    """``name``, its base, the base's base... (where citations fall back)."""
    out = []
    p: Profile | None = get_profile(name)
    while p is not None:
        out.append(p.name)
        p = PROFILES.get(p.base) if p.base else None
    return out


def get_profile(name: str) -> Profile:
    """A profile by name, or by the path of a profile file (loaded once)."""
    if name in PROFILES:
        return PROFILES[name]
    if name.endswith(".toml") or "/" in name:
        path = str(Path(name))
        for p in PROFILES.values():
            if p.source == path:
                return p
        return load_profile_file(path)
    raise ProfileError(f"unknown rule profile {name!r}; expected one of {names()} or the path of a profile file")


_load_packaged()
