"""Shared test helpers: where the conformance scenarios are; in CI nothing skips; the journald tests
run in a namespace of their own."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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


def poll(pred: Callable[[], object], timeout: float = 5.0, step: float = 0.005) -> bool:
    """Whether ``pred()`` comes true within ``timeout`` seconds (asked every ``step``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return bool(pred())


# ---------------------------------------------------------------------- one broker, one daemon
@pytest.fixture(scope="module")
def passwords() -> dict[str, str]:
    """A password for each login of the shipped ACL (tests/mqtt_util.py)."""
    from tests.mqtt_util import new_passwords

    return new_passwords()


@pytest.fixture
def broker(passwords: dict[str, str]) -> Iterator[Any]:
    """A real Mosquitto per test with the shipped config and ACL: two daemons of one table id must never
    share one (their client ids would take each other's session over)."""
    from tests.mqtt_util import shipped_broker

    with shipped_broker(passwords) as b:
        yield b


@pytest.fixture
def daemon(tmp_path: Path, broker: Any, passwords: dict[str, str]) -> Iterator[Any]:
    """The demo's table ``t1`` (6 seats, no broadcast delay) on :func:`broker`, started and connected."""
    from tests.mqtt_util import start_daemon

    d = start_daemon(tmp_path / "journal.sqlite", broker, passwords)
    yield d
    d.stop()


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


# ---------------------------------------------------------------------- in CI, nothing skips
#: Skips CI allows, by node id prefix, each with its reason.  Empty: with ``CI`` set every skip
#: (a missing tool, file, server or library) fails the test instead.
CI_ALLOWED_SKIPS: dict[str, str] = {}


def _no_skip_in_ci(report: pytest.TestReport | pytest.CollectReport) -> None:
    if not os.environ.get("CI") or not report.skipped or hasattr(report, "wasxfail"):
        return
    if any(report.nodeid.startswith(prefix) for prefix in CI_ALLOWED_SKIPS):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = f"skipped, and CI is set (nothing may skip in CI): {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    outcome = yield
    _no_skip_in_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> object:
    outcome = yield
    _no_skip_in_ci(outcome.get_result())


# ---------------------------------------------------------------------- order
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The long tiers first (``slow``, then ``journald``, each a subprocess): the two workers take a
    file at a time, so a long file that starts last keeps one worker busy alone while the other has
    nothing left. A stable sort: the order within each tier stays as collected. (pyproject's
    ``--no-loadscope-reorder`` keeps xdist to this order; by default it puts the files with the
    most tests first.)

    Within the slow tier, the two longest files first (``LONGEST_FIRST``): xdist hands the first file
    to one worker and the second to the other, so they run side by side; otherwise both can fall
    to one worker (in a run of the whole suite on a loaded machine here, one worker drew both and ran
    17 minutes of slow tests, the other under 6)."""
    def tier(item: pytest.Item) -> tuple[int, int]:
        if item.get_closest_marker("slow"):
            path = item.nodeid.split("::", 1)[0]
            return 0, LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)
        return (1 if item.get_closest_marker("journald") else 2), 0

    items.sort(key=tier)


#: The slow tier's longest files, longest first: the 60-hand dead-tag demo (~1.5 min alone on the
#: loaded 2-core machine: its dealer waits for the antennas' reads and the camera's fill-ins, no
#: person's pace; ~4 min before) and the real-photo benchmarks (149 s of CPU here, on one core).
LONGEST_FIRST = ("tests/rules/test_missing_board_daemon.py", "tests/vision/test_real_cards.py")


# ---------------------------------------------------------------------- journald tests
@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """A test marked ``journald`` runs again in a private mount namespace (tests/journald_util.py)."""
    from tests.journald_util import in_private_journal, namespace_command

    if item.get_closest_marker("journald") is None or in_private_journal():
        return None
    hook = item.ihook
    hook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    start = time.monotonic()
    proc = subprocess.run(namespace_command(item.nodeid), cwd=REPO, capture_output=True, text=True, timeout=1800)
    took = time.monotonic() - start
    output = proc.stdout[-6000:] + proc.stderr[-3000:]
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    outcome, longrepr = "passed", None
    if proc.returncode != 0:
        command = " ".join(namespace_command(item.nodeid))
        outcome, longrepr = "failed", f"in its journald namespace ({command}):\n{output}"
    elif "skipped" in last:
        outcome, longrepr = "skipped", (str(item.path), item.location[1] or 0, f"in its journald namespace: {output}")
    for when in ("setup", "call", "teardown"):
        report = pytest.TestReport(item.nodeid, item.location, {k: 1 for k in item.keywords},
                                   outcome if when == "call" else "passed", longrepr if when == "call" else None,
                                   when, duration=took if when == "call" else 0.0)
        if when == "call":
            _no_skip_in_ci(report)
        hook.pytest_runtest_logreport(report=report)
    hook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True
