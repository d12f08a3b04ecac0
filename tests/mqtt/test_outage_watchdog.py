"""Issue 26, F3: the watchdog went unfed during a broker outage.  The link's reconnect backoff
slept up to 10 s without a beat, and the daemon calls the link hung when its network thread has
not beaten for 5 s: systemd (``WatchdogSec=10``) restarted a daemon that was only waiting."""

from __future__ import annotations

import threading
import time

from controller.mqtt.broker import Broker
from controller.mqtt.link import NET_TICK, MqttLink, MqttSettings
from tests.mqtt_util import require_mosquitto, wait_until


def test_the_network_thread_beats_while_it_waits_out_a_broker_outage() -> None:
    require_mosquitto()
    with Broker.start() as broker:
        # A backoff longer than the daemon's 5 s health limit, from the first retry on.
        settings = MqttSettings(url=broker.url, client_id="outage-beat", min_reconnect=6.0, max_reconnect=6.0)
        link = MqttLink(settings, "t/availability").start()
        try:
            assert link.connected_event.wait(10)
            outage = threading.Thread(target=broker.restart, kwargs={"down_for": 4.0})
            outage.start()
            wait_until(lambda: not link.connected, timeout=10, what="the outage seen")
            worst = 0.0
            end = time.monotonic() + 4.0
            while time.monotonic() < end:
                worst = max(worst, time.monotonic() - link.net_beat)
                time.sleep(0.02)
            outage.join(20)
            assert worst <= NET_TICK + 0.5, f"the network thread went {worst:.1f} s without a beat"
            assert link.alive
            wait_until(lambda: link.connected, timeout=15, what="the link back after the outage")
        finally:
            link.stop()
