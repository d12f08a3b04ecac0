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


# Shared scenarios the engine does not pass yet, each a strict expected failure naming the issue that
# implements it (the developers' guide): a case that starts passing fails the suite, so its mark is
# removed as the part lands. Keyed by file stem; the set says which uses of the file fail ("run": the
# scenario's own check; "load": parsing it; "session": the session tests' own reading).
EXPECTED_FAILURES: dict[str, tuple[str, frozenset[str]]] = {
}


def scenario_params(paths: list[Path], *needs: str) -> list:
    """One ``pytest.param`` per scenario, named by its file.

    A scenario listed in ``EXPECTED_FAILURES`` for one of ``needs`` (``run`` when none is given) gets
    a strict ``xfail`` naming its issue.
    """
    wanted = set(needs) or {"run"}
    live = shared_conformance()
    params = []
    for p in paths:
        marks = []
        known = EXPECTED_FAILURES.get(p.stem) if live and p.is_relative_to(live) else None
        if known and known[1] & wanted:
            marks.append(pytest.mark.xfail(reason=known[0], strict=True))
        params.append(pytest.param(p, id=p.stem, marks=marks))
    return params


def shared_all_pass_expected() -> bool:
    """True when no shared scenario is marked as an expected failure for its own check."""
    return not any("run" in needs for _, needs in EXPECTED_FAILURES.values())
