"""A stand-in for journald's socket, so tests can read what the daemon logs through libsystemd.

libsystemd writes to the fixed path ``/run/systemd/journal/socket``.  A test marked ``journald``
runs in a private mount namespace of its own (``unshare``; a user namespace too when not root), on
an empty tmpfs over ``/run/systemd/journal``, where it binds that path and reads the datagrams: so it
runs the same whether the machine's journald runs or not, as root or not, and beside other test
processes (xdist workers, other checkouts) that bind the same path.  ``tests/conftest.py`` re-runs
such a test there (:func:`namespace_command`).
"""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
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
    if not in_private_journal():
        pytest.fail("a test using fake_journald() must be marked journald (it runs in a namespace of its own)")
    path.parent.mkdir(parents=True, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    try:
        yield FakeJournald(sock)
    finally:
        sock.close()
        path.unlink(missing_ok=True)


#: Set in the namespace's test process.
NS_ENV = "TABLECTL_PRIVATE_JOURNAL"


def in_private_journal() -> bool:
    return os.environ.get(NS_ENV) == "1"


def namespace_command(nodeid: str) -> list[str]:
    """Run one test (``nodeid``) in a private mount namespace (``python -m tests.journald_util``)."""
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    return ["unshare", "--mount", "--propagation", "private", *user, "--",
            sys.executable, "-m", "tests.journald_util", nodeid]


def _run_in_namespace(nodeid: str) -> None:
    """Inside the new namespace: an empty tmpfs of our own over journald's folder, then the test."""
    folder = Path(JOURNAL_SOCKET).parent
    base = folder
    while not base.exists():
        base = base.parent
    subprocess.run(["mount", "-t", "tmpfs", "tablectl-test-journal", str(base)], check=True)
    folder.mkdir(parents=True, exist_ok=True)
    os.environ[NS_ENV] = "1"
    os.execv(sys.executable, [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-q",
                              "-rfEs", nodeid])


if __name__ == "__main__":
    _run_in_namespace(sys.argv[1])
