"""With ``CI`` set nothing skips (tests/conftest.py): a skip of any kind fails the test instead."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO

PROBE = "tests/core/ci_skip_probe.py"


def _run(ci: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"} | ({"CI": "1"} if ci else {})
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-q", "-rA",
                           PROBE], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def test_in_ci_every_skip_fails_and_an_expected_failure_stays_one() -> None:
    proc = _run(ci=True)
    assert proc.returncode == 1, proc.stdout
    assert "1 failed, 1 xfailed, 1 error" in proc.stdout, proc.stdout  # a skip mark fails its setup
    assert proc.stdout.count("nothing may skip in CI") >= 2, proc.stdout


def test_outside_ci_a_skip_is_a_skip() -> None:
    proc = _run(ci=False)
    assert proc.returncode == 0, proc.stdout
    assert "2 skipped, 1 xfailed" in proc.stdout, proc.stdout
