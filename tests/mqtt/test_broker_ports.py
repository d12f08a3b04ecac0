"""A test broker on ports picked free: another program may take a port between its choice and
Mosquitto's bind (the other test worker's broker, picking the same free port a moment earlier).
Once, under the emulated arm64 userland, a per-test broker was "started and accepting" and then
gone when the daemon connected: the port answered for the other program while this broker, slow
to start, was still about to exit for want of it.  A broker is ready only once it says it runs
(every listener bound), and a picked port taken is picked again."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

import controller.mqtt.broker as broker_mod
from controller.mqtt.broker import Broker, BrokerError
from tests.mqtt_util import require_mosquitto

require_mosquitto()


@pytest.fixture
def taken() -> Iterator[int]:
    """A loopback port another program listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other:
        other.bind(("127.0.0.1", 0))
        other.listen(8)
        yield other.getsockname()[1]


def _taken_after_the_check(monkeypatch: pytest.MonkeyPatch, taken: int) -> None:
    """The first port picked is ``taken``, and the check before the spawn finds it free (the other
    program binds it just after)."""
    picks = iter([taken])
    real_free, real_accepts = broker_mod.free_port, broker_mod._accepts
    checked: set[int] = set()

    def free_port(host: str = broker_mod.HOST, avoid: tuple[int, ...] = ()) -> int:
        return next(picks, None) or real_free(host, avoid)

    def accepts(host: str, port: int, timeout: float = 0.2) -> bool:
        if port == taken and port not in checked:
            checked.add(port)
            return False
        return real_accepts(host, port, timeout)

    monkeypatch.setattr(broker_mod, "free_port", free_port)
    monkeypatch.setattr(broker_mod, "_accepts", accepts)


def test_a_picked_port_taken_before_the_bind_is_picked_again(monkeypatch: pytest.MonkeyPatch, taken: int) -> None:
    _taken_after_the_check(monkeypatch, taken)
    with Broker.start() as b:
        assert b.port != taken and b.running
        assert "running" in b.describe()


def test_a_port_the_caller_chose_is_not_changed_and_the_error_says_why(monkeypatch: pytest.MonkeyPatch,
                                                                       taken: int) -> None:
    _taken_after_the_check(monkeypatch, taken)
    with pytest.raises(BrokerError, match=r"(?s)exited with code \d+ at start.*Address already in use"):
        Broker.start(port=taken)
