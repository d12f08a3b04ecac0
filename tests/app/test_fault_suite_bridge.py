"""The fault suite's second session (issue 17, 26), slow tier: the faults the antenna bridge and the
daemon recover from, kill -9 twice, unplugs and a reset of the board, a retained console request, a
stalled board and a line-corruption burst, with a subscriber on ``#`` for every credential: no
event lost, no hole card leaked (``controller/bench/faults.py`` deals and counts). Its first session
is tests/app/test_fault_suite.py; a file of its own, so the two run on the two workers at once.
"""

from __future__ import annotations

import pytest

from tests.app.fault_checks import assert_nothing_lost_or_leaked
from tests.mqtt_util import require_mosquitto

pytestmark = pytest.mark.slow

SCHEDULE = ["unplug", "reset", "kill", "unplug", "kill", "none", "retained", "stall", "corrupt"]


def test_a_session_through_kill_9_unplugs_resets_stalls_and_corruption() -> None:
    require_mosquitto()
    from controller.bench.faults import run_bench

    r = run_bench(hands=len(SCHEDULE), seed=11, delay=2, schedule=SCHEDULE)
    faults = r["faults"]
    assert faults["kill_9"] == 2 and faults["unplug"] == 2 and faults["reset"] == 1, faults
    assert faults["retained_request"] == 1 and faults["stall"] == 1 and faults["corrupt_burst"] == 1, faults
    # The order of cards recovered from an inventory after an unplug, reset or restart is the
    # bridge's (issue 17.1, firmware_bridge/link.py): its false rulings are reported by
    # `tablectl bench faults`, not asserted here.
    assert_nothing_lost_or_leaked(r)
