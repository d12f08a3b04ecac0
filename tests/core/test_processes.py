"""``stop_process``: a child that ends on the signal is reaped; one that ignores it is killed after
the time given; one already told to end some other way (``sig=None``) gets no signal, only the wait."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from controller.processes import stop_process


def _child(code: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-c", f"import signal, sys, time\n{code}\nprint('up', flush=True)\n"
                             "time.sleep(60)"], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"up\n"  # its handlers are in place
    return proc


def test_a_child_that_ends_on_sigterm_is_reaped_with_its_exit_status() -> None:
    proc = _child("")
    stop_process(proc, 5)
    assert proc.returncode == -signal.SIGTERM


def test_a_child_that_ignores_the_signal_is_killed_after_the_timeout() -> None:
    proc = _child("signal.signal(signal.SIGTERM, signal.SIG_IGN)")
    t0 = time.monotonic()
    stop_process(proc, 0.5)
    assert proc.returncode == -signal.SIGKILL
    assert time.monotonic() - t0 >= 0.5


def test_with_no_signal_it_only_waits_then_kills() -> None:
    proc = _child("signal.signal(signal.SIGTERM, lambda *a: sys.exit(3))")
    stop_process(proc, 0.3, sig=None)
    assert proc.returncode == -signal.SIGKILL  # no SIGTERM was sent: its handler never ran
    done = _child("")
    done.terminate()
    done.wait(5)
    stop_process(done, 5)  # already gone: nothing is sent, nothing waits
    assert done.returncode == -signal.SIGTERM
