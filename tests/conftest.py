"""Shared test helpers: where the conformance scenarios are."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
OWN_SCENARIOS = REPO / "tests" / "scenarios"


def shared_conformance() -> Path | None:
    """The live conformance folder, when this checkout sits beside ../shared."""
    env = os.environ.get("CONFORMANCE_DIR")
    for cand in ([Path(env)] if env else []) + [REPO.parent / "shared" / "conformance"]:
        if cand.is_dir():
            return cand
    return None


def conformance_files() -> list[Path]:
    """Every scenario of the live shared contract (none when ../shared is not beside the checkout)."""
    live = shared_conformance()
    return sorted(live.rglob("*.yaml")) if live else []


@pytest.fixture
def repo() -> Path:
    return REPO


# --------------------------------------------------------------------------------------------
# Parts of the shared contract not built yet: strict expected failures naming their issue
# --------------------------------------------------------------------------------------------
# The contract grew (chips, sessions, new stud and out-of-turn codes) before the engine did. A
# scenario that needs a part still being built is an expected failure naming the issue that builds
# it; strict, so a case that starts passing is noticed and its mark removed. The rule is read from
# each file's content, so cases we do not see are classified the same way. Remove a rule when its
# issue lands.

CHIP_CODES = {"under_call", "short_bet", "short_raise", "oversized_chip", "multiple_chips", "over_pot",
              "raise_not_reopened", "raise_capped"}
RULES_CODES = {"premature_card", "last_card_exposed", "burn_error", "action_out_of_turn"}
CHIP_REMEDIES = {"complete_call", "complete_bet", "complete_raise", "treated_as_call", "treated_as_max_bet",
                 "reduce_to_pot", "call_or_fold"}
RULES_REMEDIES = {"eliminate_round", "set_aside_round", "rest_down", "both_up", "keep_card", "correct_positions",
                  "binding_if_unchanged"}
PENDING_CODES = {"issue 12": (CHIP_CODES, CHIP_REMEDIES), "issue 13": (RULES_CODES, RULES_REMEDIES)}
CHIP_KEYS = {"stacks", "blinds", "straddle", "ante", "bb_ante", "bring_in", "limits", "raise_cap"}


def expected_codes(data: dict) -> set[str]:
    """Every reason code a scenario expects, alternatives included."""
    codes: set[str] = set()
    for ruling in (data.get("expect") or {}).get("rulings") or []:
        reason = ruling.get("reason")
        codes.update(reason if isinstance(reason, list) else [reason])
    return codes


def pending_issue(path: Path, needs: frozenset[str] = frozenset({"load", "rulings"})) -> str | None:
    """The open issue a scenario waits for in a check, or None when that check should pass today.

    ``needs`` says what the check uses: ``load`` (the engine reads and plays the file), ``rulings``
    (the expected rulings are compared), ``turns`` (the dealer simulator's turn model replays it).
    """
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    codes = expected_codes(data)
    steps = data.get("steps") or []
    if "hands" in data and needs & {"load", "turns"}:
        return "issue 13: sessions of several hands are not modelled yet"
    if "load" in needs and CHIP_KEYS & data.keys():
        return "issue 12: chip accounting is not built yet"
    if "rulings" in needs and codes & RULES_CODES:
        return "issue 13: new stud and out-of-turn codes are not modelled yet"
    if "rulings" in needs and codes & CHIP_CODES:
        return "issue 12: betting rulings need chip accounting"
    if "turns" in needs and _turn_checked_after_a_push(data, steps):
        return "issue 12: the turn model cannot follow a chip push yet"
    if "turns" in needs and "action_out_of_turn" in codes:
        return "issue 13: the turn model has no out-of-turn actions yet"
    return None


def _turn_checked_after_a_push(data: dict, steps: list[dict]) -> bool:
    """A ``to_act`` check in the betting round of a ``put`` step (a new street resets the turn)."""
    checks = [st["after"] for st in (data.get("expect") or {}).get("state") or [] if "to_act" in st]
    for i, step in enumerate(steps, start=1):
        if "put" not in step:
            continue
        end = next((j for j, later in enumerate(steps[i:], start=i + 1)
                    if {"burn", "board", "deal", "discard"} & later.keys()), len(steps) + 1)
        if any(i <= after < end for after in checks):
            return True
    return False


def scenario_params(paths: list[Path], *needs: str) -> list:
    """``pytest.param`` per scenario, pending ones marked as strict expected failures."""
    params = []
    for p in paths:
        reason = pending_issue(p, frozenset(needs or ("load", "rulings")))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(p, marks=marks, id=p.stem))
    return params
