"""Issue 17 item 8: a device speaking another protocol version is refused loudly, the link keeps
trying, its health says ``down``, and the daemon's watchdog test stops passing."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from controller.demo.config import demo_config
from controller.mqtt.broker import Broker
from firmware_bridge import protocol as p
from firmware_bridge.emulator import Emulator
from firmware_bridge.link import BridgeLink, IncompatibleDeviceError
from firmware_bridge.table_sim import FAST_LINK
from tests.conftest import poll


def wait_for(pred, timeout: float = 5.0) -> bool:
    return poll(pred, timeout, step=0.02)


def test_another_protocol_version_is_reported_and_the_link_keeps_trying(tmp_path) -> None:
    path = str(tmp_path / "ttyEMU")
    cfg = replace(FAST_LINK, reopen_backoff_max=0.2, down_after=1.0)
    with Emulator(4, protocol_version=p.PROTOCOL_VERSION + 1, link_path=path) as emu, BridgeLink(path, cfg) as link:
        with pytest.raises(IncompatibleDeviceError, match="protocol v2"):
            link.wait_synced(5)
        h = link.health()
        assert h.state == "incompatible" and not h.healthy and h.down and h.thread_alive
        assert h.to_dict()["down"] is True and "protocol v2" in h.to_dict()["error"]
        tries = h.counters["incompatible_hellos"]
        assert wait_for(lambda: link.health().counters["incompatible_hellos"] > tries)  # still trying
        emu.stop()
        with Emulator(4, link_path=path):  # the board is reflashed
            assert wait_for(lambda: link.health().synced, 10)
            h = link.health()
            assert h.healthy and not h.down and h.error is None


def test_a_link_without_a_device_goes_down_after_a_while(tmp_path) -> None:
    cfg = replace(FAST_LINK, down_after=0.3)
    with BridgeLink(str(tmp_path / "nothing"), cfg) as link:
        assert not link.health().down
        assert wait_for(lambda: link.health().down, 3)


@pytest.fixture
def broker() -> Iterator[Broker]:
    with Broker.start() as b:
        yield b


def test_the_daemon_stops_feeding_the_watchdog_when_its_device_is_refused(tmp_path, broker: Broker) -> None:
    from controller.app.daemon import Daemon

    path = str(tmp_path / "ttyEMU")
    config = demo_config("t8", size=4, journal=tmp_path / "j.sqlite",
                                 mqtt_url=f"mqtt://127.0.0.1:{broker.port}", broadcast_delay=0)
    with Emulator(8, protocol_version=p.PROTOCOL_VERSION + 1, link_path=path):
        d = Daemon(config, backends={"serial": path}).start()
        try:
            assert d.link is not None and d.link.connected_event.wait(10)
            assert wait_for(lambda: d.health()["serial"].get("error") is not None, 10)
            assert not d.healthy()
        finally:
            d.stop()
