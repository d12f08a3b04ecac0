"""systemd's notify protocol (sd_notify(3)): READY, WATCHDOG, STATUS, STOPPING.

A datagram to ``$NOTIFY_SOCKET`` (an abstract socket when it starts with ``@``).  Outside
systemd there is no socket and every call is a cheap no-op, so the daemon calls it
unconditionally.
"""

from __future__ import annotations

import os
import socket


class Notifier:
    def __init__(self, path: str | None = None) -> None:
        self.path = path if path is not None else os.environ.get("NOTIFY_SOCKET")
        self._sock: socket.socket | None = None
        if self.path:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)

    @property
    def enabled(self) -> bool:
        return self._sock is not None

    def notify(self, **fields: str | int) -> bool:
        if self._sock is None or not self.path:
            return False
        addr = "\0" + self.path[1:] if self.path.startswith("@") else self.path
        msg = "\n".join(f"{k.upper()}={v}" for k, v in fields.items()).encode()
        try:
            self._sock.sendto(msg, addr)
        except OSError:
            return False
        return True

    def ready(self, status: str = "") -> bool:
        return self.notify(ready=1, status=status) if status else self.notify(ready=1)

    def watchdog(self) -> bool:
        return self.notify(watchdog=1)

    def status(self, text: str) -> bool:
        return self.notify(status=text)

    def stopping(self) -> bool:
        return self.notify(stopping=1)


def watchdog_interval() -> float | None:
    """Half the watchdog period systemd asked for (``WATCHDOG_USEC``), in seconds."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        return int(usec) / 2e6
    except ValueError:
        return None
