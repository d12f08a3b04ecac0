"""A stand-in for journald's socket, so tests can read what the daemon logs through libsystemd.

libsystemd writes to the fixed path ``/run/systemd/journal/socket``.  On a machine with no
journald (a container, CI) the tests bind that path themselves (root only) and read the
datagrams; on a machine whose journald runs they skip rather than read the real journal.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from controller.app.logs import JOURNAL_SOCKET


def parse_entry(data: bytes) -> dict[str, str]:
    """One native-protocol datagram as {FIELD: value} (KEY=VALUE lines and binary-safe fields)."""
    out: dict[str, str] = {}
    i = 0
    while i < len(data):
        nl = data.index(b"\n", i)
        line = data[i:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1)
            out[k.decode()] = v.decode("utf-8", "replace")
            i = nl + 1
        else:
            (n,) = struct.unpack("<Q", data[nl + 1:nl + 9])
            out[line.decode()] = data[nl + 9:nl + 9 + n].decode("utf-8", "replace")
            i = nl + 9 + n + 1
    return out


class FakeJournald:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.entries: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while True:
            try:
                data = self.sock.recv(1 << 20)
            except OSError:
                return
            with self.lock:
                self.entries.append(parse_entry(data))

    def find(self, **fields: str) -> list[dict[str, str]]:
        with self.lock:
            return [e for e in self.entries if all(e.get(k) == v for k, v in fields.items())]


@contextmanager
def fake_journald() -> Iterator[FakeJournald]:
    import pytest

    path = Path(JOURNAL_SOCKET)
    if path.exists():
        pytest.skip("a journald socket exists here: not replacing it")
    if os.geteuid() != 0:
        pytest.skip("binding /run/systemd/journal/socket needs root")
    path.parent.mkdir(parents=True, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    try:
        yield FakeJournald(sock)
    finally:
        sock.close()
        path.unlink(missing_ok=True)
