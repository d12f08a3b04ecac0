"""Issue 26, F1 and F7: console requests an attacker (or a careless console) sends, on the shipped
broker config and ACL.

* F1: a request published once with the retain flag was applied again at every reconnect and
  every restart.  Now it is refused (answered, never applied) and cleared from the broker.
* F7: 2,000 QoS 1 requests in a burst: Mosquitto's default ``max_queued_messages`` (1,000)
  dropped a third of them.  The shipped config now queues them all; every one is answered.
"""

from __future__ import annotations

import json
import time

from controller.app.daemon import Daemon
from controller.rules.events import SeatPlayer
from tests.mqtt.test_request_hardening import T, _client, _request, _responses
from tests.mqtt_util import require_mosquitto, start_daemon, wait_until

require_mosquitto()


def _console_entries(d: Daemon) -> list:
    assert d.journal is not None
    return [e for e in d.journal.entries() if e.source == "console"]


def _retained_requests(broker, passwords) -> list:
    """What a new subscriber to ``request/#`` receives at once: the retained requests."""
    spy = _client(broker, passwords, "controller")
    spy.subscribe(T.root + "/request/#")
    time.sleep(0.4)
    with spy.lock:
        found = [m for m in spy.messages if m.retain and m.payload]
    spy.close()
    return found


def test_a_retained_request_is_refused_cleared_and_never_applied_again(tmp_path, broker, passwords) -> None:
    d = start_daemon(tmp_path / "journal.sqlite", broker, passwords)
    d.submit(SeatPlayer(1, "Ann", stack=100), source="floor")
    console = _client(broker, passwords, "console")
    console.subscribe(T.response + "/#")
    console.c.publish(T.request("stack"), json.dumps({"seat": 1, "add": 50, "transaction": "ret-1"}).encode(),
                      qos=1, retain=True)
    wait_until(lambda: any(r.get("transaction") == "ret-1" for _, r in _responses(console)), timeout=10,
               what="the answer to the retained request")
    [(topic, r)] = [(t, r) for t, r in _responses(console) if r.get("transaction") == "ret-1"]
    assert topic == T.response + "/stack" and not r["ok"] and "retain" in r["error"], r
    assert not _console_entries(d), "a retained request is never applied"
    assert d.link.counters["retained_requests"] == 1
    # The controller cleared it on the broker: nobody (not even the controller) gets it again.
    wait_until(lambda: not _retained_requests(broker, passwords), timeout=5, what="the retained request cleared")
    # A broker restart, then a daemon restart: nothing is applied, nothing answered again.
    broker.restart(down_for=0.5)
    wait_until(lambda: d.link.connected, timeout=15, what="the daemon back on the broker")
    d.stop()
    d = start_daemon(tmp_path / "journal.sqlite", broker, passwords)
    try:
        time.sleep(0.5)
        assert not _console_entries(d)
        assert sum(1 for _, r in _responses(console) if r.get("transaction") == "ret-1") == 1
        assert d.link.counters["retained_requests"] == 0
        assert d.service.table.players[1].stack == 100
    finally:
        d.stop()
        console.close()


def test_a_retained_request_left_on_the_broker_is_never_delivered(tmp_path, broker, passwords) -> None:
    """Defence in depth: a retained request published while the controller was away (and so
    not cleared by it) is not sent at subscribe time (``retainHandling`` 2)."""
    console = _client(broker, passwords, "console")
    console.c.publish(T.request("seat"), json.dumps({"seat": 2, "name": "Old", "transaction": "ret-2"}).encode(),
                      qos=1, retain=True)
    wait_until(lambda: bool(_retained_requests(broker, passwords)), what="the retained request stored")
    d = start_daemon(tmp_path / "journal.sqlite", broker, passwords)
    try:
        time.sleep(0.8)
        assert not _console_entries(d) and d.link.counters["requests"] == 0
    finally:
        d.stop()
        console.close()


def test_a_burst_of_2000_requests_is_answered_in_full(tmp_path, broker, passwords) -> None:
    """F7: every QoS 1 request of a 2,000-request burst is answered (Mosquitto's default
    ``max_queued_messages`` of 1,000 dropped 650-720 of them).  The requests are cheap ones (an
    acknowledgement with no alert: refused, nothing journaled), so the queue is what is tested."""
    d = start_daemon(tmp_path / "journal.sqlite", broker, passwords)
    console = _client(broker, passwords, "console")
    console.subscribe(T.response + "/#")
    n = 2000
    try:
        for i in range(n):
            _request(console, "acknowledge", {"transaction": f"burst-{i}"})

        def answered() -> int:
            return len({r.get("transaction") for _, r in _responses(console)})

        deadline = time.monotonic() + 30
        while answered() < n and time.monotonic() < deadline:
            time.sleep(0.1)
        assert answered() == n, (answered(), d.link.counters, broker.log()[-2000:])
        assert all(not r["ok"] for _, r in _responses(console))
        assert d.journal.last_seq == 0
    finally:
        d.stop()
        console.close()
