"""Structured logs: to journald with fields under systemd, JSON lines or rich otherwise.

Under systemd (``$JOURNAL_STREAM`` set, or ``--log journald``) records go to journald's
native socket with their ``extra`` fields as journal fields (``TABLE_ID=``, ``SEQ=``...),
so ``journalctl -u poker-table-controller SEQ=42`` works.  Elsewhere: JSON lines on
stderr (``--log json``) or a human console (``--log console``).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import struct
import sys
import time

JOURNAL_SOCKET = "/run/systemd/journal/socket"
_STD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}
_PRIORITY = {logging.CRITICAL: 2, logging.ERROR: 3, logging.WARNING: 4, logging.INFO: 6, logging.DEBUG: 7}


def _fields(record: logging.LogRecord) -> dict[str, object]:
    return {k: v for k, v in vars(record).items() if k not in _STD and not k.startswith("_")}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = {"ts": round(record.created, 3), "level": record.levelname.lower(), "logger": record.name,
               "msg": record.getMessage(), **_fields(record)}
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


class JournaldHandler(logging.Handler):
    """The journal's native protocol: KEY=VALUE lines, binary-safe for values with newlines."""

    def __init__(self, identifier: str = "poker-table-controller", path: str = JOURNAL_SOCKET) -> None:
        super().__init__()
        self.identifier = identifier
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)

    @staticmethod
    def _field(key: str, value: object) -> bytes:
        k = key.upper().encode()
        v = str(value).encode()
        if b"\n" in v:
            return k + b"\n" + struct.pack("<Q", len(v)) + v + b"\n"
        return k + b"=" + v + b"\n"

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = record.getMessage()
            if record.exc_info:
                msg += "\n" + logging.Formatter().formatException(record.exc_info)
            data = self._field("MESSAGE", msg) + self._field("PRIORITY", _PRIORITY.get(record.levelno, 6))
            data += self._field("SYSLOG_IDENTIFIER", self.identifier) + self._field("LOGGER", record.name)
            for key, value in _fields(record).items():
                name = "".join(ch if ch.isalnum() else "_" for ch in key).upper().lstrip("_") or "FIELD"
                data += self._field(name, value)
            self.sock.sendto(data, self.path)
        except OSError:
            self.handleError(record)


def setup_logging(mode: str = "auto", level: int = logging.INFO) -> str:
    """Configure the root logger; returns the mode used (journald, json, console)."""
    if mode == "auto":
        if os.environ.get("JOURNAL_STREAM") and os.path.exists(JOURNAL_SOCKET):
            mode = "journald"
        elif sys.stderr.isatty():
            mode = "console"
        else:
            mode = "json"
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    if mode == "journald":
        handler: logging.Handler = JournaldHandler()
    elif mode == "json":
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter())
    else:
        from rich.logging import RichHandler

        handler = RichHandler(show_path=False, log_time_format="%H:%M:%S")
    root.addHandler(handler)
    root.setLevel(level)
    logging.Formatter.converter = time.gmtime
    return mode
