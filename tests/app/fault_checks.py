"""What every fault session must show, whatever its faults (tests/app/test_fault_suite*.py)."""

from __future__ import annotations

from typing import Any


def assert_nothing_lost_or_leaked(r: dict[str, Any]) -> None:
    """``r``: ``controller.bench.faults.run_bench``'s result."""
    # Issue 26: a retained request is never applied (F1), a 2,000-request burst is answered in full
    # (F7), and the journal's hash chain holds through kill -9 and restarts.
    assert r["retained_requests_applied"] == 0, r
    assert r["request_burst"]["answered"] == r["request_burst"]["sent"] == 2000, r["request_burst"]
    assert r["journal_chain"]["ok"] and r["journal_chain"]["chained"] > 0, r["journal_chain"]
    # Nothing journaled is lost on the way to the readers; repeats are allowed (at least once).
    assert r["events"]["lost"] == 0, r["events"]
    # Secrecy through all of it.
    assert r["leaks"]["display_console_ha"] == 0, r["leaks"]
    assert r["leaks"]["overlay_before_delay"] == 0, r["leaks"]
    assert r["leaks"]["overlay_retained_after_its_hand"] == 0, r["leaks"]
    # The producer's login (its retained availability and broadcast/delay at least): nothing outside its
    # topics, no card at all (controller.bench.faults.producer_secrecy).
    producer = r["leaks"]["producer"]
    assert producer["received"] > 0 and producer["outside_its_topics"] == producer["naming_a_card"] == 0, producer
