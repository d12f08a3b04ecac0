"""Structured logs: to journald with fields under systemd, JSON lines or rich otherwise.

Under systemd (``$JOURNAL_STREAM`` set, or ``--log journald``) records go to the journal
through libsystemd (``cysystemd``, the maintained Cython bindings: ``sd_journal_send``), with
their ``extra`` fields as journal fields (``TABLE_ID=``, ``SEQ=``, ``HAND_ID=``...) and the
identifier ``tablectl`` (the unit's ``SyslogIdentifier=``), so ``journalctl -t tablectl
HAND_ID=42`` lists what happened in hand 42.  Elsewhere: JSON lines on stderr (``--log
json``) or a human console (``--log console``).

A log record never stops the caller: text that cannot be encoded (a lone surrogate in a
player's name) is written with backslash escapes, and any other failure goes to
:meth:`logging.Handler.handleError`, never up into the engine's thread.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time

JOURNAL_SOCKET = "/run/systemd/journal/socket"
IDENTIFIER = "tablectl"  # systemd/poker-table-controller.service: SyslogIdentifier=tablectl
LEVELS = ("debug", "info", "warning", "error")
_STD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}
_PRIORITY = {logging.CRITICAL: 2, logging.ERROR: 3, logging.WARNING: 4, logging.INFO: 6, logging.DEBUG: 7}


def _fields(record: logging.LogRecord) -> dict[str, object]:
    return {k: v for k, v in vars(record).items() if k not in _STD and not k.startswith("_")}


def clean_text(value: object) -> str:
    """``str(value)`` that always encodes as UTF-8 (lone surrogates become ``\\udcxx``)."""
    text = str(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def field_name(key: str) -> str:
    """A journal field name: upper-case letters, digits and underscores, not starting with one."""
    name = "".join(ch if ch.isascii() and ch.isalnum() else "_" for ch in key).upper().lstrip("_0123456789")
    return name or "FIELD"


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = {"ts": round(record.created, 3), "level": record.levelname.lower(), "logger": record.name,
               "msg": clean_text(record.getMessage()), **_fields(record)}
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        # ensure_ascii (the default) writes a lone surrogate as \udcxx: never an encoding error.
        return json.dumps(out, default=clean_text)


class JournaldHandler(logging.Handler):
    """A record as journal fields, sent by libsystemd's ``sd_journal_send`` (cysystemd)."""

    def __init__(self, identifier: str = IDENTIFIER) -> None:
        super().__init__()
        from cysystemd.journal import send  # imported here: only the journald mode needs libsystemd

        self._send = send
        self.identifier = identifier

    def fields(self, record: logging.LogRecord) -> dict[str, str]:
        msg = record.getMessage()
        if record.exc_info:
            msg += "\n" + logging.Formatter().formatException(record.exc_info)
        out = {"MESSAGE": msg, "PRIORITY": _PRIORITY.get(record.levelno, 6), "SYSLOG_IDENTIFIER": self.identifier,
               "LOGGER": record.name}
        for key, value in _fields(record).items():
            if value is not None:
                out.setdefault(field_name(key), value)
        return {k: clean_text(v) for k, v in out.items()}

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._send(**{k.lower(): v for k, v in self.fields(record).items()})
        except Exception:  # noqa: BLE001 - a log line must never take a thread down with it
            self.handleError(record)


def journald_available() -> bool:
    return os.path.exists(JOURNAL_SOCKET)


def setup_logging(mode: str = "auto", level: int | str = logging.INFO) -> str:
    """Configure the root logger; returns the mode used (journald, json, console)."""
    if isinstance(level, str):
        level = getattr(logging, level.upper())
    if mode == "auto":
        if os.environ.get("JOURNAL_STREAM") and journald_available():
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
    # A failing handler reports on stderr (the journal's stream under systemd) and carries on.
    logging.raiseExceptions = False
    return mode
