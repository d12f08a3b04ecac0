"""Shared test helpers: where the conformance scenarios are."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
VENDORED = REPO / "tests" / "conformance"
OWN_SCENARIOS = REPO / "tests" / "scenarios"


def shared_conformance() -> Path | None:
    """The live conformance folder, when this checkout sits beside ../shared."""
    env = os.environ.get("CONFORMANCE_DIR")
    for cand in ([Path(env)] if env else []) + [REPO.parent / "shared" / "conformance"]:
        if cand.is_dir():
            return cand
    return None


def conformance_files() -> list[Path]:
    """Every scenario: the live folder's, then vendored ones it lacks, then our own."""
    files: dict[str, Path] = {}
    live = shared_conformance()
    for root in [r for r in (live, VENDORED) if r is not None]:
        for p in sorted(root.rglob("*.yaml")):
            files.setdefault(p.relative_to(root).as_posix(), p)
    return list(files.values())


@pytest.fixture
def repo() -> Path:
    return REPO
