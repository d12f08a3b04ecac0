"""The demo's start and stop: its Mosquitto never outlives it, and a demo never starts on ports
another process holds.

* SIGTERM and SIGHUP (a closed terminal, ``kill``, systemd) stop the demo as Ctrl-C does: the
  pages, the daemon and the broker are stopped in order (:func:`stop_on_signals`).
* A demo writes a small run file (its pid and its broker's) while it runs.  The next demo reads
  them: a broker left by a demo that died without cleaning up (SIGKILL, a crash) is stopped,
  after checking that the process is that Mosquitto; a demo still running is left alone.
* Any fixed port it needs (the websockets port the pages use, the pages' HTTP ports) that is
  still held is a clear error naming the port (and any demo still running), before a banner is
  printed or a hand dealt.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from controller.errors import PokerTableError


class DemoError(PokerTableError, RuntimeError):
    """The demo cannot start (a port held, another demo running)."""


def _run_dir() -> Path:
    return Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())


def run_file(pid: int | None = None) -> Path:
    """This demo's run file (one per demo: several may run at once on ports of their own)."""
    return _run_dir() / f"tablectl-demo-{os.getuid()}-{os.getpid() if pid is None else pid}.json"


def _run_files() -> list[tuple[Path, int, int]]:
    out = []
    for path in _run_dir().glob(f"tablectl-demo-{os.getuid()}-*.json"):
        try:
            data = json.loads(path.read_text())
            out.append((path, int(data["pid"]), int(data["broker"])))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return out


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise KeyboardInterrupt in the main thread, so the demo stops as on
    Ctrl-C (its ``finally`` blocks stop the pages, the daemon and the broker)."""

    wanted = (signal.SIGTERM, signal.SIGHUP)

    def interrupt(signum: int, frame: FrameType | None) -> None:
        for s in wanted:  # once: a second signal must not break off the clean-up
            signal.signal(s, signal.SIG_IGN)
        raise KeyboardInterrupt(signal.Signals(signum).name)

    try:
        previous = {s: signal.signal(s, interrupt) for s in wanted}
    except ValueError:  # not the main thread (a test): nothing to install
        previous = {}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _port_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def clean_up_after_earlier_demo(say=print) -> None:
    """Stop the brokers that demos which died without cleaning up left running."""
    for path, demo, broker in _run_files():
        if demo == os.getpid() or _alive(demo):
            continue  # a demo still running keeps its broker
        line = _cmdline(broker)
        if _alive(broker) and "mosquitto" in line and "tablectl-mosquitto-" in line:
            os.kill(broker, signal.SIGTERM)
            deadline = time.monotonic() + 5
            while _alive(broker) and time.monotonic() < deadline:
                time.sleep(0.05)
            if _alive(broker):
                os.kill(broker, signal.SIGKILL)
            say(f"stopped the Mosquitto (pid {broker}) an earlier demo (pid {demo}) left running")
        path.unlink(missing_ok=True)


def require_free(ports: Iterable[tuple[str, int]]) -> None:
    """Every fixed port is free, or a clear error naming it (0: any free port, not checked)."""
    for what, port in ports:
        if port and not _port_free(port):
            running = [str(demo) for _, demo, _ in _run_files() if demo != os.getpid() and _alive(demo)]
            who = f" (a demo is running: pid {', '.join(running)})" if running else ""
            raise DemoError(f"port {port} ({what}) is already in use on 127.0.0.1{who}: stop what holds it "
                            f"(`ss -ltnp 'sport = :{port}'` shows it) or pick other ports "
                            "(--ws-port 0 --http-port 0: any free ones)")


def record(broker_pid: int | None) -> None:
    if broker_pid is None:
        return
    path = run_file()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"pid": os.getpid(), "broker": broker_pid}))
    tmp.replace(path)


def forget() -> None:
    run_file().unlink(missing_ok=True)
