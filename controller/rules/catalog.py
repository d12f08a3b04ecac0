"""The rulings catalog: what each ruling means, what the dealer must do, and which rule says so.

The data lives in ``controller/rules/data/rulings.toml``; this module loads and validates it once at
import and answers the engine, the console and the docs:

- :data:`REASONS` and :data:`REMEDIES`: read-only mappings of code -> frozen :class:`Reason` /
  :class:`Remedy`.
- :func:`ruling_kind`: ``misdeal``, ``void`` or ``irregularity`` for a reason code.
- :func:`remedies_for`: the remedy codes that can follow a reason under a rule profile.
- :func:`citations`: the rules behind a ruling, per profile (``robert`` or ``tda``) and game.
- :func:`message` and :func:`remedy_steps`: the dealer's one-line message and the steps, filled
  from whatever the engine knows (``seat``, ``expected``, ``card``, ``count``, ``street``,
  ``game``).  What it does not know is left out gracefully: a parenthesis holding an unknown
  placeholder is dropped whole, ``seat {seat}`` reads "the player" and ``seat {expected}`` reads
  "the correct seat", a bare ``{card}`` reads "the card", and so on.
- :func:`markdown_table` and :func:`markdown`: the docs (``docs/rulings.md`` is the output of
  ``python -m controller.rules.catalog --markdown``).
"""

from __future__ import annotations

import argparse
import re
import string
import sys
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from controller.errors import PokerTableError
from controller.rules import profiles as _profiles
from controller.rules.games import GAMES as _GAME_DEFS

DATA_PATH = Path(__file__).parent / "data" / "rulings.toml"

# The profiles the catalog may cite for: the one list in controller.profiles.  A profile with a
# ``base`` (highland, a cardroom's own file) needs no citations of its own: its base's stand.
PROFILES = tuple(_profiles.names())
ROOT_PROFILES = tuple(p for p in PROFILES if _profiles.get_profile(p).base is None)
RULING_KINDS = ("misdeal", "void", "irregularity")
GAMES = tuple(_GAME_DEFS)  # every game of controller.rules.games, in its order
# A game without its own citation override uses its parent's, as the rulebook says:
# RRoP s6 Omaha 1, s7 Omaha High-Low 1, s9 Razz 1, s10 Seven-Card Stud High-Low 1,
# s11 Deuce-to-Seven Lowball ("the same as those for ace-to-five lowball, except ..."),
# and Jacks-or-Better is a form of s12 Draw High.
GAME_PARENT: Mapping[str, str] = MappingProxyType(
    {
        "omaha": "holdem",
        "omaha8": "omaha",
        "razz": "stud",
        "stud8": "stud",
        "lowball_27": "lowball_a5",
        "triple_draw_27": "lowball_27",  # deuce-to-seven with three draws (no rulebook here has its own)
        "jacks_or_better": "draw_high",
    }
)
GAME_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "holdem": "hold'em",
        "omaha": "Omaha",
        "omaha8": "Omaha high-low",
        "stud": "seven-card stud",
        "razz": "razz",
        "stud8": "seven-card stud high-low",
        "lowball_a5": "ace-to-five lowball",
        "lowball_27": "deuce-to-seven lowball",
        "triple_draw_27": "deuce-to-seven triple draw",
        "draw_high": "draw high",
        "jacks_or_better": "jacks-or-better",
    }
)

PLACEHOLDERS = ("seat", "expected", "card", "count", "street", "game", "zone", "amount", "call", "minimum",
                "maximum")
# What a placeholder reads as when the engine does not know its value.
_DEFAULTS: Mapping[str, str] = MappingProxyType(
    {
        "seat": "the player",
        "expected": "the correct seat",
        "card": "the card",
        "count": "several",
        "street": "this round",
        "game": "this game",
        "zone": "the table",
        "amount": "the amount",
        "call": "the amount faced",
        "minimum": "the minimum",
        "maximum": "the maximum",
    }
)
_PLACEHOLDER_RE = re.compile(r"\{(\w+)\}")
_PAREN_RE = re.compile(r" ?\(([^()]*\{\w+\}[^()]*)\)")
_SEAT_RE = re.compile(r"\b[Ss]eat \{(seat|expected)\}")


class CatalogError(PokerTableError, ValueError):
    """The rulings catalog is malformed; the message names the offending key."""


@dataclass(frozen=True)
class Reason:
    """One reason code: the ruling it triggers, how to say it, and the rules behind it."""

    code: str
    ruling: str
    title: str
    message: str
    cite: Mapping[str, tuple[str, ...]]
    cite_games: Mapping[str, Mapping[str, tuple[str, ...]]]
    remedies: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class Remedy:
    """One remedy code: what the dealer does, step by step, and the rules behind it."""

    code: str
    title: str
    steps: tuple[str, ...]
    cite: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class Catalog:
    reasons: Mapping[str, Reason]
    remedies: Mapping[str, Remedy]


# --------------------------------------------------------------------------------------------
# Loading and validation
# --------------------------------------------------------------------------------------------


def load(path: Path | str | None = None) -> Catalog:
    """Load and validate a catalog (the packaged one by default)."""
    path = Path(path) if path is not None else DATA_PATH
    with open(path, "rb") as fh:
        try:
            data = tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise CatalogError(f"{path}: {exc}") from exc
    return parse(data)


def parse(data: Mapping[str, Any]) -> Catalog:
    """Validate the decoded TOML and build the catalog; raises :class:`CatalogError`."""
    _check_keys("catalog", data, required={"reasons", "remedies"})
    remedies_raw = _table("remedies", data["remedies"])
    reasons_raw = _table("reasons", data["reasons"])
    remedies = {}
    for code, raw in remedies_raw.items():
        remedies[code] = _parse_remedy(code, _table(f"remedies.{code}", raw))
    reasons = {}
    for code, raw in reasons_raw.items():
        reasons[code] = _parse_reason(code, _table(f"reasons.{code}", raw), remedies)
    return Catalog(MappingProxyType(reasons), MappingProxyType(remedies))


def _parse_reason(code: str, raw: Mapping[str, Any], remedies: Mapping[str, Remedy]) -> Reason:
    key = f"reasons.{code}"
    _check_keys(
        key, raw, required={"ruling", "title", "message", "cite"}, optional={"cite_games", "remedies"}
    )
    ruling = _text(f"{key}.ruling", raw["ruling"])
    if ruling not in RULING_KINDS:
        raise CatalogError(f"{key}.ruling: {ruling!r} is not one of {', '.join(RULING_KINDS)}")
    title = _text(f"{key}.title", raw["title"])
    msg = _text(f"{key}.message", raw["message"])
    if "\n" in msg:
        raise CatalogError(f"{key}.message: must be one line")
    _check_placeholders(f"{key}.message", msg)
    cite = _cite(f"{key}.cite", raw["cite"], partial=False)
    cite_games: dict[str, Mapping[str, tuple[str, ...]]] = {}
    for game, over in _table(f"{key}.cite_games", raw.get("cite_games", {})).items():
        if game not in GAMES:
            raise CatalogError(f"{key}.cite_games.{game}: unknown game (known: {', '.join(GAMES)})")
        cite_games[game] = _cite(f"{key}.cite_games.{game}", over, partial=True)
    rem_raw = _table(f"{key}.remedies", raw.get("remedies", {p: [] for p in ROOT_PROFILES}))
    _check_keys(f"{key}.remedies", rem_raw, required=set(ROOT_PROFILES), optional=set(PROFILES))
    rems: dict[str, tuple[str, ...]] = {}
    for profile in PROFILES:
        if profile not in rem_raw:
            continue
        codes = _strings(f"{key}.remedies.{profile}", rem_raw[profile], allow_empty=True)
        for rc in codes:
            if rc not in remedies:
                raise CatalogError(f"{key}.remedies.{profile}: unknown remedy {rc!r}")
        rems[profile] = codes
    return Reason(
        code=code,
        ruling=ruling,
        title=title,
        message=msg,
        cite=cite,
        cite_games=MappingProxyType(cite_games),
        remedies=MappingProxyType(rems),
    )


def _parse_remedy(code: str, raw: Mapping[str, Any]) -> Remedy:
    key = f"remedies.{code}"
    _check_keys(key, raw, required={"title", "steps", "cite"})
    title = _text(f"{key}.title", raw["title"])
    steps = _strings(f"{key}.steps", raw["steps"])
    for i, step in enumerate(steps, 1):
        if "\n" in step:
            raise CatalogError(f"{key}.steps[{i}]: must be one line")
        _check_placeholders(f"{key}.steps[{i}]", step)
    return Remedy(code=code, title=title, steps=steps, cite=_cite(f"{key}.cite", raw["cite"], partial=False))


def _cite(key: str, raw: Any, *, partial: bool) -> Mapping[str, tuple[str, ...]]:
    table = _table(key, raw)
    _check_keys(key, table, required=set() if partial else set(ROOT_PROFILES), optional=set(PROFILES))
    if partial and not table:
        raise CatalogError(f"{key}: needs citations for at least one of {', '.join(PROFILES)}")
    out = {}
    for profile in PROFILES:
        if profile in table:
            cites = _strings(f"{key}.{profile}", table[profile])
            for c in cites:
                if "{" in c or "}" in c:
                    raise CatalogError(f"{key}.{profile}: a citation has braces: {c!r}")
            out[profile] = cites
    return MappingProxyType(out)


def _check_placeholders(key: str, text: str) -> None:
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise CatalogError(f"{key}: bad placeholder syntax in {text!r}: {exc}") from exc
    for _literal, field, spec, conversion in parsed:
        if field is None:
            continue
        if field not in PLACEHOLDERS:
            allowed = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
            raise CatalogError(f"{key}: unknown placeholder {{{field}}} (allowed: {allowed})")
        if spec or conversion:
            raise CatalogError(f"{key}: placeholder {{{field}}} must be plain (no format spec or conversion)")


def _check_keys(
    key: str, table: Mapping[str, Any], *, required: set[str], optional: Iterable[str] = ()
) -> None:
    missing = sorted(required - set(table))
    if missing:
        raise CatalogError(f"{key}: missing {', '.join(missing)}")
    extra = sorted(set(table) - required - set(optional))
    if extra:
        raise CatalogError(f"{key}: unknown keys {', '.join(extra)}")


def _table(key: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise CatalogError(f"{key}: must be a table")
    return value


def _text(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CatalogError(f"{key}: must be a non-empty string")
    return value


def _strings(key: str, value: Any, *, allow_empty: bool = False) -> tuple[str, ...]:
    if not isinstance(value, list) or (not value and not allow_empty):
        raise CatalogError(f"{key}: must be a {'' if allow_empty else 'non-empty '}list of strings")
    out = tuple(_text(f"{key}[{i}]", v) for i, v in enumerate(value, 1))
    if len(set(out)) != len(out):
        raise CatalogError(f"{key}: duplicate entries")
    return out


_CATALOG = load()
REASONS: Mapping[str, Reason] = _CATALOG.reasons
REMEDIES: Mapping[str, Remedy] = _CATALOG.remedies


# --------------------------------------------------------------------------------------------
# Queries
# --------------------------------------------------------------------------------------------


def _reason(code: str) -> Reason:
    try:
        return REASONS[code]
    except KeyError:
        raise KeyError(f"unknown reason code {code!r}") from None


def _remedy(code: str) -> Remedy:
    try:
        return REMEDIES[code]
    except KeyError:
        raise KeyError(f"unknown remedy code {code!r}") from None


def _check_profile(profile: str) -> None:
    if profile not in PROFILES:
        try:
            _profiles.get_profile(profile)  # a cardroom's own profile, loaded from its file
        except _profiles.ProfileError:
            raise ValueError(f"unknown rule profile {profile!r} (known: {', '.join(_profiles.names())})") from None


def _own(table: Mapping[str, Any], profile: str) -> Any:
    """The entry of ``profile``, or of the nearest base that has one (None if none has)."""
    for p in _profiles.chain(profile):
        if p in table:
            return table[p]
    return None


def ruling_kind(reason: str) -> str:
    """``misdeal``, ``void`` or ``irregularity``."""
    return _reason(reason).ruling


def remedies_for(reason: str, profile: str) -> tuple[str, ...]:
    """The remedy codes that can follow ``reason`` under ``profile`` (empty for none)."""
    _check_profile(profile)
    return _own(_reason(reason).remedies, profile) or ()


def reason_citations(reason: str, profile: str, game: str | None = None) -> tuple[str, ...]:
    """The citations of a reason alone: the game's override (or its parent's) if any, else the base."""
    _check_profile(profile)
    r = _reason(reason)
    g = game
    if g is not None and g not in GAMES:
        raise ValueError(f"unknown game {g!r} (known: {', '.join(GAMES)})")
    for p in _profiles.chain(profile):
        g = game
        while g is not None:
            over = r.cite_games.get(g)
            if over is not None and p in over:
                return over[p]
            g = GAME_PARENT.get(g)
        if p in r.cite:
            return r.cite[p]
    return ()


def citations(reason: str, remedy: str | None, profile: str, game: str | None = None) -> tuple[str, ...]:
    """The rules behind a ruling: the reason's citations (the game's override replacing the base
    ones when there is one), then the remedy's, without duplicates, in that order."""
    out = list(reason_citations(reason, profile, game))
    if remedy is not None:
        out += _own(_remedy(remedy).cite, profile) or ()
    return tuple(dict.fromkeys(out))


def _value(name: str, value: Any) -> str:
    if name == "game" and isinstance(value, str):
        return GAME_NAMES.get(value, value)
    if name == "zone":  # a place on the table as controller.geometry names it: "seat:3", "board"
        kind, _, number = str(value).partition(":")
        return f"seat {number}" if kind == "seat" and number else ZONE_WORDS.get(kind, str(value))
    return str(value)


#: How a message names a zone that is not a seat.
ZONE_WORDS: Mapping[str, str] = MappingProxyType(
    {"board": "the board", "burn": "the burn pile", "muck": "the muck", "shoe": "the shoe"})


def render(template: str, context: Mapping[str, Any]) -> str:
    """Fill a catalog template from ``context``; unknown values are left out gracefully."""
    known = {k: _value(k, v) for k, v in context.items() if v is not None and str(v) != ""}

    def paren(m: re.Match[str]) -> str:
        names = _PLACEHOLDER_RE.findall(m.group(1))
        return m.group(0) if all(n in known for n in names) else ""

    def seat(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in known:
            return m.group(0)
        return _DEFAULTS[name]

    def bare(m: re.Match[str]) -> str:
        name = m.group(1)
        return known.get(name, _DEFAULTS.get(name, ""))

    text = _PAREN_RE.sub(paren, template)
    text = _SEAT_RE.sub(seat, text)
    text = _PLACEHOLDER_RE.sub(bare, text)
    text = re.sub(r"  +", " ", text).strip()
    return text[:1].upper() + text[1:]


def message(reason: str, **context: Any) -> str:
    """The dealer's one-line message for ``reason``."""
    return render(_reason(reason).message, context)


def remedy_steps(remedy: str, **context: Any) -> list[str]:
    """What the dealer does, step by step."""
    return [render(step, context) for step in _remedy(remedy).steps]


# --------------------------------------------------------------------------------------------
# Docs
# --------------------------------------------------------------------------------------------


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def _cite_cell(cites_by_game: list[tuple[str | None, tuple[str, ...]]]) -> str:
    parts = []
    for game, cites in cites_by_game:
        joined = "; ".join(_md(c) for c in cites)
        parts.append(joined if game is None else f"*{game}*: {joined}")
    return "<br>".join(parts)


def _reason_cites(r: Reason, profile: str) -> list[tuple[str | None, tuple[str, ...]]]:
    rows: list[tuple[str | None, tuple[str, ...]]] = [(None, r.cite[profile])] if profile in r.cite else []
    for game in GAMES:
        over = r.cite_games.get(game)
        if over is not None and profile in over:
            rows.append((game, over[profile]))
    return rows


def _profile_cell(rows: list[tuple[str | None, tuple[str, ...]]], profile: str) -> str:
    """A profile's own citations, or which base's stand for it."""
    if rows:
        return _cite_cell(rows)
    base = _profiles.get_profile(profile).base
    return f"as `{base}`"


def _header(first: list[str]) -> list[str]:
    cols = first + list(PROFILES)
    return ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]


def markdown_table() -> str:
    """One row per reason: code, ruling, when, remedies, citations under each profile."""
    lines = _header(["reason", "ruling", "when", "remedies"])
    for r in REASONS.values():
        rem = {p: remedies_for(r.code, p) for p in PROFILES}
        if len(set(rem.values())) == 1:
            rem_cell = ", ".join(f"`{c}`" for c in rem[PROFILES[0]]) or "-"
        else:
            rem_cell = "<br>".join(f"{p}: " + (", ".join(f"`{c}`" for c in rem[p]) or "-") for p in PROFILES)
        cites = " | ".join(_profile_cell(_reason_cites(r, p), p) for p in PROFILES)
        lines.append(f"| `{r.code}` | {r.ruling} | {_md(r.title)} | {rem_cell} | {cites} |")
    return "\n".join(lines) + "\n"


def remedies_markdown_table() -> str:
    """One row per remedy: code, steps, citations under each profile."""
    lines = _header(["remedy", "steps"])
    for m in REMEDIES.values():
        steps = "<br>".join(f"{i}. {_md(s)}" for i, s in enumerate(m.steps, 1))
        cites = " | ".join(_profile_cell([(None, m.cite[p])] if p in m.cite else [], p) for p in PROFILES)
        lines.append(f"| `{m.code}` ({_md(m.title)}) | {steps} | {cites} |")
    return "\n".join(lines) + "\n"


def markdown() -> str:
    """The whole of ``docs/rulings.md``."""
    parents = ", ".join(f"{g} -> {p}" for g, p in GAME_PARENT.items())
    return (
        "# Rulings\n\n"
        "<!-- Generated by `python -m controller.rules.catalog --markdown` from "
        "controller/rules/data/rulings.toml; do not edit by hand. -->\n\n"
        "Every ruling the rules engine raises is a `misdeal`, a `void` hand or an `irregularity`, with a\n"
        "reason code and (irregularities) a remedy code, as in the conformance FORMAT.md. Citations are\n"
        "given per rule profile: `robert` (Robert's Rules of Poker v4, cited `RRoP sN Heading rule`),\n"
        "`tda` (the TDA tournament rules, cited `TDA NN`; where the TDA is silent a TDA table falls back\n"
        "to house rules: the Highland house rules where they speak, otherwise the Robert's rule, marked\n"
        '"(TDA silent; house rules apply)"; TDA 33-A leaves draw games to house standards) and `highland`\n'
        "(Highland Poker's house rules, a data file over `tda`: controller/rules/data/profiles/highland.toml,\n"
        'cited `House rules (Highland) Heading: Paragraph`; "as `tda`" where the TDA citations stand).\n\n'
        "A game may cite its own rule (*game*: ...); a game without its own entry uses its parent's\n"
        f"({parents}).\n\n"
        "## Reasons\n\n"
        f"{markdown_table()}\n"
        "## Remedies\n\n"
        "Steps are shown as written; the dealer's console fills `{seat}`, `{card}` and the like.\n\n"
        f"{remedies_markdown_table()}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m controller.rules.catalog", description="The rulings catalog."
    )
    parser.add_argument("--markdown", action="store_true", help="print docs/rulings.md")
    args = parser.parse_args(argv)
    if args.markdown:
        sys.stdout.write(markdown())
        return 0
    for r in REASONS.values():
        print(f"{r.code:24} {r.ruling:12} {message(r.code)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
