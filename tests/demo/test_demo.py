"""``tablectl demo`` as a new user runs it: the whole table on simulated hardware."""

from __future__ import annotations

import os

import pytest
from rich.console import Console

from controller.demo.table import run_console_demo, run_table_demo
from controller.mqtt.broker import mosquitto_available


def test_console_demo_catches_every_mistake() -> None:
    stats = run_console_demo(hands=30, seed=4, delay=0, mistake_rate=0.5, console=Console(file=open(os.devnull, "w")))
    assert stats.hands == 30 and stats.mistakes > 5
    assert stats.caught == stats.mistakes


@pytest.mark.skipif(not mosquitto_available() and not os.environ.get("CI"), reason="needs mosquitto")
def test_table_demo_deals_through_the_daemon_and_catches_mistakes() -> None:
    out = Console(record=True, width=200, file=open(os.devnull, "w"))
    stats = run_table_demo(hands=2, seed=11, pace=0.3, mistake_rate=1.0, ws_port=0, http_port=0, dead_tags=0.5,
                           console=out)
    text = out.export_text()
    assert "dealer display" in text and "/display/" in text and "/overlay/" in text
    assert stats.hands == 2 and stats.mistakes == 2 and stats.caught == 2
