"""Run only by tests/core/test_no_skip_in_ci.py (not a test module): one skip of each kind."""

import pytest


def test_skips_in_its_body() -> None:
    pytest.skip("a tool is missing")


@pytest.mark.skipif(True, reason="a file is missing")
def test_skipped_by_its_mark() -> None:
    pass


@pytest.mark.xfail(reason="an expected failure is no skip", strict=True)
def test_expected_failure() -> None:
    raise AssertionError
