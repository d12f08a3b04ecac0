"""sd_notify datagrams and journald fields through libsystemd (cysystemd), on real unix sockets."""

from __future__ import annotations

import logging
import socket
from pathlib import Path

import pytest

from controller.app.logs import JournaldHandler, JsonFormatter
from controller.app.sdnotify import Notifier
from tests.journald_util import fake_journald


def test_notify_sends_datagrams(tmp_path: Path, monkeypatch) -> None:
    path = str(tmp_path / "notify")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(path)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    n = Notifier()
    assert n.ready("serving") and n.watchdog()
    assert server.recv(100) == b"READY=1\nSTATUS=serving"
    assert server.recv(100) == b"WATCHDOG=1"
    monkeypatch.delenv("NOTIFY_SOCKET")
    assert not Notifier().enabled and not Notifier().watchdog()


@pytest.fixture
def journal_log():
    with fake_journald() as journald:
        log = logging.getLogger("test.journald")
        log.propagate = False
        log.setLevel(logging.DEBUG)
        handler = JournaldHandler()
        log.addHandler(handler)
        yield log, journald
        log.removeHandler(handler)


@pytest.mark.journald
def test_journald_handler_writes_fields_binary_safe(journal_log) -> None:
    from tests.mqtt_util import wait_until

    log, journald = journal_log
    log.warning("two\nlines", extra={"table_id": "t1", "seq": 42})
    wait_until(lambda: journald.find(SEQ="42"), what="the journal entry")
    entry = journald.find(SEQ="42")[0]
    assert entry["PRIORITY"] == "4" and entry["TABLE_ID"] == "t1" and entry["MESSAGE"] == "two\nlines"
    assert entry["SYSLOG_IDENTIFIER"] == "tablectl"  # what INSTALL.md filters on (journalctl -t tablectl)


@pytest.mark.journald
def test_journald_handler_survives_a_lone_surrogate(journal_log) -> None:
    """Issue 17.4: a player named with a lone surrogate killed the thread that logged it."""
    from tests.mqtt_util import wait_until

    log, journald = journal_log
    log.info("seated %s", "bad\udc80name", extra={"player": "x\ud800", "seq": 7})
    wait_until(lambda: journald.find(SEQ="7"), what="the journal entry")
    assert "bad\\udc80name" in journald.find(SEQ="7")[0]["MESSAGE"]


def test_json_formatter_keeps_extra_fields_and_survives_surrogates() -> None:
    rec = logging.LogRecord("x", logging.INFO, "f", 1, "hello %s", ("you\udc80",), None)
    rec.seq = 7
    line = JsonFormatter().format(rec)
    line.encode("utf-8")
    assert '"msg": "hello you\\\\udc80"' in line and '"seq": 7' in line
