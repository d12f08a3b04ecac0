"""The rulings catalog: complete against FORMAT.md, true to the rulebooks, safe to format."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from controller.rules import catalog as rc
from tests.conftest import scenario_params, shared_conformance

REPO = Path(__file__).resolve().parents[2]
CONFORMANCE = shared_conformance() or REPO.parent / "shared" / "conformance"
SEEDS = Path(os.environ.get("RULEBOOK_DIR", CONFORMANCE.parent / "seeds"))
FORMAT_MD = CONFORMANCE / "FORMAT.md"

EXTRA_REASONS = {"shuffler_fault": "irregularity", "unknown_tag": "irregularity", "called_misdeal": "misdeal",
                 "camera_mismatch": "irregularity", "card_unread": "irregularity", "clock_expired": "irregularity",
                 "order_unknown": "irregularity",  # the antennas lost the order of cards they read (issue 26)
                 # RRoP s4 Rules for Using Blinds 10 on the console's "looked" (issue 22)
                 "owed_blind_looked": "irregularity", "owed_blind_acted": "irregularity"}
EXTRA_REMEDIES = {"redeal", "void_hand", "identify_card", "acknowledge", "post_next_deal", "confirm_order"}
FULL_CONTEXT = {"seat": 4, "expected": 2, "card": "Ah", "count": 3, "street": "turn", "game": "lowball_a5",
                "zone": "board", "amount": "1,400", "call": "1,000", "minimum": "2,000", "maximum": "2,500"}


# --------------------------------------------------------------------------------------------
# FORMAT.md: every code, the same ruling kind
# --------------------------------------------------------------------------------------------


def _format_tables() -> tuple[dict[str, str], set[str]]:
    if not FORMAT_MD.exists():
        pytest.skip(f"{FORMAT_MD} not present")
    text = FORMAT_MD.read_text(encoding="utf-8")
    reasons_part = text.split("## Reason codes", 1)[1].split("## Remedy codes", 1)[0]
    remedies_part = text.split("## Remedy codes", 1)[1]
    reasons: dict[str, str] = {}
    for line in reasons_part.splitlines():
        m = re.match(r"\|\s*(misdeal|void|irregularity)\s*\|([^|]*)\|", line)
        if m:
            for code in re.findall(r"`(\w+)`", m.group(2)):
                reasons[code] = m.group(1)
    remedies = set()
    for line in remedies_part.splitlines():
        m = re.match(r"\|\s*`(\w+)`\s*\|", line)
        if m:
            remedies.add(m.group(1))
    assert len(reasons) >= 20 and len(remedies) >= 10, "FORMAT.md tables not found"
    return reasons, remedies


def test_every_format_reason_is_present_with_its_ruling_kind():
    reasons, _ = _format_tables()
    for code, kind in reasons.items():
        assert code in rc.REASONS, f"reason {code} of FORMAT.md is missing"
        assert rc.ruling_kind(code) == kind, code


def test_every_format_remedy_is_present():
    _, remedies = _format_tables()
    missing = remedies - set(rc.REMEDIES)
    assert not missing, f"remedies of FORMAT.md missing: {sorted(missing)}"


def test_engine_only_codes_are_present():
    for code, kind in EXTRA_REASONS.items():
        assert rc.ruling_kind(code) == kind
    assert EXTRA_REMEDIES <= set(rc.REMEDIES)
    assert rc.remedies_for("shuffler_fault", "tda") == ("acknowledge",)
    assert rc.remedies_for("unknown_tag", "robert") == ("identify_card",)


def test_no_codes_beyond_format_and_engine_extras():
    reasons, remedies = _format_tables()
    assert set(rc.REASONS) == set(reasons) | set(EXTRA_REASONS)
    assert set(rc.REMEDIES) == remedies | EXTRA_REMEDIES


def test_misdeals_redeal_and_voids_void():
    for code, r in rc.REASONS.items():
        for profile in rc.PROFILES:
            if r.ruling == "misdeal":
                assert rc.remedies_for(code, profile) == ("redeal",), code
            elif r.ruling == "void":
                assert rc.remedies_for(code, profile) == ("void_hand",), code
            else:
                assert rc.remedies_for(code, profile), f"irregularity {code} has no remedy under {profile}"


def test_every_remedy_is_used_by_some_reason():
    used = {m for r in rc.REASONS.values() for p in rc.PROFILES for m in rc.remedies_for(r.code, p)}
    assert used == set(rc.REMEDIES)


def _scenarios():
    if not CONFORMANCE.is_dir():
        return []
    return sorted(CONFORMANCE.glob("*.yaml"))


@pytest.mark.parametrize("path", scenario_params(_scenarios(), "rulings"))
def test_conformance_scenarios_agree_with_the_catalog(path):
    yaml = pytest.importorskip("yaml")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    profile, game = data["rules"], data["game"]
    for expected in data.get("expect", {}).get("rulings", []) or []:
        codes = expected["reason"] if isinstance(expected["reason"], list) else [expected["reason"]]
        for code in codes:
            assert rc.ruling_kind(code) == expected["ruling"], (path.name, code)
            assert rc.citations(code, None, profile, game), (path.name, code)
        if "remedy" in expected:
            remedies = expected["remedy"] if isinstance(expected["remedy"], list) else [expected["remedy"]]
            allowed = {m for code in codes for m in rc.remedies_for(code, profile)}
            assert set(remedies) & allowed, (path.name, remedies, sorted(allowed))


# --------------------------------------------------------------------------------------------
# Citations exist in the rulebooks
# --------------------------------------------------------------------------------------------

RROP_FILE = "001_0d8e4525b1885b87.txt"
RROP_OTHER = "000_10e8835949b611fa.txt"
TDA_FILE = "004_c68285931515c955.txt"
HOUSE_FILE = "003_ee61a2ba9cb5c112.txt"

_NOTE_RE = re.compile(r"^(?P<cite>.*?)(?: \((?P<note>[^()]*)\))?$")
_RROP_RE = re.compile(r"^RRoP s(?P<sec>\d+) (?P<heading>.+?) (?P<rule>\d+)(?:\((?P<item>[a-z])\))?$")
_TDA_RE = re.compile(r"^TDA (?P<num>RP-\d+|\d+)(?:[- ](?P<letter>[A-Z]))?(?:-(?P<item>\d+))?$")
_HOUSE_RE = re.compile(r"^House rules \(Highland\) (?P<heading>[^:]+): (?P<para>.+)$")


def _seed(name: str) -> str:
    path = SEEDS / name
    if not path.exists():
        pytest.skip(f"rulebook {path} not present")
    return path.read_text(encoding="utf-8").replace("\u2019", "'")


def _rule_line(rule: int) -> re.Pattern[str]:
    # "1. ...", " - 2. ...", "- 2. 2. A player ..." (a doubled number in the source)
    return re.compile(rf"(?m)^[\s\-]*(?:\d+\.\s+)?{rule}\.\s")


def _check_rrop(cite: str) -> None:
    m = _RROP_RE.match(cite)
    assert m, f"not an RRoP citation: {cite!r}"
    sec, heading, rule, item = int(m["sec"]), m["heading"], int(m["rule"]), m["item"]
    text = _seed(RROP_FILE)
    parts = re.split(r"(?m)^SECTION (\d+) - .*$", text)
    sections = {int(parts[i]): parts[i + 1] for i in range(1, len(parts), 2)}
    if sec not in sections:
        other = _seed(RROP_OTHER)
        assert re.search(rf"(?m)^{sec}\.0 ", other), f"{cite}: no SECTION {sec} in 001 or 000"
        return
    body = sections[sec]
    title_line = re.search(rf"(?m)^SECTION {sec} - (.*)$", text)[1]
    body = title_line + "\n" + body
    pos = body.find(heading.upper())
    if pos < 0:
        pos = body.lower().find(heading.lower())
    assert pos >= 0, f"{cite}: heading {heading!r} not in section {sec}"
    # the heading's rules end at the next heading in capitals (other than a "RULES OF ..." line)
    end = re.compile(r"(?m)^(?!RULES)[A-Z][A-Z' \-]{3,}$").search(body, pos + len(heading) + 1)
    body = body[: end.start() if end else len(body)]
    rm = _rule_line(rule).search(body, pos)
    assert rm, f"{cite}: no rule {rule} after {heading!r} in section {sec}"
    if item:
        nxt = _rule_line(rule + 1).search(body, rm.end())
        block = body[rm.start() : nxt.start() if nxt else len(body)]
        assert f"({item})" in block, f"{cite}: no item ({item}) in rule {rule}"


def _check_tda(cite: str) -> None:
    m = _TDA_RE.match(cite)
    assert m, f"not a TDA citation: {cite!r}"
    text = _seed(TDA_FILE)
    start = re.search(rf"(?m)^{re.escape(m['num'])}\. ", text)
    assert start, f"{cite}: no rule '{m['num']}.' at the start of a line of {TDA_FILE}"
    nxt = re.compile(r"(?m)^(?:\d+|RP-\d+)\. ").search(text, start.end())
    block = text[start.start() : nxt.start() if nxt else len(text)]
    if m["letter"]:
        lm = re.search(rf"(?:^|\s|\*\*){m['letter']}[.)](?:\*\*)?\s", block, re.M)
        assert lm, f"{cite}: no part {m['letter']} in rule {m['num']}"
        block = block[lm.start() :]
    if m["item"]:
        assert re.search(rf"(?:\*\*)?{m['item']}\)(?:\*\*)?", block), f"{cite}: no item {m['item']})"


def _check_house(cite: str) -> None:
    m = _HOUSE_RE.match(cite)
    assert m, f"not a house-rules citation: {cite!r}"
    lines = [ln.strip() for ln in _seed(HOUSE_FILE).splitlines()]
    lower = [ln.lower() for ln in lines]
    assert m["heading"].lower() in lower, f"{cite}: no heading {m['heading']!r} in {HOUSE_FILE}"
    after = lower.index(m["heading"].lower())
    assert f"- {m['para'].lower()}" in lower[after:], f"{cite}: no paragraph {m['para']!r}"


def check_citation(full: str) -> None:
    m = _NOTE_RE.match(full)
    cite, note = m["cite"], m["note"]
    if cite.startswith("RRoP "):
        _check_rrop(cite)
    elif cite.startswith("TDA "):
        _check_tda(cite)
    elif cite.startswith("House rules "):
        _check_house(cite)
    else:
        raise AssertionError(f"unknown citation style: {full!r}")
    for ref in re.findall(r"TDA \d+(?:-[A-Z](?:-\d+)?)?", note or ""):
        _check_tda(ref)


def _all_citations() -> list[tuple[str, str]]:
    out = []
    for code, r in rc.REASONS.items():
        for p, cites in r.cite.items():
            out += [(f"reasons.{code}.cite.{p}", c) for c in cites]
        for game, over in r.cite_games.items():
            for p, cites in over.items():
                out += [(f"reasons.{code}.cite_games.{game}.{p}", c) for c in cites]
    for code, m in rc.REMEDIES.items():
        for p, cites in m.cite.items():
            out += [(f"remedies.{code}.cite.{p}", c) for c in cites]
    return out


@pytest.mark.parametrize(("where", "cite"), _all_citations(), ids=lambda v: v if "." in v else None)
def test_citation_exists_in_the_rulebook(where, cite):
    check_citation(cite)


@pytest.mark.parametrize(
    "bad",
    [
        "RRoP s3 Misdeals 1(k)",
        "RRoP s5 Hold'em 7",
        "RRoP s17 Misdeals 1",
        "RRoP s3 Bogus 1",
        "RRoP s3 Irregularities 16",
        "RRoP s3 Dead Hands 1(g)",
        "RRoP s11 Ace-to-Five Lowball 5",
        "TDA 66",
        "TDA 33-E",
        "TDA 33-A-7",
        "TDA RP-8",
        "House rules (Highland) Dealer Error: Jokers",
    ],
)
def test_citation_checker_rejects_invented_rules(bad):
    with pytest.raises(AssertionError):
        check_citation(bad)


def test_tda_profile_cites_tda_or_marks_the_fallback():
    """Under tda, a Robert's rule is only ever cited as a marked fallback."""
    for where, cite in _all_citations():
        if ".tda" in where and cite.startswith("RRoP "):
            note = _NOTE_RE.match(cite)["note"] or ""
            assert "TDA" in note, f"{where}: {cite!r} is not marked as the fallback of a silent TDA"


def test_house_rules_are_cited_only_under_tda():
    for where, cite in _all_citations():
        if cite.startswith("House rules"):
            assert where.endswith((".tda", ".highland")), f"{where}: house rules of the TDA family cited under robert"


def test_highland_cites_its_house_rules_and_falls_back_to_tda():
    """The highland profile (a data file over tda) cites the house rules where they speak, and the
    TDA citations stand where it has none of its own."""
    assert "highland" in rc.PROFILES and "highland" not in rc.ROOT_PROFILES
    own = rc.citations("action_out_of_turn", "binding_if_unchanged", "highland", "holdem")
    assert own[0] == "House rules (Highland) Acting in Turn: Acting out of turn" and "TDA 39-A" in own
    assert rc.citations("first_card_wrong_seat", None, "highland") == rc.citations("first_card_wrong_seat", None, "tda")
    assert rc.remedies_for("premature_card", "highland") == ("set_aside_round",)


# --------------------------------------------------------------------------------------------
# Per-profile differences the engine relies on
# --------------------------------------------------------------------------------------------


def test_profile_differences():
    assert rc.remedies_for("four_card_flop", "robert") == ("redeal_flop",)
    assert rc.remedies_for("four_card_flop", "tda") == ("scramble_flop",)
    assert "RRoP s5 Hold'em 2" in rc.citations("four_card_flop", "redeal_flop", "robert", "holdem")
    assert rc.citations("four_card_flop", "scramble_flop", "tda", "holdem")[0] == "TDA 35"
    assert rc.citations("misdeal_too_late", "play_on", "robert", "holdem")[:2] == (
        "RRoP s3 Misdeals 1",
        "RRoP s3 Misdeals 2",
    )
    assert rc.citations("misdeal_too_late", "play_on", "tda", "holdem") == ("TDA 33-D", "TDA 34")
    assert rc.citations("premature_turn", None, "tda", "holdem")[0] == "TDA RP-5 B"
    assert rc.citations("two_boxed_cards", None, "tda", "holdem") == ("TDA 33-A-1",)
    assert "RRoP s3 Irregularities 8" in rc.citations("joker", "scrap", "robert", "holdem")


def test_citations_game_overrides_and_inheritance():
    # stud downcard dealt face up is a misdeal in tournaments: TDA 33-A-5 / RRoP s15 Tournaments 32
    assert rc.citations("early_card_exposed", None, "tda", "stud") == ("TDA 33-A-5",)
    assert rc.citations("early_card_exposed", None, "tda", "razz") == ("TDA 33-A-5",)  # razz -> stud
    assert rc.citations("early_card_exposed", None, "robert", "stud8")[0] == "RRoP s15 Tournaments 32"
    assert rc.citations("early_card_exposed", None, "tda", "holdem") == ("TDA 33-A-6",)
    # lowball: its own misdeal list, and each form its own exposed-card rule
    assert rc.citations("first_card_wrong_seat", None, "robert", "lowball_27") == ("RRoP s11 Lowball 1(f)",)
    assert rc.citations("first_card_wrong_seat", None, "robert", None) == ("RRoP s3 Misdeals 1(h)",)
    assert "RRoP s11 Ace-to-Five Lowball 3" in rc.citations("exposed_card", None, "robert", "lowball_a5")
    assert "RRoP s11 Deuce-to-Seven Lowball 2" in rc.citations("exposed_card", None, "robert", "lowball_27")
    assert rc.citations("exposed_card", None, "robert", "jacks_or_better") == ("RRoP s12 Draw High 3",)
    assert rc.citations("exposed_on_draw", None, "robert", "draw_high") == ("RRoP s12 Draw High 8",)
    assert rc.citations("extra_card", None, "robert", "omaha8")[0] == "RRoP s5 Hold'em 5"  # omaha8 -> holdem
    # a profile missing from a game override falls back to the base citations
    assert rc.citations("first_card_wrong_seat", None, "tda", "lowball_a5") == ("TDA 33-A-2",)


def test_citations_reason_then_remedy_without_duplicates():
    got = rc.citations("extra_card", "use_as_burn", "robert", "holdem")
    assert got == ("RRoP s5 Hold'em 5", "RRoP s3 Irregularities 11")
    got = rc.citations("exposed_card", "replace_after_deal", "robert", "holdem")
    assert got == ("RRoP s5 Hold'em 1",)
    got = rc.citations("boxed_card", "scrap", "robert", None)
    assert got == ("RRoP s3 Irregularities 7", "RRoP s3 Irregularities 8")
    for code in rc.REASONS:
        for remedy in (None, *rc.remedies_for(code, "tda")):
            for game in (None, *rc.GAMES):
                cites = rc.citations(code, remedy, "tda", game)
                assert cites and len(cites) == len(set(cites))


def test_citations_reject_unknown_codes_profiles_and_games():
    with pytest.raises(KeyError):
        rc.citations("no_such_reason", None, "robert", None)
    with pytest.raises(KeyError):
        rc.citations("joker", "no_such_remedy", "robert", None)
    with pytest.raises(ValueError):
        rc.citations("joker", None, "wsop", None)
    with pytest.raises(ValueError):
        rc.citations("joker", None, "robert", "badugi")


# --------------------------------------------------------------------------------------------
# Messages and steps
# --------------------------------------------------------------------------------------------


def _check_line(text: str) -> None:
    assert "{" not in text and "}" not in text, text
    assert "\n" not in text and "  " not in text, text
    assert text[:1].isupper(), text
    assert text.endswith("."), text
    assert "()" not in text and " ." not in text and " ;" not in text and " ," not in text, text


@pytest.mark.parametrize("code", sorted(rc.REASONS))
def test_message_formats_with_any_context(code):
    _check_line(rc.message(code))
    full = rc.message(code, **FULL_CONTEXT)
    _check_line(full)
    for name in rc.PLACEHOLDERS:
        if "{" + name + "}" in rc.REASONS[code].message:
            value = {"game": rc.GAME_NAMES["lowball_a5"], "zone": "the board"}.get(name, str(FULL_CONTEXT[name]))
            assert value in full, (code, name, full)
    for name in rc.PLACEHOLDERS:  # every partial context too
        _check_line(rc.message(code, **{name: FULL_CONTEXT[name]}))


@pytest.mark.parametrize("code", sorted(rc.REMEDIES))
def test_remedy_steps_format_with_any_context(code):
    steps = rc.remedy_steps(code)
    assert steps and len(steps) == len(rc.REMEDIES[code].steps)
    for step in steps + rc.remedy_steps(code, **FULL_CONTEXT):
        _check_line(step)
    for name in rc.PLACEHOLDERS:
        for step in rc.remedy_steps(code, **{name: FULL_CONTEXT[name]}):
            _check_line(step)


def test_message_examples():
    assert rc.message("first_card_wrong_seat", seat=4, expected=2) == (
        "The first card went to the wrong seat (seat 4); the deal starts at seat 2."
    )
    assert rc.message("first_card_wrong_seat") == (
        "The first card went to the wrong seat; the deal starts at the correct seat."
    )
    assert rc.message("joker", game="holdem") == "A joker turned up in hold'em, which does not use one."
    assert rc.remedy_steps("replace_after_deal", seat=3, card="Ah")[1] == (
        "Give seat 3 the top card of the deck in its place."
    )
    assert (
        rc.remedy_steps("replace_after_deal")[1] == "Give the player the top card of the deck in its place."
    )
    assert rc.message("exposed_card", card="Ah") == "The dealer exposed a hole card."  # seat unknown
    assert rc.message("exposed_card", card="Ah", seat=None, expected="") == "The dealer exposed a hole card."


def test_placeholders_are_only_the_allowed_ones():
    for code, r in rc.REASONS.items():
        for name in re.findall(r"\{([^{}]*)\}", r.message):
            assert name in rc.PLACEHOLDERS, (code, name)
    for code, m in rc.REMEDIES.items():
        for step in m.steps:
            for name in re.findall(r"\{([^{}]*)\}", step):
                assert name in rc.PLACEHOLDERS, (code, name)


# --------------------------------------------------------------------------------------------
# Validation of the TOML
# --------------------------------------------------------------------------------------------

GOOD = """
[reasons.r1]
ruling = "misdeal"
title = "t"
message = "m at seat {seat}."
[reasons.r1.remedies]
robert = ["x"]
tda = ["x"]
[reasons.r1.cite]
robert = ["RRoP s3 Misdeals 1(h)"]
tda = ["TDA 33-A-2"]

[remedies.x]
title = "x"
steps = ["Do it to seat {seat}."]
[remedies.x.cite]
robert = ["a"]
tda = ["b"]
"""


def _load(tmp_path, text):
    path = tmp_path / "rulings.toml"
    path.write_text(text, encoding="utf-8")
    return rc.load(path)


def test_validation_accepts_a_good_catalog(tmp_path):
    cat = _load(tmp_path, GOOD)
    assert cat.reasons["r1"].ruling == "misdeal"
    assert cat.remedies["x"].steps == ("Do it to seat {seat}.",)


@pytest.mark.parametrize(
    ("old", "new", "error"),
    [
        ('message = "m at seat {seat}."', 'message = "m at {table}."', r"reasons\.r1\.message.*\{table\}"),
        ('steps = ["Do it to seat {seat}."]', 'steps = ["Do {it}."]', r"remedies\.x\.steps\[1\].*\{it\}"),
        ('message = "m at seat {seat}."', 'message = "m at {seat:>3}."', r"reasons\.r1\.message"),
        ('ruling = "misdeal"', 'ruling = "foul"', r"reasons\.r1\.ruling"),
        ('tda = ["TDA 33-A-2"]', "", r"reasons\.r1\.cite: missing tda"),
        ('title = "t"\n', "", r"reasons\.r1: missing title"),
        ('robert = ["a"]', "", r"remedies\.x\.cite: missing robert"),
        ('robert = ["x"]', 'robert = ["y"]', r"reasons\.r1\.remedies\.robert: unknown remedy 'y'"),
        ('steps = ["Do it to seat {seat}."]', "steps = []", r"remedies\.x\.steps"),
        ('title = "t"', 'title = "t"\ncolour = "red"', r"reasons\.r1: unknown keys colour"),
        (
            "[reasons.r1.cite]",
            "[reasons.r1.cite_games.badugi]\nrobert = ['z']\n[reasons.r1.cite]",
            r"cite_games\.badugi",
        ),
    ],
)
def test_validation_errors_name_the_key(tmp_path, old, new, error):
    assert old in GOOD
    with pytest.raises(rc.CatalogError, match=error):
        _load(tmp_path, GOOD.replace(old, new, 1))


def test_dataclasses_are_frozen():
    r = rc.REASONS["joker"]
    with pytest.raises(AttributeError):
        r.ruling = "void"  # type: ignore[misc]
    with pytest.raises(TypeError):
        rc.REASONS["joker"] = r  # type: ignore[index]


# --------------------------------------------------------------------------------------------
# Docs
# --------------------------------------------------------------------------------------------


def test_markdown_table_has_one_row_per_reason():
    table = rc.markdown_table()
    rows = [ln for ln in table.splitlines() if ln.startswith("| `")]
    assert len(rows) == len(rc.REASONS)
    assert rows[0].count("|") == 5 + len(rc.PROFILES)  # reason, ruling, when, remedies + one per profile
    four = next(r for r in rows if r.startswith("| `four_card_flop`"))
    assert "robert: `redeal_flop`" in four and "tda: `scramble_flop`" in four


def test_docs_rulings_md_is_generated_text():
    committed = (REPO / "docs" / "rulings.md").read_text(encoding="utf-8")
    assert committed == rc.markdown(), (
        "regenerate: python -m controller.rules.catalog --markdown > docs/rulings.md"
    )


def test_cli_prints_the_markdown(capsys):
    assert rc.main(["--markdown"]) == 0
    assert capsys.readouterr().out == rc.markdown()
