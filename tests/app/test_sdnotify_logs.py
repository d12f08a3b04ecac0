"""sd_notify datagrams and journald fields, through real unix sockets."""

from __future__ import annotations

import logging
import socket
import struct
from pathlib import Path

from controller.app.logs import JournaldHandler, JsonFormatter
from controller.app.sdnotify import Notifier


def test_notify_sends_datagrams(tmp_path: Path) -> None:
    path = str(tmp_path / "notify")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(path)
    n = Notifier(path)
    assert n.ready("serving") and n.watchdog()
    assert server.recv(100) == b"READY=1\nSTATUS=serving"
    assert server.recv(100) == b"WATCHDOG=1"
    assert not Notifier("").enabled and not Notifier("").watchdog()


def test_journald_handler_writes_fields_binary_safe(tmp_path: Path) -> None:
    path = str(tmp_path / "journal")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(path)
    log = logging.getLogger("test.journald")
    log.propagate = False
    handler = JournaldHandler(path=path)
    log.addHandler(handler)
    log.warning("two\nlines", extra={"table_id": "t1", "seq": 42})
    data = server.recv(4096)
    assert b"PRIORITY=4\n" in data and b"TABLE_ID=t1\n" in data and b"SEQ=42\n" in data
    assert b"MESSAGE\n" + struct.pack("<Q", 9) + b"two\nlines\n" in data
    log.removeHandler(handler)


def test_json_formatter_keeps_extra_fields() -> None:
    rec = logging.LogRecord("x", logging.INFO, "f", 1, "hello %s", ("you",), None)
    rec.seq = 7
    line = JsonFormatter().format(rec)
    assert '"msg": "hello you"' in line and '"seq": 7' in line
