"""The live equities computed in a process of their own, so a computation never holds the daemon's
interpreter.

A ten-handed preflop equity is 0.3 s of CPU here, seconds on a loaded machine or a Pi, much of it
Python holding the GIL; it starts when the deal ends, so a flop, a turn or a river lands while it
runs.  In a thread of the daemon it made the antenna link's thread wait for the GIL at every
hand-over on a card's path (the port's read, each SQLite step of the journal's commit, the socket's
write: up to a switch interval, 5 ms, each): ``tablectl bench table --host`` timed a flop 170 ms
from its frame to the subscriber while an equity ran, 4 ms otherwise.  Here the equity worker's
thread hands the request over a pipe and waits there, which holds no lock and no GIL.

The protocol is pickles on the child's standard input and output (a subprocess, not
``multiprocessing``: the daemon may itself be a daemonic process, which may not have children of
that kind): ``(request, now)`` answered by ``("ok", payload)`` or ``("error", text)``; end of input
ends it, so it ends with the process that started it.  One child serves every worker of a process
(:func:`compute`), started at the first request.
"""

from __future__ import annotations

import atexit
import logging
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

from controller.errors import PokerTableError
from controller.processes import stop_process

log = logging.getLogger("controller.equity.odds")


class EquityChildError(PokerTableError):
    """The equity process failed to start or died."""


class EquityFailed(PokerTableError):
    """The equity process could not compute one request (it serves the next)."""


class _Child:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self.started = 0

    def compute(self, req: Any, now: float) -> dict[str, Any] | None:
        with self._lock:
            proc = self._proc
            if proc is None or proc.poll() is not None:
                proc = self._proc = subprocess.Popen(
                    [sys.executable, "-m", "controller.equity.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                self.started += 1
            assert proc.stdin is not None and proc.stdout is not None
            try:
                pickle.dump((req, now), proc.stdin)
                proc.stdin.flush()
                kind, value = pickle.load(proc.stdout)
            except (OSError, EOFError, pickle.PickleError) as exc:
                self._proc = None
                stop_process(proc, 2.0, sig=None if proc.poll() is not None else 15)
                raise EquityChildError(f"the equity process failed: {exc}") from exc
        if kind != "ok":
            raise EquityFailed(str(value))
        return value

    def close(self) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None and proc.stdin is not None:
            try:
                proc.stdin.close()  # end of input: it returns
            except OSError:
                pass
            stop_process(proc, 2.0, sig=None)


_CHILD = _Child()
atexit.register(_CHILD.close)


def compute(req: Any, now: float) -> dict[str, Any] | None:
    """:func:`controller.equity.worker.equity_payload` of ``req`` in the shared equity process
    (started if it is not running); :class:`EquityChildError` when that process failed,
    :class:`EquityFailed` when it could not compute this request."""
    return _CHILD.compute(req, now)


def serve(compute_payload: Callable[[Any, float], dict[str, Any] | None]) -> None:
    """The equity process's loop (``python -m controller.equity.worker`` runs it with
    ``equity_payload``): a request in, its answer out, until the end of input."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            req, now = pickle.load(stdin)
        except EOFError:
            return
        try:
            answer: tuple[str, Any] = ("ok", compute_payload(req, now))
        except Exception as exc:  # noqa: BLE001 - the worker logs it; this process serves the next request
            answer = ("error", f"{type(exc).__name__}: {exc}")
        pickle.dump(answer, stdout)
        stdout.flush()
