"""systemd's notify protocol (sd_notify(3)): READY, WATCHDOG, STATUS, STOPPING.

Sent by libsystemd's own ``sd_notify`` through ``cysystemd`` (the maintained Cython bindings)
to ``$NOTIFY_SOCKET``.  Outside systemd there is no socket and every call is a cheap no-op
that returns False, so the daemon calls it unconditionally.
"""

from __future__ import annotations

import logging
import os

log = logging.getLogger("controller.app.sdnotify")


class Notifier:
    """READY/WATCHDOG/STATUS/STOPPING to the service manager, when there is one."""

    @property
    def enabled(self) -> bool:
        return bool(os.environ.get("NOTIFY_SOCKET"))

    def notify(self, **fields: str | int) -> bool:
        if not self.enabled:
            return False
        from cysystemd.daemon import sd_notify  # libsystemd: only needed under systemd

        state = "\n".join(f"{k.upper()}={v}" for k, v in fields.items())
        try:
            return int(sd_notify(state, False)) > 0
        except Exception as exc:  # noqa: BLE001 - a missed notification must not stop the daemon
            log.warning("sd_notify failed: %s", exc)
            return False

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
