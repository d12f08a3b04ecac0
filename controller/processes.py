"""Ending a child process the product started (a broker, a NATS node, a daemon, a worker): ask it
to stop, give it time, then kill it, and reap it either way so no zombie is left."""

from __future__ import annotations

import signal
import subprocess
from typing import Any


def stop_process(proc: subprocess.Popen[Any], timeout: float, sig: int | None = signal.SIGTERM) -> None:
    """Send ``sig`` to ``proc`` if it still runs (None: it was already told to end, e.g. its input
    closed), wait up to ``timeout`` seconds for it to exit, then kill it and wait as long again."""
    if sig is not None and proc.poll() is None:
        proc.send_signal(sig)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout)


__all__ = ["stop_process"]
